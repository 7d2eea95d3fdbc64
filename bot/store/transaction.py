"""The writer's transaction as the store's modules share it: its connection and the one
global sequence every line a participant sees is numbered by (``Tx.seq``), so that a
transcript lists lines in the order they were committed, whatever their clock says.

A module of its own, apart from the rows of an engine step (``bot.store.applying``): a
store opened to read (a report) never loads the engine.
"""

from __future__ import annotations

from bot.store.sql import Sql


class Tx:
    """The writer's transaction: its connection, and the sequence, read once and written
    back once per transaction (one row, whatever the number of lines).

    ``sequence``: the sequence's value when the writer knows it already (it wrote it last
    and nobody wrote since), so that it need not be read."""

    __slots__ = ("_next", "_start", "conn")

    def __init__(self, conn: Sql, sequence: int | None = None) -> None:
        self.conn = conn
        self._next: int | None = sequence
        self._start = sequence or 0

    @property
    def sequence(self) -> int | None:
        """The sequence's value once this transaction commits; None if it was not read."""
        return self._next

    def seq(self) -> int:
        if self._next is None:
            row = self.conn.execute("SELECT value FROM sequence WHERE id = 1").fetchone()
            self._start = self._next = int(row[0]) if row else 0
        self._next += 1
        return self._next

    def finish(self) -> None:
        if self._next is not None and self._next != self._start:
            self.conn.execute(
                "INSERT INTO sequence (id, value) VALUES (1, ?)"
                " ON CONFLICT(id) DO UPDATE SET value = excluded.value",
                (self._next,),
            )
