"""``ozlab erase``: a participant or an annotator (GDPR art. 17), the expired, or every chat
id."""

from __future__ import annotations

import argparse
import os
from pathlib import Path

from bot.cli.flags import database
from bot.core.errors import StudyDataError
from bot.core.privacy import SECRET_ENV

NAME = "erase"


def add(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    erase = commands.add_parser(
        NAME,
        help="erase a participant or annotator (GDPR art. 17), the expired, or every chat id;"
        " with a bot running, the bot does a participant's",
    )
    database(erase)
    erase.add_argument(
        "pseudonym", nargs="*", help="participants or annotators (A-7KQ2) to erase, as in the data"
    )
    erase.add_argument(
        "--telegram-id", type=int, action="append", default=[], help=f"needs {SECRET_ENV}"
    )
    erase.add_argument("--expired", action="store_true", help="those past the study's retention")
    erase.add_argument("--chat-keys", action="store_true", help="drop every encrypted chat id")
    erase.add_argument(
        "--backups",
        type=Path,
        metavar="DIR",
        help="erase everyone ever erased from --db from each backup in DIR too",
    )


def run(args: argparse.Namespace) -> int:
    from bot.rights.erasure import Request, erase, pseudonym_of

    secret = os.environ.get(SECRET_ENV, "")
    people = [*args.pseudonym, *(pseudonym_of(t, secret) for t in args.telegram_id)]
    if not (people or args.expired or args.chat_keys or args.backups):
        raise StudyDataError("name a pseudonym, --telegram-id, --expired, --chat-keys or --backups")
    request = Request(
        args.db, people, chat_keys=args.chat_keys, expired=args.expired, backups=args.backups
    )
    for line in erase(request, secret):
        print(line)
    return 0
