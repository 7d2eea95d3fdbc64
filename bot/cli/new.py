"""``ozlab new``: a commented starter study in a new folder."""

from __future__ import annotations

import argparse
from pathlib import Path

NAME = "new"


def add(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    new = commands.add_parser(NAME, help="write a commented starter study into a new folder")
    new.add_argument("folder", type=Path)


def run(args: argparse.Namespace) -> int:
    from scenarios.starter import write_starter

    written = write_starter(args.folder)
    print("\n".join(map(str, written)))
    study = args.folder / "study.yaml"
    print(f"Check it with: ozlab check {study}")
    print(
        "Its language model (my-llm) needs its server: start the demo one in another terminal"
        " with 'ozlab serve-demo --openai' (or set OZLAB_MODEL_URL to yours), then try the"
        f" study with 'ozlab demo --study {study}'."
    )
    return 0
