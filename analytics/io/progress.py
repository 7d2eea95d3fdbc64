"""A progress bar for long work, on stderr and only when stderr is a terminal.

Reading a million answers and computing every table takes seconds: a researcher at a
terminal should see that something is happening, while scripts, pipes and CI logs get
nothing (the report itself goes to stdout or a file, never mixed with the bar).
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any, TextIO


class Steps:
    """Call with the name of the step that starts (``steps("plots")``); ``add(n)`` when
    more steps turn out to be needed (one per plot, known once the report is built)."""

    def __init__(self, progress: Any = None, task: Any = None, title: str = "") -> None:
        self._progress, self._task, self._title = progress, task, title
        self._started = False

    def __call__(self, label: str) -> None:
        if self._progress is None:
            return
        if self._started:
            self._progress.advance(self._task)
        self._started = True
        self._progress.update(self._task, description=f"{self._title}: {label}")

    def add(self, count: int) -> None:
        if self._progress is not None and count:
            total = self._progress.tasks[0].total or 0
            self._progress.update(self._task, total=total + count)


@contextmanager
def steps(total: int, title: str, *, stream: TextIO | None = None) -> Iterator[Steps]:
    """A bar of ``total`` steps (transient: it disappears when the work is done); without a
    terminal the ``Steps`` it yields do nothing."""
    stream = sys.stderr if stream is None else stream
    if not _is_terminal(stream):
        yield Steps()
        return
    from rich.console import Console
    from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn

    progress = Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        TextColumn("{task.completed}/{task.total}"),
        TimeElapsedColumn(),
        console=Console(file=stream),
        transient=True,
    )
    with progress:
        task = progress.add_task(title, total=total)
        yield Steps(progress, task, title)
        progress.update(task, completed=progress.tasks[0].total)


def _is_terminal(stream: TextIO) -> bool:
    try:
        return stream.isatty()
    except (AttributeError, ValueError):
        return False
