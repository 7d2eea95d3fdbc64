"""``ozlab stress``: linguistic stress tests (IDIAL) on a study's logged sessions.

generate   ST-1 to ST-4 made offline from the logged utterances (seeded)
suggest    for each type, the logged utterances it applies to (for authors)
propose    a language model proposes tests; a person accepts, edits or rejects each
import     authored tests from a YAML or CSV file
run        replay every accepted test against its system, unchanged and perturbed
judge      a person (or, with --model, the study's language model) judges the replays
           no automatic comparison could settle
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from pathlib import Path

from bot.cli.arguments import count, positive, rate
from bot.cli.flags import database

NAME = "stress"
Command = Callable[[str, str], argparse.ArgumentParser]
Types = Callable[[argparse.ArgumentParser], None]
FROM_FILE = "take {} from this study file (YAML, or a shipped study's name), not the database"


def add(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    stress = commands.add_parser(NAME, help="linguistic stress tests (IDIAL) on logged sessions")
    actions = stress.add_subparsers(dest="stress_command", required=True)

    def command(name: str, text: str) -> argparse.ArgumentParser:
        parser: argparse.ArgumentParser = actions.add_parser(name, help=text)
        database(parser)
        return parser

    def types(parser: argparse.ArgumentParser) -> None:
        parser.add_argument("--types", default="", help="e.g. ST-1,ST-2 (default: all)")

    _add_making_commands(command, types)  # listed first: the tests are made before they run
    run = command("run", "replay the accepted tests against their systems (resumable)")
    types(run)
    run.add_argument("--systems", default="", help="only these systems, e.g. shop-v0,shop-v1")
    run.add_argument("--concurrency", type=count, default=8, help="replays at once per system")
    run.add_argument(
        "--rate", type=rate, default=0.0, help="calls a second per system (0: no limit)"
    )
    run.add_argument("--timeout", type=positive, default=60.0, help="seconds one call may take")
    run.add_argument("--study", help=FROM_FILE.format("the systems"))

    judge = command("judge", "judge the replays no automatic comparison settled")
    judge.add_argument("--as", dest="person", default="judge", help="your pseudonym")
    judge.add_argument(
        "--model", action="store_true", help="let the study's stress_model judge instead"
    )
    judge.add_argument("--study", help=FROM_FILE.format("stress_model"))


def _add_making_commands(command: Command, types: Types) -> None:
    """generate, suggest, propose and import: the tests' making (``bot.stress``)."""

    def language(parser: argparse.ArgumentParser) -> None:
        parser.add_argument("--lang", choices=["en", "it"], help="default: the study's language")

    generate = command("generate", "ST-1 to ST-4 made offline from the logged utterances")
    types(generate)
    language(generate)
    generate.add_argument("--seed", type=int, default=1, help="the same seed, the same tests")
    generate.add_argument("--per-type", type=count, default=20, help="tests of each type at most")

    suggest = command("suggest", "for each type, the logged utterances it applies to")
    types(suggest)
    language(suggest)

    propose = command(
        "propose", "the study's stress_model proposes tests; you accept, edit or reject each"
    )
    types(propose)
    language(propose)
    propose.add_argument("--per-type", type=count, default=10, help="proposals of each type")
    propose.add_argument("--study", help=FROM_FILE.format("stress_model"))
    propose.add_argument(
        "--review-only", action="store_true", help="only review proposals stored earlier"
    )

    imported = command("import", "authored tests from a YAML or CSV file")
    imported.add_argument("file", type=Path, help="session, turn, type, perturbed (and more)")


def run(args: argparse.Namespace) -> int:
    from bot.stress.replaying import run_stress

    return run_stress(args)
