"""The short per-system summary that ``ozlab demo`` prints: read from the store, no pandas.

The full report with statistics belongs to ``analytics``; this one only shows at a glance
that a study ran and that its systems differ.
"""

from __future__ import annotations

from collections.abc import Collection

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


NOT_MEASURED = (
    "not measured: the system cannot report success itself and no session of it was marked"
    " successful; `ozlab report` says which source decides (tool calls, the participant's"
    " answer, a wizard)"
)


def format_summary(summaries: list[SystemSummary], silent: Collection[str] = ()) -> str:
    """The table; ``silent``: the systems that cannot report success themselves, shown as
    not measured rather than 0 % where none of their sessions succeeded."""
    if not summaries:
        return "No sessions in this database yet."
    items = list(dict.fromkeys(i for s in summaries for i in s.item_means))
    header = ["system", "sessions", "completed", "rate", "exchanges", *items]
    rows = [header]
    unmeasured = False
    for s in summaries:
        measured = s.succeeded > 0 or s.system_id not in silent
        unmeasured = unmeasured or not measured
        rows.append(
            [
                s.system_id,
                str(s.sessions),
                str(s.succeeded) if measured else "-",
                f"{s.completion_rate:.0%}" if measured else "not measured",
                f"{s.mean_exchanges:.1f}",
                *(f"{s.item_means[i]:.2f}" if i in s.item_means else "-" for i in items),
            ]
        )
    widths = [max(len(row[c]) for row in rows) for c in range(len(header))]
    table = "\n".join(
        "  ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=True)) for row in rows
    )
    return f"{table}\n{NOT_MEASURED}" if unmeasured else table
