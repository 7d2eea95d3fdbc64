"""The short per-system summary that ``ozlab demo`` prints: plain SQL, no pandas.

The full report with statistics belongs to ``analytics``; this one only shows at a glance
that a study ran and that its systems differ.
"""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class SystemSummary:
    system_id: str
    sessions: int
    succeeded: int
    ended: int
    mean_exchanges: float
    item_means: dict[str, float]

    @property
    def completion_rate(self) -> float:
        return self.succeeded / self.sessions if self.sessions else 0.0


def summarize(db: Path) -> list[SystemSummary]:
    with sqlite3.connect(f"file:{db}?mode=ro", uri=True) as conn:
        sessions = conn.execute(
            "SELECT s.system_id, COUNT(*), COALESCE(SUM(s.success), 0),"
            " SUM(s.ended_at IS NOT NULL),"
            " AVG((SELECT COUNT(*) FROM exchanges e WHERE e.session_id = s.id"
            "      AND e.system_text IS NOT NULL))"
            " FROM sessions s GROUP BY s.system_id ORDER BY s.system_id"
        ).fetchall()
        items = conn.execute(
            "SELECT s.system_id, r.item_id, AVG(r.value) FROM responses r"
            " JOIN sessions s ON s.id = r.session_id WHERE r.value IS NOT NULL"
            " GROUP BY s.system_id, r.item_id ORDER BY MIN(r.id)"
        ).fetchall()
    means: dict[str, dict[str, float]] = {}
    for system_id, item_id, mean in items:
        means.setdefault(system_id, {})[item_id] = mean
    return [
        SystemSummary(system, n, succeeded, ended, mean_ex or 0.0, means.get(system, {}))
        for system, n, succeeded, ended, mean_ex in sessions
    ]


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
