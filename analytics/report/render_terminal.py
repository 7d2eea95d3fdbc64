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

import io
import os
import sys
from collections.abc import Iterable
from typing import TextIO

from rich import box
from rich.cells import cell_len
from rich.console import Console, Group, RenderableType
from rich.markup import escape
from rich.table import Table as RichTable

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
    """The table as wide as the console allows: numbers and headers' words whole if they
    fit, else headers folded, else numbers wrapped between words; row by row when even that
    is too wide."""
    for whole, headers in ((True, True), (True, False), (False, False)):
        table = _table(block, whole_numbers=whole, whole_headers=headers)
        if _fits(console, table):
            return table
    return _stacked(block)


def _fits(console: Console, table: RichTable) -> bool:
    """Whether ``table`` drawn at the console's width keeps within it (Rich crops a table
    whose columns cannot shrink enough, rather than wrapping it)."""
    trial = Console(width=console.width, file=io.StringIO(), color_system=None, emoji=False)
    with trial.capture() as captured:
        trial.print(table, crop=False)
    return all(cell_len(line) <= console.width for line in captured.get().splitlines())


def _table(block: Table, *, whole_numbers: bool = True, whole_headers: bool = False) -> RichTable:
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
    for index, (name, numeric) in enumerate(zip(block.columns, flags, strict=True)):
        # Numbers and short ids (systems, scenarios) stay whole, long text wraps; a header
        # wider than its column wraps too when the table would not fit otherwise.
        longest = max((len(row[index]) for row in block.rows), default=0)
        word = max((len(w) for row in block.rows for w in row[index].split()), default=0)
        least = longest if numeric and whole_numbers else min(word, 20)
        if whole_headers:
            least = max(least, *(len(w) for w in name.split()), 0)
        table.add_column(
            _text(name), justify="right" if numeric else "left", overflow="fold", min_width=least
        )
    breaks = set(block.group_breaks)
    for index, row in enumerate(block.rows):
        if index in breaks:
            table.add_section()
        table.add_row(*(_text(cell) for cell in row))
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
