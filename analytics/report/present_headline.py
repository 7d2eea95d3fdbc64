"""The report's first section: the systems compared, every measure on one line.

What a reader of an evaluation wants first is which system did better on what: one row per
measure (task success, then each construct and item the comparison tests), each system's
value beside it (a success rate with its interval, a mean with its SD), and the measure's
headline test with its p and effect size. The details of each measure follow in their own
sections; every test, pairs included, follows this table.
"""

from __future__ import annotations

import math
from typing import Any

import pandas as pd

from analytics.report import document as d
from analytics.report.document import Block
from analytics.report.models import ModelsSection
from analytics.report.numbers import Report
from analytics.report.present_success import NOT_MEASURED, not_measured
from analytics.statistics import effect_intervals as ci


def _p(value: object) -> str:
    p = d.p_value(value)
    return f"p {p}" if p.startswith("<") else f"p = {p}"


def result_words(r: dict, family: int, adjust: str = "headline") -> str:
    """``U = 895.0, p = .012 (Holm, 5 measures: .060), rank-biserial r = 0.60``, or why
    there is no test."""
    if d.missing(r["p"]):
        return "not tested: " + ("" if d.missing(r["note"]) else str(r["note"]))
    p = _p(r["p"])
    if not d.missing(r.get("p_mc_error")):
        error = f"{float(r['p_mc_error']):.4f}".removeprefix("0")
        p += f" (Monte Carlo standard error {error})"
    if adjust == "all" and family > 1 and not d.missing(r.get("p_family")):
        p += f" (Holm across all {family} tests: {d.p_value(r['p_family'])})"
    elif r["kind"] == "pairwise":
        p += f" (Holm within the measure: {d.p_value(r['p_holm'])})"
    elif family > 1 and not d.missing(r.get("p_family")):
        p += f" (Holm across {family} measures: {d.p_value(r['p_family'])})"
    parts = []
    if not d.missing(r["statistic"]):
        parts.append(f"{r['statistic_name']} = {d.num(r['statistic'], 1)}")
    parts.append(p)
    if not d.missing(r["effect_name"]):
        parts.append(effect_words(r))
    if not d.missing(r.get("note")):
        parts.append(str(r["note"]))
    return ", ".join(parts)


INTERVAL_WORDS = {
    ci.FISHER_Z: "Fisher z",
    ci.CONDITIONAL: "exact conditional",
    ci.CLOPPER_PEARSON: "exact, Clopper–Pearson",
    ci.BOOTSTRAP: "participant bootstrap",
    ci.BOOTSTRAP_STRATA: "participant bootstrap",
    ci.WALD_ROBUST: "Wald, robust SE",
}
"""The interval's method in a few words for a table cell; the JSON's ``effect_ci_method``
and the comparisons' method paragraph say it in full."""


def effect_words(r: dict) -> str:
    """``rank-biserial r = 0.60 (shop-v1 over shop-v0), 95% CI [0.21, 0.82] (Fisher z)``:
    the effect, which way round it reads (a reader cannot tell from the sign), its interval
    and the interval's method."""
    odds = "odds ratio" in str(r["effect_name"])
    words = f"{r['effect_name']} = {_effect(r['effect'], odds)}"
    if not d.missing(r.get("effect_direction")):
        words += f" ({r['effect_direction']})"
    if d.missing(r.get("effect_ci_low")) or d.missing(r.get("effect_ci_high")):
        return words
    low, high = (_effect(r[k], odds) for k in ("effect_ci_low", "effect_ci_high"))
    how = INTERVAL_WORDS.get(str(r.get("effect_ci_method")), str(r.get("effect_ci_method")))
    return f"{words}, 95% CI [{low}, {high}] ({how})"


def _effect(value: Any, odds: bool) -> str:
    """Odds ratios in three significant digits (0.0469 is not 0.05), others as numbers."""
    if not odds or d.missing(value) or math.isinf(float(value)) or float(value) == 0:
        return d.num(value)
    return f"{float(value):.3g}"


def headline_table(report: Report) -> Block | None:
    """One row per measure with each system's value and the measure's headline test."""
    systems = list(report.study.systems)
    rows: list[tuple[str, ...]] = []
    completion = report.completion.by_system
    if len(completion):
        rows += _success_rows(completion, systems, report.models)
    table = report.comparisons.table
    if len(table):
        headline = table[table["kind"] != "pairwise"]
        comparisons = report.comparisons
        for r in headline.to_dict("records"):
            values = _values(report, r)
            rows.append(
                (
                    _measure(report, r),
                    *(values.get(s, d.DASH) for s in systems),
                    str(r["test"]),
                    result_words(r, comparisons.family, comparisons.adjust),
                )
            )
    if not rows:
        return None
    return d.table(
        ("Measure", *systems, "Test", "Result"),
        rows,
        caption="Every measure at a glance: per system the rate (95% interval: Wilson's, or the "
        "GEE's when participants did several tasks) or "
        "the mean (SD) of the answers; the measure's headline test with p and effect size, the "
        "effect's 95% interval with its method",
        numeric=(False, *[True] * len(systems), False, False),
    )


def _success_rows(
    completion: pd.DataFrame, systems: list[str], models: ModelsSection | None
) -> list[tuple[str, ...]]:
    by_system = {str(r["system_id"]): r for r in completion.to_dict("records")}
    kinds = [("Task success (system reported)", "success_rate", "ci_low", "ci_high", "n")]
    if "correct_n" in completion.columns and bool((completion["correct_n"] > 0).any()):
        kinds.append(("Task done correctly", "correct_rate", "correct_ci_low",
                      "correct_ci_high", "correct_n"))  # fmt: skip
    rows = []
    for label, rate, low, high, n in kinds:
        cells = []
        for system in systems:
            r = by_system.get(system)
            if r is not None and rate == "success_rate" and not_measured(r):
                cells.append(NOT_MEASURED)
            elif r is None or d.missing(r[rate]):
                cells.append(d.DASH)
            else:
                cells.append(f"{d.rate(r[rate], r[low], r[high])}, n = {d.count(r[n])}")
        rows.append((label, *cells, "described", "not tested"))
    if models is not None and len(models.success_test):
        test, result = _gee_words(models)
        rows[0] = (*rows[0][:-2], test, result)
    return rows


def _gee_words(models: ModelsSection) -> tuple[str, str]:
    """The GEE of success between systems (participants did several tasks): the Wald test,
    then each system's odds ratio of success against the first with its 95% interval."""
    test = "GEE (sessions clustered by participant)"
    row = models.success_test.iloc[0].to_dict()
    if d.missing(row["p"]):
        return test, "not tested: " + ("" if d.missing(row["note"]) else str(row["note"]))
    words = [f"Wald χ²({int(row['df'])}) = {d.num(row['chi2'], 1)}", _p(row["p"])]
    for term in models.success_terms.to_dict("records"):
        low, high = (_effect(term[k], True) for k in ("ci_low", "ci_high"))
        words.append(
            f"odds ratio of success, {term['system_id']} vs {term['reference']} = "
            f"{_effect(term['odds_ratio'], True)}, 95% CI [{low}, {high}] (robust Wald)"
        )
    return test, ", ".join(words)


def _measure(report: Report, r: dict) -> str:
    """The measure in the participants' words: an item's wording, a construct's name."""
    if r["measure_kind"] == "construct":
        return f"{r['measure']} ({r['questionnaire_id']}, construct)"
    codebook = report.questionnaires.codebook
    found = codebook[
        (codebook["questionnaire_id"] == r["questionnaire_id"])
        & (codebook["item_id"] == r["measure"])
    ]
    if found.empty or d.missing(found["text"].iloc[0]):
        return str(r["measure"])
    reverse = " (R)" if bool(found["reverse"].iloc[0]) else ""
    return d.shorten(found["text"].iloc[0], 80) + reverse


def _values(report: Report, r: dict) -> dict[str, str]:
    """Each system's value of the measure: the mean (SD) of its answers or construct
    scores, or for yes/no items the share answering yes."""
    q = report.questionnaires
    if r["measure_kind"] == "construct":
        part = q.constructs[
            (q.constructs["questionnaire_id"] == r["questionnaire_id"])
            & (q.constructs["construct"] == r["measure"])
        ]
    else:
        part = q.items[
            (q.items["questionnaire_id"].astype(object) == r["questionnaire_id"])
            & (q.items["item_id"] == r["measure"])
        ]
    out: dict[str, str] = {}
    for row in part.to_dict("records"):
        out[str(row["system_id"])] = _value(row)
    return out


def _value(row: dict[str, Any]) -> str:
    if d.missing(row.get("mean")):
        return f"n = {d.count(row.get('n'))}"
    if row.get("type") in ("yes_no", "thumbs"):  # coded 1 and 0: the mean is the share
        word = "yes" if row["type"] == "yes_no" else "up"
        return f"{d.pct(row['mean'])} {word}, n = {d.count(row['n'])}"
    return f"{d.num(row['mean'])} ({d.num(row['sd'])})"
