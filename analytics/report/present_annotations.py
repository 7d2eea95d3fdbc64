"""The annotation section as blocks: agreement between annotators per job, item, level and
system, each annotator left out in turn, each annotator's ratings, adjudication, the
relation to the participants' self-reports, and (HTML) ratings turn by turn.

Nothing here when the study has no annotation ratings: the section is absent, not empty.
"""

from __future__ import annotations

import pandas as pd

from analytics.annotations.agreement import CONFIDENCE, RESAMPLES, SEED
from analytics.annotations.ratings import ADJUDICATION_RULE, ICC_QUESTION, Annotations
from analytics.report import document as d
from analytics.report.document import Block, Figure, Heading, Paragraph
from analytics.report.numbers import Report
from analytics.report.present_judges import beside_people

STATISTIC_NAMES = {
    "ICC1": "ICC(1,1)",
    "ICC2": "ICC(2,1)",
    "ICC3": "ICC(3,1)",
    "ICC1k": "ICC(1,k)",
    "ICC2k": "ICC(2,k)",
    "ICC3k": "ICC(3,k)",
    "alpha_nominal": "Krippendorff's α, nominal",
    "alpha_ordinal": "Krippendorff's α, ordinal",
    "alpha_interval": "Krippendorff's α, interval",
    "alpha_ratio": "Krippendorff's α, ratio",
    "cohen_kappa": "Cohen's κ",
    "cohen_kappa_linear": "Cohen's κ, linear weights",
    "cohen_kappa_quadratic": "Cohen's κ, quadratic weights",
    "fleiss_kappa": "Fleiss' κ",
    "percent_agreement": "Agreement",
}
LEVEL_NAMES = {"exchange": "per exchange", "session": "overall (per session)"}
_BRIEF = ("ICC2", "ICC2k", "cohen_kappa", "cohen_kappa_quadratic", "fleiss_kappa")
"""The figures the leave-one-out table shows beside the alpha that fits each item."""


def annotation_blocks(report: Report) -> list[Block]:
    """The whole section; nothing when the study has no annotation ratings."""
    found = report.annotations
    if found is None:
        return []
    blocks: list[Block] = [Heading("Annotations"), *_method()]
    if found.notes:
        blocks += [Paragraph(note, "note") for note in found.notes]
    for job in found.jobs:
        blocks += _job(found, job, beside_people(_where(found.reliability, job), report.judges))
    return blocks


def _method() -> list[Block]:
    tail = round((1 - CONFIDENCE) / 2 * 100, 1)
    return [
        Paragraph(
            "Agreement between annotators, per job, item and level (each exchange; overall, "
            "once per session), over all targets and per system when several were rated; "
            "a target is one session, exchange or piece of material of one job, never pooled "
            "with another of the same id. Only the first round counts: a third annotator "
            "asked where the first two differed sees only disagreements. "
            f"{ICC_QUESTION} ICC (pingouin, with its F test) uses the targets every "
            "annotator rated; Krippendorff's α takes missing ratings as they come, at every "
            "level of measurement the item allows, and the one marked * (to report) fits the "
            "item (ordinal for scales unless the instrument declares otherwise, nominal for "
            "yes/no and choice items). Cohen's κ for two annotators (for scales weighted "
            "linearly, |i − j|, and quadratically, (i − j)²), Fleiss' κ for more (in the "
            "form for unequal numbers of ratings per target, Gwet 2014); agreement is the "
            "share of pairs of ratings of a target that are equal. "
            f"Intervals: {CONFIDENCE:.0%}; for ICC the F-based interval, for α, κ and "
            f"agreement a bootstrap over targets ({RESAMPLES:,} resamples, seed {SEED}, "
            f"the {tail}th and {100 - tail}th percentiles).",
            "method",
        ),
        Paragraph(ADJUDICATION_RULE, "method"),
    ]


def _where(table: pd.DataFrame, job: str) -> pd.DataFrame:
    return table[table["job"] == job]


def _job(found: Annotations, job: str, shown: pd.DataFrame) -> list[Block]:
    """One job's tables; ``shown`` its reliability rows, with a judge's beside people's."""
    blocks: list[Block] = [Heading(f"Job {job}", 3)]
    rated = _where(found.annotators, job)
    instruments = ", ".join(dict.fromkeys(rated["instrument_id"].astype(str)))
    if instruments:
        blocks.append(
            Paragraph(f"Rated with {instruments}; items are named without their prefix.", "method")
        )
    reliability = _where(found.reliability, job)
    if len(shown):
        blocks += _reliability_tables(shown)
    without = _where(found.leave_one_out, job)
    if len(without):
        blocks.append(_leave_one_out_table(reliability, without))
    annotators = _where(found.annotators, job)
    if len(annotators):
        blocks.append(_annotator_table(annotators))
    adjudication = _where(found.adjudication, job)
    if len(adjudication):
        blocks.append(_adjudication_table(adjudication))
    finals = _where(found.final_by_system, job)
    if len(finals):
        blocks.append(_final_table(finals))
    self_report = _where(found.self_report, job)
    if len(self_report):
        blocks.append(_self_report_table(self_report))
    if len(_where(found.trajectories, job)):
        blocks.append(
            Figure(
                "trajectories",
                job,
                f"{found.title(job)}: each conversation's ratings turn by turn, averaged over"
                " annotators",
            )
        )
    return blocks


def _what(row: dict) -> str:
    """``q1_recommendation_rate · per exchange``: the item without its instrument's prefix
    (the instrument is named in the job), and the level."""
    item, prefix = str(row["item"]), f"{row['instrument_id']}."
    short = item.removeprefix(prefix) if item.startswith(prefix) and item != prefix else item
    return f"{short} · {LEVEL_NAMES.get(str(row['level']), str(row['level']))}"


def _system(value: object) -> str:
    return "all" if d.missing(value) else str(value)


def _value(row: dict) -> str:
    as_share = row["statistic"] == "percent_agreement"
    show = d.pct if as_share else d.num
    value = show(row["value"])
    if value == d.DASH or d.missing(row["ci_low"]):
        return value
    return f"{value} ({show(row['ci_low'])}, {show(row['ci_high'])})"


def _f_test(row: dict) -> str:
    if d.missing(row["f"]):
        return ""
    return f"F({int(row['df1'])}, {int(row['df2'])}) = {d.num(row['f'])}"


def _p(row: dict) -> str:
    return "" if d.missing(row["p"]) else d.p_value(row["p"])


def _reliability_tables(table: pd.DataFrame) -> list[Block]:
    """The ICC forms with their F tests (scale items), then every other coefficient."""
    icc = table["statistic"].astype(str).str.startswith("ICC")
    judged = int("raters" in table.columns)  # a Raters column where a model judge rated
    blocks: list[Block] = []
    if icc.any():
        forms = [
            (_what(r), _system(r["system"]), STATISTIC_NAMES[str(r["statistic"])],
             *_raters(r, judged), _value(r), _f_test(r), _p(r), d.count(r["n_targets"]),
             _note(r))
            for r in table[icc].to_dict("records")
        ]  # fmt: skip
        blocks.append(
            d.table(
                ("Item · level", "System", "Form", *_RATERS[:judged], "ICC (95% CI)", "F test",
                 "p", "Targets", "Note"),
                forms,
                caption="Intraclass correlations (first round, targets every annotator rated)"
                + (_MARKED if judged else ""),
                numeric=(False, False, False, *(False,)[:judged], True, True, True, True, False),
                group_by=0,
            )
        )  # fmt: skip
    rows = [
        (_what(r), _system(r["system"]),
         STATISTIC_NAMES.get(str(r["statistic"]), str(r["statistic"]))
         + (" *" if r["reported"] else ""),
         *_raters(r, judged), _value(r), d.count(r["n_targets"]), d.count(r["n_annotators"]),
         _note(r))
        for r in table[~icc].to_dict("records")
    ]  # fmt: skip
    if rows:
        blocks.append(
            d.table(
                ("Item · level", "System", "Statistic", *_RATERS[:judged], "Value (95% CI)",
                 "Targets", "Annotators", "Note"),
                rows,
                caption="Agreement between annotators (first round; * the α to report)"
                + (_MARKED if judged else ""),
                numeric=(False, False, False, *(False,)[:judged], True, True, True, False),
                group_by=0,
            )
        )  # fmt: skip
    return blocks


_RATERS = ("Raters",)
_MARKED = (
    "; a row of raters 'people + model' adds a model judge to the annotators and follows"
    " people's own figure"
)


def _raters(row: dict, judged: int) -> tuple[str, ...]:
    """The Raters cell, in a table that has the column: people, or people and a model."""
    return (str(row["raters"]),) if judged else ()


def _note(row: dict) -> str:
    return "" if d.missing(row["note"]) else str(row["note"])


def _leave_one_out_table(reliability: pd.DataFrame, without: pd.DataFrame) -> d.Table:
    """Over all systems: the chief figures with every annotator, then without each one."""
    fitting = set(reliability.loc[reliability["reported"].astype(bool), "statistic"])
    shown = [s for s in STATISTIC_NAMES if s in _BRIEF or s in fitting]
    shown = [s for s in shown if s in set(without["statistic"])]
    pooled = reliability[reliability["system"].isna()].assign(left_out=None)
    both = pd.concat([pooled, without[without["system"].isna()]], ignore_index=True)
    rows = []
    keys = ["instrument_id", "item", "level"]
    for _, part in both.groupby(keys, sort=False):
        for left_out, group in part.groupby("left_out", sort=False, dropna=False):
            values = {r["statistic"]: r for r in group.to_dict("records")}
            first = group.iloc[0].to_dict()
            rows.append(
                (
                    _what(first),
                    "none (all annotators)" if d.missing(left_out) else str(left_out),
                    *(_value(values[s]) if s in values else d.DASH for s in shown),
                )
            )
    return d.table(
        ("Item · level", "Left out", *(STATISTIC_NAMES[s] for s in shown)),
        rows,
        caption="Each annotator left out in turn (all systems): a divergent annotator stands out",
        numeric=(False, False, *[True] * len(shown)),
        group_by=0,
    )


def _annotator_table(table: pd.DataFrame) -> d.Table:
    rows = []
    for r in table.to_dict("records"):
        mean = d.DASH if d.missing(r["mean"]) else f"{d.num(r['mean'])} ({d.num(r['sd'])})"
        spread = " ".join(f"{answer}:{n}" for answer, n in r["distribution"].items())
        adjudicated = f" ({r['n_adjudication']} as third)" if r["n_adjudication"] else ""
        rows.append((_what(r), str(r["annotator"]), d.count(r["n"]) + adjudicated, mean, spread))
    return d.table(
        ("Item · level", "Annotator", "Ratings", "Mean (SD)", "Distribution"),
        rows,
        caption="Each annotator's ratings",
        numeric=(False, False, True, True, False),
        group_by=0,
    )


def _adjudication_table(table: pd.DataFrame) -> d.Table:
    rows = [
        (_what(r), d.count(r["n_targets"]), d.share_of(r["n_disagreed"], r["n_targets"]),
         d.share_of(r["n_adjudicated"], r["n_targets"]), d.count(r["n_unresolved"]))
        for r in table.to_dict("records")
    ]  # fmt: skip
    return d.table(
        ("Item · level", "Targets", "First round differed", "Third annotator asked", "Unresolved"),
        rows,
        caption="Adjudication (the final value of every target is in the JSON report)",
        numeric=(False, True, True, True, True),
    )


def _final_table(table: pd.DataFrame) -> d.Table:
    rows = []
    for r in table.to_dict("records"):
        mean = d.DASH if d.missing(r["mean"]) else f"{d.num(r['mean'])} ({d.num(r['sd'])})"
        spread = " ".join(f"{answer}:{n}" for answer, n in r["distribution"].items())
        rows.append(
            (_what(r), _system(r["system"]), d.share_of(r["n_resolved"], r["n_targets"]), mean,
             spread or d.DASH)
        )  # fmt: skip
    return d.table(
        ("Item · level", "System", "Targets with a final value", "Mean (SD)", "Final values"),
        rows,
        caption="What the adjudicated (final) values say, per system",
        numeric=(False, False, True, True, False),
        group_by=0,
    )


def _self_report_table(table: pd.DataFrame) -> d.Table:
    rows = []
    for r in table.to_dict("records"):
        kind = "construct" if r["measure_kind"] == "construct" else "item"
        rho = d.num(r["rho"])
        if not d.missing(r["rho"]):
            rho += f" ({d.num(r['ci_low'])}, {d.num(r['ci_high'])})"
        rows.append(
            (str(r["item"]), f"{r['questionnaire_id']}: {r['measure']} ({kind})",
             _system(r.get("system")), d.count(r["n"]), rho, _p(r),
             "" if d.missing(r["note"]) else str(r["note"]))
        )  # fmt: skip
    return d.table(
        ("Annotators' overall rating", "Self-report", "System", "Conversations",
         "Spearman's ρ (95% CI)", "p", "Note"),
        rows,
        caption="The annotators' mean overall rating of a conversation against what its "
        "participant reported, over all systems and per system (Spearman's ρ with the "
        "Bonett–Wright interval, Fisher z with variance (1 + ρ²/2)/(n − 3); p as R's "
        "cor.test: exact over every ordering up to 9 conversations, AS 89's Edgeworth "
        "series up to 1290, t with n − 2 df with ties; at least 4 conversations)",
        numeric=(False, False, False, True, True, True, False),
        group_by=0,
    )  # fmt: skip
