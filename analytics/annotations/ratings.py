"""What annotators' ratings say: agreement per job, item, level and system, each annotator
left out in turn, each annotator's ratings, adjudication and final values, the relation to
the participants' self-reports, and ratings turn by turn.

The input is the store's annotation ratings as a frame (``RATING_COLUMNS``, one row per
rating: ``StudyStore.annotation_ratings()``). A target is keyed by job, level and target id,
never by a bare id, so that material rated under two systems or scenarios is never pooled
into one target. Agreement is computed on the first round of ratings only: a third
annotator asked where the first two differ sees only disagreements, and counting them
would lower every coefficient for the wrong reason. The adjudicated value per target is
what the rest of the report uses.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from importlib.resources import files
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from analytics.annotations import agreement as ag
from analytics.data.loading import ANNOTATION_COLUMNS, StudyData
from analytics.statistics.correlation import spearman
from bot.core.vocabulary import AnnotationLevel, AnnotationRound, Moment
from questionnaires.models import (
    ChoiceItem,
    MultiChoiceItem,
    Questionnaire,
    ScaleItem,
    SliderItem,
    TextItem,
    ThumbsItem,
    YesNoItem,
)

RATING_COLUMNS = ANNOTATION_COLUMNS
"""The fields of ``bot.store`` ``AnnotationRating``, in its order."""
LEVELS = tuple(level.value for level in AnnotationLevel)
"""Rated per exchange, or once per session (HRI CUES' "overall")."""
STATISTICS = (
    "ICC1",
    "ICC2",
    "ICC3",
    "ICC1k",
    "ICC2k",
    "ICC3k",
    "alpha_nominal",
    "alpha_ordinal",
    "alpha_interval",
    "alpha_ratio",
    "cohen_kappa",
    "cohen_kappa_linear",
    "cohen_kappa_quadratic",
    "fleiss_kappa",
    "percent_agreement",
)
"""Every ``statistic`` a reliability row may name, in the order rows are given."""
RELIABILITY_COLUMNS = [
    "job",
    "instrument_id",
    "item",
    "level",
    "system",
    "n_targets",
    "n_annotators",
    "statistic",
    "value",
    "ci_low",
    "ci_high",
    "f",
    "df1",
    "df2",
    "p",
    "reported",
    "note",
]
LEAVE_ONE_OUT_COLUMNS = [*RELIABILITY_COLUMNS[:5], "left_out", *RELIABILITY_COLUMNS[5:]]
ANNOTATOR_COLUMNS = [
    "job",
    "instrument_id",
    "item",
    "level",
    "annotator",
    "n",
    "n_adjudication",
    "mean",
    "sd",
    "distribution",
]
ADJUDICATION_COLUMNS = [
    "job",
    "instrument_id",
    "item",
    "level",
    "n_targets",
    "n_disagreed",
    "n_adjudicated",
    "share_adjudicated",
    "n_unresolved",
]
FINAL_COLUMNS = [
    "job",
    "instrument_id",
    "item",
    "level",
    "target",
    "session_id",
    "turn",
    "system",
    "scenario",
    "value",
    "score",
    "n_ratings",
    "how",
]
FINAL_BY_SYSTEM_COLUMNS = [
    "job", "instrument_id", "item", "level", "system", "n_targets", "n_resolved", "mean",
    "sd", "distribution",
]  # fmt: skip
SELF_REPORT_COLUMNS = [
    "job",
    "instrument_id",
    "item",
    "system",
    "questionnaire_id",
    "measure",
    "measure_kind",
    "n",
    "rho",
    "ci_low",
    "ci_high",
    "ci_method",
    "p",
    "p_method",
    "note",
]
TRAJECTORY_COLUMNS = [
    "job",
    "instrument_id",
    "item",
    "session_id",
    "system",
    "turn",
    "n_annotators",
    "mean",
]
ADJUDICATION_RULE = (
    "Final value of a target: the value every annotator of the first round gave, when they "
    "agree; where they differ and a third annotator was asked, the value most of the three "
    "gave (the third sides with one of the first two), or the third annotator's own when all "
    "three differ; without a third annotator, the value more than half of the annotators "
    "gave, and for a scale item without such a majority the median of the ratings; a yes/no "
    "or choice item without a majority and without a third rating stays unresolved."
)
ICC_QUESTION = (
    "ICC(1) asks how reliable ratings are when each target may have had other annotators; "
    "ICC(2) whether these annotators, as a sample of annotators one could ask, give the same "
    "values (absolute agreement); ICC(3) whether they rank targets alike (consistency, only "
    "these annotators); the ',1' forms are one annotator's rating, the ',k' forms the mean "
    "of the k annotators."
)
_NOT_RATED = ("text", "multi_choice")
"""Free text (a rationale) and multiple choice: kept in the store, no agreement computed."""


@dataclass(frozen=True)
class ItemScale:
    """What the statistics need to know of an item: its kind, every value it can take (as
    numbers, in the scale's order) and the level of measurement to report."""

    instrument_id: str
    item_id: str
    kind: str
    """``scale`` (a slider's 0 to 100 too), ``yes_no``, ``thumbs`` or ``choice``."""
    values: tuple[str, ...]
    """Every answer as stored (the ``value`` column), in order."""
    domain: tuple[float, ...]
    """The number each answer counts as: the point of a scale, else its position."""
    measurement: str
    """The level of measurement that fits: nominal for yes/no and choice; for a scale what
    the instrument declares (ordinal unless it says otherwise); interval for a slider."""
    described: bool = True
    """False when no stored or shipped definition describes the item (taken from the data)."""

    def levels(self) -> tuple[str, ...]:
        return ag.LEVELS if self.kind == "scale" else ("nominal",)

    def counted(self, rated: np.ndarray) -> tuple[float, ...]:
        """The values the coefficients count over: the scale's points, or for a scale of many
        points (a slider's 0 to 100) only the values given. A value nobody gave changes no
        coefficient (it adds nothing to any coincidence, count or weight: kappa's weights are
        the values' distances), and 101 points would make each bootstrap resample's
        coincidence matrix 10,201 cells."""
        if len(self.domain) <= _FEW_POINTS:
            return self.domain
        given = set(rated[~np.isnan(rated)].tolist())
        return tuple(v for v in self.domain if v in given)

    def code(self, value: object) -> float:
        """The number a stored answer counts as; NaN when it is not one of the item's."""
        text = str(value).strip()
        lookup = dict(zip(self.values, self.domain, strict=True))
        if text in lookup:
            return lookup[text]
        try:
            number = float(text)
        except ValueError:
            return (
                _YES_NO.get(text.lower(), math.nan)
                if self.kind in ("yes_no", "thumbs")
                else math.nan
            )
        return number if number in self.domain else math.nan


_YES_NO = {"yes": 1.0, "no": 0.0, "true": 1.0, "false": 0.0}


def item_scales(instruments: Iterable[Questionnaire]) -> dict[tuple[str, str], ItemScale]:
    """Every closed item of ``instruments`` by (instrument id, item id)."""
    scales: dict[tuple[str, str], ItemScale] = {}
    for instrument in instruments:
        for item in instrument.items:
            scale = _scale_of(instrument, item)
            if scale is not None:
                scales[(instrument.id, item.id)] = scale
    return scales


def _scale_of(instrument: Questionnaire, item: object) -> ItemScale | None:
    if isinstance(item, ScaleItem | SliderItem):
        points = tuple(range(item.min, item.max + 1))
        # a slider is a visual-analogue scale: distances between its points mean something
        level = (
            "interval"
            if isinstance(item, SliderItem)
            else item.measurement or instrument.measurement
        )
        return ItemScale(
            instrument.id,
            item.id,
            "scale",
            tuple(map(str, points)),
            tuple(map(float, points)),
            level,
        )
    if isinstance(item, YesNoItem | ThumbsItem):
        kind = "yes_no" if isinstance(item, YesNoItem) else "thumbs"
        return ItemScale(instrument.id, item.id, kind, ("1", "0"), (1.0, 0.0), "nominal")
    if isinstance(item, ChoiceItem):
        values = tuple(str(o.value) for o in item.options)
        positions = tuple(float(i) for i in range(len(values)))
        return ItemScale(instrument.id, item.id, "choice", values, positions, "nominal")
    if isinstance(item, TextItem | MultiChoiceItem):  # words or sets: no agreement computed
        return ItemScale(instrument.id, item.id, item.type, (), (), "nominal")
    return None


def inferred_scale(instrument_id: str, item_id: str, values: pd.Series) -> ItemScale:
    """An item no definition describes, from its answers: numbers as an ordinal scale of
    the values seen, anything else as categories."""
    seen = sorted({str(v).strip() for v in values})
    numbers = pd.to_numeric(pd.Series(seen, dtype=object), errors="coerce")
    if len(seen) and numbers.notna().all():
        order = sorted(zip(numbers, seen, strict=True))
        return ItemScale(
            instrument_id,
            item_id,
            "scale",
            tuple(s for _, s in order),
            tuple(float(n) for n, _ in order),
            "ordinal",
            described=False,
        )
    positions = tuple(float(i) for i in range(len(seen)))
    return ItemScale(instrument_id, item_id, "choice", tuple(seen), positions, "nominal", False)


@dataclass(frozen=True)
class Annotations:
    """The report's annotation section as tidy tables (see the ``*_COLUMNS`` lists)."""

    reliability: pd.DataFrame
    leave_one_out: pd.DataFrame
    annotators: pd.DataFrame
    adjudication: pd.DataFrame
    final_values: pd.DataFrame
    final_by_system: pd.DataFrame
    """The final values described per system (and pooled): what the adjudicated ratings say."""
    self_report: pd.DataFrame
    trajectories: pd.DataFrame
    jobs: tuple[str, ...]
    notes: tuple[str, ...]
    titles: Mapping[str, str] = field(default_factory=dict)
    """Each job's title, as annotators saw it (none for ratings of an imported job)."""

    def title(self, job: str) -> str:
        """What a figure calls the job: its title, or its id where none is known."""
        return self.titles.get(job, job)


def from_study(
    data: StudyData, scores: pd.DataFrame, systems: Sequence[str] = ()
) -> Annotations | None:
    """The report's annotation section for a study; None, at no cost, without ratings.
    People's ratings only: a model judge's are the judges section's."""
    ratings = people_only(data.annotations)
    if ratings.empty:
        return None
    named = {str(i) for i in ratings["instrument_id"].dropna().unique()}
    found = analyse(
        ratings,
        item_scales(instruments_for(named, data)),
        scores=scores,
        responses=data.responses,
        sessions=data.sessions,
        system_order=systems,
    )
    if found is None:
        return None
    titles = {j: job.title for b in data.bundles.values() for j, job in b.jobs.items()}
    return replace(found, titles=titles)


def people_only(ratings: pd.DataFrame) -> pd.DataFrame:
    """Without a model judge's ratings (origin ``model``): they never decide a final value
    and never count as an annotator's."""
    if ratings.empty:
        return ratings
    return ratings[ratings["origin"].astype(str) != "model"]


def instruments_for(ids: Iterable[str], data: StudyData) -> list[Questionnaire]:
    """The definitions of the instruments ``ids``: as the study stored them, else as an
    import stored them with its job, else ozlab's shipped instrument of that id; an id none
    knows is left out (its items are then taken from the ratings, and the report says so)."""
    from scenarios.loading import StudyError, load_questionnaire

    stored = {q_id: q for b in data.bundles.values() for q_id, q in b.questionnaires.items()}
    stored = {**data.imported_instruments, **stored}  # a study's own definition wins
    found: list[Questionnaire] = []
    for instrument_id in sorted(set(ids)):
        if instrument_id in stored:
            found.append(stored[instrument_id])
            continue
        shipped = files("questionnaires") / "library" / f"{instrument_id}.yaml"
        if shipped.is_file():
            try:
                found.append(load_questionnaire(Path(str(shipped))))
            except StudyError:
                continue
    return found


def analyse(
    ratings: pd.DataFrame,
    scales: Mapping[tuple[str, str], ItemScale],
    *,
    scores: pd.DataFrame | None = None,
    responses: pd.DataFrame | None = None,
    sessions: pd.DataFrame | None = None,
    system_order: Sequence[str] = (),
) -> Annotations | None:
    """Everything the report says about ``ratings``; None when there are none (the report
    then has no annotation section and costs nothing more). ``scores`` (construct scores),
    ``responses`` and ``sessions`` give the participants' self-reports to correlate with."""
    checked = _checked(ratings, scales)
    if checked is None:
        return None
    ratings, resolved, notes = checked
    first = ratings[ratings["round"] == AnnotationRound.FIRST.value]
    reliability, leave_one_out = _reliability(first, resolved, system_order)
    annotators = _annotators(ratings, resolved)
    adjudication, final = _adjudication(ratings, resolved)
    trajectories = _trajectories(first, resolved)
    self_report = _self_report(first, resolved, scores, responses, sessions, system_order)
    return Annotations(
        reliability=reliability,
        leave_one_out=leave_one_out,
        annotators=annotators,
        adjudication=adjudication,
        final_values=final,
        final_by_system=_final_by_system(final, resolved, system_order),
        self_report=self_report,
        trajectories=trajectories,
        jobs=tuple(sorted(set(ratings["job"].astype(str)))),
        notes=tuple(notes),
    )


def _checked(
    ratings: pd.DataFrame, scales: Mapping[tuple[str, str], ItemScale]
) -> tuple[pd.DataFrame, dict[tuple[str, str], ItemScale], list[str]] | None:
    """The ratings of closed items whose values are among their item's answers, each with
    its ``code``, in item and level order; every item's scale (taken from the data where no
    definition describes it); and notes on what was inferred or left out. None without any."""
    if ratings.empty:
        return None
    ratings = _prepared(ratings)
    notes: list[str] = []
    resolved: dict[tuple[str, str], ItemScale] = {}
    for (instrument, item), part in ratings.groupby(["instrument_id", "item_id"], sort=False):
        key = (str(instrument), str(item))
        if key in scales:
            resolved[key] = scales[key]
        else:
            resolved[key] = inferred_scale(*key, part["value"])
            notes.append(
                f"No definition describes {key[0]}: {key[1]} (neither the stored study, nor an "
                "import's job, nor ozlab's shipped instruments have it): its ratings are taken as "
                + (
                    "an ordinal scale of the values given."
                    if resolved[key].kind == "scale"
                    else "categories."
                )
            )
    closed = [
        resolved[(str(i), str(t))].kind not in _NOT_RATED
        for i, t in zip(ratings["instrument_id"], ratings["item_id"], strict=True)
    ]
    ratings = ratings[np.asarray(closed, dtype=bool)]
    if ratings.empty:
        return None
    ratings = ratings.assign(
        code=[
            resolved[(i, t)].code(v)
            for i, t, v in zip(
                ratings["instrument_id"], ratings["item_id"], ratings["value"], strict=True
            )
        ]
    )
    off = ratings["code"].isna()
    if off.any():
        notes.append(
            f"{int(off.sum())} ratings are not among their item's answers and are left out."
        )
        ratings = ratings[~off]
    # Items in their instrument's order (``scales`` lists them so), levels exchange first.
    position = {key: i for i, key in enumerate([*scales, *resolved])}
    ratings = ratings.assign(
        _item=[
            position[(i, t)]
            for i, t in zip(ratings["instrument_id"], ratings["item_id"], strict=True)
        ],
        _level=ratings["level"].map({lv: i for i, lv in enumerate(LEVELS)}).fillna(len(LEVELS)),
    )
    ratings = ratings.sort_values(["job", "_item", "_level", "target"], kind="stable")
    ratings = ratings.drop(columns=["_item", "_level"]).reset_index(drop=True)
    return ratings, resolved, notes


def final_values(data: StudyData) -> pd.DataFrame:
    """Every target's final (adjudicated) value per item (``FINAL_COLUMNS``), as the report
    computes it, without the rest of the section (``ozlab export``): people's only."""
    ratings = people_only(data.annotations)
    named = {str(i) for i in ratings["instrument_id"].dropna().unique()}
    checked = _checked(ratings, item_scales(instruments_for(named, data)))
    if checked is None:
        return pd.DataFrame(columns=FINAL_COLUMNS)
    return _adjudication(*checked[:2])[1]


def _prepared(ratings: pd.DataFrame) -> pd.DataFrame:
    """Plain object columns; one rating per job, level, target, annotator, item and round
    (the latest, should a rating have been given twice)."""
    frame = ratings[RATING_COLUMNS].astype(object)
    frame = frame.sort_values("recorded_at", kind="stable")
    keys = ["job", "level", "target", "annotator", "instrument_id", "item_id", "round"]
    return frame.drop_duplicates(keys, keep="last").reset_index(drop=True)


def _groups(
    part: pd.DataFrame, system_order: Sequence[str]
) -> list[tuple[str | None, pd.DataFrame]]:
    """Pooled, then per system when targets of two systems or more were rated."""
    found = {str(s) for s in part["system"].dropna()}
    if len(found) < 2:
        return [(None, part)]
    systems = [s for s in system_order if s in found] + sorted(found - set(system_order))
    return [(None, part), *((s, part[part["system"] == s]) for s in systems)]


def _matrix(part: pd.DataFrame) -> tuple[np.ndarray, list[str]]:
    """annotators × targets (targets keyed by job, level and target id), NaN where unrated."""
    wide = part.pivot_table(
        index="annotator", columns=["job", "level", "target"], values="code", aggfunc="first"
    )
    wide = wide.sort_index()
    return wide.to_numpy(dtype=float), [str(a) for a in wide.index]


def _reliability(
    first: pd.DataFrame, scales: Mapping[tuple[str, str], ItemScale], system_order: Sequence[str]
) -> tuple[pd.DataFrame, pd.DataFrame]:
    rows: list[dict[str, Any]] = []
    without: list[dict[str, Any]] = []
    keys = ["job", "instrument_id", "item_id", "level"]
    for (job, instrument, item, level), part in first.groupby(keys, sort=False):
        scale = scales[(str(instrument), str(item))]
        for system, rated in _groups(part, system_order):
            matrix, annotators = _matrix(rated)
            head = {
                "job": job,
                "instrument_id": instrument,
                "item": item,
                "level": level,
                "system": system,
            }
            rows += [head | r for r in coefficients(matrix, scale)]
            if len(annotators) < 3:
                continue
            for index, annotator in enumerate(annotators):
                rest = np.delete(matrix, index, axis=0)
                without += [head | {"left_out": annotator} | r for r in coefficients(rest, scale)]
    return (
        pd.DataFrame(rows, columns=RELIABILITY_COLUMNS),
        pd.DataFrame(without, columns=LEAVE_ONE_OUT_COLUMNS),
    )


def coefficients(matrix: np.ndarray, scale: ItemScale) -> list[dict[str, Any]]:
    """Every reliability figure the item's kind allows, one row each (``STATISTICS``)."""
    rated = matrix[~np.isnan(matrix).all(axis=1)]
    rated = rated[:, ~np.isnan(rated).all(axis=0)]
    n_annotators = rated.shape[0]
    rows: list[dict[str, Any]] = []

    def row(statistic: str, value: float, targets: int, **more: Any) -> None:
        entry = {
            "statistic": statistic,
            "value": value,
            "n_targets": targets,
            "n_annotators": n_annotators,
            "ci_low": math.nan,
            "ci_high": math.nan,
            "f": math.nan,
            "df1": math.nan,
            "df2": math.nan,
            "p": math.nan,
            "reported": False,
            "note": None,
        }
        entry.update(more)
        if math.isnan(entry["value"]) and entry["note"] is None:
            entry["note"] = _why_not(rated, targets)
        rows.append(entry)

    if scale.kind == "scale":
        forms = ag.icc_forms(rated)
        full = ag.complete(rated).shape[1]
        for name in ag.ICC_FORMS.values():
            if name in forms:
                row(name, targets=full, **forms[name])
            else:
                row(name, math.nan, full, note=_why_no_icc(rated, full))
    domain = scale.counted(rated)
    pairable = int(((~np.isnan(rated)).sum(axis=0) >= 2).sum())
    alphas = {level: ag.alpha(rated, level, domain) for level in scale.levels()}
    defined = [level for level, value in alphas.items() if not math.isnan(value)]
    intervals = ag.alpha_intervals(rated, defined, domain) if defined else {}
    for level, value in alphas.items():
        low, high = intervals.get(level, (math.nan, math.nan))
        row(
            f"alpha_{level}",
            value,
            pairable,
            ci_low=low,
            ci_high=high,
            reported=level == scale.measurement,
        )
    if n_annotators == 2:
        schemes = ("linear", "quadratic") if scale.kind == "scale" else ("unweighted",)
        for scheme in schemes:
            kappa, low, high, n = ag.cohen_kappa(rated, domain, scheme)
            name = "cohen_kappa" if scheme == "unweighted" else f"cohen_kappa_{scheme}"
            row(name, kappa, n, ci_low=low, ci_high=high)
    elif n_annotators > 2:
        kappa, low, high, n = ag.fleiss_kappa(rated, domain)
        row("fleiss_kappa", kappa, n, ci_low=low, ci_high=high)
    share, low, high, n = ag.percent_agreement(rated, domain)
    row("percent_agreement", share, n, ci_low=low, ci_high=high)
    return rows


_FEW_POINTS = 11
"""Scales up to this many points count over all of them; a slider's 101 over those given."""


def _why_no_icc(rated: np.ndarray, full: int) -> str:
    if rated.shape[0] < 2:
        return "fewer than two annotators"
    if full < 2 or full * rated.shape[0] < 5:
        return f"needs targets every annotator rated (5 ratings at least): {full}"
    return "every rating is the same"


def _why_not(rated: np.ndarray, targets: int) -> str:
    if rated.shape[0] < 2:
        return "fewer than two annotators"
    if targets < 2:
        return f"targets with two ratings: {targets} (2 needed)"
    return "every rating the same: nothing to tell from chance"


def _annotators(ratings: pd.DataFrame, scales: Mapping[tuple[str, str], ItemScale]) -> pd.DataFrame:
    """Each annotator's ratings of an item at a level: how many, mean, SD, distribution."""
    rows = []
    keys = ["job", "instrument_id", "item_id", "level"]
    for (job, instrument, item, level), group in ratings.groupby(keys, sort=False):
        scale = scales[(str(instrument), str(item))]
        numeric = scale.kind == "scale"
        for annotator, part in group.groupby("annotator", sort=True):
            counts = part["value"].astype(str).str.strip().value_counts()
            rows.append(
                {
                    "job": job,
                    "instrument_id": instrument,
                    "item": item,
                    "level": level,
                    "annotator": annotator,
                    "n": len(part),
                    "n_adjudication": int(
                        (part["round"] == AnnotationRound.ADJUDICATION.value).sum()
                    ),
                    "mean": float(part["code"].mean()) if numeric else math.nan,
                    "sd": float(part["code"].std()) if numeric and len(part) > 1 else math.nan,
                    "distribution": {
                        _answer(value, scale): int(counts.get(value, 0))
                        for value in scale.values
                        if len(scale.values) <= _FEW_POINTS or value in counts.index
                    },
                }
            )
    return pd.DataFrame(rows, columns=ANNOTATOR_COLUMNS)


def _answer(value: str, scale: ItemScale) -> object:
    """A scale point as a number (JSON keeps 3 and "3" apart), anything else as stored."""
    if scale.kind == "scale":
        number = float(value)
        return int(number) if number.is_integer() else number
    return value


def _adjudication(
    ratings: pd.DataFrame, scales: Mapping[tuple[str, str], ItemScale]
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """How often the first round differed and a third annotator was asked, and every
    target's final value (``ADJUDICATION_RULE``), computed for all targets at once."""
    item = ["job", "instrument_id", "item_id", "level"]
    keys = [*item, "target"]
    ratings = ratings.assign(value=ratings["value"].astype(str).str.strip())
    targets = ratings.groupby(keys, sort=False).agg(
        session_id=("session_id", "first"),
        turn=("turn", "first"),
        system=("system", "first"),
        scenario=("scenario", "first"),
        n_ratings=("value", "size"),
    )
    first = ratings[ratings["round"] == AnnotationRound.FIRST.value]
    third = ratings[ratings["round"] == AnnotationRound.ADJUDICATION.value]
    grouped = first.groupby(keys, sort=False)
    targets["distinct"] = grouped["value"].nunique()
    targets["n_first"] = grouped["value"].size()
    targets["median"] = grouped["code"].median()
    targets["top"], targets["top_count"] = _most_given(first, keys)
    everyone, everyone_count = (c.reindex(targets.index) for c in _most_given(ratings, keys))
    targets["third"] = third.groupby(keys, sort=False)["value"].last()
    numeric = np.array(
        [scales[(str(i), str(t))].kind == "scale" for i, t in
         zip(targets.index.get_level_values("instrument_id"),
             targets.index.get_level_values("item_id"), strict=True)],
        dtype=bool,
    )  # fmt: skip
    adjudicated = targets["third"].notna().to_numpy()
    agreed = (targets["distinct"] == 1).to_numpy()
    majority = (targets["top_count"] > targets["n_first"] / 2).to_numpy()
    median = targets["median"].map(lambda m: _number_text(m) if pd.notna(m) else None)
    # With the third annotator: the value most of all annotators gave, else the third's.
    sides = (everyone_count > targets["n_ratings"] / 2).to_numpy()
    decided = pd.Series(np.where(sides, everyone, targets["third"]), index=targets.index)
    conditions = [agreed, adjudicated, majority, numeric & targets["median"].notna().to_numpy()]
    targets["how"] = np.select(
        conditions, ["agreed", "third annotator", "majority", "median"], "unresolved"
    )
    by_how = {
        "agreed": targets["top"],
        "third annotator": decided,
        "majority": targets["top"],
        "median": median,
    }
    chosen = [
        by_how[how].iloc[i] if how in by_how else None for i, how in enumerate(targets["how"])
    ]
    targets["value"] = pd.Series(chosen, index=targets.index, dtype=object)
    targets["score"] = [
        float(v) if n and v is not None else math.nan
        for v, n in zip(targets["value"], numeric, strict=True)
    ]
    final = targets.reset_index().rename(columns={"item_id": "item"})[FINAL_COLUMNS]
    summary = (
        targets.assign(
            disagreed=targets["distinct"] > 1,
            adjudicated=adjudicated,
            unresolved=targets["how"] == "unresolved",
        )
        .groupby(item, sort=False)
        .agg(
            n_targets=("how", "size"),
            n_disagreed=("disagreed", "sum"),
            n_adjudicated=("adjudicated", "sum"),
            n_unresolved=("unresolved", "sum"),
        )
        .reset_index()
        .rename(columns={"item_id": "item"})
    )
    summary["share_adjudicated"] = summary["n_adjudicated"] / summary["n_targets"]
    return summary[ADJUDICATION_COLUMNS], final


def _most_given(ratings: pd.DataFrame, keys: list[str]) -> tuple[pd.Series, pd.Series]:
    """Per target, the value given most often and how often (ties: the smaller value as
    text, so that every run picks the same)."""
    counts = ratings.groupby([*keys, "value"], sort=False).size().rename("count").reset_index()
    order = [True] * len(keys) + [False, True]
    counts = counts.sort_values([*keys, "count", "value"], ascending=order)
    top = counts.drop_duplicates(keys).set_index(keys)
    return top["value"], top["count"]


def _final_by_system(
    final: pd.DataFrame,
    scales: Mapping[tuple[str, str], ItemScale],
    system_order: Sequence[str],
) -> pd.DataFrame:
    """Per item and level, over all systems and per system: how many targets have a final
    value, their mean and SD (scales), and how often each final value was reached."""
    rows = []
    for (job, instrument, item, level), part in final.groupby(
        ["job", "instrument_id", "item", "level"], sort=False
    ):
        scale = scales[(str(instrument), str(item))]
        for system, group in _groups(part, system_order):
            resolved = group[group["value"].notna()]
            counts = resolved["value"].astype(str).value_counts()
            numeric = scale.kind == "scale"
            if numeric:  # a median between two points sits between them: 1, 1.5, 2
                order = sorted(counts.index, key=float)
            else:
                order = [v for v in scale.values if v in counts.index]
                order += sorted(v for v in counts.index if v not in scale.values)
            rows.append(
                {
                    "job": job,
                    "instrument_id": instrument,
                    "item": item,
                    "level": level,
                    "system": system,
                    "n_targets": len(group),
                    "n_resolved": len(resolved),
                    "mean": float(resolved["score"].mean()) if numeric else math.nan,
                    "sd": float(resolved["score"].std()) if numeric else math.nan,
                    "distribution": {
                        (_answer(v, scale) if v in scale.values else v): int(counts[v])
                        for v in order
                    },
                }
            )
    return pd.DataFrame(rows, columns=FINAL_BY_SYSTEM_COLUMNS)


def _number_text(value: float) -> str:
    return str(int(value)) if float(value).is_integer() else str(float(value))


def _scale_rows(frame: pd.DataFrame, scales: Mapping[tuple[str, str], ItemScale]) -> pd.DataFrame:
    """Only the ratings of scale items (means and rank correlations need numbers)."""
    pairs = zip(frame["instrument_id"], frame["item_id"], strict=True)
    keep = np.asarray([scales[(str(i), str(t))].kind == "scale" for i, t in pairs], dtype=bool)
    return frame[keep] if len(frame) else frame


def _trajectories(first: pd.DataFrame, scales: Mapping[tuple[str, str], ItemScale]) -> pd.DataFrame:
    """Per conversation and turn, the mean of the annotators' exchange ratings (scales)."""
    exchange = first[(first["level"] == AnnotationLevel.EXCHANGE.value) & first["turn"].notna()]
    exchange = _scale_rows(exchange, scales)
    if exchange.empty:
        return pd.DataFrame(columns=TRAJECTORY_COLUMNS)
    exchange = exchange.assign(
        turn=exchange["turn"].astype(int), session_id=exchange["session_id"].fillna("")
    )
    keys = ["job", "instrument_id", "item_id", "session_id", "turn"]
    table = exchange.groupby(keys, sort=True).agg(
        system=("system", "first"), n_annotators=("annotator", "nunique"), mean=("code", "mean")
    )
    table = table.reset_index().rename(columns={"item_id": "item"})
    return table[TRAJECTORY_COLUMNS]


def _self_report(
    first: pd.DataFrame,
    scales: Mapping[tuple[str, str], ItemScale],
    scores: pd.DataFrame | None,
    responses: pd.DataFrame | None,
    sessions: pd.DataFrame | None,
    system_order: Sequence[str] = (),
) -> pd.DataFrame:
    """Spearman's rho between the annotators' mean session-level rating of a conversation
    and the participant's self-reported constructs and scale items about it: over all
    systems (``system`` None), then per system when conversations of several were rated."""
    overall = first[(first["level"] == AnnotationLevel.SESSION.value) & first["session_id"].notna()]
    overall = _scale_rows(overall, scales)
    reports = _self_reports(scores, responses, sessions)
    if overall.empty or reports.empty:
        return pd.DataFrame(columns=SELF_REPORT_COLUMNS)
    means = (
        overall.groupby(["job", "instrument_id", "item_id", "session_id"], sort=False)
        .agg(rating=("code", "mean"), system=("system", "first"))
        .reset_index()
    )
    rows = []
    for (job, instrument, item), mine in means.groupby(
        ["job", "instrument_id", "item_id"], sort=False
    ):
        for (q_id, measure, kind), reported in reports.groupby(
            ["questionnaire_id", "measure", "measure_kind"], sort=False
        ):
            both = mine.merge(reported, on="session_id")
            for system, rated in _groups(mine, system_order):
                pairs = (
                    both if system is None else both[both["session_id"].isin(rated["session_id"])]
                )
                rows.append(
                    {
                        "job": job,
                        "instrument_id": instrument,
                        "item": item,
                        "system": system,
                        "questionnaire_id": q_id,
                        "measure": measure,
                        "measure_kind": kind,
                    }
                    | _spearman(pairs)
                )
    return pd.DataFrame(rows, columns=SELF_REPORT_COLUMNS)


def _spearman(both: pd.DataFrame) -> dict[str, Any]:
    """Spearman's rho of ``rating`` and ``score`` with its Bonett–Wright 95% interval and
    R's p (``analytics.statistics.correlation``), or the reason there is none: fewer than 4
    pairs, or a side that never varies."""
    row: dict[str, Any] = {
        "n": len(both),
        "rho": math.nan,
        "ci_low": math.nan,
        "ci_high": math.nan,
        "ci_method": None,
        "p": math.nan,
        "p_method": None,
        "note": None,
    }
    if len(both) < 4:
        row["note"] = f"{len(both)} conversations with both; at least 4 needed"
    elif both["rating"].nunique() < 2 or both["score"].nunique() < 2:
        row["note"] = "one side never varies"
    else:
        found = spearman(both["rating"].to_numpy(float), both["score"].to_numpy(float))
        row |= {
            "rho": found.rho,
            "ci_low": found.ci_low,
            "ci_high": found.ci_high,
            "ci_method": found.ci_method,
            "p": found.p,
            "p_method": found.p_method,
        }
    return row


_SELF = (Moment.POST_TASK.value, Moment.POST_STUDY.value)


def _self_reports(
    scores: pd.DataFrame | None, responses: pd.DataFrame | None, sessions: pd.DataFrame | None
) -> pd.DataFrame:
    """Per session: each construct score and each scale item's score (reverse recoded) a
    participant gave after it (post-task), or after the study when they had one session."""
    columns = ["session_id", "questionnaire_id", "measure", "measure_kind", "score"]
    parts = []
    if scores is not None and len(scores):
        mine = scores[scores["moment"].astype(object).isin(_SELF)]
        parts.append(_self_scores(mine, "construct"))
    if responses is not None and len(responses):
        mine = responses[
            responses["moment"].isin(_SELF)
            & (responses["type"] == "scale")
            & responses["score"].notna()
        ]
        parts.append(_self_scores(mine, "item_id"))
    if not parts:
        return pd.DataFrame(columns=columns)
    frame = pd.concat(parts, ignore_index=True)
    if sessions is not None and len(sessions) and frame["session_id"].isna().any():
        per = sessions.astype({"participant_id": object, "session_id": object})
        counts = per.groupby("participant_id")["session_id"].agg(["nunique", "first"])
        only = counts.loc[counts["nunique"] == 1, "first"]
        missing = frame["session_id"].isna()
        frame.loc[missing, "session_id"] = frame.loc[missing, "participant_id"].map(only)
    frame = frame[frame["session_id"].notna()]
    frame = frame.groupby(columns[:-1], sort=False)["score"].mean().reset_index()
    return frame[columns]


def _self_scores(mine: pd.DataFrame, measure: str) -> pd.DataFrame:
    """One row per score a participant gave: a construct's (``measure="construct"``) or a
    scale item's (``"item_id"``)."""
    return pd.DataFrame(
        {
            "participant_id": mine["participant_id"].astype(object),
            "session_id": mine["session_id"].astype(object),
            "questionnaire_id": mine["questionnaire_id"].astype(object),
            "measure": mine[measure].astype(object),
            "measure_kind": "construct" if measure == "construct" else "item",
            "score": mine["score"],
        }
    )
