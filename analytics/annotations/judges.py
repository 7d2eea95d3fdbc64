"""How far a model judge agrees with people, and where it is biased: can this judge stand
in for the annotators?

A judge's ratings are the annotations of origin ``model`` (``ozlab judge run``); its pair
verdicts the votes of rater kind ``model``. Per job, level and item, the judge is compared
with each annotator and with the adjudicated value (the people's final value), and the
annotators with each other, by the same coefficients (``analytics.annotations.agreement``):
Cohen's kappa (linearly weighted for an ordered scale), Krippendorff's alpha (at the item's
level of measurement), Spearman's rho (ordered items) and percent agreement, each with a
percentile bootstrap interval over targets. The verdict per item compares the judge's mean
kappa with the annotators to the annotators' mean kappa with each other.

Bias checks: position (the share of pairs whose verdict stays when the order is swapped,
and how often the conversation shown first wins, beside people's share) and length (the
rank correlation of the rating with the length of what was rated, the judge's beside the
people's; in pairs, how often the side that said more won: ``pair_length``); and
self-preference, where the study names the model family of a judge and of the systems:
how much more the judge favours its own family's systems than people do (its rating gap
between them and the others, less people's gap; in pairs, its share of wins for its family
less people's)."""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

import numpy as np
import pandas as pd
from scipy.stats import rankdata

from analytics.annotations import agreement as ag
from analytics.annotations.pair_agreement import PAIR_AGREEMENT_COLUMNS, pair_agreement
from analytics.annotations.pair_length import PAIR_LENGTH_COLUMNS, pair_length_bias
from analytics.annotations.ratings import ItemScale
from analytics.statistics.questionnaires import wilson_interval

MODEL = "model"
AGREEMENT_COLUMNS = [
    "job", "level", "instrument_id", "item", "judge", "comparison", "with", "statistic",
    "value", "low", "high", "targets",
]  # fmt: skip
"""One coefficient: the judge (or, comparison ``human-human``, the first annotator) against
``with`` (an annotator, or ``adjudicated``)."""
VERDICT_COLUMNS = [
    "job", "level", "instrument_id", "item", "judge", "judge_kappa", "human_kappa",
    "judge_adjudicated_kappa", "judge_adjudicated_low", "targets", "verdict",
]  # fmt: skip
LENGTH_COLUMNS = ["job", "level", "instrument_id", "item", "rater", "rho", "low", "high", "n"]
PREDICTION_POWERED_COLUMNS = [
    "job", "level", "instrument_id", "item", "judge", "system", "n_judged", "n_people",
    "mean", "low", "high", "people_mean", "people_low", "people_high", "judge_mean",
    "judge_low", "judge_high", "equivalent_people", "ratings_saved", "power",
]  # fmt: skip
"""Per item and system (None: pooled): the prediction-powered (PPI++) mean of the people's
final value from people's ratings of the targets they rated and the judge's of every
target, beside the people-only and the judge-only means, each interval inside the scale's
range (``analytics.statistics.prediction_powered``); ``n_judged`` counts every target the
judge rated, ``power`` is λ; for an ACUTE question (level ``pair``), each system's win rate
the same way. Nothing where people rated every target (or all but one)."""
POSITION_COLUMNS = [
    "job", "question", "rater", "pairs", "consistent", "share_consistent",
    "consistent_low", "consistent_high", "verdicts", "first_wins", "share_first_wins",
    "first_wins_low", "first_wins_high",
]  # fmt: skip
"""Shares with Wilson 95% intervals; ``pairs`` and ``verdicts`` are what they are shares of
(a judge gives two verdicts a pair, one in each order)."""

SELF_PREFERENCE_COLUMNS = [
    "job", "level", "instrument_id", "item", "judge", "family", "own_systems", "judge_own",
    "judge_other", "people_own", "people_other", "self_preference", "low", "high", "n_own",
    "n_other",
]  # fmt: skip
"""Per item (or pairwise question, level ``pair``) and judge with a family some system
shares: ratings: the judge's mean on its family's targets and on the others', people's
(the adjudicated value) on the same targets, and ``self_preference`` = the judge's gap less
people's; pairs: ``judge_own`` the share of the judge's consistent verdicts between its
family and another won by its family, ``people_own`` people's share, and their difference.
Each with a 95% percentile bootstrap interval (targets or verdicts resampled within each
group); ``n_own``, ``n_other``: targets (pairs: the judge's verdicts and people's)."""

AS_PEOPLE = "agrees with people as much as people agree with each other"
BELOW_PEOPLE = "agrees with people less than people agree with each other"
UNCLEAR = "too few targets or no agreement among people to compare with"
MIN_TARGETS = 10


@dataclass(frozen=True)
class JudgeFindings:
    agreement: pd.DataFrame
    verdicts: pd.DataFrame
    length: pd.DataFrame
    position: pd.DataFrame
    prediction_powered: pd.DataFrame
    self_preference: pd.DataFrame = field(
        default_factory=lambda: pd.DataFrame(columns=SELF_PREFERENCE_COLUMNS)
    )
    pair_length: pd.DataFrame = field(
        default_factory=lambda: pd.DataFrame(columns=PAIR_LENGTH_COLUMNS)
    )
    """Pairs: each judge's and people's preference for the side that said more
    (``analytics.annotations.pair_length``)."""
    pair_agreement: pd.DataFrame = field(
        default_factory=lambda: pd.DataFrame(columns=PAIR_AGREEMENT_COLUMNS)
    )
    """ACUTE pairs: each judge against people's majority
    (``analytics.annotations.pair_agreement``)."""


def is_judge(annotator: str) -> bool:
    """A judge's pseudonym (``model:ID``)."""
    return str(annotator).startswith(f"{MODEL}:")


def _kappa_scheme(scale: ItemScale) -> str:
    return "linear" if scale.kind == "scale" and scale.measurement != "nominal" else "unweighted"


def _ordered(scale: ItemScale) -> bool:
    return scale.kind == "scale" and scale.measurement != "nominal"


def spearman_interval(pairs: np.ndarray, seed: int = ag.SEED) -> tuple[float, float, float, int]:
    """Spearman's rho of the two rows of ``pairs`` (targets both rated) with a percentile
    bootstrap interval over targets: (rho, low, high, targets)."""
    both = pairs[:, ~np.isnan(pairs).any(axis=0)]
    n = both.shape[1]
    if n < 4 or len(set(both[0])) < 2 or len(set(both[1])) < 2:
        return (math.nan, math.nan, math.nan, n)
    value = float(_rho(both[0][None], both[1][None])[0])
    rng = np.random.default_rng(seed)
    # the resamples a block at a time: the same draws as one resample at a time
    block = max(1, _AT_ONCE // n)
    draws = []
    for first in range(0, ag.RESAMPLES, block):
        pick = rng.integers(0, n, (min(block, ag.RESAMPLES - first), n))
        draws.append(_rho(both[0][pick], both[1][pick]))
    values = np.concatenate(draws)
    values = values[~np.isnan(values)]
    if len(values) < ag.RESAMPLES / 2:
        return (value, math.nan, math.nan, n)
    tail = (1 - ag.CONFIDENCE) / 2 * 100
    low, high = np.percentile(values, [tail, 100 - tail])
    return (value, float(low), float(high), n)


_AT_ONCE = 1 << 20
"""Values resampled at once (a few MB of arrays) by ``spearman_interval``."""


def _rho(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Spearman's rho of each row of ``a`` with the same row of ``b`` (NaN where one does
    not vary): Pearson's r of their midranks as ``np.corrcoef`` computes it. Midranks less
    their mean are whole or half numbers, so their sums of products are exact however they
    are summed, and each rho is corrcoef's to the last bit."""
    ra = rankdata(a, axis=1)
    rb = rankdata(b, axis=1)
    ra -= ra.mean(axis=1, keepdims=True)
    rb -= rb.mean(axis=1, keepdims=True)
    scale = 1 / (a.shape[1] - 1)
    xy, xx, yy = (np.einsum("ij,ij->i", x, y) * scale for x, y in ((ra, rb), (ra, ra), (rb, rb)))
    with np.errstate(divide="ignore", invalid="ignore"):
        rho = xy / np.sqrt(xx) / np.sqrt(yy)
    return np.where((xx == 0) | (yy == 0), math.nan, np.clip(rho, -1, 1))


def _coefficients(pair: np.ndarray, scale: ItemScale) -> list[tuple[str, float, float, float, int]]:
    """(statistic, value, low, high, targets) of two raters (rows) on the same targets."""
    domain = scale.counted(pair)
    rows = []
    kappa = ag.cohen_kappa(pair, domain, _kappa_scheme(scale))
    rows.append((f"kappa_{_kappa_scheme(scale)}", *kappa))
    level = scale.measurement if scale.measurement in ag.LEVELS else "nominal"
    both = pair[:, ~np.isnan(pair).any(axis=0)]
    if both.shape[1] >= 2:
        value = ag.alpha(both, level, domain)
        low, high = ag.alpha_interval(both, level, domain)
        rows.append((f"alpha_{level}", value, low, high, both.shape[1]))
    else:
        rows.append((f"alpha_{level}", math.nan, math.nan, math.nan, both.shape[1]))
    if _ordered(scale):
        rows.append(("spearman_rho", *spearman_interval(pair)))
    rows.append(("percent_agreement", *ag.percent_agreement(both, domain)))
    return rows


def judge_findings(
    ratings: pd.DataFrame,
    final: pd.DataFrame,
    scales: Mapping[tuple[str, str], ItemScale],
    lengths: Mapping[tuple[str, str], float] | None = None,
    votes: pd.DataFrame | None = None,
    judge_families: Mapping[str, str] | None = None,
    system_families: Mapping[str, str] | None = None,
    said: Mapping[tuple[str, str], float] | None = None,
) -> JudgeFindings | None:
    """Everything the report says about the judges; None when no judge rated anything.

    ``ratings``: the annotations frame (every origin); ``final``: the people's final values
    (``FINAL_COLUMNS``); ``lengths``: (level, target) -> characters of what was rated;
    ``votes``: the votes frame; ``judge_families``: a judge's pseudonym (``model:ID``) ->
    its model family, ``system_families``: a system -> its family, as the study names them;
    ``said``: (a session, or ``session#turn`` of a side-by-side turn, and a system) -> the
    characters the system said there, for the length bias of pairs."""
    families = dict(judge_families or {})
    of_system = dict(system_families or {})
    self_rows: list[dict[str, object]] = []
    first = ratings[ratings["round"].astype(str) == "first"]
    judged = first["origin"].astype(str) == MODEL
    model_votes = votes[votes["rater_kind"].astype(str) == MODEL] if votes is not None else None
    if not judged.any() and (model_votes is None or model_votes.empty):
        return None
    agreement_rows: list[dict[str, object]] = []
    verdict_rows: list[dict[str, object]] = []
    length_rows: list[dict[str, object]] = []
    ppi_rows: list[dict[str, object]] = []
    keys = ["job", "level", "instrument_id", "item_id"]
    for (job, level, instrument, item), part in first.groupby(keys, sort=True):
        scale = scales.get((str(instrument), str(item)))
        if scale is None or not scale.domain:
            continue
        part = part.assign(code=[scale.code(v) for v in part["value"]])
        wide = part.pivot_table(index="annotator", columns="target", values="code", aggfunc="first")
        raters = [str(a) for a in wide.index]
        judges = [a for a in raters if is_judge(a)]
        people = [a for a in raters if not is_judge(a)]
        if not judges:
            continue
        where = {"job": job, "level": level, "instrument_id": instrument, "item": item}
        adjudicated = _adjudicated(final, job, level, instrument, item, scale, wide.columns)

        def add(
            judge: str,
            comparison: str,
            other: str,
            pair: np.ndarray,
            scale: ItemScale = scale,
            where: Mapping[str, object] = where,
        ) -> None:
            for statistic, value, low, high, n in _coefficients(pair, scale):
                agreement_rows.append(
                    {**where, "judge": judge, "comparison": comparison, "with": other,
                     "statistic": statistic, "value": value, "low": low, "high": high,
                     "targets": n}
                )  # fmt: skip

        for a, b in itertools.combinations(people, 2):
            add(a, "human-human", b, wide.loc[[a, b]].to_numpy(float))
        for judge in judges:
            given = wide.loc[judge].to_numpy(float)
            for person in people:
                add(judge, "judge-annotator", person, np.vstack([given, wide.loc[person]]))
            add(judge, "judge-adjudicated", "adjudicated", np.vstack([given, adjudicated]))
        frame = pd.DataFrame(agreement_rows, columns=AGREEMENT_COLUMNS)
        here = frame[
            (frame["job"] == job) & (frame["level"] == level) & (frame["item"] == item)
            & frame["statistic"].str.startswith("kappa")
        ]  # fmt: skip
        human = here[here["comparison"] == "human-human"]["value"].mean()
        for judge in judges:
            mine = here[here["judge"] == judge]
            with_people = mine[mine["comparison"] == "judge-annotator"]["value"].mean()
            final_row = mine[mine["comparison"] == "judge-adjudicated"]
            fk = float(final_row["value"].iloc[0]) if len(final_row) else math.nan
            fl = float(final_row["low"].iloc[0]) if len(final_row) else math.nan
            n = int(final_row["targets"].iloc[0]) if len(final_row) else 0
            verdict_rows.append(
                {**where, "judge": judge, "judge_kappa": with_people, "human_kappa": human,
                 "judge_adjudicated_kappa": fk, "judge_adjudicated_low": fl, "targets": n,
                 "verdict": _verdict(with_people, human, n)}
            )  # fmt: skip
        if scale.kind == "scale":
            systems = _systems(part)
            for judge in judges:
                ppi_rows += _prediction_powered(
                    where,
                    judge,
                    wide.loc[judge].to_numpy(float),
                    adjudicated,
                    systems,
                    (min(scale.domain), max(scale.domain)),
                    wide.columns,
                )
        if lengths is not None and _ordered(scale):
            length_rows += _length(where, wide, judges, people, level, lengths)
        if _ordered(scale) or scale.kind in ("yes_no", "thumbs"):  # a mean means something
            systems = _systems(part)
            for judge in judges:
                family = families.get(judge)
                own = {s for s, f in of_system.items() if f == family}
                if family is None or not own:
                    continue
                of = np.array([systems.get(str(t)) for t in wide.columns], dtype=object)
                self_rows += _self_rated(
                    {**where, "judge": judge, "family": family},
                    own,
                    wide.loc[judge].to_numpy(float),
                    adjudicated,
                    of,
                )
    return JudgeFindings(
        agreement=pd.DataFrame(agreement_rows, columns=AGREEMENT_COLUMNS),
        verdicts=pd.DataFrame(verdict_rows, columns=VERDICT_COLUMNS),
        length=pd.DataFrame(length_rows, columns=LENGTH_COLUMNS),
        position=position_bias(votes) if votes is not None else _no_position(),
        prediction_powered=pd.DataFrame(
            ppi_rows + (_win_rates_powered(votes) if votes is not None else []),
            columns=PREDICTION_POWERED_COLUMNS,
        ),
        self_preference=pd.DataFrame(
            self_rows + (_self_voted(votes, families, of_system) if votes is not None else []),
            columns=SELF_PREFERENCE_COLUMNS,
        ),
        pair_agreement=(
            pair_agreement(votes)
            if votes is not None
            else pd.DataFrame(columns=PAIR_AGREEMENT_COLUMNS)
        ),
        pair_length=(
            pair_length_bias(votes, said)
            if votes is not None and said is not None
            else pd.DataFrame(columns=PAIR_LENGTH_COLUMNS)
        ),
    )


def _bootstrap(
    statistic: Callable[[np.ndarray, np.ndarray], float], first: np.ndarray, second: np.ndarray
) -> tuple[float, float]:
    """A 95% percentile interval of ``statistic``, each group resampled on its own."""
    rng = np.random.default_rng(ag.SEED)
    draws = np.array(
        [
            statistic(
                first[rng.integers(0, len(first), len(first))],
                second[rng.integers(0, len(second), len(second))],
            )
            for _ in range(ag.RESAMPLES)
        ]
    )
    draws = draws[~np.isnan(draws)]
    if len(draws) < ag.RESAMPLES / 2:
        return (math.nan, math.nan)
    tail = (1 - ag.CONFIDENCE) / 2 * 100
    low, high = np.percentile(draws, [tail, 100 - tail])
    return (float(low), float(high))


def _self_rated(
    where: Mapping[str, object],
    own: set[str],
    judged: np.ndarray,
    people: np.ndarray,
    systems: np.ndarray,
) -> list[dict[str, object]]:
    """The judge's rating gap between its family's targets and the others', less people's,
    on the targets both rated."""
    both = ~np.isnan(judged) & ~np.isnan(people) & (systems != None)  # noqa: E711
    mine = np.array([s in own for s in systems]) & both
    others = ~mine & both
    if mine.sum() < 2 or others.sum() < 2:
        return []
    a, b = np.vstack([judged[mine], people[mine]]), np.vstack([judged[others], people[others]])

    def gap(a: np.ndarray, b: np.ndarray) -> float:
        return float((a[0].mean() - b[0].mean()) - (a[1].mean() - b[1].mean()))

    low, high = _bootstrap(lambda x, y: gap(x.T, y.T), a.T, b.T)
    return [
        {**where, "own_systems": ", ".join(sorted(own)), "judge_own": float(a[0].mean()),
         "judge_other": float(b[0].mean()), "people_own": float(a[1].mean()),
         "people_other": float(b[1].mean()), "self_preference": gap(a, b), "low": low,
         "high": high, "n_own": int(mine.sum()), "n_other": int(others.sum())}
    ]  # fmt: skip


def _self_voted(
    votes: pd.DataFrame, families: Mapping[str, str], of_system: Mapping[str, str]
) -> list[dict[str, object]]:
    """Per job, question and judge with a family: its share of consistent verdicts between
    its family and another won by its family, less people's share on such pairs."""
    acute = votes[(votes["source"].astype(str) == "acute") & ~votes["onboarding"].astype(bool)]
    decided = acute[acute["winner"].astype(str).isin(["a", "b"])]
    if decided.empty:
        return []
    decided = decided.assign(job=decided["vote_id"].astype(str).str.split(":").str[0])
    rows = []
    for (job, question), part in decided.groupby(["job", "question"], sort=True):
        models = part[part["rater_kind"].astype(str) == MODEL]
        people = part[(part["rater_kind"].astype(str) != MODEL) & ~part["flagged"].astype(bool)]
        for judge, mine in models.groupby("rater", sort=True):
            family = families.get(str(judge))
            own = {s for s, f in of_system.items() if f == family}
            if family is None or not own:
                continue
            kept = mine[mine["flag_reason"].astype(str) == "model_verdict"]
            judge_wins = _own_wins(kept, own)
            people_wins = _own_wins(people, own)
            if len(judge_wins) == 0:
                continue

            def difference(a: np.ndarray, b: np.ndarray) -> float:
                return float(a.mean() - b.mean())

            # without people's votes on such pairs the judge's share stands alone
            compared = len(people_wins) > 0
            low, high = (
                _bootstrap(difference, judge_wins, people_wins)
                if compared
                else (math.nan, math.nan)
            )
            rows.append(
                {"job": job, "level": "pair", "instrument_id": None, "item": question,
                 "judge": judge, "family": family, "own_systems": ", ".join(sorted(own)),
                 "judge_own": float(judge_wins.mean()), "judge_other": math.nan,
                 "people_own": float(people_wins.mean()) if compared else math.nan,
                 "people_other": math.nan,
                 "self_preference": difference(judge_wins, people_wins) if compared else math.nan,
                 "low": low, "high": high, "n_own": len(judge_wins),
                 "n_other": len(people_wins)}
            )  # fmt: skip
    return rows


def _own_wins(votes: pd.DataFrame, own: set[str]) -> np.ndarray:
    """1 where the family's system won a pair between it and another family's, else 0."""
    a_own = votes["system_a"].astype(str).isin(own)
    b_own = votes["system_b"].astype(str).isin(own)
    mixed = votes[a_own != b_own]
    won = np.where(
        mixed["system_a"].astype(str).isin(own),
        mixed["winner"].astype(str) == "a",
        mixed["winner"].astype(str) == "b",
    )
    return won.astype(float)


def _systems(part: pd.DataFrame) -> dict[str, str]:
    """target -> its system, where the ratings say."""
    if "system" not in part.columns:
        return {}
    return {
        str(t): str(s) for t, s in zip(part["target"], part["system"], strict=True) if s is not None
    }


def _prediction_powered(
    where: Mapping[str, object],
    judge: str,
    judged: np.ndarray,
    people: np.ndarray,
    systems: Mapping[str, str],
    bounds: tuple[float, float],
    targets: pd.Index | None = None,
) -> list[dict[str, object]]:
    """Pooled, then per system when there are two or more; ``bounds``: the scale's ends."""
    from analytics.statistics.prediction_powered import prediction_powered_mean

    rows = []
    names = list(systems.values()) if systems else []
    groups: list[tuple[str | None, np.ndarray]] = [(None, np.ones(len(judged), dtype=bool))]
    if len(set(names)) >= 2 and targets is not None:
        of = np.array([systems.get(str(t)) for t in targets], dtype=object)
        groups += [(s, of == s) for s in sorted(set(names))]
    for system, mask in groups:
        j, p = judged[mask], people[mask]
        seen = ~np.isnan(j)
        rated = seen & ~np.isnan(p)
        found = prediction_powered_mean(j[seen & ~rated], j[rated], p[rated], bounds)
        if found is None:
            continue
        rows.append(
            {**where, "judge": judge, "system": system, "n_judged": found.n_judged,
             "n_people": found.n_people, "mean": found.prediction_powered.value,
             "low": found.prediction_powered.low, "high": found.prediction_powered.high,
             "people_mean": found.people_only.value, "people_low": found.people_only.low,
             "people_high": found.people_only.high, "judge_mean": found.judge_only.value,
             "judge_low": found.judge_only.low, "judge_high": found.judge_only.high,
             "equivalent_people": found.equivalent_people,
             "ratings_saved": found.ratings_saved, "power": found.power}
        )  # fmt: skip
    return rows


_SCORE = {"a": 1.0, "b": 0.0, "tie": 0.5, "both_bad": 0.5}
"""The score of the system shown as A: a win 1, a loss 0, a tie or 'both bad' half."""


def _win_rates_powered(votes: pd.DataFrame) -> list[dict[str, object]]:
    """Per ACUTE job, question, judge and system: the system's win rate (its mean score
    over the pairs it was in) by prediction-powered inference. The judge's verdict on every
    pair it judged (a verdict that flipped with the order: half, never a win) corrected by
    its error where people voted on the same pair (people's mean score of the system)."""
    from analytics.statistics.prediction_powered import prediction_powered_mean

    acute = votes[(votes["source"].astype(str) == "acute") & ~votes["onboarding"].astype(bool)]
    acute = acute[acute["winner"].astype(str).isin(list(_SCORE))]
    if acute.empty:
        return []
    parts = acute["vote_id"].astype(str).str.split(":")
    acute = acute.assign(job=parts.str[0], target=parts.str[1])
    model = acute["rater_kind"].astype(str) == MODEL
    reason = acute["flag_reason"].astype(str)
    verdicts = acute[model & (reason == "model_verdict")]
    flipped = acute[model & (reason == "inconsistent") & acute["vote_id"].str.endswith(":ab")]
    people = acute[~model & ~acute["flagged"].astype(bool)]
    judged = pd.concat([verdicts, flipped.assign(winner="tie")])
    rows: list[dict[str, object]] = []
    for (job, question), mine in judged.groupby(["job", "question"], sort=True):
        theirs = people[(people["job"] == job) & (people["question"] == question)]
        systems = sorted(set(mine["system_a"].astype(str)) | set(mine["system_b"].astype(str)))
        for judge, given in mine.groupby("rater", sort=True):
            for system in systems:
                by_judge = _scores_of(given, system).groupby(level=0).first()
                by_people = _scores_of(theirs, system).groupby(level=0).mean()
                both = by_judge.index.intersection(by_people.index)
                found = prediction_powered_mean(
                    by_judge.drop(both).to_numpy(float),
                    by_judge[both].to_numpy(float),
                    by_people[both].to_numpy(float),
                    (0.0, 1.0),
                )
                if found is None:
                    continue
                rows.append(
                    {"job": job, "level": "pair", "instrument_id": None, "item": question,
                     "judge": judge, "system": system, "n_judged": found.n_judged,
                     "n_people": found.n_people, "mean": found.prediction_powered.value,
                     "low": found.prediction_powered.low,
                     "high": found.prediction_powered.high,
                     "people_mean": found.people_only.value, "people_low": found.people_only.low,
                     "people_high": found.people_only.high, "judge_mean": found.judge_only.value,
                     "judge_low": found.judge_only.low, "judge_high": found.judge_only.high,
                     "equivalent_people": found.equivalent_people,
                     "ratings_saved": found.ratings_saved, "power": found.power}
                )  # fmt: skip
    return rows


def _scores_of(votes: pd.DataFrame, system: str) -> pd.Series:
    """The system's score in each vote of a pair it was in, indexed by the pair."""
    as_a = votes["system_a"].astype(str) == system
    as_b = votes["system_b"].astype(str) == system
    shown = votes[as_a | as_b]
    first = shown["winner"].astype(str).map(_SCORE).astype(float)
    score = np.where(shown["system_a"].astype(str) == system, first, 1.0 - first)
    return pd.Series(score, index=shown["target"].astype(str).to_numpy())


def _verdict(judge: float, human: float, targets: int) -> str:
    if targets < MIN_TARGETS or math.isnan(judge) or math.isnan(human):
        return UNCLEAR
    return AS_PEOPLE if judge >= human else BELOW_PEOPLE


def _adjudicated(
    final: pd.DataFrame,
    job: object,
    level: object,
    instrument: object,
    item: object,
    scale: ItemScale,
    targets: pd.Index,
) -> np.ndarray:
    mine = final[
        (final["job"] == job) & (final["level"] == level)
        & (final["instrument_id"] == instrument) & (final["item"] == item)
    ]  # fmt: skip
    values = {str(t): scale.code(v) for t, v in zip(mine["target"], mine["value"], strict=True)
              if v is not None}  # fmt: skip
    return np.array([values.get(str(t), math.nan) for t in targets], dtype=float)


def _length(
    where: Mapping[str, object],
    wide: pd.DataFrame,
    judges: list[str],
    people: list[str],
    level: object,
    lengths: Mapping[tuple[str, str], float],
) -> list[dict[str, object]]:
    size = np.array([lengths.get((str(level), str(t)), math.nan) for t in wide.columns])
    rows = []
    raters: list[tuple[str, np.ndarray]] = [(j, wide.loc[j].to_numpy(float)) for j in judges]
    if people:
        raters.append(("people (mean)", wide.loc[people].mean(axis=0).to_numpy(float)))
    for rater, values in raters:
        rho, low, high, n = spearman_interval(np.vstack([values, size]))
        rows.append({**where, "rater": rater, "rho": rho, "low": low, "high": high, "n": n})
    return rows


def _no_position() -> pd.DataFrame:
    return pd.DataFrame(columns=POSITION_COLUMNS)


def position_bias(votes: pd.DataFrame) -> pd.DataFrame:
    """Per job and question: each judge's swap consistency (pairs whose verdict stayed
    when the order was swapped) and first-position win rate (of all its verdicts, both
    orders); people's first-position win rate beside them."""
    acute = votes[votes["source"].astype(str) == "acute"]
    acute = acute[~acute["onboarding"].astype(bool)]
    if acute.empty:
        return _no_position()
    job_of = acute["vote_id"].astype(str).str.split(":").str[0]
    acute = acute.assign(job=job_of)
    rows = []
    for (job, question), part in acute.groupby(["job", "question"], sort=True):
        models = part[part["rater_kind"].astype(str) == MODEL]
        for rater, mine in models.groupby("rater", sort=True):
            pairs = mine["session"].nunique()
            flipped = mine[mine["flag_reason"].astype(str) == "inconsistent"]["session"].nunique()
            first = int((mine["winner"].astype(str) == "a").sum())
            kept_low, kept_high = wilson_interval(pairs - flipped, pairs)
            first_low, first_high = wilson_interval(first, len(mine))
            rows.append(
                {"job": job, "question": question, "rater": rater, "pairs": pairs,
                 "consistent": pairs - flipped, "share_consistent": (pairs - flipped) / pairs,
                 "consistent_low": kept_low, "consistent_high": kept_high,
                 "verdicts": len(mine), "first_wins": first,
                 "share_first_wins": first / len(mine), "first_wins_low": first_low,
                 "first_wins_high": first_high}
            )  # fmt: skip
        people = part[part["rater_kind"].astype(str) != MODEL]
        if len(people):
            first = int((people["winner"].astype(str) == "a").sum())
            first_low, first_high = wilson_interval(first, len(people))
            rows.append(
                {"job": job, "question": question, "rater": "people",
                 "pairs": people["session"].nunique(), "consistent": None,
                 "share_consistent": math.nan, "consistent_low": math.nan,
                 "consistent_high": math.nan, "verdicts": len(people), "first_wins": first,
                 "share_first_wins": first / len(people), "first_wins_low": first_low,
                 "first_wins_high": first_high}
            )  # fmt: skip
    return pd.DataFrame(rows, columns=POSITION_COLUMNS)
