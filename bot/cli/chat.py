"""``ozlab chat``: play the participant yourself, in the terminal, against the real bot on
a local Telegram emulator."""

from __future__ import annotations

import argparse
import logging

from bot.cli.flags import STUDY_FILE, scratch_db
from bot.core.errors import StudyDataError

NAME = "chat"


def add(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    chat = commands.add_parser(
        NAME,
        help="play the participant yourself, in the terminal: the real bot on a local"
        " Telegram emulator (no token, loopback only)",
    )
    chat.add_argument("study", help=STUDY_FILE)
    scratch_db(chat, None, "study database, default a new scratch one")
    chat.add_argument("--lang", default="en", help="your Telegram language, e.g. it")
    chat.add_argument(
        "--start",
        metavar="PAYLOAD",
        help="the deep link's payload on your first /start, e.g. pid_TEST1 as a participant"
        " coming from Prolific (/restart starts the next one with a bare /start)",
    )
    chat.add_argument(
        "--annotate",
        metavar="JOB",
        help="be a new annotator of this annotation job instead, on a copy of the study's"
        " database (--db, needed), deleted afterwards",
    )


def run(args: argparse.Namespace) -> int:
    from bot.pilot.chat import start_command
    from scenarios.loading import adapters_beside, load_study

    first = start_command(args.start)  # a bad payload is refused before anything starts
    adapters_beside(args.study)
    bundle = load_study(args.study)
    if args.annotate is not None and args.start is not None:
        raise StudyDataError("--start and --annotate: an annotator's link carries its own code")
    if args.annotate is not None:
        if not args.db:
            raise StudyDataError(
                "--annotate needs --db: the study's database, whose conversations you rate"
                " (on a copy)"
            )
        from bot.pilot.chat_annotating import annotate_on_a_copy

        return annotate_on_a_copy(bundle, args.db, args.annotate, args.lang)
    import asyncio
    import os

    from bot.pilot.chat import chat_log, run_chat, scratch_database
    from bot.pilot.demo import unanswered
    from bot.runtime.logging import setup_logging

    # Told, not refused: trying what a participant sees when a system fails is a use too.
    for problem in asyncio.run(unanswered(bundle, os.environ)):
        print(f"(warning: {problem})", flush=True)
    db = args.db or scratch_database()
    log = chat_log(db)
    setup_logging(logging.WARNING, [], log)
    return run_chat(bundle, db, args.lang, log, start=first)
