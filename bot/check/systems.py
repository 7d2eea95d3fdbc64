"""``ozlab check`` builds every system of a study as ``ozlab run`` does, and calls none.

A misspelled class, a module that does not import, options its class rejects, request
paths that overlap, an API key variable that is not set: the study file is valid, yet the
bot would stop at start-up. Building each adapter finds them while the researcher is still
at the desk (the HTTP adapters open no connection before their first call), and each is
told at the line of the setting at fault, like any other problem of the file.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping, Sequence
from pathlib import Path

from bot.core.errors import SystemSetupError
from bot.systems.base import System
from bot.systems.http_json import JsonClient
from bot.systems.registry import build_systems, close_systems
from bot.systems.tools import ScenarioTools
from scenarios.models import StudyBundle
from scenarios.systems import SystemSpec
from scenarios.yaml_lines import Document, Loc, Problem


def system_problems(
    document: Document, specs: Sequence[SystemSpec], env: Mapping[str, str]
) -> list[Problem]:
    """Every system that cannot be built, placed in ``document`` (the study file)."""
    return asyncio.run(_build_each(document, specs, env))


async def _build_each(
    document: Document, specs: Sequence[SystemSpec], env: Mapping[str, str]
) -> list[Problem]:
    # Inside a running loop, as in ``ozlab run``: a class may need one when it is built.
    problems: list[Problem] = []
    built: dict[str, System] = {}
    client = JsonClient()
    try:
        for index, spec in enumerate(specs):
            try:
                built |= build_systems([spec], env=env, client=client)
            except SystemSetupError as error:
                where: Loc = ("systems", index, *([error.field] if error.field else []))
                message = str(error).removeprefix(f"system {spec.id!r}: ")
                problems.append(document.problem(where, message))
    finally:
        await close_systems(built)
        await client.close()
    return problems


def tool_problems(bundle: StudyBundle) -> list[Problem]:
    """Every scenario tool whose function does not import, told at the function's file:
    the bot imports them as it starts, and would stop there."""
    problems: list[Problem] = []
    for scenario in bundle.scenarios.values():
        for tool in scenario.tools:
            source = bundle.tools.get(scenario.id, {}).get(tool.name)
            if tool.function is None or source is None:
                continue
            try:
                ScenarioTools(scenario.id, (tool,), {tool.name: source})
            except SystemSetupError as error:
                problems.append(Problem(Path(source.file or ""), None, "", str(error)))
    return problems
