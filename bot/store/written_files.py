"""The register of files ozlab wrote with participants' data (exports, reports, figures,
payments): a path, its kind and the last time it was written, never what it holds. An
erasure reads it to name the files written before it, which it cannot reach."""

from __future__ import annotations

from collections.abc import Sequence

from bot.core.vocabulary import WrittenKind
from bot.store.model import WrittenFile
from bot.store.sql import Queries, Sql


def register(conn: Sql, kind: WrittenKind, paths: Sequence[str], now: float) -> None:
    """Each path written now (a path written again keeps its latest time and kind)."""
    conn.executemany(
        "INSERT INTO written_files (path, kind, written_at) VALUES (?,?,?)"
        " ON CONFLICT(path) DO UPDATE SET kind = excluded.kind, written_at = excluded.written_at",
        [(path, kind.value, now) for path in paths],
    )


def registered(conn: Queries) -> list[WrittenFile]:
    """Every file in the register, oldest first."""
    return [
        WrittenFile(str(path), WrittenKind(kind), float(at))
        for path, kind, at in conn.execute(
            "SELECT path, kind, written_at FROM written_files ORDER BY written_at, path"
        )
    ]
