"""The report in a terminal: rich tables, section rules, notes in colour.

Also writes plain text (``--out report.txt``): the same layout without colour codes.

It fits the width it is given (the terminal's; ``COLUMNS`` or 120 when written to a pipe or
a file): a table whose numbers do not fit whole wraps them between words, and one too wide
even then is shown row by row, each cell under its column's name; nothing is cut.

Every text of the document goes through :func:`_text`: participants' comments, systems'
errors and names are shown with their control characters as escapes and their brackets
and colons as written (no Rich markup, no emoji codes), in the terminal and the file alike.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterable
from typing import TextIO

from rich import box
from rich.cells import cell_len
from rich.console import Console, Group, RenderableType
from rich.markup import escape
from rich.markup import render as render_markup
from rich.segment import Segment, Segments
from rich.table import Table as RichTable
from rich.text import Text

from analytics.report.document import Block, Bullets, Figure, Heading, Paragraph, Table
from bot.core.visible_text import visible

_STYLES = {"note": "yellow", "method": "dim italic", "text": ""}


def render_terminal(
    blocks: Iterable[Block], file: TextIO | None = None, width: int | None = None
) -> None:
    """Print ``blocks`` to ``file`` (stdout by default); colour only on a terminal."""
    plain = not _is_terminal(file if file is not None else sys.stdout)
    console = Console(
        file=file,
        width=width or (_plain_width() if plain else None),
        color_system=None if plain else "auto",
        highlight=False,
        emoji=False,
        soft_wrap=False,
    )
    for block in blocks:
        _block(console, block)


def _plain_width() -> int:
    """``COLUMNS`` when it is set (``COLUMNS=80 ozlab report | less``), else 120."""
    try:
        columns = int(os.environ.get("COLUMNS", ""))
    except ValueError:
        return 120
    return columns if columns >= 40 else 120


def _is_terminal(file: TextIO) -> bool:
    try:
        return file.isatty()
    except (AttributeError, ValueError):
        return False


def _text(text: str) -> str:
    """Markup that shows ``text`` as it is, and nothing a terminal would obey."""
    return escape(visible(text))


def _shown(text: str) -> str:
    """What a terminal shows of ``_text(text)``, parsed only where Rich's escaping may not
    come back as written: around a backslash."""
    shown = visible(text)
    return render_markup(escape(shown), emoji=False).plain if "\\" in shown else shown


def _block(console: Console, block: Block) -> None:
    match block:
        case Heading(text=text, level=1):
            console.print(f"[bold]{_text(text)}[/bold]")
        case Heading(text=text, level=2):
            console.print()
            console.rule(f"[bold]{_text(text)}[/bold]", align="left")
        case Heading(text=text):
            console.print()
            console.print(f"[bold underline]{_text(text)}[/bold underline]")
        case Paragraph(text=text, kind=kind):
            style = _STYLES.get(kind, "")
            console.print(f"[{style}]{_text(text)}[/{style}]" if style else _text(text))
        case Bullets(items=items, more=more):
            for item in items:
                console.print(f" • {_text(item)}")
            if more:
                console.print(
                    f"[dim]   … and {more} more (all of them in --format html, md or json)[/dim]"
                )
        case Table():
            console.print(_fitted(console, block))
        case Figure():
            pass  # plots are drawn in HTML only


def _fitted(console: Console, block: Table) -> RenderableType:
    """The table as wide as the console allows: every cell whole if that fits, else each
    column given at least its longest word and the rest of the width shared out; row by
    row when even the words do not fit."""
    room = console.width - 3 * (len(block.columns) - 1)  # padding and rule between columns
    whole = _whole(block, headers=True)
    heads = [_shown(name) for name in block.columns]
    rows = [[_shown(cell) for cell in row] for row in block.rows]
    if sum(whole) <= room:  # else Rich would draw it wider than the room (not drawn in vain)
        natural = [  # what Rich gives each column: its longest cell or header, on one line
            max(least, cell_len(head), *(cell_len(row[index]) for row in rows))
            for index, (head, least) in enumerate(zip(heads, whole, strict=True))
        ]
        if heads and sum(natural) <= room:
            return _drawn_here(console, block, heads, rows, natural)
        drawn = _drawn(console, _table(block, whole))  # headers wrap: Rich's layout
        if drawn is not None:
            return drawn
    least = _least(block)
    names = [cell_len(name) for name in block.columns]  # a header on one line if room allows
    most = [max(w, m, h) for w, m, h in zip(_whole(block, headers=False), least, names,
                                            strict=True)]  # fmt: skip
    if sum(least) <= room:
        return _drawn_here(console, block, heads, rows, _shared(block, least, most, room))
    return _stacked(block)


def _drawn_here(
    console: Console, block: Table, heads: list[str], rows: list[list[str]], widths: list[int]
) -> Segments:
    """The table drawn with columns ``widths`` wide as Rich draws it (its layout measured,
    wrapped and padded each cell through several renderables: most of a report's
    rendering), to the same bytes: each longer cell wrapped by Rich's text wrapping, the
    title and caption by Rich to the table's width, the header bold piece by piece as Rich
    styles it, the rules of the console's box (tests/test_report_terminal_tables.py
    compares the two)."""
    last = len(widths) - 1
    flags = block.numeric or (False,) * len(widths)
    padded = [width + (index > 0) + (index < last) for index, width in enumerate(widths)]
    options = console.options.update(
        width=sum(padded) + last, highlight=False, height=None, justify="left"
    )
    rules = box.SIMPLE_HEAD.substitute(options, safe=console.safe_box)
    bold, newline = console.get_style("bold"), Segment.line()

    def wrapped(text: str, width: int, numeric: bool) -> list[str]:
        if cell_len(text) <= width:  # most cells: the line Rich's wrapping would give
            if numeric:  # Rich strips a right-aligned cell's trailing spaces
                text = text.rstrip()
                return [" " * (width - cell_len(text)) + text]
            return [text + " " * (width - cell_len(text))]
        folded = Text(text, justify="right" if numeric else "left", overflow="fold")
        return [line.plain for line in folded.wrap(console, width)]

    def cells_of(texts: list[str]) -> list[list[str]]:
        return [wrapped(*cell) for cell in zip(texts, widths, flags, strict=True)]

    segments: list[Segment] = []
    if block.caption:
        title = console.render_str(_text(block.caption), style="bold", highlight=False)
        segments += console.render(title, options)
    header = cells_of(heads)
    height = max(map(len, header))
    for line in range(height):
        for index, (cell, width) in enumerate(zip(header, padded, strict=True)):
            if index > 0:
                segments.append(Segment(rules.head_vertical))
            at = line - (height - len(cell))  # a header sits on the rule below it
            if at < 0:
                segments.append(Segment(" " * width, bold))
                continue
            if index > 0:
                segments.append(Segment(" ", bold))
            segments.append(Segment(cell[at], bold))
            if index < last:
                segments.append(Segment(" ", bold))
        segments.append(newline)
    segments += [Segment(rules.get_row(padded, "head", edge=False)), newline]
    section = Segment(rules.get_row(padded, "row", edge=False))
    breaks = set(block.group_breaks)
    for index, row in enumerate(rows):
        if index in breaks and index > 0:
            segments += [section, newline]
        rule = f" {rules.foot_vertical if index == len(rows) - 1 else rules.mid_vertical} "
        cells = cells_of(row)
        for line in range(max(map(len, cells))):
            parts = (cell[line] if line < len(cell) else " " * width
                     for cell, width in zip(cells, widths, strict=True))  # fmt: skip
            segments += [Segment(rule.join(parts)), newline]
    more = _more(block)
    if more:
        segments += console.render(
            console.render_str(more, style="table.caption", highlight=False), options
        )
    return Segments(segments)


def _whole(block: Table, *, headers: bool) -> list[int]:
    """Each column's width with every cell (and, with ``headers``, every header's word)
    on one line."""
    widths = []
    for index, name in enumerate(block.columns):
        cells = [cell_len(row[index]) for row in block.rows]
        words = [cell_len(w) for w in name.split()] if headers else []
        widths.append(max([*cells, *words, 1]))
    return widths


def _least(block: Table) -> list[int]:
    """Each column's narrowest: its longest word, its header's up to 10 (at most 20: a
    longer one folds)."""
    least = []
    for i, name in enumerate(block.columns):
        cells = max((cell_len(w) for row in block.rows for w in row[i].split()), default=1)
        header = max((min(10, cell_len(w)) for w in name.split()), default=1)
        least.append(max(1, min(20, max(cells, header))))
    return least


def _shared(block: Table, least: list[int], most: list[int], room: int) -> list[int]:
    """Widths from ``least`` up to ``most`` within ``room``: text columns first to a
    readable 24, then numbers whole (a rate over three lines is hard to read), then text
    shares what is left."""
    flags = block.numeric or (False,) * len(block.columns)
    widths = list(least)
    readable = [m if numeric else min(m, 24) for m, numeric in zip(most, flags, strict=True)]
    for goal, numbers in ((readable, False), (most, True), (most, False)):
        spare = room - sum(widths)
        wanted = [
            max(0, g - w) if numeric is numbers else 0
            for w, g, numeric in zip(widths, goal, flags, strict=True)
        ]
        total = sum(wanted)
        if total and spare > 0:
            share = min(1.0, spare / total)
            widths = [w + int(want * share) for w, want in zip(widths, wanted, strict=True)]
    return widths


def _drawn(console: Console, table: RichTable) -> Segments | None:
    """``table`` drawn at the console's width, or None where a line would be wider (Rich
    crops a table whose columns cannot shrink enough, rather than wrapping it): drawn once,
    and printed as drawn."""
    segments = list(console.render(table, console.options))
    lines = Segment.split_lines(segments)
    if any(Segment.get_line_length(line) > console.width for line in lines):
        return None
    return Segments(segments)


def _table(block: Table, widths: list[int]) -> RichTable:
    """``widths``: each column's least width."""
    table = RichTable(
        title=None if block.caption is None else _text(block.caption),
        title_justify="left",
        title_style="bold",
        caption=_more(block),
        caption_justify="left",
        header_style="bold",
        box=box.SIMPLE_HEAD,
        pad_edge=False,
        show_edge=False,
    )
    flags = block.numeric or (False,) * len(block.columns)
    for name, numeric, width in zip(block.columns, flags, widths, strict=True):
        table.add_column(
            _text(name),
            justify="right" if numeric else "left",
            overflow="fold",
            min_width=width,
        )
    breaks = set(block.group_breaks)
    for index, row in enumerate(block.rows):
        if index in breaks:
            table.add_section()
        table.add_row(*(Text(_shown(cell)) for cell in row))  # no markup to parse
    return table


def _stacked(block: Table) -> Group:
    """One small two-column grid per row: each cell beside its column's name."""
    parts: list[RenderableType] = []
    if block.caption is not None:
        parts.append(f"[bold]{_text(block.caption)}[/bold]")
    names = [_text(name) for name in block.columns]
    groups = [row[0] for row in block.rows]
    for index, row in enumerate(block.rows):
        grid = RichTable.grid(padding=(0, 1))
        grid.add_column(style="bold", overflow="fold", max_width=24)
        grid.add_column(overflow="fold")
        if row[0] == "" and index > 0:  # a group's later row: its first cell was blanked
            groups[index] = groups[index - 1]
        for column, (name, cell) in enumerate(zip(names, row, strict=True)):
            shown = groups[index] if column == 0 else cell
            if shown:
                grid.add_row(name or "·", _text(shown))
        parts += ["", grid]
    more = _more(block)
    if more:
        parts.append(f"[dim]{more}[/dim]")
    return Group(*parts)


def _more(block: Table) -> str | None:
    if not block.more:
        return None
    return f"… and {block.more} more rows (all of them in --format html, md or json)"
