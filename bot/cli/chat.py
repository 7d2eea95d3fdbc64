"""``ozlab chat``: play the participant yourself, in the terminal, against the real bot on
a local Telegram emulator."""

from __future__ import annotations

import argparse
import logging

from bot.cli.flags import STUDY_FILE, scratch_db

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


def run(args: argparse.Namespace) -> int:
    from scenarios.loading import adapters_beside, load_study

    adapters_beside(args.study)
    bundle = load_study(args.study)
    from bot.pilot.chat import chat_log, run_chat, scratch_database
    from bot.runtime.logging import setup_logging

    db = args.db or scratch_database()
    log = chat_log(db)
    setup_logging(logging.WARNING, [], log)
    return run_chat(bundle, db, args.lang, log)
