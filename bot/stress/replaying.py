"""Linguistic stress tests (IDIAL) on a study's logged sessions: replaying the accepted
tests against their systems and judging the replays (``ozlab stress run | judge``); the
tests' making is ``bot.stress.making``, the arguments ``bot.cli.stress``.

Everything is written to the stress tables of the study database through the store; the
logged sessions are only read. No pandas here: the bot's side of ozlab.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from bot.core.errors import INTERRUPTED, StudyDataError, SystemSetupError

if TYPE_CHECKING:
    from bot.core.phenomena import StressType
    from bot.store.interface import StudyStore
    from bot.systems.tools import ScenarioTools


def run_stress(args: argparse.Namespace) -> int:
    """The ``ozlab stress`` command named in ``args``."""
    match args.stress_command:
        case "run":
            try:
                return asyncio.run(_run(args))
            except KeyboardInterrupt:  # every replay stored so far stays done
                print("Stopped. Run the same command again to go on.", file=sys.stderr)
                return INTERRUPTED
        case "judge":
            return asyncio.run(_judge(args))
    return _run_making(args)


def _run_making(args: argparse.Namespace) -> int:
    from bot.stress.making import making_command

    return asyncio.run(making_command(args))


def types_given(text: str) -> list[StressType]:
    """The types of ``--types``; none given: every type (an empty list)."""
    from bot.core.phenomena import parse_types

    return parse_types(text) if text.strip() else []


def _names(text: str) -> list[str]:
    return [part.strip() for part in text.split(",") if part.strip()]


async def open_study_db(db: Path | str) -> StudyStore:
    """The study database, brought up to this ozlab's schema (the stress tables are the
    newest); never created: a missing file is a wrong --db."""
    from bot.store import Access, open_store

    return await open_store(db, access=Access.UPGRADE)


def study_parts(
    definitions: Mapping[str, str], study: str | None
) -> tuple[dict[str, Any], dict[str, Mapping[str, object]], Any]:
    """(systems by id, scenarios by id, the stress model) from the study file if given,
    else from the definition stored with the data."""
    from bot.stress.replay.dialogue import stored_study
    from scenarios.stored import read_definitions
    from scenarios.systems import OpenAISystem

    stored = stored_study(definitions)
    if study is None:
        model = None
        for definition in read_definitions(definitions).values():
            if definition.stress_model is not None:
                model = OpenAISystem.model_validate(definition.stress_model)
        return stored.systems, stored.scenarios, model
    from scenarios.loading import adapters_beside, load_study

    adapters_beside(study)  # a study's own adapters (type: python) beside it
    bundle = load_study(study)
    scenarios = {k: v.model_dump() for k, v in bundle.scenarios.items()}
    return (
        {s.id: s for s in bundle.study.systems},
        {**stored.scenarios, **scenarios},
        bundle.study.stress_model,
    )


def replay_tools(definitions: Mapping[str, str], study: str | None) -> dict[str, ScenarioTools]:
    """Each scenario's tools, as the bot offered them to a language model: from the study
    file if given, else from the definition stored with the data (only a study that declares
    tools is read whole, so an older definition without any never stops a run)."""
    from bot.systems.tools import scenario_tools

    if study is not None:
        from scenarios.loading import load_study

        return scenario_tools(load_study(study))
    from scenarios.stored import read_definitions

    tools: dict[str, ScenarioTools] = {}
    for definition in read_definitions(definitions).values():
        if _declares_tools(definition.source):
            tools |= scenario_tools(definition.bundle())
    return tools


def _declares_tools(source: str) -> bool:
    try:
        parsed = json.loads(source)
    except ValueError:
        return False
    return isinstance(parsed, dict) and bool(parsed.get("tools"))


async def _run(args: argparse.Namespace) -> int:
    from bot.stress.replay.dialogue import replayable
    from bot.stress.replay.runner import Limits, run_stress_tests
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
        tools = replay_tools(await store.latest_definitions(), args.study)
        systems = build_systems(used, env=os.environ, tools=tools)
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
    from bot.stress.replay.agreement import model_agreement
    from bot.stress.replay.judges import (
        judge_at_terminal,
        judge_with_model,
        model_judge,
    )

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

        client = JsonClient()
        try:
            done = await judge_with_model(store, model_judge(spec), client, os.environ)
        finally:
            await client.close()
        print(
            _counted(done.given, f"verdicts by {spec.model}")
            + f"; {done.unparseable} answers were no verdict after a retry (they wait for a"
            " person)" + (f"; {done.failed} calls failed" if done.failed else "")
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
