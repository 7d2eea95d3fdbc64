"""``python -m wizard_console ...`` is ``ozlab wizard ...`` (handy before the CLI is wired)."""

from __future__ import annotations

import argparse
import sys

from wizard_console.cli import add_wizard_commands, run_wizard


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="ozlab")
    add_wizard_commands(parser.add_subparsers(dest="command", required=True))
    args = parser.parse_args(["wizard", *(sys.argv[1:] if argv is None else argv)])
    return run_wizard(args)


if __name__ == "__main__":
    sys.exit(main())
