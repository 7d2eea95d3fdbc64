"""``ozlab annotators drop A-7KQ2``: a researcher removes an annotator from their job."""

from __future__ import annotations

import argparse
import asyncio

from bot.cli.flags import STUDY_FILE, database

NAME = "annotators"


def add(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    annotators = commands.add_parser(NAME, help="manage a job's annotators (drop one)")
    actions = annotators.add_subparsers(dest="annotators_command", required=True)
    drop = actions.add_parser(
        "drop",
        help="drop annotators from their job: their open targets go to others, their"
        " finished ratings stay (to erase those: ozlab erase)",
    )
    database(drop)
    drop.add_argument("pseudonym", nargs="+", help="the annotators, as A-7KQ2")
    drop.add_argument(
        "--study",
        help=f"the study of their job: its id in the database, or {STUDY_FILE}, when the"
        " database holds none",
    )


def run(args: argparse.Namespace) -> int:
    from bot.annotation.dropping import drop_annotators
    from bot.store import Access, open_store

    async def drop() -> list[str]:
        store = await open_store(args.db, access=Access.UPGRADE)  # a missing study: one line
        try:
            return await drop_annotators(store, args.pseudonym, args.study)
        finally:
            await store.close()

    for line in asyncio.run(drop()):
        print(line)
    return 0
