"""The demo shop over HTTP, the http adapter against it, and the registry."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from typing import Any

import aiohttp
import pytest

from bot.core.conversation import Conversation, SystemReply, Turn
from bot.core.errors import SystemSetupError
from bot.systems.demo import DemoShop
from bot.systems.http import HttpService
from bot.systems.http_json import JsonClient
from bot.systems.openai import OpenAIChat
from bot.systems.rasa import RasaRest
from bot.systems.registry import build_systems, close_systems
from bot.systems.served_demo import demo_app, serve_demo
from scenarios.systems import DemoSystem, HttpSystem, OpenAISystem, RasaSystem
from tests.fake_servers import serving

# A full gift task and some awkward messages, as a participant might type them.
MESSAGES = [
    "Hi, I would like to search for adventure games on linux",
    "tell me more about the first one",
    "is it on Alex's wishlist?",
    "compare 1 and 2",
    "asdf qwerty",
    "",
    "add the first one to my wishlist",
    "yes",
    "thanks, bye",
]
MAPPING = {
    "text": None,
    "messages": "messages",
    "events": "events",
    "event_data": "event_data",
}


@pytest.fixture(params=["v1", "v0"])
async def served(request: pytest.FixtureRequest) -> AsyncIterator[tuple[str, str]]:
    async with serving(demo_app(request.param)) as url:
        yield request.param, url + "/"


async def play(system: Any, messages: list[str]) -> list[SystemReply]:
    """Play the messages through a system, keeping the history as the engine does."""
    history: list[Turn] = []
    replies = []
    for message in messages:
        conversation = Conversation("s-1", "hmd-gift", "Find a gift.", tuple(history), message)
        reply = await system.respond(conversation)
        replies.append(reply)
        history.append(Turn(message, "\n\n".join(reply.texts)))
    return replies


async def test_http_adapter_against_served_demo_matches_in_process(
    served: tuple[str, str],
) -> None:
    variant, url = served
    client = JsonClient()
    try:
        spec = HttpSystem(type="http", id="shop", url=url, response=MAPPING, timeout=2)
        over_http = await play(HttpService(spec, client, {}), MESSAGES)
    finally:
        await client.close()
    in_process = await play(DemoShop(variant), MESSAGES)  # type: ignore[arg-type]
    assert over_http == in_process
    assert any("task_success" in r.events for r in over_http)  # events cross the wire


async def test_default_mapping_gets_the_joined_text(served: tuple[str, str]) -> None:
    variant, url = served
    client = JsonClient()
    try:
        service = HttpService(HttpSystem(type="http", id="shop", url=url), client, {})
        replies = await play(service, MESSAGES[:2])
    finally:
        await client.close()
    expected = await play(DemoShop(variant), MESSAGES[:2])  # type: ignore[arg-type]
    assert [r.texts for r in replies] == [("\n\n".join(r.texts),) for r in expected]


async def test_bad_requests_get_400_and_get_describes(served: tuple[str, str]) -> None:
    _, url = served
    async with aiohttp.ClientSession() as session:
        async with session.get(url) as response:
            assert (await response.json())["system"] == "ozlab demo shop"
        for body, problem in [
            (b"not json", "not JSON"),
            (b"[1]", "JSON object"),
            (b'{"message": 3}', "'message' must be a string"),
            (b'{"message": "hi", "history": [{"user": 1}]}', "'history' must be"),
        ]:
            async with session.post(url, data=body) as response:
                assert response.status == 400
                assert problem in (await response.json())["error"]


async def test_serve_demo_runs_until_cancelled() -> None:
    ready: asyncio.Future[str] = asyncio.get_running_loop().create_future()
    task = asyncio.create_task(serve_demo("127.0.0.1", 0, "v1", started=ready.set_result))
    url = await asyncio.wait_for(ready, 2)
    async with aiohttp.ClientSession() as session:
        body = {"session_id": "x", "message": "hello", "history": []}
        async with session.post(url, data=json.dumps(body)) as response:
            answer = await response.json()
    assert answer["messages"] == list((await play(DemoShop("v1"), ["hello"]))[0].texts)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task


async def test_registry_builds_every_adapter_and_closes_the_shared_client() -> None:
    async with serving(demo_app("v1")) as url:
        await check_registry(url)


async def check_registry(url: str) -> None:
    specs = [
        DemoSystem(type="demo", id="shop-v0", variant="v0"),
        OpenAISystem(type="openai", id="llm", url="http://127.0.0.1:1", model="m", api_key_env="K"),
        RasaSystem(type="rasa", id="rasa", url="http://127.0.0.1:1"),
        HttpSystem(type="http", id="svc", url=url, response=MAPPING),
    ]
    systems = build_systems(specs, env={"K": "key-123456"})
    shop, llm, rasa, svc = systems.values()
    assert isinstance(shop, DemoShop) and shop.variant == "v0"
    assert isinstance(llm, OpenAIChat) and isinstance(rasa, RasaRest)
    assert isinstance(svc, HttpService)
    assert llm.client is rasa.client is svc.client
    hello = Conversation("s", "t", "b", (), "hello")
    assert await svc.respond(hello) == await DemoShop("v1").respond(hello)
    await close_systems(systems)
    assert svc.client.closed


async def test_registry_uses_a_given_client_and_reports_missing_keys() -> None:
    client = JsonClient()
    spec = OpenAISystem(type="openai", id="llm", url="http://h", model="m", api_key_env="NOPE")
    with pytest.raises(SystemSetupError, match="system 'llm': the environment variable NOPE"):
        build_systems([spec], env={})
    systems = build_systems([spec], env={"NOPE": "k" * 10}, client=client)
    assert systems["llm"].client is client  # type: ignore[attr-defined]
    await close_systems(systems)
    assert client.closed


async def test_close_systems_goes_on_after_a_failing_close(
    caplog: pytest.LogCaptureFixture,
) -> None:
    class Grumpy(DemoShop):
        async def close(self) -> None:
            raise RuntimeError("cannot close")

    client = JsonClient()
    rasa = RasaRest(RasaSystem(type="rasa", id="r", url="http://h"), client)
    await close_systems({"grumpy": Grumpy(), "r": rasa})
    assert client.closed
    assert "closing system grumpy failed: RuntimeError: cannot close" in caplog.text
