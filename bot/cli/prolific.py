"""``ozlab prolific status|approve``: the study's Prolific submissions matched with ozlab's
records, and the approval of those ozlab saw finish, through Prolific's API with a token from
the environment (never logged, never stored)."""

from __future__ import annotations

import argparse
import os

from bot.cli.flags import database
from bot.core.errors import StudyDataError
from bot.core.privacy import SECRET_ENV

NAME = "prolific"
_TOKEN_ENV = "PROLIFIC_TOKEN"
_API_URL_ENV = "OZLAB_PROLIFIC_API_URL"


def add(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    prolific = commands.add_parser(
        NAME,
        help="the study's Prolific submissions matched with ozlab's records; approve the"
        f" finished ones (token from {_TOKEN_ENV})",
    )
    actions = prolific.add_subparsers(dest="action", required=True)
    status = actions.add_parser("status", help="one table: each submission and ozlab's record")
    approve = actions.add_parser(
        "approve",
        help="approve the submissions of participants ozlab saw finish (a dry run unless --yes)",
    )
    for action in (status, approve):
        database(action)
        action.add_argument("--study-id", required=True, help="the study's id on Prolific")
        action.add_argument(
            "--api-url",
            default=os.environ.get(_API_URL_ENV, "https://api.prolific.com"),
            help=f"Prolific's API (env {_API_URL_ENV}; default https://api.prolific.com)",
        )
        action.add_argument(
            "--timeout", type=float, default=30.0, help="seconds a request may take (30)"
        )
    approve.add_argument(
        "--yes", action="store_true", help="approve them (without it: only the count and total)"
    )


def run(args: argparse.Namespace) -> int:
    import asyncio

    from bot.core.privacy import Privacy
    from bot.recruitment.prolific import Prolific
    from bot.recruitment.prolific_commands import approve, status

    token = os.environ.get(_TOKEN_ENV, "")
    if not token:
        raise StudyDataError(f"set {_TOKEN_ENV} to an API token of the study's Prolific workspace")
    secret = os.environ.get(SECRET_ENV, "")
    if not secret:
        raise StudyDataError(f"set {SECRET_ENV} to the secret the study ran with")
    privacy = Privacy(secret)

    async def act() -> str:
        async with Prolific(token, args.api_url, timeout=args.timeout) as platform:
            if args.action == "status":
                return await status(args.db, args.study_id, platform, privacy)
            return await approve(args.db, args.study_id, platform, privacy, apply=args.yes)

    print(asyncio.run(act()))
    return 0
