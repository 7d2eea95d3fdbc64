"""The pilot report's section, as report blocks (terminal, Markdown, HTML say the same) and
as JSON (every finding)."""

from __future__ import annotations

import math
from typing import Any

from analytics.report.document import DASH, Block, Heading, Paragraph, table
from analytics.report.pilot import HINT_WORDS, PilotFindings
from analytics.report.render_json import records


def _seconds(value: object) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return DASH
    seconds = float(value)  # type: ignore[arg-type]
    return f"{seconds / 60:.1f} min" if seconds >= 120 else f"{seconds:.0f} s"


def _ms(value: object) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return DASH
    return f"{float(value):.0f}"  # type: ignore[arg-type]


def _short(text: str, limit: int | None) -> str:
    one_line = " ".join(text.split())
    return one_line if limit is None or len(one_line) <= limit else one_line[: limit - 1] + "…"


def pilot_blocks(found: PilotFindings, *, limit: int | None = None) -> list[Block]:
    """The section: who dropped off where, time per phase, items, systems, hints."""
    width = 70 if limit is not None else None
    blocks: list[Block] = [
        Heading("Pilot: where the study loses or confuses people"),
        Paragraph(
            f"{found.participants} participants ({found.simulated} simulated), "
            f"{found.completed} reached the end."
        ),
        Heading("Drop-offs", 3),
    ]
    if found.drop_offs.empty:
        blocks.append(Paragraph("Nobody stopped before the end."))
    else:
        blocks.append(
            table(
                ("participant", "phase", "stopped at", "the last thing the bot asked or said"),
                (
                    (p, phase, where or DASH, _short(text, width) or DASH)
                    for p, phase, where, text in found.drop_offs.itertuples(index=False)
                ),
                limit=limit,
            )
        )
    blocks.append(Heading("Time per phase", 3))
    blocks.append(
        table(
            ("scenario", "sessions", "task (median)", "expected", "questionnaires (median)"),
            (
                (s, n, _seconds(task), _seconds(expected), _seconds(after))
                for s, n, task, expected, after in found.phases.itertuples(index=False)
            ),
            numeric=(False, True, True, True, True),
        )
    )
    blocks.append(Heading("Items left unanswered or answered too fast", 3))
    if found.items.empty:
        blocks.append(Paragraph("Every item shown was answered, at a reading pace."))
    else:
        blocks.append(
            table(
                ("questionnaire", "item", "shown", "unanswered", "too fast"),
                found.items.itertuples(index=False),
                numeric=(False, False, True, True, True),
                limit=limit,
            )
        )
    blocks.append(Heading("Systems: errors and latency", 3))
    blocks.append(
        table(
            ("system", "exchanges", "errors", "latency median (ms)", "latency p90 (ms)"),
            (
                (s, n, e, _ms(median), _ms(p90))
                for s, n, e, median, p90 in found.systems.itertuples(index=False)
            ),
            numeric=(False, True, True, True, True),
        )
    )
    blocks.append(Heading("Messages that got a hint instead of progress", 3))
    if found.hints.empty:
        blocks.append(Paragraph("No participant needed a hint."))
    else:
        blocks.append(
            table(
                ("hint", "at", "messages", "participants"),
                (
                    (HINT_WORDS.get(h, h), where or DASH, n, people)
                    for h, where, n, people in found.hint_places.itertuples(index=False)
                ),
                numeric=(False, False, True, True),
            )
        )
        blocks.append(
            table(
                ("participant", "hint", "at", "they sent"),
                (
                    (p, HINT_WORDS.get(h, h), where or DASH, _short(sent, width) or DASH)
                    for p, _s, h, where, sent in found.hints.itertuples(index=False)
                ),
                limit=limit,
            )
        )
    return blocks


def pilot_json(found: PilotFindings) -> dict[str, Any]:
    return {
        "participants": found.participants,
        "simulated": found.simulated,
        "completed": found.completed,
        "drop_offs": records(found.drop_offs),
        "phases": records(found.phases),
        "items": records(found.items),
        "systems": records(found.systems),
        "hints": records(found.hints),
        "hint_places": records(found.hint_places),
    }
