"""The rankings section as blocks and as JSON: per ranking item, each option's mean rank
per system with its interval and the share who put it first, then the rank test between
systems per option.

Nothing here when no ranking was answered: the section is absent, not empty.
"""

from __future__ import annotations

from typing import Any

import pandas as pd

from analytics.report import document as d
from analytics.report.document import Block, Heading, Paragraph
from analytics.report.numbers import Report
from analytics.report.render_json import records
from analytics.statistics.ranking import Rankings

METHOD = (
    "Each option's rank is its place in a participant's order (1 = first). The mean rank "
    "is over participants (a participant who ranked more than once with a system counts "
    "once, with their own mean), with Student's t 95% interval on the logit of the mean's "
    "place between 1 and the number of options, so that it stays inside them; First is "
    "the share of "
    "participants who put the option first. Between systems, each option's ranks are "
    "compared by a rank test chosen by the design: Mann–Whitney U between subjects, the "
    "Wilcoxon signed-rank test within (Kruskal–Wallis or Friedman for more systems), both "
    "corrected for the many tied ranks; an item's options are one family, their p-values "
    "Holm-corrected together."
)


def ranking_blocks(report: Report) -> list[Block]:
    """The whole section; nothing when no ranking was answered."""
    found = report.rankings
    if found is None:
        return []
    blocks: list[Block] = [Heading("Rankings"), Paragraph(METHOD, "method")]
    items = found.means[["questionnaire_id", "item_id"]].drop_duplicates()
    for q_id, item_id in items.itertuples(index=False):
        blocks += _item(found, str(q_id), str(item_id))
    return blocks


def _item(found: Rankings, q_id: str, item_id: str) -> list[Block]:
    text = found.texts.get((q_id, item_id), "")
    means = found.means[
        (found.means["questionnaire_id"] == q_id) & (found.means["item_id"] == item_id)
    ]
    rows = [
        (str(r["label"]), str(r["system_id"]), d.count(r["n"]), d.num(r["mean"]),
         f"{d.num(r['ci_low'])} to {d.num(r['ci_high'])}", d.pct(r["first"]))
        for r in means.to_dict("records")
    ]  # fmt: skip
    options = int(means["options"].max()) if len(means) else 0
    blocks: list[Block] = [
        Heading(f"{q_id}: {item_id}", 3),
        Paragraph(f"{text} (ranks 1 = first to {options} = last)"),
        d.table(
            ("Option", "System", "n", "Mean rank", "95% CI", "First"),
            rows,
            caption="Mean rank per option and system (lower is preferred)",
            numeric=(False, False, True, True, True, True),
            group_by=0,
        ),
    ]
    tests = found.tests[
        (found.tests["questionnaire_id"] == q_id) & (found.tests["item_id"] == item_id)
    ]
    if len(tests):
        family = int(tests["p_family"].notna().sum())
        lines = [
            (str(r["label"]), str(r["test"]) + (" (pairwise)" if r["kind"] == "pairwise" else ""),
             str(r["groups"]), _result(r, family))
            for r in tests.to_dict("records")
        ]  # fmt: skip
        blocks.append(
            d.table(
                ("Option", "Test", "Systems", "Result"),
                lines,
                caption="Each option's ranks compared between systems",
                group_by=0,
            )
        )
    return blocks


def _of(frame: pd.DataFrame, q_id: str, item_id: str) -> pd.DataFrame:
    return frame[(frame["questionnaire_id"] == q_id) & (frame["item_id"] == item_id)]


def _result(r: dict[Any, Any], family: int) -> str:
    """``U = 12.0, p = .012 (Holm across 3 options: .036), rank-biserial r = 0.60 (a over
    b)``."""
    if d.missing(r["p"]):
        return "not tested: " + ("" if d.missing(r["note"]) else str(r["note"]))
    p = f"p = {d.p_value(r['p'])}".replace("= <", "<")
    if r["kind"] == "pairwise":
        p += f" (Holm within the option: {d.p_value(r['p_holm'])})"
    elif family > 1 and not d.missing(r["p_family"]):
        p += f" (Holm across {family} options: {d.p_value(r['p_family'])})"
    parts = [f"{r['statistic_name']} = {d.num(r['statistic'], 1)}", p]
    if not d.missing(r["effect_name"]):
        effect = f"{r['effect_name']} = {d.num(r['effect'])}"
        if not d.missing(r["effect_direction"]):
            effect += f" ({r['effect_direction']})"
        parts.append(effect)
    return ", ".join(parts)


def rankings_json(found: Rankings) -> dict[str, Any]:
    """The section's numbers for ``--format json``."""
    return {
        "method": METHOD,
        "mean_ranks": records(found.means),
        "tests": records(found.tests),
    }
