"""The pairwise section as blocks and as JSON: per question, the systems' scores with both
intervals and ranks, the shown-first term, win rates (and their heat map), comparisons per
pair, the sample-size line, raters' agreement with the majority, onboarding.

Nothing here when the study has no votes: the section is absent, not empty.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pandas as pd

from analytics.report import document as d
from analytics.report.document import Block, Figure, Heading, Paragraph
from analytics.report.numbers import Report
from analytics.report.plots import Chart
from analytics.statistics.pairwise import Pairwise, PairwiseOptions
from bot.core.vocabulary import FlagReason
from bot.core.votes import TURN_QUESTION

SOURCES = {
    "side_by_side": "side by side, turn by turn",
    "preference": "preference item after meeting both systems",
    "acute": "annotators comparing two logged conversations (ACUTE-Eval)",
}
MODELS = {"bradley_terry_half_ties": "ties as half a win", "davidson": "Davidson's ties"}
SCORE_HEADINGS = ("Rank", "System", "Elo-scale score", "Log-strength", "Comparisons",
                  "Won–lost–tied")  # fmt: skip


def pairwise_blocks(report: Report, limit: int | None = None) -> list[Block]:
    """The whole section; nothing when the study has no votes."""
    found = report.pairwise
    if found is None:
        return []
    blocks: list[Block] = [Heading("Pairwise comparisons"), *_method(found)]
    blocks += [Paragraph(note, "note") for note in found.notes]
    codebook = report.questionnaires.codebook
    for row in found.counts.to_dict("records"):
        blocks += _question(found, row, limit, question_wording(codebook, str(row["question"])))
    blocks += _onboarding(found)
    return blocks


TURN_WORDING = "Which reply is better? (side by side, each turn)"
"""What a side-by-side vote answers (its question is ``turn``), as the ballot asks it."""


def question_wording(codebook: pd.DataFrame, question: str) -> str:
    """What the raters were asked: a preference item's wording (its question is the item's
    id), an ACUTE question's (the item's id without its instrument's prefix), the
    side-by-side ballot's; the question itself only when nothing says more (votes imported
    from elsewhere)."""
    if question == TURN_QUESTION:
        return TURN_WORDING
    ids = codebook["item_id"].astype(str) if len(codebook) else pd.Series(dtype=str)
    exact = codebook[ids == question]
    found = exact if len(exact) else codebook[ids.str.endswith(f".{question}")]
    texts = {str(t) for t in found["text"] if not d.missing(t) and str(t).strip()}
    return texts.pop() if len(texts) == 1 else question


def choices(options: PairwiseOptions) -> str:
    """The protocol's choices, in the words of the study file's ``pairwise:``."""
    ties = "half a win each" if options.ties == "half" else "Davidson's tie model"
    both_bad = "left out" if options.both_bad == "exclude" else "counted as ties"
    anchor = options.anchor or "the first system with votes"
    strength = (
        "a win whatever its strength (strength: ignore)"
        if options.graded is None
        else f"'slightly' {options.graded:g} of a win (strength: graded)"
    )
    return (
        f"Choices (the study file's pairwise:): ties {ties} (ties: {options.ties}); "
        f"'both bad' votes {both_bad} (both_bad: {options.both_bad}); preferences {strength};"
        f" anchor {anchor} at "
        f"{options.anchor_score:g}; {options.rounds:,} bootstrap rounds, seed {options.seed}."
    )


def _method(found: Pairwise) -> list[Block]:
    m = found.methods
    return [
        Paragraph(choices(found.options), "method"),
        Paragraph(f"{m['model']}. Scale: {m['scale']}.", "method"),
        Paragraph(
            f"Intervals: {m['bootstrap']}; beside it the {m['sandwich']}. Rank: {m['rank']}.",
            "method",
        ),
        *(
            [Paragraph(f"No maximum-likelihood estimate: {m['separation']}.", "method")]
            if found.counts["estimator"].isin(["firth"]).any()
            or (~found.counts["identified"].astype(bool) & (found.counts["systems"] >= 2)).any()
            else []
        ),
    ]


def _interval(low: Any, high: Any, digits: int = 0) -> str:
    if d.missing(low) and d.missing(high):
        return d.DASH
    return f"{d.num(low, digits)} to {d.num(high, digits)}"


def flag_words(reasons: Mapping[str, int]) -> str:
    """Flagged votes by reason, each named and said in words: ``20 model_verdict: a model
    judge's verdict, the same in both orders; 4 inconsistent: …``."""
    known = {reason.value: reason.meaning for reason in FlagReason}
    return "; ".join(
        f"{d.count(n)} {reason}: {known.get(reason, 'a reason this ozlab does not know')}"
        for reason, n in reasons.items()
    )


def _question(found: Pairwise, row: dict[Any, Any], limit: int | None, wording: str) -> list[Block]:
    question = str(row["question"])
    sources = ", ".join(SOURCES.get(s, s) for s in str(row["sources"]).split(", "))
    left_out = [
        (row["flagged"], f"flagged ({flag_words(row['flag_reasons'])})"),
        (row["onboarding"], "onboarding pairs"),
        (row["not_comparable"], "not comparable (a side failed)"),
        (row["same_system"], "with one system on both sides"),
    ]
    if found.options.both_bad == "exclude":
        left_out.append((row["both_bad"], "'both bad'"))
    words = [f"{d.count(n)} {what}" for n, what in left_out if n]
    counted = (
        f"{d.count(row['votes'])} votes ({sources}), {d.count(row['fitted'])} fitted from "
        f"{d.plural(int(row['raters']), 'rater')}; ties {d.pct(row['tie_rate'], 1)} of the "
        f"fitted votes; 'both bad' {d.pct(row['both_bad_rate'], 1)} of all"
        + (" (counted as ties)" if found.options.both_bad == "tie" else "")
        + (f"; left out: {', '.join(words)}" if words else "")
        + "."
    )
    named = wording if wording == question else f"{wording} ({question})"
    blocks: list[Block] = [Heading(f"Question: {named}", 3), Paragraph(counted)]
    scores = found.scores[found.scores["question"] == question]
    if len(scores) and scores["log_strength"].isna().all():
        blocks += _wins(scores)
    elif len(scores):
        blocks += _scores(found, question, scores, row, wording)
    blocks += _win_rates(found, question, wording)
    blocks += _pairs(found, question, limit)
    blocks += _sample_size(found, question)
    blocks += _raters(found, question, limit)
    return blocks


def _scores(
    found: Pairwise, question: str, scores: pd.DataFrame, row: dict[Any, Any], wording: str
) -> list[Block]:
    level = f"{100 * found.options.level:g}%"
    rows = [
        (
            _rank(r),
            str(r["system"]) + (" (anchor)" if r["anchor"] else ""),
            d.num(r["elo"], 0),
            _interval(r["elo_boot_low"], r["elo_boot_high"]),
            _interval(r["elo_sandwich_low"], r["elo_sandwich_high"]),
            d.num(r["log_strength"], 3),
            d.count(r["comparisons"]),
            f"{int(r['wins'])}–{int(r['losses'])}–{int(r['ties'])}",
        )
        for r in scores.to_dict("records")
    ]
    blocks: list[Block] = [
        d.table(
            (*SCORE_HEADINGS[:3], f"{level} bootstrap", f"{level} sandwich", *SCORE_HEADINGS[3:]),
            rows,
            caption=("Firth's bias-reduced " if row["estimator"] == "firth" else "")
            + f"Bradley–Terry scores ({MODELS.get(row['model'], row['model'])}), anchor "
            f"{row['anchor']} = {found.options.anchor_score:g}"
            + ("; ranks by the wins alone" if row["estimator"] == "firth" else ""),
            numeric=(False, False, True, True, True, True, True, True),
        )
    ]
    if row["converged_rounds"] < row["rounds"]:
        blocks.append(
            Paragraph(
                f"{d.count(row['rounds'] - row['converged_rounds'])} of "
                f"{d.count(row['rounds'])} bootstrap rounds had no finite estimate (in "
                "the round a system won or lost all its comparisons, or the system shown "
                "first won every vote); they count at the end they go to, or at both ends "
                "for a parameter they leave undetermined, so an end that more than "
                f"{d.pct((1 - found.options.level) / 2, 1)} of the rounds reach is "
                "unbounded (∞).",
                "note",
            )
        )
    parameters = found.parameters[found.parameters["question"] == question]
    for p in parameters.to_dict("records"):
        if p["parameter"] == "shown_first":
            blocks.append(
                Paragraph(
                    f"Shown first: γ = {d.num(p['estimate'], 3)} ({level} bootstrap "
                    f"{_interval(p['boot_low'], p['boot_high'], 3)}; sandwich "
                    f"{_interval(p['sandwich_low'], p['sandwich_high'], 3)}): of two equal "
                    f"systems the one shown first would be preferred "
                    f"{d.rate(p['probability'], p['probability_low'], p['probability_high'])} "
                    "of the time (50% is no position effect)."
                )
            )
        elif p["parameter"] == "tie_log_nu":
            blocks.append(
                Paragraph(
                    f"Davidson's tie parameter: log ν = {d.num(p['estimate'], 3)} ({level} "
                    f"bootstrap {_interval(p['boot_low'], p['boot_high'], 3)})."
                )
            )
    blocks.append(
        Figure("pairwise_forest", question, f"Bradley–Terry scores with intervals: {wording}")
    )
    return blocks


def _wins(scores: pd.DataFrame) -> list[Block]:
    """No model can score systems that never met: their record and the order of the wins."""
    rows = [
        (
            _rank(r),
            str(r["system"]),
            d.count(r["comparisons"]),
            f"{int(r['wins'])}–{int(r['losses'])}–{int(r['ties'])}",
        )
        for r in scores.to_dict("records")
    ]
    return [
        d.table(
            ("Rank by wins", "System", "Comparisons", "Won–lost–tied"),
            rows,
            caption="Wins and the order they give (no Bradley–Terry score: the systems fall "
            "into groups that never met)",
            numeric=(False, False, True, True),
        )
    ]


def _rank(r: dict[Any, Any]) -> str:
    """``2`` or ``2–4``: Arena's rank, and the worst the intervals allow when different."""
    best, worst = int(r["rank"]), int(r["rank_worst"])
    return str(best) if best == worst else f"{best}–{worst}"


def _win_rates(found: Pairwise, question: str, wording: str) -> list[Block]:
    rates = found.win_rates[found.win_rates["question"] == question]
    if rates.empty:
        return []
    order = _order(found, question, rates)
    matrix = rates.pivot(index="system", columns="opponent", values="win_rate")
    n = rates.pivot(index="system", columns="opponent", values="comparisons")
    rows = []
    for system in order:
        cells = []
        for opponent in order:
            if system == opponent or opponent not in matrix.columns or system not in matrix.index:
                cells.append(d.DASH)
                continue
            value, met = matrix.loc[system, opponent], n.loc[system, opponent]
            cells.append(d.DASH if d.missing(value) else f"{d.pct(value)} ({d.count(met)})")
        rows.append((system, *cells))
    return [
        d.table(
            ("System", *order),
            rows,
            caption="Win rate of the row's system against the column's (ties as half), "
            "comparisons in brackets",
            numeric=(False, *[True] * len(order)),
        ),
        Figure("pairwise_heatmap", question, f"Win rates: {wording}"),
    ]


def _order(found: Pairwise, question: str, rates: pd.DataFrame) -> list[str]:
    """Systems by score when fitted, else by win rate over all their comparisons."""
    scores = found.scores[found.scores["question"] == question]
    if len(scores):
        return [str(s) for s in scores["system"]]
    totals = rates.groupby("system")[["wins", "ties", "comparisons"]].sum()
    overall = (totals["wins"] + totals["ties"] / 2) / totals["comparisons"]
    return [str(s) for s in overall.sort_values(ascending=False).index]


def _pairs(found: Pairwise, question: str, limit: int | None) -> list[Block]:
    pairs = found.pairs[found.pairs["question"] == question]
    if pairs.empty:
        return []
    rows = [
        (
            f"{r['system_1']} – {r['system_2']}",
            d.count(r["comparisons"]),
            f"{int(r['system_1_first'])} / {int(r['system_2_first'])}",
            f"{int(r['system_1_wins'])}–{int(r['system_2_wins'])}",
            d.share_of(r["ties"], r["comparisons"]),
        )
        for r in pairs.to_dict("records")
    ]
    return [
        d.table(
            ("Pair", "Comparisons", "Shown first (each)", "Wins (each)", "Ties"),
            rows,
            caption="Comparisons per pair",
            numeric=(False, True, True, True, True),
            limit=limit,
        )
    ]


def _sample_size(found: Pairwise, question: str) -> list[Block]:
    lines = found.sample_size[found.sample_size["question"] == question]
    if lines.empty:
        return []
    rows = [
        (
            f"{r['system']} over {r['opponent']}",
            d.pct(r["win_probability"], 1),
            d.pct(r["tie_share"], 1),
            d.count(r["decisive_needed"]),
            d.count(r["needed_per_pair"]),
            d.count(r["comparisons"]),
        )
        for r in lines.to_dict("records")
    ]
    return [
        d.table(
            (
                "Neighbours in the ranking",
                "Preferred in a decisive vote (model)",
                "Ties",
                "Decisive votes needed",
                "Comparisons needed",
                "Made",
            ),
            rows,
            caption="Sample size: comparisons of each pair needed to separate neighbours",
            numeric=(False, True, True, True, True, True),
        ),
        Paragraph(f"Sample size: {found.methods['sample_size']}.", "method"),
    ]


def _raters(found: Pairwise, question: str, limit: int | None) -> list[Block]:
    raters = found.raters[found.raters["question"] == question]
    if raters.empty:
        return []
    ordered = raters.sort_values(["agreement", "rater"], na_position="last")
    rows = [
        (
            str(r["rater"]),
            str(r["rater_kind"]),
            d.count(r["votes"]),
            d.count(r["scored"]),
            d.pct(r["agreement"]),
        )
        for r in ordered.to_dict("records")
    ]
    return [
        d.table(
            ("Rater", "Kind", "Votes", "Scored", "Agreement with the majority"),
            rows,
            caption="Raters' agreement with the majority (lowest first)",
            numeric=(False, False, True, True, True),
            limit=limit,
        ),
        Paragraph(f"Agreement: {found.methods['agreement']}.", "method"),
    ]


def _onboarding(found: Pairwise) -> list[Block]:
    table = found.onboarding
    if table.empty:
        return []
    rows = [
        (
            str(r["rater"]),
            d.count(r["pairs"]),
            d.count(r["correct"]),
            d.pct(r["rate"]),
            "yes" if r["passed"] else "no",
        )
        for r in table.to_dict("records")
    ]
    return [
        Heading("Onboarding of annotators", 3),
        d.table(
            ("Annotator", "Onboarding pairs", "Right", "Rate", "Passed"),
            rows,
            caption=f"Onboarding: {found.methods['onboarding']}",
            numeric=(False, True, True, True, False),
        ),
    ]


def pairwise_json(found: Pairwise) -> dict[str, Any]:
    """The ``pairwise`` section of the JSON report: every table, the options and methods."""
    from analytics.report.render_json import records

    options = found.options
    return {
        "options": {
            "ties": options.ties,
            "both_bad": options.both_bad,
            "strength": options.strength,
            "slightly": options.slightly,
            "anchor": options.anchor,
            "anchor_score": options.anchor_score,
            "rounds": options.rounds,
            "seed": options.seed,
            "level": options.level,
            "position": options.position,
            "onboarding_threshold": options.onboarding_threshold,
            "alpha": options.alpha,
            "power": options.power,
        },
        "methods": dict(found.methods),
        "questions": records(found.counts),
        "scores": records(found.scores),
        "parameters": records(found.parameters),
        "win_rates": records(found.win_rates),
        "pairs": records(found.pairs),
        "sample_size": records(found.sample_size),
        "raters": records(found.raters),
        "onboarding": records(found.onboarding),
        "notes": list(found.notes),
    }


def pairwise_charts(found: Pairwise, block: Figure, name: str) -> list[Chart]:
    """The chart a pairwise ``Figure`` block shows (its key is the question)."""
    from analytics.report.pairwise_plots import forest_chart, heatmap_chart

    if block.kind == "pairwise_forest":
        scores = found.scores[found.scores["question"] == block.key]
        chart = forest_chart(scores, name, block.caption, found.options.level)
    else:
        rates = found.win_rates[found.win_rates["question"] == block.key]
        chart = heatmap_chart(rates, _order(found, block.key, rates), name, block.caption)
    return [chart] if chart else []
