"""``ozlab stress``: linguistic stress tests (IDIAL) on a study's logged sessions.

    generate   ST-1 to ST-4 made offline from the logged utterances (seeded)
    suggest    for each type, the logged utterances it applies to (for authors)
    propose    a language model proposes tests; a person accepts, edits or rejects each
    import     authored tests from a YAML or CSV file
    run        replay every accepted test against its system, unchanged and perturbed
    judge      a person (or, with --model, the study's language model) judges the replays
               no automatic comparison could settle

Everything is written to the stress tables of the study database through the store; the
logged sessions are only read. No pandas here: the bot's side of ozlab.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from bot.arguments import count, positive, rate
from bot.errors import StudyDataError, SystemSetupError

if TYPE_CHECKING:
    from bot.store.interface import StudyStore
    from bot.stress.phenomena import StressType


def add_stress_commands(commands: Any) -> None:
    """``ozlab stress ...`` on the main parser's subcommands."""
    stress = commands.add_parser(
        "stress", help="linguistic stress tests (IDIAL) on logged sessions"
    )
    actions = stress.add_subparsers(dest="stress_command", required=True)

    def command(name: str, text: str) -> argparse.ArgumentParser:
        parser: argparse.ArgumentParser = actions.add_parser(name, help=text)
        parser.add_argument("--db", type=Path, required=True, help="the study database")
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
    run.add_argument("--study", help="take the systems from this study file, not the database")

    judge = command("judge", "judge the replays no automatic comparison settled")
    judge.add_argument("--as", dest="person", default="judge", help="your pseudonym")
    judge.add_argument(
        "--model", action="store_true", help="let the study's stress_model judge instead"
    )
    judge.add_argument("--study", help="take stress_model from this study file")


def _add_making_commands(command: Any, types: Any) -> None:
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
    propose.add_argument("--study", help="take stress_model from this study file")
    propose.add_argument(
        "--review-only", action="store_true", help="only review proposals stored earlier"
    )

    imported = command("import", "authored tests from a YAML or CSV file")
    imported.add_argument("file", type=Path, help="session, turn, type, perturbed (and more)")


def run_stress(args: argparse.Namespace) -> int:
    """The ``ozlab stress`` command named in ``args``."""
    match args.stress_command:
        case "run":
            try:
                return asyncio.run(_run(args))
            except KeyboardInterrupt:  # every replay stored so far stays done
                print("Stopped. Run the same command again to go on.", file=sys.stderr)
                return 130
        case "judge":
            return asyncio.run(_judge(args))
    return _run_making(args)


def _run_making(args: argparse.Namespace) -> int:
    from bot.stress_making import making_command

    return asyncio.run(making_command(args))


def types_given(text: str) -> list[StressType]:
    """The types of ``--types``; none given: every type (an empty list)."""
    from bot.stress.phenomena import parse_types

    return parse_types(text) if text.strip() else []


def _names(text: str) -> list[str]:
    return [part.strip() for part in text.split(",") if part.strip()]


async def open_study_db(db: Path) -> StudyStore:
    """The study database, brought up to this ozlab's schema (the stress tables are the
    newest); never created: a missing file is a wrong --db."""
    from bot.store import Access, open_store

    return await open_store(db, access=Access.UPGRADE)


def study_parts(
    definitions: Mapping[str, str], study: str | None
) -> tuple[dict[str, Any], dict[str, Mapping[str, object]], Any]:
    """(systems by id, scenarios by id, the stress model) from the study file if given,
    else from the definition stored with the data."""
    from bot.replay.dialogue import stored_study
    from scenarios.stored import read_definitions
    from scenarios.systems import OpenAISystem

    stored = stored_study(definitions)
    if study is None:
        model = None
        for definition in read_definitions(definitions).values():
            if definition.stress_model is not None:
                model = OpenAISystem.model_validate(definition.stress_model)
        return stored.systems, stored.scenarios, model
    from bot.cli import _adapters_beside  # a study's own adapters (type: python) beside it
    from scenarios.loading import load_study

    _adapters_beside(study)
    bundle = load_study(study)
    scenarios = {k: v.model_dump() for k, v in bundle.scenarios.items()}
    return (
        {s.id: s for s in bundle.study.systems},
        {**stored.scenarios, **scenarios},
        bundle.study.stress_model,
    )


async def _run(args: argparse.Namespace) -> int:
    from bot.replay.dialogue import replayable
    from bot.replay.runner import Limits, run_stress_tests
    from bot.systems.registry import build_systems, close_systems

    store = await open_study_db(args.db)
    try:
        specs, scenarios, _ = study_parts(await store.latest_definitions(), args.study)
        wanted = _names(args.systems)
        unknown = [s for s in wanted if s not in specs]
        if unknown:
            raise StudyDataError(
                f"no system {', '.join(unknown)} in the study; it has {', '.join(specs)}"
            )
        used = [
            spec
            for spec in specs.values()
            if (not wanted or spec.id in wanted) and spec.type != "wizard"
        ]
        for spec in used:
            replayable(spec)
        systems = build_systems(used, env=os.environ)
        try:
            limit = Limits(args.concurrency, args.rate or None, args.timeout)
            summary = await run_stress_tests(
                store,
                systems,
                scenarios,
                types=types_given(args.types),
                only_systems=wanted,
                default=limit,
                progress=sys.stderr,
            )
        finally:
            await close_systems(systems)
    finally:
        await store.close()
    outcomes = ", ".join(f"{n} {k}" for k, n in sorted(summary.outcomes.items())) or "nothing new"
    print(f"Replayed {summary.replayed} tests ({outcomes}); {summary.already_done} done before.")
    for reason, n in sorted(summary.skipped.items()):
        print(f"Left alone: {n} tests ({reason}).")
    waiting = summary.outcomes.get("to judge", 0)
    if waiting:
        print(f"{waiting} replays need a person: ozlab stress judge --db {args.db}")
    return 0


async def _judge(args: argparse.Namespace) -> int:
    from bot.replay.judges import judge_at_terminal, judge_with_model, model_agreement

    store = await open_study_db(args.db)
    try:
        if not args.model:
            given = await judge_at_terminal(store, args.person, sys.stdin.readline, sys.stdout)
            print(_counted(given, "verdicts given"))
            return 0
        _, _, spec = study_parts(await store.latest_definitions(), args.study)
        if spec is None:
            raise SystemSetupError(
                "the study names no stress_model (an OpenAI-compatible endpoint) to judge with",
                field="stress_model",
            )
        from bot.systems.http_json import JsonClient
        from bot.systems.openai import OpenAIChat

        client = JsonClient()
        try:
            model = OpenAIChat(spec, client, os.environ)
            given, failed = await judge_with_model(store, model, spec.model)
        finally:
            await client.close()
        print(
            _counted(given, f"verdicts by {spec.model}")
            + (f"; {failed} calls failed" if failed else "")
        )
        kappa, both = model_agreement(await store.stress_results())
        if kappa is None:
            print("Agreement with people: no replay judged by both yet.")
        else:
            print(
                f"Agreement with people: Cohen's kappa {kappa:.2f}"
                f" on {both} replays judged by both."
            )
        return 0
    finally:
        await store.close()


def _counted(given: Mapping[Any, int], what: str) -> str:
    parts = ", ".join(f"{n} {getattr(k, 'value', k)}" for k, n in sorted(given.items(), key=str))
    return f"{sum(given.values())} {what}" + (f" ({parts})" if parts else "")
