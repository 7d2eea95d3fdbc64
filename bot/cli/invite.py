"""``ozlab invite``: single-use invitation links, for participants or for annotators."""

from __future__ import annotations

import argparse
import asyncio
from pathlib import Path

from bot.cli.arguments import count
from bot.cli.flags import STUDY_FILE, database, participants
from bot.core.errors import StudyDataError

NAME = "invite"


def add(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    invite = commands.add_parser(
        NAME, help="single-use invitation links (https://t.me/BOT?start=CODE) and a CSV"
    )
    database(invite)
    who = invite.add_mutually_exclusive_group(required=True)
    participants(who, help="how many participant invitations")
    who.add_argument("--annotators", type=count, help="how many annotators of --job to invite")
    invite.add_argument("--job", help="the annotation job the annotators rate for")
    invite.add_argument(
        "--study",
        help=f"the study of --job: its id in the database, or {STUDY_FILE}, when the database"
        " holds none",
    )
    invite.add_argument("--bot", required=True, help="the bot's username, e.g. my_study_bot")
    invite.add_argument("--out", type=Path, help="the CSV (invitations.csv, annotators.csv)")


def run(args: argparse.Namespace) -> int:
    from bot.recruitment.invitations import (
        bot_username,
        check_out,
        new_invitations,
        write_invitations,
    )
    from bot.store import open_store

    bot = bot_username(args.bot)
    if args.annotators is not None:
        return _annotators(args, bot)
    if args.job or args.study:
        raise StudyDataError("--job and --study go with --annotators")
    out = args.out or Path("invitations.csv")
    check_out(out, args.participants)

    async def make() -> list[str]:
        store = await open_store(args.db)
        try:
            return await new_invitations(store, args.participants)
        finally:
            await store.close()

    codes = asyncio.run(make())
    write_invitations(codes, bot, out)
    print(f"{len(codes)} single-use invitations in {out} (code, link): each lets one")
    print("participant in; a used or unknown code is refused politely.")
    return 0


def _annotators(args: argparse.Namespace, bot: str) -> int:
    from bot.annotation.invitations import Invited, invite_annotators, write_annotators
    from bot.recruitment.invitations import check_out
    from bot.store import open_store

    if not args.job:
        raise StudyDataError("--annotators needs --job: the annotation job they rate for")
    out = args.out or Path("annotators.csv")
    check_out(out, args.annotators)

    async def make() -> Invited:
        store = await open_store(args.db)
        try:
            return await invite_annotators(store, args.study, args.job, args.annotators)
        finally:
            await store.close()

    invited = asyncio.run(make())
    write_annotators(invited, bot, out)
    print(f"{len(invited.annotators)} annotators of job {invited.job!r} in {out} (annotator,")
    print(f"job, code, link); the job has {invited.targets} targets ({invited.new_targets} new).")
    print("Annotators are not participants: each link lets one annotator in, once.")
    return 0
