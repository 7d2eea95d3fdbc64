"""The report's figures drawn side by side: on Linux with more than one core, each figure
in a child process forked from the report's own (which has the report in memory already,
so a child starts drawing at once), else one after another here. Drawing is most of an
HTML or LaTeX report's own time on a small study (a PDF's font subsetting, the text
layout); the bytes are the same either way."""

from __future__ import annotations

import multiprocessing
import os
import sys
from collections.abc import Callable, Iterable, Iterator, Sequence
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from typing import TypeVar

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

    figures = list(dict.fromkeys(b for b in blocks if isinstance(b, Figure)))

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


def side_by_side(work: Sequence[Callable[[], T]]) -> Iterator[T]:
    """What each of ``work`` gives, in order: in forked children where that helps and is
    safe (Linux, several cores, several pieces of work), else here; here too when a child
    could not be started or died (a machine out of processes or memory)."""
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else 1
    if len(work) < 2 or cores < 2 or not sys.platform.startswith("linux"):
        yield from (job() for job in work)
        return
    global _WORK
    _WORK = work
    try:
        context = multiprocessing.get_context("fork")
        with ProcessPoolExecutor(min(cores, len(work)), mp_context=context) as pool:
            done: list[T] = list(pool.map(_do, range(len(work))))  # type: ignore[arg-type]
    except (OSError, BrokenProcessPool):
        done = [job() for job in work]
    finally:
        _WORK = ()
    yield from done


def _do(index: int) -> object:
    return _WORK[index]()
