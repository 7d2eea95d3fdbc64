"""The short per-system summary that ``ozlab demo`` prints: read from the store, no pandas.

The full report with statistics belongs to ``analytics``; this one only shows at a glance
that a study ran and that its systems differ.
"""

from __future__ import annotations

from bot.store import Access, open_store
from bot.store.blocking import run_blocking
from bot.store.model import SystemSummary
from bot.store.opening import Database

__all__ = ["SystemSummary", "format_summary", "summarize"]


def summarize(db: Database, study: str | None = None) -> list[SystemSummary]:
    """Per system, from the database (read only)."""
    return run_blocking(lambda: _summarize(db, study))


async def _summarize(db: Database, study: str | None) -> list[SystemSummary]:
    store = await open_store(db, access=Access.READ, study=study)
    try:
        return await store.system_summaries()
    finally:
        await store.close()


def format_summary(summaries: list[SystemSummary]) -> str:
    if not summaries:
        return "No sessions in this database yet."
    items = list(dict.fromkeys(i for s in summaries for i in s.item_means))
    header = ["system", "sessions", "completed", "rate", "exchanges", *items]
    rows = [header]
    for s in summaries:
        rows.append(
            [
                s.system_id,
                str(s.sessions),
                str(s.succeeded),
                f"{s.completion_rate:.0%}",
                f"{s.mean_exchanges:.1f}",
                *(f"{s.item_means[i]:.2f}" if i in s.item_means else "-" for i in items),
            ]
        )
    widths = [max(len(row[c]) for row in rows) for c in range(len(header))]
    return "\n".join(
        "  ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=True)) for row in rows
    )
