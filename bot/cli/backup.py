"""``ozlab backup``: a consistent copy of a study database, also while the bot runs."""

from __future__ import annotations

import argparse
import asyncio
from pathlib import Path

from bot.cli.flags import database

NAME = "backup"


def add(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    backup = commands.add_parser(
        NAME, help="a consistent copy of a study database, also while the bot runs (cron)"
    )
    database(backup)
    backup.add_argument("--out", type=Path, required=True, help="the copy (replaced whole)")


def run(args: argparse.Namespace) -> int:
    """Quiet when it worked, as cron likes it: cron mails only a failure's one line."""
    from bot.store import Access, open_store

    async def copy() -> None:
        store = await open_store(args.db, access=Access.READ)
        try:
            await store.backup(args.out)
        finally:
            await store.close()

    asyncio.run(copy())
    return 0
