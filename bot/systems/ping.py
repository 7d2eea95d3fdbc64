"""``ozlab check --ping``: one small message to every system reached over the network.

A study file can be valid and every adapter buildable while the server behind a system is
down, on another port, or answers in a shape the adapter cannot read. The ping sends each
``http``, ``openai`` and ``rasa`` system one message through its own adapter, exactly as the
bot will (the same request, headers and parsing; one attempt, no retries) and tells the
latency and whether the reply parses. An ``openai`` system is offered the first scenario's
tools, as in a participant's turn (a server that refuses tools fails here), and a call the
model makes is answered from them. Built-in, ``python`` and ``wizard`` systems have no
server to reach and are not pinged.
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from bot.core.conversation import Conversation
from bot.systems.base import SystemFailure, SystemTimeout
from bot.systems.http_json import JsonClient, describe_url, excerpt
from bot.systems.openai import server_url
from bot.systems.registry import build_systems, close_systems
from bot.systems.tools import scenario_tools
from scenarios.models import StudyBundle
from scenarios.systems import HttpSystem, OpenAISystem, RasaSystem

PING_MESSAGE = "Hello"
NETWORKED = (HttpSystem, OpenAISystem, RasaSystem)


@dataclass(frozen=True)
class Ping:
    """How one system answered the ping."""

    system_id: str
    kind: str
    address: str
    latency: float
    """Seconds from sending to the reply (or to the failure)."""
    reply: str | None
    """The reply's first text when it parsed; None when the system failed."""
    problem: str | None = None
    timed_out: bool = False
    tools: tuple[str, ...] = ()
    """The names of the tools offered with the message (``openai`` systems)."""

    @property
    def up(self) -> bool:
        return self.problem is None


async def ping_systems(bundle: StudyBundle, env: Mapping[str, str]) -> list[Ping]:
    """Ping every networked system of the study, one after the other."""
    specs = [
        spec.model_copy(update={"retries": 0})
        for spec in bundle.study.systems
        if isinstance(spec, NETWORKED)
    ]
    if not specs:
        return []
    scenario = bundle.scenario(bundle.study.scenarios[0])
    conversation = Conversation(
        session_id="ozlab-check-ping",
        scenario_id=scenario.id,
        brief=scenario.brief,
        history=(),
        message=PING_MESSAGE,
        system_prompt=scenario.system_prompt,
    )
    client = JsonClient()
    tools = scenario_tools(bundle)
    systems = build_systems(specs, env=env, client=client, tools=tools)
    offered = tuple(t.name for t in scenario.tools) if scenario.id in tools else ()
    try:
        pings = []
        for spec in specs:
            started = time.perf_counter()
            url = server_url(spec, env) if isinstance(spec, OpenAISystem) else spec.url
            address = describe_url(url)
            names = offered if isinstance(spec, OpenAISystem) else ()
            try:
                reply = await systems[spec.id].respond(conversation)
            except SystemFailure as failure:
                pings.append(
                    Ping(
                        spec.id,
                        spec.type,
                        address,
                        time.perf_counter() - started,
                        None,
                        str(failure),
                        isinstance(failure, SystemTimeout),
                        names,
                    )
                )
                continue
            first = reply.texts[0] if reply.texts else ""
            took = time.perf_counter() - started
            pings.append(Ping(spec.id, spec.type, address, took, first, tools=names))
        return pings
    finally:
        await close_systems(systems)
        await client.close()


NO_SYSTEM = "ping: no http, openai or rasa system to ping"


def ping_lines(pings: Sequence[Ping], *, none: str | None = NO_SYSTEM) -> list[str]:
    """One line per system (or judge): up with its latency and the start of its reply, or
    what failed; ``none`` when there is nothing to ping (no line: None)."""
    if not pings:
        return [none] if none is not None else []
    lines = []
    for ping in pings:
        head = f"ping {ping.system_id} ({ping.kind}, {ping.address}):"
        took = f"{ping.latency * 1000:.0f} ms"
        if ping.up:
            line = f"{head} up, {took}, the reply parses: {excerpt(ping.reply or '', 60)}"
        elif ping.timed_out:
            line = f"{head} DOWN: {ping.problem}"
        else:
            line = f"{head} FAILED after {took}: {ping.problem}"
        if ping.tools:
            noun = "tool" if len(ping.tools) == 1 else "tools"
            line += f" (offered {len(ping.tools)} {noun}: {', '.join(ping.tools)})"
        lines.append(line)
    return lines
