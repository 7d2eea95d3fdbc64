"""The report as Markdown: GitHub-flavoured pipe tables, for a repository or a paper draft.

Plots are in the HTML report; Markdown keeps the numbers.
"""

from __future__ import annotations

from collections.abc import Iterable

from analytics.report.document import Block, Bullets, Figure, Heading, Paragraph, Table
from bot.core.visible_text import visible


def render_markdown(blocks: Iterable[Block]) -> str:
    parts: list[str] = []
    for block in blocks:
        match block:
            case Heading(text=text, level=level):
                parts.append(f"{'#' * level} {_inline(text)}")
            case Paragraph(text=text, kind="note"):
                parts.append(f"> **Note.** {_inline(text)}")
            case Paragraph(text=text, kind="method"):
                parts.append(f"*{_inline(text)}*")
            case Paragraph(text=text):
                parts.append(_inline(text))
            case Bullets(items=items, more=more):
                lines = [f"- {_inline(item)}" for item in items]
                if more:
                    lines.append(f"- … and {more} more")
                parts.append("\n".join(lines))
            case Table():
                parts.append(_table(block))
            case Figure():
                pass
    return "\n\n".join(parts) + "\n"


def _inline(text: str) -> str:
    """Text that Markdown shows as written: no accidental emphasis, tables or HTML, and
    a control character as a visible escape (a terminal showing the file obeys none)."""
    text = visible(text, lines=True)
    for char in ("\\", "*", "_", "`", "<", ">", "[", "]", "|"):
        text = text.replace(char, "\\" + char)
    return " ".join(text.split())


def _table(block: Table) -> str:
    flags = block.numeric or (False,) * len(block.columns)
    header = "| " + " | ".join(_inline(c) or " " for c in block.columns) + " |"
    rule = "|" + "|".join("---:" if n else ":---" for n in flags) + "|"
    rows = ["| " + " | ".join(_inline(cell) for cell in row) + " |" for row in block.rows]
    lines = [f"**{_inline(block.caption)}**", ""] if block.caption else []
    lines += [header, rule, *rows]
    if block.more:
        lines += ["", f"… and {block.more} more rows"]
    return "\n".join(lines)
