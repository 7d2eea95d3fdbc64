"""The per-system evaluation report, computed from a study database and written as a
terminal's tables, Markdown, one HTML file or JSON: what ``ozlab report`` and ``analytics
report`` (one command, registered in ``bot.cli``) run.
"""

from __future__ import annotations

import contextlib
import gc
import importlib
import sys
import threading
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, TextIO

from bot.core.errors import StudyDataError

if TYPE_CHECKING:
    from analytics.io.progress import Steps
    from analytics.report.document import Block, Figure
    from analytics.report.drawing import Easel, Picture
    from analytics.report.numbers import Report
    from analytics.report.pilot import PilotFindings

_SUFFIXES = {
    "": "terminal",
    ".txt": "terminal",
    ".md": "md",
    ".markdown": "md",
    ".html": "html",
    ".htm": "html",
    ".json": "json",
    ".tex": "tex",
}
_WRITTEN = ".txt (terminal), .md, .html, .json or .tex"


def format_for(out: Path | None, asked: str | None = None) -> str:
    """The format to write: ``asked``, else the one ``--out``'s suffix names (terminal when
    there is none). A suffix that names no format ozlab writes, or another format than the
    one asked, is refused before the database is read: a ``report.docx`` of plain text would
    open as a broken document."""
    if out is None:
        if asked == "tex":
            raise StudyDataError(
                "--format tex writes a main file with its tables and figures beside it: give "
                "--out report.tex"
            )
        return asked or "terminal"
    suffix = out.suffix.lower()
    named = _SUFFIXES.get(suffix)
    if named is None:
        raise StudyDataError(
            f"cannot write a report as {out.name}: ozlab writes {_WRITTEN}, not {suffix}"
        )
    if asked is not None and asked != named and suffix:
        raise StudyDataError(
            f"--format {asked} does not go with --out {out.name}, which names {named}: give "
            f"the file the suffix of its format"
        )
    return asked or named


def _importing(module: str) -> threading.Thread:
    """``module`` imported on a thread while the database is read: the drivers read the
    snapshot without Python's lock, so the statistics' imports (scipy, the study models:
    about a second) take no time of their own. A failed import is left to the later one."""

    def load() -> None:
        with contextlib.suppress(Exception):
            importlib.import_module(module)

    thread = threading.Thread(target=load, name="importing the statistics", daemon=True)
    thread.start()
    return thread


@contextlib.contextmanager
def _collected_once_started() -> Iterator[Callable[[], None]]:
    """Python's cycle collector off while the libraries are imported and the database is
    read, then (``started()``) on again with everything made so far frozen: the libraries'
    objects (some 230,000) outlive the report, and each full collection walked them all
    again (about 0.1 s of a small report, and a quarter of a second while importing).
    Importing and reading leave a few thousand objects of cyclic garbage (a megabyte), which
    stay. Frozen objects are thawed at the end, for a caller that goes on; a caller that
    keeps the collector off, or froze objects of its own, is left as it was."""
    if not gc.isenabled() or gc.get_freeze_count():
        yield lambda: None
        return
    gc.disable()
    frozen = False

    def started() -> None:
        nonlocal frozen
        gc.freeze()
        frozen = True
        gc.enable()

    try:
        yield started
    finally:
        gc.enable()
        if frozen:
            gc.unfreeze()


Output = tuple[str, Path | None]
"""A format and the file it is written to (None: stdout)."""


def outputs_for(outs: Sequence[Path] | None, asked: str | None = None) -> list[Output]:
    """What to write: one format to stdout without ``--out``; each ``--out`` in the format
    its suffix names (``asked`` only with one). The report is computed once for them all,
    so the formats of a paper and its supplement hold the same numbers."""
    if not outs:
        return [(format_for(None, asked), None)]
    if len(outs) > 1 and asked is not None:
        raise StudyDataError(
            "--format goes with one --out: with several, each file's suffix names its format"
        )
    repeated = [o for o in outs if list(outs).count(o) > 1]
    if repeated:
        raise StudyDataError(f"--out {repeated[0]} is given twice")
    return [(format_for(out, asked), out) for out in outs]


def report(
    db: Path,
    *,
    outputs: Sequence[Output] = (("terminal", None),),
    exclude_flagged: bool = False,
    study: str | None = None,
    stdout: TextIO | None = None,
    figures: Path | None = None,
    pilot: bool = False,
    adjust: str = "headline",
    every_model: bool = False,
) -> int:
    """Read ``db``, compute the report and write it in each of ``outputs``' formats to its
    file (or stdout); with ``figures``, every figure as files for a paper too."""
    with _collected_once_started() as started:
        importing = _importing("analytics.report.numbers")  # first: the read needs less
        from analytics.data.selecting import load_study
        from analytics.io.progress import steps
        from bot.core.vocabulary import WrittenKind
        from bot.rights.register import register_written
        from bot.store.opening import locate

        stdout = sys.stdout if stdout is None else stdout
        place = locate(db, study)
        source = Path(place.path).name if place.server is None else place.shown
        with steps(2 + len(outputs), "Report") as step, contextlib.ExitStack() as computing:
            step("reading the database")
            try:
                data = load_study(db, study)
            finally:
                importing.join()
            started()
            step("computing statistics")
            from threadpoolctl import threadpool_limits

            from analytics.report.numbers import build_report

            # One BLAS thread (numpy's and scipy's OpenBLAS) once they are loaded (only loaded ones
            # are limited) until the report is written: its matrices are small (a mixed model's are
            # the size of the participants), which BLAS's threads do not speed up, and those threads
            # wait for work spinning: on a machine busy with other work a 30-participant report's
            # statistics took ten times the CPU with them (6.4 s against 0.66 s).
            computing.enter_context(threadpool_limits(limits=1, user_api="blas"))
            drawn_as = _drawn_as([fmt for fmt, _ in outputs])
            easel = None
            if drawn_as:  # ready to draw by the time the statistics are done
                from analytics.report.drawing import Easel

                easel = computing.enter_context(Easel(drawn_as))

            built = build_report(
                data, exclude_flagged=exclude_flagged, adjust=adjust, every_model=every_model
            )
            found = None
            if pilot:
                from analytics.report.pilot import pilot_findings

                found = pilot_findings(data)
            pages = _Pages(built, source, found, drawn_as, step, easel)
            texts: list[tuple[str, Path | None]] = []
            for fmt, out in outputs:
                step(f"writing {fmt}")
                if fmt == "tex":
                    if out is None:  # the command line refused it already, in format_for
                        raise StudyDataError(
                            "a LaTeX report needs a file to write: --out report.tex"
                        )
                    written = _write_latex(pages, out)
                    register_written(db, WrittenKind.REPORT, written, study=study)
                    continue
                terminal = out is None and fmt == "terminal"
                text = _render(pages, fmt, terminal=terminal)
                if text is not None:  # None: printed to the terminal already
                    texts.append((text, out))
            if figures is not None:
                from analytics.report.figures import write_report_figures

                drawn = write_report_figures(built, figures, source=source, step=step)
                register_written(db, WrittenKind.FIGURES, drawn, study=study)
                print(f"{len(drawn)} figure files written to {figures}", file=sys.stderr)
        for text, out in texts:
            if out is None:
                stdout.write(text)
                stdout.flush()
                continue
            from bot.core.researcher_files import private_folder, write_private

            private_folder(out.parent)
            write_private(out, text)  # its owner's only: it quotes participants
            register_written(db, WrittenKind.REPORT, [out], study=study)
            print(f"Report written to {out}", file=sys.stderr)
        return 0


def _drawn_as(formats: Sequence[str]) -> tuple[str, ...]:
    """The figures' formats the run's HTML and LaTeX show (SVG, PDF)."""
    return tuple(f for fmt, f in (("html", "svg"), ("tex", "pdf")) if fmt in formats)


class _Pages:
    """What the formats of one run share: the layout at each length (the terminal's is
    shortened), and each figure drawn once in every format ``drawn_as`` (a run writing HTML
    and LaTeX drew every chart twice), by ``easel`` when there is one."""

    def __init__(
        self,
        built: Report,
        source: str,
        pilot: PilotFindings | None,
        drawn_as: Sequence[str],
        step: Steps,
        easel: Easel | None = None,
    ) -> None:
        self.built, self.source, self.pilot, self.step = built, source, pilot, step
        self._formats, self._easel = tuple(drawn_as), easel
        self._blocks: dict[int | None, list[Block]] = {}
        self._drawn: dict[Figure, list[Picture]] | None = None

    def blocks(self, limit: int | None = None) -> list[Block]:
        if limit not in self._blocks:
            from analytics.report.present import document

            blocks = document(self.built, limit=limit, source=self.source)
            if self.pilot is not None:
                from analytics.report.present_pilot import pilot_blocks

                blocks = [*blocks, *pilot_blocks(self.pilot, limit=limit)]
            self._blocks[limit] = blocks
        return self._blocks[limit]

    def drawn(self) -> dict[Figure, list[Picture]]:
        if self._drawn is None:
            from analytics.report.drawing import figure_count, pictures

            self.step.add(figure_count(self.blocks()))
            draw = pictures if self._easel is None else self._easel.pictures
            self._drawn = draw(self.built, self.blocks(), self._formats, self.step)
        return self._drawn


def _write_latex(pages: _Pages, out: Path) -> list[Path]:
    """The main file, one file per table and the figures as PDF, beside ``out``; the
    paths written."""
    from analytics.report.render_tex import write_latex
    from bot.core.researcher_files import private_folder, write_private

    drawn = pages.drawn()

    def draw(block: Figure) -> list[tuple[str, str, bytes]]:
        return [(name, caption, drawing["pdf"]) for name, caption, drawing in drawn[block]]

    private_folder(out.parent)
    written = write_latex(pages.blocks(), out, draw, write_private, private_folder)
    print(f"Report written to {out} ({len(written) - 1} table and figure files beside it)",
          file=sys.stderr)  # fmt: skip
    return written


def _render(pages: _Pages, fmt: str, *, terminal: bool) -> str | None:
    built, source, pilot = pages.built, pages.source, pages.pilot
    if fmt == "json":
        from analytics.report.render_json import render_json

        if pilot is None:
            return render_json(built, source=source) + "\n"
        import json

        from analytics.report.present_pilot import pilot_json

        whole = json.loads(render_json(built, source=source)) | {"pilot": pilot_json(pilot)}
        return json.dumps(whole, ensure_ascii=False, indent=1, allow_nan=False) + "\n"
    blocks = pages.blocks(15 if fmt == "terminal" else None)
    if fmt == "md":
        from analytics.report.render_md import render_markdown

        return render_markdown(blocks)
    if fmt == "html":
        from analytics.report.render_html import render_html

        return render_html(built, blocks, drawn=pages.drawn())
    import io

    from analytics.report.render_terminal import render_terminal

    if terminal:
        render_terminal(blocks)
        return None
    buffer = io.StringIO()
    render_terminal(blocks, file=buffer)
    return buffer.getvalue()
