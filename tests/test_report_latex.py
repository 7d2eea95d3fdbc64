"""``ozlab report --format tex`` as a researcher uses it for a paper: the HMD demo's report
compiles with pdflatex, each table is its own ``\\input``-able file with booktabs rules,
figures are PDF files beside it, and text from outside (a participant's comment with
LaTeX's special characters, an emoji, another script) is printed as written, never obeyed.

pdflatex comes from Debian's texlive-latex-base and texlive-latex-recommended (.ci/packages
installs them): without it this test fails, as a paper's tables would go unchecked.
"""

from __future__ import annotations

import asyncio
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from analytics.report.document import Bullets, Heading, Paragraph, Table
from analytics.report.render_tex import latex, table_latex, write_latex
from bot.core.researcher_files import private_folder, write_private
from bot.pilot.demo import play_study
from scenarios.loading import load_study

pytestmark = pytest.mark.slow  # a whole demo, report and two pdflatex runs

OZLAB = str(Path(sys.executable).with_name("ozlab"))
HOSTILE = r"50% off & $5 #1 \input{/etc/passwd} ^_~ {x} -- a<b>c | `q` 😀 Привет é ß"


def pdflatex(main: Path) -> subprocess.CompletedProcess[str]:
    """Two runs, as a paper is built (longtable settles its column widths on the second)."""
    found = shutil.which("pdflatex")
    assert found is not None, "pdflatex is missing: run .ci/packages as root (Debian's TeX Live)"
    for _ in range(2):
        done = subprocess.run(
            [found, "-interaction=nonstopmode", "-halt-on-error", "-no-shell-escape", main.name],
            cwd=main.parent,
            capture_output=True,
            text=True,
            timeout=180,
            check=False,
        )
        if done.returncode:
            break
    return done


@pytest.fixture(scope="module")
def demo_db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    db = tmp_path_factory.mktemp("demo") / "demo.sqlite"
    # as ozlab demo plays it: the ACUTE annotators' pairwise tables are the widest
    asyncio.run(play_study(load_study("hmd"), db, participants=8, annotators=4))
    return db


@pytest.fixture(scope="module")
def written(demo_db: Path, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    """``ozlab report --out report.tex`` on the demo, run once for the module: the folder it
    wrote and what it said on stderr. A test copies the folder before building in it."""
    folder = tmp_path_factory.mktemp("written")
    done = subprocess.run(
        [OZLAB, "report", "--db", str(demo_db), "--out", str(folder / "report.tex")],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    return folder, done.stderr


def test_the_demo_report_compiles_with_pdflatex(written: tuple[Path, str], tmp_path: Path) -> None:
    folder, said = written
    main = tmp_path / "paper" / "report.tex"
    shutil.copytree(folder, main.parent)
    assert "Report written to" in said
    text = main.read_text(encoding="utf-8")
    inputs = re.findall(r"\\input\{(report-tables/[^}]+)\}", text)
    tables = sorted((main.parent / "report-tables").iterdir())
    assert [f"report-tables/{p.stem}" for p in tables] == inputs  # one file per table
    assert inputs[0].startswith("report-tables/01-every-measure-at-a-glance")
    first = tables[0].read_text(encoding="utf-8")
    assert r"\toprule" in first and r"\midrule" in first and r"\bottomrule" in first
    assert r"\begin{tabular" not in first and r"\hline" not in first  # booktabs, no rules of old
    graphics = re.findall(r"\\includegraphics\[[^]]*\]\{([^}]+)\}", text)
    assert graphics and all((main.parent / g).read_bytes().startswith(b"%PDF") for g in graphics)
    built = pdflatex(main)
    assert built.returncode == 0, built.stdout[-3000:]
    assert main.with_suffix(".pdf").read_bytes().startswith(b"%PDF")
    pages = re.search(r"Output written on report\.pdf \((\d+) pages", built.stdout)
    assert pages is not None and int(pages.group(1)) >= 4
    log = main.with_suffix(".log").read_text(encoding="utf-8", errors="replace")
    overfull = re.findall(r"Overfull \\hbox \([^)]*\) in [^\n]*", log)
    assert not overfull, overfull  # nothing sticks out into the margin
    written = text + "".join(p.read_text(encoding="utf-8") for p in tables)
    assert "<U+" not in written  # the methods' symbols (Σ, ᵀ, ⁻¹, γ) are printed, not coded


def test_a_table_file_is_input_into_a_paper_of_its_own(
    written: tuple[Path, str], tmp_path: Path
) -> None:
    """What a paper does with one table: its own preamble, ``\\input`` the file."""
    shutil.copytree(written[0], tmp_path, dirs_exist_ok=True)
    table = sorted((tmp_path / "report-tables").iterdir())[0]
    paper = tmp_path / "paper.tex"
    paper.write_text(
        "\\documentclass{article}\n\\usepackage[T1]{fontenc}\n\\usepackage{booktabs,longtable,"
        "array,textcomp}\n\\begin{document}\nOur results.\n\n"
        f"\\input{{report-tables/{table.stem}}}\n\\end{{document}}\n",
        encoding="utf-8",
    )
    built = pdflatex(paper)
    assert built.returncode == 0, built.stdout[-3000:]


def test_outside_text_is_printed_as_written(tmp_path: Path) -> None:
    escaped = latex(HOSTILE)
    assert r"\textbackslash{}input\{/etc/pass" in escaped  # a long word may break, never run
    assert r"50\% off \& \$5 \#1" in escaped and r"\texttt{<U+1F600>}" in escaped
    assert r"\texttt{<U+041F>}" in escaped and "é ß" in escaped  # Cyrillic shown, Latin kept
    assert "-{}-{}" in escaped  # two hyphens, not an en dash
    assert latex("line\x1b[31mred\nnext") == r"line\textbackslash{}x1b[31mred next"
    blocks = [
        Heading(f"Report: {HOSTILE}", 1),
        Heading(HOSTILE),
        Paragraph(HOSTILE, "note"),
        Paragraph(HOSTILE, "method"),
        Bullets((HOSTILE, "ρ = 0.41, ε² = 0.11, χ² ≈ 3.2, d ≥ 2.38 − 1"), more=2),
        Table(("Comment", "n"), ((HOSTILE, "3"),), HOSTILE, (False, True)),
    ]
    main = tmp_path / "report.tex"
    written = write_latex(blocks, main, lambda _: [], write_private, private_folder)
    assert [p.name for p in written] == [
        "report.tex",
        "01-50-off-5-1-input-etc-passwd-x-a-b-c-q.tex",
    ]
    assert r"\input{/etc/passwd}" not in "".join(p.read_text() for p in written)
    built = pdflatex(main)
    assert built.returncode == 0, built.stdout[-3000:]
    assert "(/etc/passwd" not in built.stdout  # never opened: pdflatex logs "(FILE" it reads


def test_a_long_table_keeps_its_header_on_every_page() -> None:
    rows = tuple((f"row {i}", str(i)) for i in range(3))
    text = table_latex(Table(("What", "n"), rows, "Caption", (False, True), 4, (2,)))
    assert r"\endhead" in text and r"\addlinespace" in text and "and 4 more rows" in text


def test_a_heading_is_never_left_at_the_foot_of_a_page_without_its_table(tmp_path: Path) -> None:
    """Example conversations one after the other, each a heading and a table whose first row
    is long (a system's whole answer): wherever a heading falls, its table's caption is on
    the same page, never on the next one (pages read back with pdftotext)."""
    answer = " ".join(["I found nine adventure games for Linux, each with its price."] * 9)
    blocks: list[Heading | Paragraph | Table] = [Heading("Example conversations", 1)]
    for k in range(14):
        blocks.append(Paragraph(" ".join(["Filler words of a paragraph before it."] * (k + 3))))
        blocks.append(Heading(f"Conversation {k} of shop-v1", 3))
        rows = (("1", "What do you recommend?", answer), ("2", "Add it, please.", "Done!"))
        table = Table(("Turn", "Participant", "System"), rows, f"Session {k}", (True, False, False))
        blocks.append(table)
    main = tmp_path / "report.tex"
    write_latex(blocks, main, lambda _: [], write_private, private_folder)
    built = pdflatex(main)
    assert built.returncode == 0, built.stdout[-3000:]
    pdftotext = shutil.which("pdftotext")
    assert pdftotext is not None, "pdftotext is missing: apt-get install poppler-utils"
    text = subprocess.run(
        [pdftotext, "-layout", str(main.with_suffix(".pdf")), "-"],
        capture_output=True, text=True, timeout=60, check=True,
    ).stdout  # fmt: skip
    pages = text.split("\f")
    assert len(pages) > 4  # the headings fall at many places of a page
    for k in range(14):
        (page,) = [p for p in pages if f"Conversation {k} of shop-v1" in p]
        assert f"Session {k}" in page, (k, page[-400:])
