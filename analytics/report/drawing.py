"""The report's figures drawn side by side: on Linux with more than one core, each figure
in a child process forked from the report's own (which has the report in memory already,
so a child starts drawing at once), else one after another here. Drawing is most of an
HTML or LaTeX report's own time on a small study (the text layout, a PDF's font
subsetting); the bytes are the same either way.

An ``Easel`` is set up while the statistics are computed: a process that imports
matplotlib and opens the figures' fonts meanwhile, on the other core, and forks the
drawing children once it is given the report, so that they inherit all that."""

from __future__ import annotations

import contextlib
import gc
import multiprocessing
import os
import signal
import sys
from collections.abc import Callable, Iterable, Iterator, Sequence
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from typing import TYPE_CHECKING, TypeVar

if TYPE_CHECKING:
    from multiprocessing.connection import Connection
    from multiprocessing.process import BaseProcess

from analytics.report.document import Block, Figure
from analytics.report.numbers import Report

T = TypeVar("T")
Picture = tuple[str, str, dict[str, bytes]]
"""One chart of a figure: its name, its caption and its bytes in each format asked."""

_WORK: Sequence[Callable[[], object]] = ()
"""What the forked children do, by index: they inherit it (a closure does not pickle)."""


def figure_count(blocks: Iterable[Block]) -> int:
    """How many figures a report draws: the steps of its progress bar."""
    return len({b for b in blocks if isinstance(b, Figure)})


def pictures(
    report: Report,
    blocks: Sequence[Block],
    formats: Sequence[str],
    step: Callable[[str], None] | None = None,
) -> dict[Figure, list[Picture]]:
    """Each figure of ``blocks`` as its charts in each of ``formats`` (svg, pdf, png);
    ``step`` is told of each figure as it is done (progress)."""
    from analytics.report.figures import charts
    from analytics.report.plots import encode

    figures = _figures(blocks)

    def drawing(block: Figure) -> Callable[[], list[Picture]]:
        return lambda: [
            (c.name, c.caption, {fmt: encode(c.figure, fmt) for fmt in formats})
            for c in charts(report, block)
        ]

    drawn: dict[Figure, list[Picture]] = {}
    for block, made in zip(figures, side_by_side([drawing(b) for b in figures]), strict=True):
        if step is not None:
            step(f"plot {block.kind} {block.key}".strip())
        drawn[block] = made
    return drawn


def _figures(blocks: Iterable[Block]) -> list[Figure]:
    return list(dict.fromkeys(b for b in blocks if isinstance(b, Figure)))


def _cores() -> int:
    """The cores this process may run on where forking is safe (Linux), else 1."""
    if not sys.platform.startswith("linux"):
        return 1
    return len(os.sched_getaffinity(0))


READY = "ready"
READY_WITHIN = 30.0
"""Seconds an easel may take to set up (0.4 s of CPU) before the report draws its figures
itself: time enough on a machine busy with other work."""


class Easel:
    """The process that draws a report's figures, forked before its statistics are
    computed: it imports matplotlib and its backends and opens the fonts meanwhile (0.4 s
    of CPU, once for all its drawing children rather than once in each), then waits for
    the report. Where figures are not drawn side by side (one core, not Linux), or anything
    goes amiss (no process, a report that does not pickle, the easel gone), ``pictures``
    draws them here as before: the same bytes."""

    def __init__(self, formats: Sequence[str], *, ready_within: float = READY_WITHIN) -> None:
        self._conn: Connection | None = None
        self._process: BaseProcess | None = None
        self._ready_within, self._ready = ready_within, False
        if _cores() < 2:
            return
        context = multiprocessing.get_context("fork")
        mine, theirs = context.Pipe()
        try:
            process = context.Process(
                target=_set_up, args=(theirs, mine, tuple(formats)), name="easel"
            )
            process.start()
        except OSError:
            mine.close()
            return
        finally:
            theirs.close()
        self._conn, self._process = mine, process

    def pictures(
        self,
        report: Report,
        blocks: Sequence[Block],
        formats: Sequence[str],
        step: Callable[[str], None] | None = None,
    ) -> dict[Figure, list[Picture]]:
        """As ``pictures``, drawn by the easel (once: it is gone after)."""
        figures = _figures(blocks)
        ready = bool(figures) and self.ready(self._ready_within)
        conn, self._conn = self._conn, None
        drawn: object = None
        if conn is not None and ready:
            with conn, contextlib.suppress(Exception):  # pickling, a broken pipe, EOF
                conn.send((report, figures, tuple(formats)))
                drawn = conn.recv()
        if not isinstance(drawn, list) or len(drawn) != len(figures):
            return pictures(report, blocks, formats, step)
        for block in figures:
            if step is not None:
                step(f"plot {block.kind} {block.key}".strip())
        return dict(zip(figures, drawn, strict=True))

    def ready(self, timeout: float) -> bool:
        """Whether the easel has set up (within ``timeout`` seconds, if it has not yet).
        One that has not is stopped: forked from a process whose other threads held a lock
        (a test's, a library's), it could wait for that lock for ever, and the report with
        it. Once set up, it is a process of one thread, which forks its children safely."""
        if self._ready or self._conn is None:
            return self._ready
        with contextlib.suppress(Exception):  # EOF: the easel gone
            self._ready = self._conn.poll(timeout) and self._conn.recv() == READY
        if not self._ready:
            self.close(wait=0)
        return self._ready

    def close(self, wait: float = 10) -> None:
        """The easel told to go (its pipe closed) and waited for ``wait`` seconds."""
        if self._conn is not None:
            self._conn.close()
            self._conn = None
        if self._process is not None:
            self._process.join(timeout=wait)
            if self._process.is_alive():
                self._process.kill()
                self._process.join()
            self._process = None

    def __enter__(self) -> Easel:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()


def _set_up(conn: Connection, theirs: Connection, formats: tuple[str, ...]) -> None:
    """The easel: matplotlib ready, then the figures of the report it is given. Whatever
    fails here (the report's process gone, a drawing that raises) is left to the report's
    process, which then draws the figures itself: an error is raised there, where it is
    seen, as is Ctrl-C."""
    theirs.close()  # the report's end of the pipe: closed there, the easel is told to go
    # Ctrl-C as in a report's own process, whatever the process it was forked from did with
    # it (an asyncio loop's handler does nothing but wake that loop, through a descriptor
    # this process must not write to): the easel waited on, for ever.
    signal.set_wakeup_fd(-1)
    signal.signal(signal.SIGINT, signal.default_int_handler)
    with conn, contextlib.suppress(Exception, KeyboardInterrupt):
        _loaded(formats)
        gc.freeze()  # as in its children: the report read, it would scan all it holds, 0.1 s
        conn.send(READY)
        report, figures, formats = conn.recv()  # EOFError: no figures after all
        conn.send(list(pictures(report, figures, formats).values()))


def _loaded(formats: Sequence[str]) -> None:
    """What the drawings need loaded: matplotlib, the backends of ``formats`` (a PDF's
    brings fontTools) and the two faces the figures write in (the font files read and their
    caches built)."""
    import importlib

    import matplotlib.figure  # noqa: F401
    from matplotlib.font_manager import FontProperties, findfont, get_font

    backends = {"pdf": "pdf", "svg": "svg", "png": "agg"}
    for fmt in formats:
        importlib.import_module(f"matplotlib.backends.backend_{backends[fmt]}")
    if "pdf" in formats:
        from fontTools import subset  # noqa: F401

    for weight in ("normal", "bold"):
        get_font(findfont(FontProperties(weight=weight)))


def side_by_side(work: Sequence[Callable[[], T]]) -> Iterator[T]:
    """What each of ``work`` gives, in order: in forked children where that helps and is
    safe (Linux, several cores, several pieces of work), else here; here too when a child
    could not be started or died (a machine out of processes or memory)."""
    cores = _cores()
    if len(work) < 2 or cores < 2:
        yield from (job() for job in work)
        return
    global _WORK
    _WORK = work
    try:
        context = multiprocessing.get_context("fork")
        # A child's garbage collector leaves alone what it was forked with (the report, the
        # libraries: a million objects), which it scanned in full once a figure, 0.13 s.
        with ProcessPoolExecutor(
            min(cores, len(work)), mp_context=context, initializer=gc.freeze
        ) as pool:
            done: list[T] = list(pool.map(_do, range(len(work))))  # type: ignore[arg-type]
    except (OSError, BrokenProcessPool):
        done = [job() for job in work]
    finally:
        _WORK = ()
    yield from done


def _do(index: int) -> object:
    return _WORK[index]()
