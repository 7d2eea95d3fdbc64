"""``ozlab import responses | sessions | annotations | votes``: data collected outside Telegram,
checked row by row first (``analytics.io.importing``, ``importing_sessions``,
``importing_annotations``, ``importing_votes``)."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from bot.cli.flags import STUDY_FILE, database
from bot.core.errors import StudyDataError
from bot.core.visible_text import visible

if TYPE_CHECKING:
    from analytics.io.import_rows import Problem

NAME = "import"
_SHOWN = 50  # problems listed; the count covers all


def add(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    imports = commands.add_parser(
        NAME,
        help="add data collected outside Telegram: "
        "import responses|sessions|annotations|votes FILE.csv",
    )
    kinds = imports.add_subparsers(dest="kind", required=True)
    responses = kinds.add_parser(
        "responses", help="questionnaire answers from a CSV file in the export's long format"
    )
    responses.add_argument("file", type=Path, help="CSV file (UTF-8, header row)")
    database(responses, help="study database")
    responses.add_argument(
        "--study",
        help="the study the answers belong to: its id when the database holds several, or "
        f"{STUDY_FILE}, to store in a database that has no definition yet",
    )
    responses.add_argument("--dry-run", action="store_true", help="check every row, write nothing")
    sessions = kinds.add_parser(
        "sessions",
        help="tasks done outside Telegram, one session a row: columns participant, system, "
        "scenario, success (optional: session, task, completed, correct, started_at, ended_at)",
    )
    sessions.add_argument("file", type=Path, help="CSV file (UTF-8, header row)")
    database(sessions, help="study database")
    sessions.add_argument(
        "--study",
        help="the study the sessions belong to: its id when the database holds several, or "
        f"{STUDY_FILE}, to store in a database that has no definition yet",
    )
    sessions.add_argument("--dry-run", action="store_true", help="check every row, write nothing")
    annotations = kinds.add_parser(
        "annotations",
        help="annotators' ratings made elsewhere: columns target, annotator, item, value",
    )
    annotations.add_argument("file", type=Path, help="CSV file (UTF-8, header row)")
    database(annotations, help="study database")
    annotations.add_argument(
        "--instrument", required=True, help="the questionnaire rated with: its id or YAML file"
    )
    annotations.add_argument(
        "--job", help="the annotation job the ratings belong to (default: imported)"
    )
    annotations.add_argument(
        "--dry-run", action="store_true", help="check every row, write nothing"
    )
    votes = kinds.add_parser(
        "votes", help="pairwise judgements made elsewhere, in the votes frame's columns"
    )
    votes.add_argument("file", type=Path, help="CSV file (UTF-8, header row)")
    database(votes, help="study database")
    votes.add_argument(
        "--study", help="the study the votes belong to: its id, when the database holds several"
    )
    votes.add_argument("--dry-run", action="store_true", help="check every row, write nothing")


def run(args: argparse.Namespace) -> int:
    if args.kind == "annotations":
        return _annotations(args)
    if args.kind == "votes":
        return _votes(args)
    if args.kind == "sessions":
        return _sessions(args)
    return _responses(args)


def _responses(args: argparse.Namespace) -> int:
    from analytics.io.importing import import_responses
    from analytics.report.document import plural

    result = import_responses(args.file, args.db, study=args.study, dry_run=args.dry_run)
    for note in result.notes:
        print(visible(note), file=sys.stderr)
    _refuse_problems(args.file, result.problems)
    verb = "would be imported (dry run)" if args.dry_run else "imported"
    print(
        f"{plural(result.rows, 'answer')} of {plural(result.participants, 'participant')} "
        f"{verb} ({plural(result.new_participants, 'new participant')}) into study "
        f"{result.study_id!r}."
    )
    return 0


def _sessions(args: argparse.Namespace) -> int:
    from analytics.io.importing_sessions import import_sessions
    from analytics.report.document import plural

    result = import_sessions(args.file, args.db, study=args.study, dry_run=args.dry_run)
    _refuse_problems(args.file, result.problems)
    verb = "would be imported (dry run)" if args.dry_run else "imported"
    print(
        f"{plural(result.sessions, 'session')} of {plural(result.participants, 'participant')} "
        f"{verb} into study {result.study_id!r}."
    )
    return 0


def _annotations(args: argparse.Namespace) -> int:
    from analytics.io.importing_annotations import import_annotations
    from analytics.report.document import plural

    result = import_annotations(
        args.file, args.db, instrument=args.instrument, job=args.job, dry_run=args.dry_run
    )
    _refuse_problems(args.file, result.problems)
    verb = "would be imported (dry run)" if args.dry_run else "imported"
    print(
        f"{plural(result.ratings, 'rating')} of {plural(result.annotators, 'annotator')} on "
        f"{plural(result.targets, 'target')} {verb} "
        f"({plural(result.new_annotators, 'new annotator')}) into job {result.job!r}."
    )
    return 0


def _votes(args: argparse.Namespace) -> int:
    from analytics.io.importing_votes import import_votes
    from analytics.report.document import plural

    result = import_votes(args.file, args.db, study=args.study, dry_run=args.dry_run)
    _refuse_problems(args.file, result.problems)
    verb = "would be imported (dry run)" if args.dry_run else "imported"
    print(
        f"{plural(result.votes, 'vote')} of {plural(result.raters, 'rater')} {verb} into study "
        f"{result.study_id!r}."
    )
    return 0


def _refuse_problems(file: Path, problems: Sequence[Problem]) -> None:
    """A file with problems is imported not at all: each problem with its line, then why."""
    from analytics.report.document import plural

    for problem in problems[:_SHOWN]:
        print(f"{file}:{problem.line}: {visible(problem.message)}", file=sys.stderr)
    if len(problems) > _SHOWN:
        print(f"… and {plural(len(problems) - _SHOWN, 'more problem')}", file=sys.stderr)
    if problems:
        raise StudyDataError(f"{plural(len(problems), 'problem')}: nothing was imported.")
