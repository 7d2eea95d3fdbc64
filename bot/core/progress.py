"""A progress bar on a plain terminal (no dependency): redrawn in place on a terminal, a
line every tenth of the way in a log file or a pipe (a bar redrawn per step would flood it)."""

from __future__ import annotations

import time
from typing import TextIO


class ProgressBar:
    def __init__(self, total: int, stream: TextIO, label: str = "replays") -> None:
        self.total = total
        self.done = 0
        self.counts: dict[str, int] = {}
        self._stream = stream
        self._label = label
        self._started = time.monotonic()
        self._live = stream.isatty()
        self._shown_tenth = -1
        self._last_draw = 0.0

    def advance(self, outcome: str | None = None) -> None:
        """One step more; ``outcome`` counts it under that word (shown beside the bar)."""
        self.done += 1
        if outcome is not None:
            self.counts[outcome] = self.counts.get(outcome, 0) + 1
        now = time.monotonic()
        if self._live:
            if now - self._last_draw >= 0.1 or self.done == self.total:
                self._last_draw = now
                self._stream.write("\r" + self.line())
                self._stream.flush()
        else:
            tenth = self.done * 10 // max(self.total, 1)
            if tenth != self._shown_tenth:
                self._shown_tenth = tenth
                self._stream.write(self.line() + "\n")
                self._stream.flush()

    def line(self, width: int = 30) -> str:
        share = self.done / self.total if self.total else 1.0
        filled = int(share * width)
        elapsed = max(time.monotonic() - self._started, 1e-9)
        counts = ", ".join(f"{n} {k}" for k, n in sorted(self.counts.items()))
        return (
            f"[{'#' * filled}{'.' * (width - filled)}] {self.done}/{self.total} {self._label}"
            f" {self.done / elapsed:.1f}/s" + (f" ({counts})" if counts else "")
        )

    def close(self) -> None:
        if self._live:
            self._stream.write("\n")
            self._stream.flush()
