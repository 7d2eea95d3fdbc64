"""``ozlab`` (and ``analytics``): the researcher's command line, one module per command.

Every command is a module here with ``NAME``, ``add(commands)``, which adds its parser, and
``run(args) -> int``; :data:`OZLAB` and :data:`ANALYTICS` list them, the one place a new
command is registered. A module imports only the standard library when it is added: what a
command does lives in its capability (``bot``, ``analytics``, ``wizard_console``) and is
imported when it runs, so that the bot never loads pandas and ``ozlab --help`` stays quick.
``analytics report`` and ``ozlab report`` are one command, the same module.

Every error ozlab raises on purpose is an :class:`~bot.core.errors.OzlabError`, caught once in
:func:`main`: one line on stderr (a study file's problems: one line each), no traceback, and
the error's own exit status (:data:`bot.core.errors.EXIT_STATUSES`, the one table); Ctrl-C is
one line and 130, a wrong argument argparse's usage error and 2. Anything else is a bug:
its traceback goes through the redacting log handler and the status is 1.
"""

from __future__ import annotations

import argparse
import gc
import sys
from typing import Protocol

from bot.cli import (
    annotators,
    backup,
    chat,
    check,
    copy,
    demo,
    erase,
    export,
    imports,
    invite,
    judge,
    new,
    payments,
    pilot,
    power,
    prolific,
    report,
    run,
    schema,
    serve_demo,
    stress,
    web,
    wizard,
)
from bot.cli.run import API_URL_ENV, TOKEN_ENV
from bot.core.errors import status_table, told
from bot.core.privacy import SECRET_ENV
from bot.core.version import version

__all__ = ["API_URL_ENV", "SECRET_ENV", "TOKEN_ENV", "analytics_main", "main", "parser"]


class Command(Protocol):
    """What a command module offers: its name, its parser, and what it does."""

    NAME: str

    def add(self, commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None: ...

    def run(self, args: argparse.Namespace) -> int: ...


ANALYTICS: tuple[Command, ...] = (report, export, imports, power)
"""The researcher's analysis commands: ``ozlab`` has them, and ``analytics`` has only them."""
OZLAB: tuple[Command, ...] = (
    check,
    run,
    schema,
    new,
    serve_demo,
    backup,
    copy,
    erase,
    invite,
    annotators,
    prolific,
    demo,
    chat,
    pilot,
    wizard,
    web,
    stress,
    judge,
    *ANALYTICS,
)


def parser(prog: str = "ozlab", commands: tuple[Command, ...] = OZLAB) -> argparse.ArgumentParser:
    """The whole command line of ``prog``: each of ``commands`` adds its own parser."""
    top = argparse.ArgumentParser(
        prog=prog,
        description="Human evaluations of dialogue systems over Telegram."
        if prog == "ozlab"
        else "Reports and data of an ozlab study.",
        epilog=status_table(),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    if prog == "ozlab":
        top.add_argument("--version", action="version", version=f"ozlab {version()}")
    subparsers = top.add_subparsers(dest="command", required=True)
    for command in commands:
        command.add(subparsers)
    return top


def main(argv: list[str] | None = None, prog: str = "ozlab") -> int:
    """``ozlab ARGS``: parse, run the command named, and end with its status."""
    if argv is None:
        return _ending(_main(sys.argv[1:], prog, OZLAB))
    return _main(argv, prog, OZLAB)


def analytics_main(argv: list[str] | None = None, prog: str = "analytics") -> int:
    """``analytics ARGS``: the analysis commands alone, the very ones ``ozlab`` runs."""
    if argv is None:
        return _ending(_main(sys.argv[1:], prog, ANALYTICS))
    return _main(argv, prog, ANALYTICS)


def _ending(status: int) -> int:
    """``status``, the process's objects frozen first: it ends now (the command ran as the
    process, from its own command line), and the interpreter's exit then does not walk them
    all for cycles, memory the system takes back anyway (0.4 s of CPU once pandas and scipy
    are loaded: a quarter of a small study's report)."""
    gc.freeze()
    return status


def _main(argv: list[str], prog: str, commands: tuple[Command, ...]) -> int:
    if argv[:2] == payments.WORDS:  # two words: parsed on their own, as always
        chosen = payments.parser(prog).parse_args(argv[2:])
        return told(lambda: payments.run(chosen), prog)
    args = parser(prog, commands).parse_args(argv)
    by_name = {command.NAME: command for command in commands}
    return told(lambda: by_name[args.command].run(args), prog)
