"""Where each system's task success came from: its own events, tool calls, the
participant's answer, a wizard's judgement or a model judge, or nowhere ("not measured")."""

from __future__ import annotations

import pandas as pd

from analytics.report import document as d
from analytics.report.document import Block, Paragraph
from analytics.statistics.success_sources import LABELS

NOT_MEASURED = LABELS[None]


def not_measured(row: dict) -> bool:
    """A system with finished tasks whose success no source decided."""
    return int(row.get("success_n", row["n"])) == 0 and int(row["n"]) > 0


def success_source_blocks(sources: pd.DataFrame, judge: pd.DataFrame | None = None) -> list[Block]:
    """One row per system: which source decided its success, over how many tasks; and the
    model judge's settings and verdicts where it decided a system."""
    if sources.empty:
        return []
    rows = [
        (str(r["system_id"]), str(r["decided_by"]), d.count(r["sessions_decided"]))
        for r in sources.to_dict("records")
    ]
    blocks: list[Block] = [
        Paragraph(
            "Task success comes, for each system, from the first of these that speaks for it: "
            "the system's own events, tool calls, the participant's answer to the study's "
            "success item, a wizard's judgement, a model judge reading the conversation "
            "against the scenario's success criterion (a verdict it could not give leaves its "
            f"task unmeasured). A system none speaks for is {NOT_MEASURED}: it has no success "
            "rate, never 0%.",
            "method",
        ),
        d.table(
            ("System", "Success decided by", "Tasks decided"),
            rows,
            caption="Where task success came from",
            numeric=(False, False, True),
        ),
    ]
    if judge is not None and not judge.empty and (sources["source"] == "judge").any():
        blocks.append(Paragraph(_judge_words(judge), "method"))
    return blocks


def _judge_words(judge: pd.DataFrame) -> str:
    """The model judge in a sentence per setting: a changed model, prompt, temperature or
    seed is another measurement, so each is named."""
    said = []
    for r in judge.to_dict("records"):
        seed = "no seed" if d.missing(r["seed"]) else f"seed {int(r['seed'])}"
        tokens = (
            ""
            if d.missing(r["calls"])
            else f"; {d.count(r['calls'])} calls, {d.count(r['prompt_tokens'])} tokens in and"
            f" {d.count(r['completion_tokens'])} out"
        )
        said.append(
            f"The model judge {r['judge']} ({r['model']} at {r['host']}, prompt"
            f" {r['prompt_hash']}, temperature {float(r['temperature']):g}, {seed}) read"
            f" {d.count(r['judged'])} conversations against their scenario's success criterion"
            f" from {r['first_at']} to {r['last_at']}: {d.count(r['successes'])} done,"
            f" {d.count(r['failures'])} not done, {d.count(r['unparseable'])} unparseable and"
            f" {d.count(r['failed'])} failed calls (no verdict: not measured){tokens}."
        )
    return " ".join(said)
