"""``ozlab schema``: JSON Schemas of the study files, for editor completion."""

from __future__ import annotations

import argparse
from pathlib import Path

NAME = "schema"


def add(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    schema = commands.add_parser(
        NAME, help="write JSON Schemas of the study files, for editor completion"
    )
    schema.add_argument("--out", type=Path, default=Path("schemas"))


def run(args: argparse.Namespace) -> int:
    from scenarios.schema import write_schemas

    for path in write_schemas(args.out):
        print(path)
    return 0
