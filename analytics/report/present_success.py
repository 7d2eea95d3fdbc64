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


def success_source_blocks(sources: pd.DataFrame) -> list[Block]:
    """One row per system: which source decided its success, over how many tasks."""
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
    return blocks
