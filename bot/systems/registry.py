"""From a study's system specs to running adapters, and back to nothing at shutdown."""

from __future__ import annotations

import logging
from collections.abc import Iterable, Mapping

from bot.core.errors import SystemSetupError
from bot.systems.base import System
from bot.systems.custom import load_custom
from bot.systems.demo import DemoChat, DemoShop
from bot.systems.http import HttpService
from bot.systems.http_json import JsonClient
from bot.systems.openai import OpenAIChat
from bot.systems.rasa import RasaRest
from bot.systems.tools import ScenarioTools
from bot.systems.wizard import WizardOnly
from scenarios.systems import (
    DemoSystem,
    HttpSystem,
    OpenAISystem,
    PythonSystem,
    RasaSystem,
    SystemSpec,
    WizardSystem,
)

log = logging.getLogger(__name__)


def build_systems(
    specs: Iterable[SystemSpec],
    *,
    env: Mapping[str, str],
    client: JsonClient | None = None,
    tools: Mapping[str, ScenarioTools] | None = None,
) -> dict[str, System]:
    """One adapter per spec id. The HTTP adapters share ``client`` (a new one if ``None``).

    Configuration problems (a missing API key variable, a custom class that cannot be
    loaded, overlapping request paths) raise :class:`~bot.core.errors.SystemSetupError` naming the
    system, at start-up.
    ``tools``: each scenario's tools by scenario id (:func:`bot.systems.tools.scenario_tools`),
    offered by the ``openai`` systems in that scenario.
    Close what this returns with :func:`close_systems`: it closes the shared client too.
    """
    systems: dict[str, System] = {}
    shared: JsonClient | None = client

    def http() -> JsonClient:
        nonlocal shared
        if shared is None:
            shared = JsonClient()
        return shared

    for spec in specs:
        if spec.id in systems:
            raise SystemSetupError(f"two systems have the id {spec.id!r}", field="id")
        match spec:
            case DemoSystem(variant="chat"):
                systems[spec.id] = DemoChat()
            case DemoSystem(variant="v1" | "v0" as variant):
                systems[spec.id] = DemoShop(variant)
            case OpenAISystem():
                systems[spec.id] = OpenAIChat(spec, http(), env, tools)
            case RasaSystem():
                systems[spec.id] = RasaRest(spec, http())
            case HttpSystem():
                systems[spec.id] = HttpService(spec, http(), env)
            case PythonSystem():
                systems[spec.id] = load_custom(spec)
            case WizardSystem():
                systems[spec.id] = WizardOnly()
            case _:
                raise SystemSetupError(
                    f"system {spec.id!r}: unknown type {spec.type!r}", field="type"
                )
    return systems


async def close_systems(systems: Mapping[str, System]) -> None:
    """Close every system, then the HTTP clients they share; a failing close is logged, and
    the others are still closed."""
    clients: list[JsonClient] = []
    for system_id, system in systems.items():
        try:
            await system.close()
        except Exception as error:
            log.warning("closing system %s failed: %s: %s", system_id, type(error).__name__, error)
        client = getattr(system, "client", None)
        if isinstance(client, JsonClient) and all(client is not c for c in clients):
            clients.append(client)
    for client in clients:
        await client.close()
