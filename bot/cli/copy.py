"""``ozlab copy``: a study moved between databases (a laptop's file, a lab's server), checked
row for row before it is committed; the target must not hold the study yet."""

from __future__ import annotations

import argparse
import os

from bot.cli.flags import DB_ENV

NAME = "copy"


def add(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    copy = commands.add_parser(
        NAME,
        help="copy a study to another database (SQLite file <-> postgresql://), checked row"
        " for row",
    )
    env = os.environ.get(DB_ENV)
    copy.add_argument(
        "--db",
        default=env,
        required=env is None,
        help=f"the study's database: a SQLite file or a postgresql:// URL (env {DB_ENV})",
    )
    copy.add_argument(
        "--to",
        required=True,
        help="where it goes: a new SQLite file, or a postgresql:// database without the study",
    )
    copy.add_argument(
        "--study", help="the study's id, when the source keeps several (its name on the target too)"
    )


def run(args: argparse.Namespace) -> int:
    from bot.store.moving import copy_study
    from bot.store.opening import locate

    copied = copy_study(args.db, args.to, args.study)
    rows = sum(copied.rows.values())
    print(
        f"copied study {copied.study}: {rows} rows in {len(copied.rows)} tables, checked,"
        f" to {locate(args.to, copied.study).shown}"
    )
    if copied.changed:
        print(
            f"{copied.changed} {'value' if copied.changed == 1 else 'values'} held a character"
            " no database keeps (NUL, a lone surrogate): copied with U+FFFD in its place"
        )
    return 0
