"""``ozlab export``: tidy long-format tables and a codebook (``analytics.io.export``); ``ozlab
export payments`` is the bot's own (``bot.cli.payments``), with no pandas for a list of ids."""

from __future__ import annotations

import argparse
from pathlib import Path

from bot.cli.flags import STUDY_ID, database

NAME = "export"


def add(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    export = commands.add_parser(
        NAME,
        help="tidy long-format CSV (or Parquet) and a codebook, for R or SPSS;"
        " export payments: platform ids, statuses and time given",
    )
    database(export, help="study database")
    export.add_argument("--out", type=Path, required=True, help="folder to write into")
    export.add_argument(
        "--format",
        choices=("csv", "parquet", "sav"),
        default="csv",
        help="csv (UTF-8), parquet (needs pyarrow) or sav (SPSS, with variable and value "
        "labels; R: haven::read_sav); default csv",
    )
    export.add_argument(
        "--wide",
        action="store_true",
        help="also write responses_wide: one row per participant × session, one column per item",
    )
    export.add_argument("--study", help=f"the study to export: {STUDY_ID}")
    export.add_argument(
        "--raw-csv",
        action="store_true",
        help="CSV text exactly as written, formulas too: for R or pandas only, never a "
        "spreadsheet (by default a text cell beginning with = + - @, a tab or a carriage "
        "return starts with ')",
    )


def run(args: argparse.Namespace) -> int:
    from analytics.io.export import export_study

    written = export_study(
        args.db, args.out, fmt=args.format, study=args.study, wide=args.wide, raw_csv=args.raw_csv
    )
    for path in written:
        print(path)
    return 0
