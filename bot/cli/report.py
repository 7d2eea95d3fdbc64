"""``ozlab report`` and ``analytics report``, one command: the per-system evaluation report
(``analytics.report.writing``). pandas is loaded when it runs, never when it is registered."""

from __future__ import annotations

import argparse
from pathlib import Path

from bot.cli.flags import STUDY_ID, database

NAME = "report"
FORMATS = ("terminal", "md", "html", "json", "tex")


def add(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    report = commands.add_parser(
        NAME, help="the per-system evaluation report: terminal, --format md|html|json|tex"
    )
    database(report, help="study database")
    report.add_argument(
        "--format",
        choices=FORMATS,
        help="terminal (rich tables; plain text with --out), md, html (one self-contained "
        "file with plots), json (every number) or tex (LaTeX for a paper: a main file, one "
        "file per table, figures as PDF; needs --out); default: from --out's suffix, else "
        "terminal",
    )
    report.add_argument(
        "--out",
        type=Path,
        action="append",
        help="write to this file instead of stdout; repeated (--out report.md --out "
        "report.html --out report.tex), the report is computed once and written in each "
        "file's format",
    )
    report.add_argument(
        "--exclude-flagged",
        action="store_true",
        help="leave out participants flagged by data-quality checks, and say how many and why",
    )
    report.add_argument(
        "--adjust",
        choices=("headline", "all"),
        default="headline",
        help="Holm's correction across measures: headline (default: each measure's omnibus "
        "test; pairs corrected within their measure) or all (every test in the comparison)",
    )
    report.add_argument(
        "--models",
        action="store_true",
        help="fit the mixed models of repeated measures on measures of any size (above 3,000 "
        "scores a measure they are left out by default: the fit takes minutes)",
    )
    report.add_argument("--study", help=f"the study to report on: {STUDY_ID}")
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


def run(args: argparse.Namespace) -> int:
    from analytics.report.writing import outputs_for, report

    return report(
        args.db,
        outputs=outputs_for(args.out, args.format),
        exclude_flagged=args.exclude_flagged,
        study=args.study,
        figures=args.figures,
        pilot=args.pilot,
        adjust=args.adjust,
        every_model=args.models,
    )
