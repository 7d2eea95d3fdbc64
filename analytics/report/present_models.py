"""The models section as blocks: task success across systems by GEE, and the mixed model of
each score participants gave several times, with the formula in words; and the sentence
that says how the completion section's intervals were computed."""

from __future__ import annotations

import pandas as pd

from analytics.report import document as d
from analytics.report.document import Block, Heading, Paragraph
from analytics.report.numbers import Report
from analytics.statistics.clustered import WILSON


def interval_words(table: pd.DataFrame) -> str:
    """How the success rates' intervals were computed, for the completion section."""
    methods = set(table["ci_method"].dropna()) if "ci_method" in table.columns else set()
    if methods <= {WILSON}:
        return "Success rates with Wilson's 95% interval"
    return (
        "Some participants did several tasks, so a system's sessions are not independent: "
        "where they did, the success rate is a GEE's estimate with its 95% interval, clustered "
        "by participant (binomial, exchangeable working correlation, robust standard errors; "
        "each row's method is in the JSON report's ci_method; with unequal numbers of tasks "
        "the estimate may differ a little from succeeded / tasks), elsewhere succeeded / tasks "
        "with Wilson's"
    )


def interval_caption(table: pd.DataFrame) -> str:
    """The completion figure's words for its intervals."""
    methods = set(table["ci_method"].dropna()) if "ci_method" in table.columns else set()
    return "95% Wilson intervals" if methods <= {WILSON} else "95% intervals (see the method)"


def model_blocks(report: Report) -> list[Block]:
    """Nothing when no participant did several tasks or gave a score twice."""
    models = report.models
    if models is None:
        return []
    blocks: list[Block] = [
        Heading("Models for repeated measures"),
        Paragraph(
            "Where participants did several tasks or gave a score more than once, their "
            "answers are not independent: the participant, not the session, is the unit "
            "sampled. These models account for it; the tests over participants in the "
            "comparison of systems average each participant's answers per system. The models' "
            "p-values are not in Holm's family (they are not corrected).",
            "method",
        ),
    ]
    blocks += _success(models.success_test, models.success_terms)
    for fit in models.fits.to_dict("records"):
        blocks += _mixed(fit, models.terms)
    return blocks


def _success(test: pd.DataFrame, odds: pd.DataFrame) -> list[Block]:
    if test.empty:
        return []
    row = test.iloc[0].to_dict()
    blocks: list[Block] = [
        Heading("Task success across systems", 3),
        Paragraph(row["method"], "method"),
    ]
    if not d.missing(row["note"]):
        blocks.append(Paragraph(f"Not tested: {row['note']}.", "note"))
        return blocks
    p = d.p_value(row["p"])
    blocks.append(
        Paragraph(
            f"χ²({int(row['df'])}) = {d.num(row['chi2'])}, p {p if p.startswith('<') else '= ' + p}"
            f" ({d.count(row['n_sessions'])} tasks of {d.count(row['n_participants'])} "
            f"participants; working correlation within a participant "
            f"{d.num(row['working_correlation'])})."
        )
    )
    blocks.append(
        d.table(
            ("System", "Against", "Odds ratio of success (95% CI)", "p"),
            [
                (
                    r["system_id"],
                    r["reference"],
                    f"{d.num(r['odds_ratio'])} ({_between(r['ci_low'], r['ci_high'])})",
                    d.p_value(r["p"]),
                )
                for r in odds.to_dict("records")
            ],
            caption="Odds ratios of task success against the first system (GEE)",
            numeric=(False, False, True, True),
        )
    )
    return blocks


def _between(low: object, high: object) -> str:
    """``0.33–1.01``, or ``−1.16 to −0.24`` where a dash would read as a minus."""
    first, second = d.num(low), d.num(high)
    joint = " to " if "−" in first + second else "–"
    return f"{first}{joint}{second}"


def _mixed(fit: dict, terms: pd.DataFrame) -> list[Block]:
    name = (
        f"{fit['questionnaire_id']}: {fit['measure']}"
        if fit["measure_kind"] == "construct"
        else str(fit["measure"])
    )
    blocks: list[Block] = [Heading(f"Mixed model of {name}", 3)]
    scenarios = (
        f", {d.count(fit['n_scenarios'])} scenarios"
        if fit["n_scenarios"] and fit["n_scenarios"] > 1
        else ""
    )
    blocks.append(
        Paragraph(
            f"{fit['method']}. Model: {fit['formula']}. "
            f"{d.count(fit['n_scores'])} scores of {d.count(fit['n_participants'])} "
            f"participants{scenarios}.",
            "method",
        )
    )
    note = "" if d.missing(fit["note"]) else str(fit["note"])
    if fit["dropped"]:
        blocks.append(
            Paragraph(
                f"Left out: {fit['dropped']}."
                + (
                    " An aliased term is one the design cannot tell from the others."
                    if "(aliased)" in str(fit["dropped"])
                    else ""
                ),
                "note",
            )
        )
    if note:
        blocks.append(Paragraph(f"Not fitted: {note}.", "note"))
        return blocks
    mine = terms[
        (terms["measure_kind"] == fit["measure_kind"])
        & (terms["questionnaire_id"] == fit["questionnaire_id"])
        & (terms["measure"] == fit["measure"])
    ]
    variances = [f"participants {d.num(fit['var_participant'], 3)}"]
    if not d.missing(fit["var_scenario"]):
        variances.append(f"scenarios {d.num(fit['var_scenario'], 3)}")
    t_test = fit["statistic"] == "t"
    if t_test:
        variances.append(f"residual {d.num(fit['var_residual'], 3)}")
        estimated = "variances: " + ", ".join(variances)
    else:
        thresholds = ", ".join(d.num(t) for t in fit["thresholds"] or ())
        estimated = f"variance of participants {d.num(fit['var_participant'], 3)} on the "
        estimated += f"latent logistic scale; thresholds {thresholds}"
    blocks.append(
        d.table(
            (
                "Term",
                "Estimate (95% CI)",
                "SE",
                *(("df",) if t_test else ()),
                fit["statistic"],
                "p",
            ),
            [
                (
                    r["term"],
                    f"{d.num(r['estimate'])} ({_between(r['ci_low'], r['ci_high'])})",
                    d.num(r["se"]),
                    *((d.num(r["df"], 1),) if t_test else ()),
                    d.num(r["statistic"]),
                    d.p_value(r["p"]),
                )
                for r in mine.to_dict("records")
            ],
            caption=f"Fixed effects of {name}; {estimated}",
            numeric=(False, True, True, *((True,) if t_test else ()), True, True),
        )
    )
    return blocks
