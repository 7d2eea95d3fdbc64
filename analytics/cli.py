"""``analytics report | export | power | import responses | import annotations``: the
researcher's analysis commands.

Also reached as ``ozlab report``, ``ozlab export``, ``ozlab power`` and ``ozlab import
responses``: the bot's command line hands these arguments to ``main`` here, imported only
when such a command is run, so that the bot never loads pandas. Every error raised on purpose is an
:class:`~bot.errors.OzlabError`, caught once in :func:`main`: one line on stderr and its exit
status (3: an import file with problems, nothing was written; an unknown or missing
``--study``; no pyarrow for Parquet; an export's ``--out`` that is a file. 5: no database, or
not an ozlab one. 6: a database of an older or newer ozlab). Ctrl-C: one line and 130.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TYPE_CHECKING, TextIO

from bot.arguments import positive, probability
from bot.errors import StudyDataError, told
from bot.visible_text import visible

if TYPE_CHECKING:
    from collections.abc import Sequence

    from analytics.import_rows import Problem
    from analytics.pilot import PilotFindings
    from analytics.progress import Steps
    from analytics.report_data import Report

FORMATS = ("terminal", "md", "html", "json")
_SHOWN = 50  # problems listed; the count covers all
_SUFFIXES = {".md": "md", ".markdown": "md", ".html": "html", ".htm": "html", ".json": "json"}


def parser(prog: str = "analytics") -> argparse.ArgumentParser:
    top = argparse.ArgumentParser(prog=prog, description="Reports and data of an ozlab study.")
    commands = top.add_subparsers(dest="command", required=True)

    report = commands.add_parser("report", help="the per-system evaluation report")
    report.add_argument("--db", type=Path, required=True, help="study database")
    report.add_argument(
        "--format",
        choices=FORMATS,
        help="terminal (rich tables; plain text with --out), md, html (one self-contained "
        "file with plots) or json (every number); default: from --out's suffix, else terminal",
    )
    report.add_argument("--out", type=Path, help="write to this file instead of stdout")
    report.add_argument(
        "--exclude-flagged",
        action="store_true",
        help="leave out participants flagged by data-quality checks, and say how many and why",
    )
    report.add_argument("--study", help="the study to report on, when the database holds several")
    report.add_argument(
        "--pilot",
        action="store_true",
        help="add the pilot section: drop-offs, time per phase, unanswered items, system "
        "errors and latency, messages that got a hint (for demo, pilot and first sessions)",
    )
    report.add_argument(
        "--figures",
        type=Path,
        metavar="DIR",
        help="also write every figure to DIR as PDF, SVG and 300-dpi PNG, each with a caption "
        "file (name.txt), for a paper",
    )

    export = commands.add_parser("export", help="tidy long-format tables and a codebook")
    export.add_argument("--db", type=Path, required=True, help="study database")
    export.add_argument("--out", type=Path, required=True, help="folder to write into")
    export.add_argument(
        "--format",
        choices=("csv", "parquet", "sav"),
        default="csv",
        help="csv (UTF-8), parquet (needs pyarrow) or sav (SPSS, with variable and value "
        "labels; R: haven::read_sav); default csv",
    )
    export.add_argument(
        "--wide",
        action="store_true",
        help="also write responses_wide: one row per participant × session, one column per item",
    )
    export.add_argument("--study", help="the study to export, when the database holds several")
    export.add_argument(
        "--raw-csv",
        action="store_true",
        help="CSV text exactly as written, formulas too: for R or pandas only, never a "
        "spreadsheet (by default a text cell beginning with = + - @, a tab or a carriage "
        "return starts with ')",
    )

    power = commands.add_parser(
        "power", help="participants needed for the study's design (or a database's so far)"
    )
    power.add_argument(
        "study",
        help="a shipped study's name, a study YAML file, or a study database (which adds the "
        "smallest effect its participants so far could detect)",
    )
    power.add_argument(
        "--effect",
        type=positive,
        help="Cohen's d for two systems (d_z within), Cohen's f for more; "
        "default 0.5 or 0.25 (Cohen's medium)",
    )
    power.add_argument("--alpha", type=probability, default=0.05, help="default 0.05")
    power.add_argument("--power", type=probability, default=0.8, help="default 0.8")
    power.add_argument(
        "--corr",
        type=float,
        default=0.5,
        help="within participants, 3+ systems: correlation between a participant's measures "
        "(default 0.5, as G*Power)",
    )
    power.add_argument("--study", dest="study_id", help="the study, when a database holds several")

    imports = commands.add_parser("import", help="add data collected outside Telegram")
    kinds = imports.add_subparsers(dest="kind", required=True)
    responses = kinds.add_parser(
        "responses", help="questionnaire answers from a CSV file in the export's long format"
    )
    responses.add_argument("file", type=Path, help="CSV file (UTF-8, header row)")
    responses.add_argument("--db", type=Path, required=True, help="study database")
    responses.add_argument(
        "--study",
        help="the study the answers belong to: its id when the database holds several, or a "
        "shipped study's name / YAML file to store in a database that has no definition yet",
    )
    responses.add_argument("--dry-run", action="store_true", help="check every row, write nothing")
    annotations = kinds.add_parser(
        "annotations",
        help="annotators' ratings made elsewhere: columns target, annotator, item, value",
    )
    annotations.add_argument("file", type=Path, help="CSV file (UTF-8, header row)")
    annotations.add_argument("--db", type=Path, required=True, help="study database")
    annotations.add_argument(
        "--instrument", required=True, help="the questionnaire rated with: its id or YAML file"
    )
    annotations.add_argument(
        "--job", help="the annotation job the ratings belong to (default: imported)"
    )
    annotations.add_argument(
        "--dry-run", action="store_true", help="check every row, write nothing"
    )
    return top


def main(argv: list[str] | None = None, prog: str = "analytics") -> int:
    args = parser(prog).parse_args(argv)
    return told(lambda: _command(args), prog)


def _command(args: argparse.Namespace) -> int:
    if args.command == "report":
        return report(
            args.db,
            fmt=args.format
            or _SUFFIXES.get(args.out.suffix.lower() if args.out else "", "terminal"),
            out=args.out,
            exclude_flagged=args.exclude_flagged,
            study=args.study,
            figures=args.figures,
            pilot=args.pilot,
        )
    if args.command == "export":
        return export(
            args.db,
            args.out,
            fmt=args.format,
            study=args.study,
            wide=args.wide,
            raw_csv=args.raw_csv,
        )
    if args.command == "power":
        from analytics.power import power_report

        print(
            power_report(
                args.study,
                effect=args.effect,
                alpha=args.alpha,
                power=args.power,
                corr=args.corr,
                study=args.study_id,
            ),
            end="",
        )
        return 0
    if args.kind == "annotations":
        return import_annotations(
            args.file, args.db, instrument=args.instrument, job=args.job, dry_run=args.dry_run
        )
    return import_responses(args.file, args.db, study=args.study, dry_run=args.dry_run)


def report(
    db: Path,
    *,
    fmt: str = "terminal",
    out: Path | None = None,
    exclude_flagged: bool = False,
    study: str | None = None,
    stdout: TextIO | None = None,
    figures: Path | None = None,
    pilot: bool = False,
) -> int:
    """Read ``db``, compute the report and write it in ``fmt`` to ``out`` (or stdout);
    with ``figures``, every figure as files for a paper too."""
    from analytics.data import load_study_data
    from analytics.progress import steps
    from analytics.selecting import select_study

    stdout = sys.stdout if stdout is None else stdout
    source = Path(db).name
    with steps(3, "Report") as step:
        step("reading the database")
        data = select_study(load_study_data(db), study)
        step("computing statistics")
        from analytics.report_data import build_report

        built = build_report(data, exclude_flagged=exclude_flagged)
        step(f"writing {fmt}")
        found = None
        if pilot:
            from analytics.pilot import pilot_findings

            found = pilot_findings(data)
        text = _render(
            built, fmt, source, step, terminal=out is None and fmt == "terminal", pilot=found
        )
        if figures is not None:
            from analytics.figures import write_report_figures

            drawn = write_report_figures(built, figures, source=source, step=step)
            print(f"{len(drawn)} figure files written to {figures}", file=sys.stderr)
    if text is None:  # printed to the terminal already
        return 0
    if out is None:
        stdout.write(text)
        stdout.flush()
    else:
        from bot.researcher_files import private_folder, write_private

        private_folder(out.parent)
        write_private(out, text)  # its owner's only: it quotes participants
        print(f"Report written to {out}", file=sys.stderr)
    return 0


def _render(
    built: Report,
    fmt: str,
    source: str,
    step: Steps,
    *,
    terminal: bool,
    pilot: PilotFindings | None = None,
) -> str | None:
    if fmt == "json":
        from analytics.render_json import render_json

        if pilot is None:
            return render_json(built, source=source) + "\n"
        import json

        from analytics.present_pilot import pilot_json

        whole = json.loads(render_json(built, source=source)) | {"pilot": pilot_json(pilot)}
        return json.dumps(whole, ensure_ascii=False, indent=1, allow_nan=False) + "\n"
    from analytics.present import document

    limit = 15 if fmt == "terminal" else None
    blocks = document(built, limit=limit, source=source)
    if pilot is not None:
        from analytics.present_pilot import pilot_blocks

        blocks = [*blocks, *pilot_blocks(pilot, limit=limit)]
    if fmt == "md":
        from analytics.render_md import render_markdown

        return render_markdown(blocks)
    if fmt == "html":
        from analytics.render_html import figure_count, render_html

        step.add(figure_count(blocks))
        return render_html(built, blocks, step)
    import io

    from analytics.render_terminal import render_terminal

    if terminal:
        render_terminal(blocks)
        return None
    buffer = io.StringIO()
    render_terminal(blocks, file=buffer)
    return buffer.getvalue()


def export(
    db: Path,
    out: Path,
    *,
    fmt: str = "csv",
    study: str | None = None,
    wide: bool = False,
    raw_csv: bool = False,
) -> int:
    from analytics.export import export_study

    written = export_study(db, out, fmt=fmt, study=study, wide=wide, raw_csv=raw_csv)
    for path in written:
        print(path)
    return 0


def _refuse_problems(file: Path, problems: Sequence[Problem]) -> None:
    """A file with problems is imported not at all: each problem with its line, then why."""
    from analytics.document import plural

    for problem in problems[:_SHOWN]:
        print(f"{file}:{problem.line}: {visible(problem.message)}", file=sys.stderr)
    if len(problems) > _SHOWN:
        print(f"… and {plural(len(problems) - _SHOWN, 'more problem')}", file=sys.stderr)
    if problems:
        raise StudyDataError(f"{plural(len(problems), 'problem')}: nothing was imported.")


def import_responses(
    file: Path, db: Path, *, study: str | None = None, dry_run: bool = False
) -> int:
    from analytics.document import plural
    from analytics.importing import import_responses as run_import

    result = run_import(file, db, study=study, dry_run=dry_run)
    for note in result.notes:
        print(visible(note), file=sys.stderr)
    _refuse_problems(file, result.problems)
    verb = "would be imported (dry run)" if dry_run else "imported"
    print(
        f"{plural(result.rows, 'answer')} of {plural(result.participants, 'participant')} "
        f"{verb} ({plural(result.new_participants, 'new participant')}) into study "
        f"{result.study_id!r}."
    )
    return 0


def import_annotations(
    file: Path, db: Path, *, instrument: str, job: str | None = None, dry_run: bool = False
) -> int:
    from analytics.document import plural
    from analytics.importing_annotations import import_annotations as run_import

    result = run_import(file, db, instrument=instrument, job=job, dry_run=dry_run)
    _refuse_problems(file, result.problems)
    verb = "would be imported (dry run)" if dry_run else "imported"
    print(
        f"{plural(result.ratings, 'rating')} of {plural(result.annotators, 'annotator')} on "
        f"{plural(result.targets, 'target')} {verb} "
        f"({plural(result.new_annotators, 'new annotator')}) into job {result.job!r}."
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
