"""The report in a terminal: rich tables, section rules, notes in colour.

Also writes plain text (``--out report.txt``): the same layout without colour codes.

Every text of the document goes through :func:`_text`: participants' comments, systems'
errors and names are shown with their control characters as escapes and their brackets
and colons as written (no Rich markup, no emoji codes), in the terminal and the file alike.
"""

from __future__ import annotations

import sys
from collections.abc import Iterable
from typing import TextIO

from rich import box
from rich.console import Console
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
        width=width or (120 if plain else None),
        color_system=None if plain else "auto",
        highlight=False,
        emoji=False,
        soft_wrap=False,
    )
    for block in blocks:
        _block(console, block)


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
            console.print(_table(block))
        case Figure():
            pass  # plots are drawn in HTML only


def _table(block: Table) -> RichTable:
    caption = None
    if block.more:
        caption = f"… and {block.more} more rows (all of them in --format html, md or json)"
    table = RichTable(
        title=None if block.caption is None else _text(block.caption),
        title_justify="left",
        title_style="bold",
        caption=caption,
        caption_justify="left",
        header_style="bold",
        box=box.SIMPLE_HEAD,
        pad_edge=False,
        show_edge=False,
    )
    flags = block.numeric or (False,) * len(block.columns)
    for index, (name, numeric) in enumerate(zip(block.columns, flags, strict=True)):
        # Numbers and short ids (systems, scenarios) stay whole, long text wraps; a header
        # wider than its column wraps too, so that a wide table keeps every column.
        longest = max((len(row[index]) for row in block.rows), default=0)
        word = max((len(w) for row in block.rows for w in row[index].split()), default=0)
        table.add_column(
            _text(name),
            justify="right" if numeric else "left",
            overflow="fold",
            min_width=longest if numeric else min(word, 20),
        )
    breaks = set(block.group_breaks)
    for index, row in enumerate(block.rows):
        if index in breaks:
            table.add_section()
        table.add_row(*(_text(cell) for cell in row))
    return table
