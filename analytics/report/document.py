"""The report as a list of blocks (headings, paragraphs, tables, figures) with every number
already formatted, so that the terminal, Markdown and HTML renderers only lay it out and
say the same thing in the same words.

Formatting conventions, the same in every format: two decimals for means and SDs, a dash
for what cannot be computed, p-values as APA writes them ("< .001", ".028"), rates as
percentages with their interval, durations in seconds or minutes.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

DASH = "—"


@dataclass(frozen=True)
class Heading:
    text: str
    level: int = 2
    """1 is the report's title, 2 a section, 3 a part of one (an instrument, a system)."""


@dataclass(frozen=True)
class Paragraph:
    text: str
    kind: str = "text"
    """``text``, ``note`` (what is missing or excluded) or ``method`` (how it was computed)."""


@dataclass(frozen=True)
class Bullets:
    items: tuple[str, ...]
    more: int = 0
    """How many further items were left out (terminal output keeps lists short)."""


@dataclass(frozen=True)
class Table:
    columns: tuple[str, ...]
    rows: tuple[tuple[str, ...], ...]
    caption: str | None = None
    numeric: tuple[bool, ...] = ()
    """Per column: right-aligned (numbers) or not."""
    more: int = 0
    """How many further rows were left out."""
    group_breaks: tuple[int, ...] = field(default=())
    """Row indexes that start a new group (a new item): drawn as a separator."""


@dataclass(frozen=True)
class Figure:
    kind: str
    """``likert``, ``proportions``, ``completion``, ``by_turn`` or ``trajectories`` (the
    annotators' ratings of each conversation turn by turn): which chart is drawn
    (``analytics.report.figures.charts``) in the HTML and for ``--figures``."""
    key: str = ""
    """What it shows (a questionnaire id); empty for the study-wide plots."""
    caption: str = ""


Block = Heading | Paragraph | Bullets | Table | Figure


def table(
    columns: Iterable[str],
    rows: Iterable[Iterable[Any]],
    *,
    caption: str | None = None,
    numeric: Iterable[bool] = (),
    limit: int | None = None,
    group_by: int | None = None,
) -> Table:
    """A ``Table`` of strings; ``group_by`` (a column index) blanks repeated values in that
    column and marks where a new group starts; ``limit`` keeps the first rows."""
    columns = tuple(columns)
    cells = [tuple(str(c) for c in row) for row in rows]
    more = 0
    if limit is not None and len(cells) > limit:
        more, cells = len(cells) - limit, cells[:limit]
    breaks: list[int] = []
    if group_by is not None:
        previous = None
        for index, row in enumerate(cells):
            if row[group_by] == previous:
                cells[index] = (*row[:group_by], "", *row[group_by + 1 :])
            else:
                breaks.append(index)
                previous = row[group_by]
    flags = tuple(numeric) or (False,) * len(columns)
    return Table(columns, tuple(cells), caption, flags, more, tuple(breaks[1:]))


def missing(value: Any) -> bool:
    """NaN, None, pandas NA: nothing to show."""
    if value is None:
        return True
    try:
        return bool(value != value)  # NaN and NA are not equal to themselves
    except (TypeError, ValueError):
        return False


def num(value: Any, digits: int = 2) -> str:
    if missing(value):
        return DASH
    number = float(value)
    if math.isinf(number):
        return "∞" if number > 0 else "−∞"
    return f"{number:.{digits}f}".replace("-", "−")


def count(value: Any) -> str:
    return DASH if missing(value) else f"{int(value):,}"


def pct(value: Any, digits: int = 0) -> str:
    return DASH if missing(value) else f"{100 * float(value):.{digits}f}%"


def rate(value: Any, low: Any, high: Any) -> str:
    """A proportion with its interval: ``76% (65–85%)``."""
    if missing(value):
        return DASH
    return f"{pct(value)} ({pct(low)}–{pct(high)})"


def p_value(value: Any) -> str:
    """APA style: no leading zero, three decimals, ``< .001`` below that."""
    if missing(value):
        return DASH
    p = float(value)
    if p < 0.001:
        return "< .001"
    return f"{p:.3f}".lstrip("0") if p < 1 else "1.000"


def seconds(value: Any) -> str:
    """A duration: ``0.3 s``, ``42 s``, ``2.7 min``, ``1.8 h``."""
    if missing(value):
        return DASH
    s = float(value)
    if s < 10:
        return f"{s:.1f} s"
    if s < 100:
        return f"{s:.0f} s"
    if s < 6000:
        return f"{s / 60:.1f} min"
    return f"{s / 3600:.1f} h"


def share_of(part: Any, whole: Any) -> str:
    """``12 (34%)``."""
    if missing(part):
        return DASH
    if missing(whole) or not whole:
        return count(part)
    return f"{int(part):,} ({100 * float(part) / float(whole):.0f}%)"


def plural(n: int, word: str, words: str | None = None) -> str:
    """``1 comment``, ``2 comments``: a count with its noun in the right number."""
    return f"{n:,} {word if n == 1 else (words or word + 's')}"


def shorten(text: Any, width: int) -> str:
    """One line of at most ``width`` characters."""
    if missing(text):
        return ""
    line = " ".join(str(text).split())
    return line if len(line) <= width else line[: width - 1].rstrip() + "…"
