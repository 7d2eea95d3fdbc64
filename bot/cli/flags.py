"""The flags several commands share, so that each means the same in every command: ``--db``
(or ``OZLAB_DB``) the study database, ``-n/--participants`` a count of participants, and
``--study`` said to be a study file or a study's id. Standard library only."""

from __future__ import annotations

import argparse
import os

from bot.cli.arguments import count

DB_ENV = "OZLAB_DB"
STUDY_FILE = "a study file (YAML) or a shipped study's name, e.g. hmd"
STUDY_ID = "the study's id, when the database holds several"


DB_HELP = "a SQLite file or a postgresql:// URL"


def database(
    parser: argparse.ArgumentParser,
    *,
    default: str | None = None,
    required: bool = True,
    help: str = "the study database",
) -> None:
    """``--db``: the study's database, a SQLite file or a ``postgresql://`` URL (kept as
    text: a path object would fold the URL's slashes); ``OZLAB_DB`` stands in for it when it
    is not given."""
    env = os.environ.get(DB_ENV)
    fallback = env or default
    said = f"{DB_HELP}; env {DB_ENV}" + (f"; default {default}" if default is not None else "")
    parser.add_argument(
        "--db",
        default=fallback,
        required=required and fallback is None,
        help=f"{help} ({said})",
    )


def scratch_db(parser: argparse.ArgumentParser, default: str | None, help: str) -> None:
    """``--db`` of a command that writes a scratch database of its own (demo, pilot, chat):
    ``OZLAB_DB`` names the study's own database, never replaced by one of these."""
    parser.add_argument("--db", default=default, help=f"{help}: {DB_HELP} (not {DB_ENV})")


def participants(
    parser: argparse.ArgumentParser | argparse._MutuallyExclusiveGroup,
    *,
    default: int | None = None,
    help: str = "how many participants",
) -> None:
    """``-n/--participants``; ``--n``, its older spelling, still works (and is still named
    in its own mistakes), unlisted."""
    parser.add_argument(
        "-n", "--participants", dest="participants", type=count, default=default, help=help
    )
    parser.add_argument(
        "--n", dest="participants", type=count, default=default, help=argparse.SUPPRESS
    )
