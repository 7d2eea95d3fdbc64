"""The report as one self-contained HTML file: inline CSS, figures as SVG (vector, sharp at
any zoom and in print), no script, no external resource, so it can be mailed, archived or
attached to a paper as it is. Each SVG is an ``<img>`` data URI rather than inline markup,
so that the ids of one figure can never collide with another's."""

from __future__ import annotations

import base64
import html
from collections.abc import Callable, Mapping

from analytics.report.document import Block, Bullets, Figure, Heading, Paragraph, Table
from analytics.report.drawing import Picture
from analytics.report.numbers import Report

_CSS = """
:root { --ink: #1f2328; --muted: #59636e; --line: #d1d9e0; --soft: #f6f8fa; --accent: #1b6ca8; }
* { box-sizing: border-box; }
body { margin: 0; background: #fff; color: var(--ink);
  font: 15px/1.5 -apple-system, "Segoe UI", "DejaVu Sans", "Liberation Sans", Arial, sans-serif; }
main { max-width: 1200px; margin: 0 auto; padding: 32px 28px 64px; }
h1 { font-size: 28px; line-height: 1.25; margin: 0 0 8px; }
h2 { font-size: 21px; margin: 40px 0 10px; padding-bottom: 6px;
  border-bottom: 2px solid var(--line); }
h3 { font-size: 17px; margin: 26px 0 8px; }
p { margin: 8px 0; }
p.method { color: var(--muted); font-size: 14px; }
p.note, li.note { background: #fff8e1; border-left: 4px solid #e0a800; padding: 8px 12px;
  border-radius: 4px; }
nav { background: var(--soft); border: 1px solid var(--line); border-radius: 6px;
  padding: 10px 16px; margin: 18px 0; font-size: 14px; }
nav a { color: var(--accent); text-decoration: none; margin-right: 14px; white-space: nowrap; }
ul { margin: 6px 0 12px; padding-left: 22px; }
li { margin: 3px 0; }
.scroll { overflow-x: auto; margin: 10px 0 18px; }
table { border-collapse: collapse; font-size: 13.5px; min-width: 40%; }
caption { text-align: left; font-weight: 600; padding: 4px 0 6px; font-size: 14px; }
th, td { padding: 5px 10px; border-bottom: 1px solid var(--line); vertical-align: top; }
th { background: var(--soft); text-align: left; font-weight: 600;
  border-bottom: 2px solid var(--line); }
td.num, th.num { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
tr.group td { border-top: 2px solid #afb8c1; }
tbody tr:hover td { background: #f0f6fc; }
figure { margin: 16px 0 22px; }
figure img { max-width: 100%; width: 860px; height: auto; border: 1px solid var(--line);
  border-radius: 6px; }
figcaption { color: var(--muted); font-size: 13px; margin-top: 4px; }
details { margin: 6px 0 14px; }
summary { cursor: pointer; color: var(--accent); }
.more { color: var(--muted); font-size: 13px; }
"""

Step = Callable[[str], None]


def render_html(
    report: Report,
    blocks: list[Block],
    step: Step | None = None,
    drawn: Mapping[Figure, list[Picture]] | None = None,
) -> str:
    """The whole page; ``step`` is called before each plot is drawn (progress), unless its
    figures come ``drawn`` already (as SVG, with other formats of the same run)."""
    title = next((b.text for b in blocks if isinstance(b, Heading) and b.level == 1), "Report")
    sections = [b for b in blocks if isinstance(b, Heading) and b.level == 2]
    nav = " ".join(f'<a href="#{_anchor(h.text)}">{_e(h.text)}</a>' for h in sections)
    if drawn is None:
        from analytics.report.drawing import pictures

        drawn = pictures(report, blocks, ("svg",), step)
    body: list[str] = []
    for block in blocks:
        body.append(_block(block, drawn))
        if isinstance(block, Heading) and block.level == 1:
            body.append("<!--nav-->")
    page = "\n".join(body).replace("<!--nav-->", f"<nav>{nav}</nav>", 1)
    return (
        '<!DOCTYPE html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n'
        '<meta name="viewport" content="width=device-width, initial-scale=1">\n'
        f"<title>{_e(title)}</title>\n<style>{_CSS}</style>\n</head>\n"
        f"<body>\n<main>\n{page}\n</main>\n</body>\n</html>\n"
    )


def _e(text: str) -> str:
    return html.escape(str(text), quote=True)


def _anchor(text: str) -> str:
    return "".join(c if c.isalnum() else "-" for c in text.lower()).strip("-")


def _block(block: Block, drawn: Mapping[Figure, list[Picture]]) -> str:
    match block:
        case Heading(text=text, level=2):
            return f'<h2 id="{_anchor(text)}">{_e(text)}</h2>'
        case Heading(text=text, level=level):
            return f"<h{level}>{_e(text)}</h{level}>"
        case Paragraph(text=text, kind=kind):
            return f'<p class="{kind}">{_e(text)}</p>'
        case Bullets(items=items, more=more):
            shown, rest = (items, ()) if len(items) <= 15 else (items[:10], items[10:])
            extra = f'<li class="more">… and {more} more</li>' if more else ""
            listing = f"<ul>{''.join(f'<li>{_e(i)}</li>' for i in shown)}{extra}</ul>"
            if rest:
                hidden = "".join(f"<li>{_e(i)}</li>" for i in rest)
                listing += (
                    f"<details><summary>Show {len(rest)} more</summary><ul>{hidden}</ul></details>"
                )
            return listing
        case Table():
            return _table(block)
        case Figure():
            return _figure(block, drawn[block])
    return ""


def _table(block: Table) -> str:
    flags = block.numeric or (False,) * len(block.columns)
    head = "".join(
        f'<th class="num">{_e(c)}</th>' if n else f"<th>{_e(c)}</th>"
        for c, n in zip(block.columns, flags, strict=True)
    )
    breaks = set(block.group_breaks)
    rows = []
    for index, row in enumerate(block.rows):
        cells = "".join(
            f'<td class="num">{_e(c)}</td>' if n else f"<td>{_e(c)}</td>"
            for c, n in zip(row, flags, strict=True)
        )
        rows.append(f'<tr class="group">{cells}</tr>' if index in breaks else f"<tr>{cells}</tr>")
    caption = f"<caption>{_e(block.caption)}</caption>" if block.caption else ""
    more = f'<p class="more">… and {block.more} more rows</p>' if block.more else ""
    table = (
        f'<div class="scroll"><table>{caption}<thead><tr>{head}</tr></thead>'
        f"<tbody>{''.join(rows)}</tbody></table></div>{more}"
    )
    if len(block.rows) > 40:
        label = f"Show {block.caption or 'the table'} ({len(block.rows)} rows)"
        return f"<details><summary>{_e(label)}</summary>{table}</details>"
    return table


def _figure(block: Figure, charts: list[Picture]) -> str:
    parts = []
    for name, caption, drawing in charts:
        svg = base64.b64encode(drawing["svg"]).decode("ascii")
        parts.append(
            f'<figure id="{_e(name)}"><img alt="{_e(block.caption)}" '
            f'src="data:image/svg+xml;base64,{svg}"><figcaption>{_e(caption)}'
            "</figcaption></figure>"
        )
    return "\n".join(parts)
