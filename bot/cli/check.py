"""``ozlab check``: validate a study file and everything it names."""

from __future__ import annotations

import argparse

from bot.cli.flags import STUDY_FILE, participants

NAME = "check"


def add(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    check = commands.add_parser(NAME, help="validate a study file and everything it names")
    check.add_argument("study", help=STUDY_FILE)
    check.add_argument(
        "--ping",
        action="store_true",
        help="also send one message to every http, openai and rasa system, and one question"
        " to every model judge: latency, and whether the reply parses (status 4 when one"
        " fails)",
    )
    participants(
        check,
        help="the participants you plan: warns when they leave the design's cells (Latin-square"
        " rows, balanced cells) uneven",
    )


def run(args: argparse.Namespace) -> int:
    from bot.check.study import check
    from scenarios.loading import adapters_beside

    adapters_beside(args.study)
    check(args.study, ping=args.ping, participants=args.participants)
    return 0
