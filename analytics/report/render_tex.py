"""The report as LaTeX for a paper: a main file that compiles with pdflatex, one
``\\input``-able file per table (booktabs rules, a longtable that may break across pages),
and every figure as PDF beside them.

``--out paper/report.tex`` writes ``paper/report.tex``, ``paper/report-tables/NN-name.tex``
and ``paper/report-figures/NAME.pdf``. A table file holds the table alone (its caption, its
rules, its rows), so that a paper can ``\\input`` the one it needs; it needs ``booktabs``,
``longtable`` and ``array`` in the paper's preamble, as the main file has them.

Every text of the document is escaped (:func:`latex`): LaTeX's special characters are
printed as written, the symbols the report uses (ε², ρ, ≈, −) are set in math, and a
character pdflatex's fonts do not hold (an emoji, a script other than Latin) is shown
visibly as its code point, ``<U+1F600>``, rather than failing the compilation or vanishing.
"""

from __future__ import annotations

import math
import re
import unicodedata
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path

from analytics.report.document import Block, Bullets, Figure, Heading, Paragraph, Table
from bot.core.visible_text import visible

_SPECIAL = {
    "\\": r"\textbackslash{}",
    "{": r"\{",
    "}": r"\}",
    "$": r"\$",
    "&": r"\&",
    "#": r"\#",
    "^": r"\textasciicircum{}",
    "_": r"\_",
    "%": r"\%",
    "~": r"\textasciitilde{}",
    "<": r"\textless{}",
    ">": r"\textgreater{}",
    "|": r"\textbar{}",
    "`": r"\textasciigrave{}",
    "-": "-{}",  # never a ligature: "--" stays two hyphens
    '"': r"\textquotedbl{}",
}
_SYMBOLS = {
    "—": "---",
    "–": "--",
    "−": r"\textminus{}",
    "…": r"\dots{}",
    "“": "``",
    "”": "''",
    "‘": "`",
    "’": "'",
    "•": r"\textbullet{}",
    "·": r"\textperiodcentered{}",
    "→": r"\textrightarrow{}",
    "×": r"\texttimes{}",
    "±": r"\textpm{}",
    "°": r"\textdegree{}",
    "²": r"\textsuperscript{2}",
    "³": r"\textsuperscript{3}",
    "€": r"\texteuro{}",
    "≈": r"$\approx$",
    "≥": r"$\geq$",
    "≤": r"$\leq$",
    "≠": r"$\neq$",
    "∞": r"$\infty$",
    "√": r"$\surd$",
    "α": r"$\alpha$",
    "β": r"$\beta$",
    "χ": r"$\chi$",
    "δ": r"$\delta$",
    "ε": r"$\varepsilon$",
    "η": r"$\eta$",
    "κ": r"$\kappa$",
    "λ": r"$\lambda$",
    "μ": r"$\mu$",
    "π": r"$\pi$",
    "ρ": r"$\rho$",
    "σ": r"$\sigma$",
    "τ": r"$\tau$",
    "ω": r"$\omega$",
    "γ": r"$\gamma$",
    "θ": r"$\theta$",
    "φ": r"$\phi$",
    "Δ": r"$\Delta$",
    "Σ": r"$\Sigma$",
    "⁻": r"\textsuperscript{\textminus{}}",
    "ᵀ": r"\textsuperscript{T}",
}
_PACKAGES = ("booktabs", "longtable", "array", "graphicx", "textcomp")


def latex(text: str) -> str:
    """``text`` as LaTeX that prints it as written, on one line."""
    out = []
    run = 0  # characters since the last space: a long run (a digest, a URL) may break
    for char in visible(" ".join(str(text).split())):
        run = 0 if char == " " else run + 1
        if run > 1 and run % 16 == 1:
            out.append(r"\allowbreak{}")
        if char in _SPECIAL:
            out.append(_SPECIAL[char])
        elif char in _SYMBOLS:
            out.append(_SYMBOLS[char])
        elif char.isascii() or _latin(char):
            out.append(char)
        else:
            out.append(rf"\texttt{{<U+{ord(char):04X}>}}\allowbreak{{}}")
    return "".join(out)


def _latin(char: str) -> bool:
    """A letter of Latin-1 or Latin Extended-A, which T1-encoded fonts hold (é, ß, ł)."""
    return 0xA0 <= ord(char) <= 0x17F and unicodedata.category(char) not in ("Cc", "Cf")


def write_latex(
    blocks: Sequence[Block],
    out: Path,
    draw: Callable[[Figure], list[tuple[str, str, bytes]]],
    write: Callable[[Path, str | bytes], Path],
    folder: Callable[[Path], Path],
) -> list[Path]:
    """The main file ``out``, its tables and figures beside it; the paths written, main
    file first. ``draw`` gives a figure's charts as (name, caption, PDF bytes); ``write``
    and ``folder`` make files and folders (their owner's only: they quote participants)."""
    stem = out.stem
    tables_dir = out.parent / f"{stem}-tables"
    figures_dir = out.parent / f"{stem}-figures"
    written: list[Path] = []
    body: list[str] = []
    title = ""
    count = 0
    for index, block in enumerate(blocks):
        following = blocks[index + 1] if index + 1 < len(blocks) else None
        if isinstance(block, Heading) and block.level > 1 and isinstance(following, Table):
            body.append(_keep_with(following))
        match block:
            case Heading(text=text, level=1):
                title = text
            case Heading(text=text, level=2):
                body.append(rf"\section{{{latex(text)}}}")
            case Heading(text=text):
                body.append(rf"\subsection*{{{latex(text)}}}")
            case Paragraph(text=text, kind="note"):
                body.append(rf"\begin{{quote}}\textbf{{Note.}} {latex(text)}\end{{quote}}")
            case Paragraph(text=text, kind="method"):
                body.append(rf"{{\small\itshape {latex(text)}\par}}")
            case Paragraph(text=text):
                body.append(latex(text))
            case Bullets(items=items, more=more):
                body.append(_bullets(items, more))
            case Table():
                count += 1
                name = f"{count:02d}-{_slug(block.caption or 'table')}"
                folder(tables_dir)
                written.append(write(tables_dir / f"{name}.tex", table_latex(block)))
                body.append(rf"\input{{{stem}-tables/{name}}}")
            case Figure():
                for chart, caption, pdf in draw(block):
                    folder(figures_dir)
                    written.append(write(figures_dir / f"{chart}.pdf", pdf))
                    body.append(_figure(f"{stem}-figures/{chart}.pdf", caption))
    main = write(out, _main(title, body))
    return [main, *written]


def _main(title: str, body: Iterable[str]) -> str:
    packages = "\n".join(rf"\usepackage{{{p}}}" for p in _PACKAGES)
    return "\n".join(
        [
            "% The ozlab report as LaTeX: compile with pdflatex; each table is its own file.",
            r"\documentclass[11pt,a4paper]{article}",
            r"\usepackage[T1]{fontenc}",
            r"\usepackage[utf8]{inputenc}",
            r"\usepackage{lmodern}",
            r"\usepackage[margin=2cm]{geometry}",
            packages,
            r"\setlength{\LTcapwidth}{\linewidth}",
            _KEEP,
            r"\sloppy",  # a long digest or URL wraps, leaving space, rather than sticks out
            r"\begin{document}",
            rf"{{\LARGE\bfseries {latex(title)}\par}}",
            r"\bigskip",
            "",
            "\n\n".join(body),
            "",
            r"\end{document}",
            "",
        ]
    )


_KEEP = r"""\makeatletter
\newcommand{\ozlabkeep}[1]{\par\penalty-100\begingroup\setlength{\dimen@}{#1}%
  \dimen@ii\pagegoal\advance\dimen@ii-\pagetotal
  \ifdim\dimen@>\dimen@ii\ifdim\dimen@ii>\z@\vfil\fi\break\fi\endgroup}
\makeatother"""
"""``\\ozlabkeep{height}``: a new page here unless ``height`` is left on this one (the
``needspace`` package's test, which texlive-latex-recommended does not ship). A heading
needs it before a longtable: longtable may break the page right after the heading."""
_KEEP_LINES = 6
"""A heading, the table's caption, its rules and header, in lines."""
_MOST_LINES = 40
"""A first row longer than this cannot keep with its heading on any page."""


def _keep_with(table: Table) -> str:
    """Room for the heading above ``table`` with its caption, header and first row, which
    longtable never splits: else the heading would be left alone at the foot of a page."""
    lines = min(_KEEP_LINES + _first_row_lines(table), _MOST_LINES)
    return rf"\ozlabkeep{{{lines}\baselineskip}}"


def _first_row_lines(table: Table) -> int:
    """About how many lines the first row takes: its longest cell over its column's width."""
    if not table.rows:
        return 0
    flags = table.numeric or (False,) * len(table.columns)
    scale = 0.95 if len(table.columns) > 6 else 1.0
    _, _, widths = _columns(table, flags, scale)
    return max(
        math.ceil(len(cell) * _CHAR * scale / width) if width else 1
        for cell, width in zip(table.rows[0], widths, strict=True)
    )


def _bullets(items: Sequence[str], more: int) -> str:
    lines = [r"\begin{itemize}"]
    lines += [rf"  \item {latex(item)}" for item in items]
    if more:
        lines.append(rf"  \item \dots{{}} and {more} more")
    lines.append(r"\end{itemize}")
    return "\n".join(lines)


def _figure(path: str, caption: str) -> str:
    return "\n".join(
        [
            r"\begin{figure}[htbp]",
            r"  \centering",
            rf"  \includegraphics[width=\linewidth]{{{path}}}",
            rf"  \caption{{{latex(caption)}}}",
            r"\end{figure}",
        ]
    )


def _slug(text: str) -> str:
    words = re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")
    return words[:40].rstrip("-") or "table"


_CHAR = 0.0115
"""About one character's share of the text width in a \\small table."""
_SCALES = {r"\small": 1.0, r"\footnotesize": 0.95, r"\scriptsize": 0.8}
"""A character's width in each size against \\small's."""


def table_latex(block: Table) -> str:
    """One table as an ``\\input``-able longtable with booktabs rules."""
    flags = block.numeric or (False,) * len(block.columns)
    size = r"\footnotesize" if len(block.columns) > 6 else r"\small"
    spec, fits, _ = _columns(block, flags, _SCALES[size])
    for smaller in (r"\footnotesize", r"\scriptsize"):  # its longest words are too wide
        if fits or _SCALES[smaller] >= _SCALES[size]:
            continue
        size = smaller
        spec, fits, _ = _columns(block, flags, _SCALES[size])
    header = " & ".join(rf"\textbf{{{latex(c)}}}" for c in block.columns) + r" \\"
    lines = [
        f"% {latex(block.caption or 'table')} (ozlab report)",
        r"\begingroup" + size,
        r"\setlength{\tabcolsep}{4pt}",
        rf"\begin{{longtable}}{{@{{}}{spec}@{{}}}}",
    ]
    if block.caption:
        lines.append(rf"\caption*{{\textbf{{{latex(block.caption)}}}}}\\")
    lines += [r"\toprule", header, r"\midrule", r"\endhead"]
    breaks = set(block.group_breaks)
    for index, row in enumerate(block.rows):
        if index in breaks:
            lines.append(r"\addlinespace")
        lines.append(" & ".join(latex(cell) for cell in row) + r" \\")
    lines.append(r"\bottomrule")
    if block.more:
        lines.append(
            rf"\multicolumn{{{len(block.columns)}}}{{@{{}}l}}{{\dots{{}} and {block.more} "
            r"more rows}\\"
        )
    lines += [r"\end{longtable}", r"\endgroup", ""]
    return "\n".join(lines)


def _columns(
    block: Table, flags: Sequence[bool], scale: float
) -> tuple[str, bool, list[float | None]]:
    """``l``/``r`` for short columns; a paragraph column (``p``) sharing the width left
    for each long one, so that a long text wraps within the page. The shares add up to the
    width left at most (a column's padding taken from its own width): a table never sticks
    out into the margin, unless its longest words alone are wider than the page (then the
    second value is False). Third: each paragraph column's share of the line (None for
    a column as wide as its longest text)."""
    longest = [  # a header counts wider: it is bold
        max([math.ceil(1.15 * len(block.columns[i])), *(len(row[i]) for row in block.rows)])
        for i in range(len(block.columns))
    ]
    words = [
        max(len(w) for text in (block.columns[i], *(row[i] for row in block.rows))
            for w in [*text.split(), ""])
        for i in range(len(block.columns))
    ]  # fmt: skip
    # a word never sticks out: its characters, the header's in bold, and the padding
    least = [
        (max(word, math.ceil(1.15 * _longest_word(header))) + 3) * _CHAR * scale
        for word, header in zip(words, block.columns, strict=True)
    ]
    long = [n > 16 for n in longest]

    def natural() -> float:
        return sum(
            (n + 2) * _CHAR * scale for n, wide in zip(longest, long, strict=True) if not wide
        )

    # Many short columns can fill the line by themselves: the widest that can wrap (its
    # text has several words, as headers do) wraps too, until the rest fits.
    while natural() + sum(least[i] for i, wide in enumerate(long) if wide) > 0.9:
        wrappable = [
            i
            for i, wide in enumerate(long)
            if not wide and least[i] < (longest[i] + 2) * _CHAR * scale
        ]
        if not wrappable:
            break
        long[max(wrappable, key=lambda i: longest[i])] = True
    free = max(0.2, 0.97 - natural())
    weights = [min(n, 60) if wide else 0 for n, wide in zip(longest, long, strict=True)]
    shares = _shares(weights, least, free)
    spec = []
    for numeric, wide, share in zip(flags, long, shares, strict=True):
        if not wide:
            spec.append("r" if numeric else "l")
            continue
        width = rf"\dimexpr{share:.3f}\linewidth-2\tabcolsep\relax"
        align = r">{\raggedleft\arraybackslash}" if numeric else r">{\raggedright\arraybackslash}"
        spec.append(rf"{align}p{{{width}}}")
    widths = [share if wide else None for wide, share in zip(long, shares, strict=True)]
    return "".join(spec), natural() + sum(shares) <= 0.97 + 1e-9, widths


def _longest_word(text: str) -> int:
    return max((len(w) for w in text.split()), default=0)


def _shares(weights: Sequence[int], least: Sequence[float], free: float) -> list[float]:
    """``free`` shared by ``weights`` (0: a column that takes none), no share below its
    ``least``: a column held at its least leaves the rest to share what remains."""
    held: set[int] = set()
    while True:
        left = free - sum(least[i] for i in held)
        total = sum(w for i, w in enumerate(weights) if i not in held) or 1
        shares = [least[i] if i in held else left * w / total for i, w in enumerate(weights)]
        under = {i for i, w in enumerate(weights) if w and i not in held and shares[i] < least[i]}
        if not under:
            return shares
        held |= under
