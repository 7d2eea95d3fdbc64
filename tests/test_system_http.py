"""The http adapter: request and response mapping against a local JSON service."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

import pytest

from bot.core.conversation import Conversation, SystemReply, Turn
from bot.core.errors import SystemSetupError
from bot.systems.base import SystemFailure
from bot.systems.http import HttpService, lookup
from bot.systems.http_json import JsonClient
from scenarios.systems import HttpSystem
from tests.fake_servers import FakeHttp, Mode, closed_port_url

KEY = "svc-key-0123456789abcdef"


@pytest.fixture
async def client() -> AsyncIterator[JsonClient]:
    client = JsonClient(backoff=0.01, max_backoff=0.02)
    yield client
    await client.close()


def spec(url: str, **fields: Any) -> HttpSystem:
    settings: dict[str, Any] = {"type": "http", "id": "svc", "url": url, "timeout": 0.5}
    return HttpSystem.model_validate(settings | fields)


HISTORY = (Turn("hi", "Hello!"), Turn("games?", "Which genre?"))


def conversation(message: str = "adventure") -> Conversation:
    return Conversation("session-3", "hmd-gift", "Find a gift.", HISTORY, message)


async def test_default_mapping(client: JsonClient) -> None:
    async with FakeHttp({"text": "Here are three games."}) as server:
        service = HttpService(spec(server.endpoint), client, {})
        reply = await service.respond(conversation())
        assert server.last.json == {
            "session_id": "session-3",
            "message": "adventure",
            "history": [
                {"user": "hi", "system": "Hello!"},
                {"user": "games?", "system": "Which genre?"},
            ],
        }
    assert reply == SystemReply(texts=("Here are three games.",))


async def test_nested_request_paths_headers_and_key(client: JsonClient) -> None:
    request = {
        "input.text": "message",
        "input.turn": "turn",
        "meta.session": "session_id",
        "meta.scenario.id": "scenario_id",
        "meta.scenario.brief": "brief",
    }
    async with FakeHttp({"text": "ok"}) as server:
        service = HttpService(
            spec(server.endpoint, request=request, headers={"X-Study": "hmd"}, api_key_env="K"),
            client,
            {"K": KEY},
        )
        await service.respond(conversation())
        assert server.last.json == {
            "input": {"text": "adventure", "turn": 3},
            "meta": {
                "session": "session-3",
                "scenario": {"id": "hmd-gift", "brief": "Find a gift."},
            },
        }
        assert server.last.headers["X-Study"] == "hmd"
        assert server.last.headers["Authorization"] == f"Bearer {KEY}"


async def test_response_paths_index_lists(client: JsonClient) -> None:
    answer = {
        "choices": [{"text": "First."}],
        "extra": {"msgs": ["Second.", {"text": "Third."}, {"image": "x.png"}, ""]},
        "state": {"events": ["task_success"]},
    }
    mapping = {"text": "choices.0.text", "messages": "extra.msgs", "events": "state.events"}
    async with FakeHttp(answer) as server:
        service = HttpService(spec(server.endpoint, response=mapping), client, {})
        reply = await service.respond(conversation())
    assert reply == SystemReply(
        texts=("First.", "Second.", "Third."), events=frozenset({"task_success"})
    )


async def test_events_may_be_one_name_or_missing(client: JsonClient) -> None:
    mapping = {"text": "text", "events": "event"}
    async with FakeHttp(lambda body: {"text": "ok", "event": body["message"]}) as server:
        service = HttpService(spec(server.endpoint, response=mapping), client, {})
        reply = await service.respond(conversation("end_dialogue"))
        assert reply.events == {"end_dialogue"}
        server.reply = {"text": "ok"}
        assert (await service.respond(conversation())).events == frozenset()


@pytest.mark.parametrize(
    ("mapping", "answer", "expected"),
    [
        ({}, {"reply": "hi"}, "empty reply: no 'text' \\(the answer's keys: reply\\)"),
        ({"text": "a.b"}, {"a": {"c": 1}}, "no 'a.b'"),
        ({"text": "text"}, {"text": ""}, "'text' is empty"),
        ({"text": "text"}, {"text": 42}, "'text' in the answer is a number, not a string"),
        ({"text": "choices.3.text"}, {"choices": []}, "no 'choices.3.text'"),
        ({"text": None, "messages": "m"}, {"m": "hi"}, "'m' in the answer is a string, not a list"),
        ({"text": None, "messages": "m"}, {"m": [1]}, "item 1 of 'm' is a number"),
        ({"text": None, "messages": "m"}, {"m": []}, "'m' holds no text"),
        ({"text": "t", "messages": "m"}, {}, "no 't'; no 'm'"),
        ({"events": "e"}, {"text": "x", "e": [1]}, "'e' in the answer is a list, not a list of"),
        ({}, ["a list"], "the answer is a list"),
    ],
)
async def test_unmappable_answers_name_the_path(
    client: JsonClient, mapping: dict[str, Any], answer: Any, expected: str
) -> None:
    async with FakeHttp(answer) as server:
        service = HttpService(spec(server.endpoint, response=mapping), client, {})
        with pytest.raises(SystemFailure, match=expected):
            await service.respond(conversation())


def test_lookup() -> None:
    data = {"a": [{"b": "x"}, {"b": "y"}], "0": "zero"}
    assert lookup(data, "a.1.b") == "y"
    assert lookup(data, "a.-1.b") == "y"
    assert lookup(data, "0") == "zero"
    assert lookup(data, "") is data
    assert lookup(data, "a.2.b") is lookup(data, "nope")
    assert lookup(data, "a.b") is lookup(data, "nope")


def test_configuration_errors_are_named_at_construction(client: JsonClient) -> None:
    with pytest.raises(SystemSetupError, match=r"'input' and 'input\.text' overlap"):
        HttpService(
            spec("http://h/x", request={"input": "message", "input.text": "message"}), client, {}
        )
    with pytest.raises(SystemSetupError, match="empty part"):
        HttpService(spec("http://h/x", request={"a..b": "message"}), client, {})
    with pytest.raises(SystemSetupError, match=r"SVC_KEY \(api_key_env\) is not set"):
        HttpService(spec("http://h/x", api_key_env="SVC_KEY"), client, {})
    with pytest.raises(SystemSetupError, match="keep one of them"):
        HttpService(
            spec("http://h/x", api_key_env="K", headers={"authorization": "Basic x"}),
            client,
            {"K": KEY},
        )


async def test_secret_header_never_shown(client: JsonClient) -> None:
    async with FakeHttp() as server:
        server.behave(Mode.STATUS, status=403, body=f"forbidden for {KEY}")
        service = HttpService(spec(server.endpoint, headers={"X-Api-Key": KEY}), client, {})
        with pytest.raises(SystemFailure) as caught:
            await service.respond(conversation())
    assert "HTTP 403" in str(caught.value)
    assert KEY not in str(caught.value)


async def test_slow_then_released_in_time(client: JsonClient) -> None:
    async with FakeHttp() as server:
        server.behave(Mode.HOLD)
        service = HttpService(spec(server.endpoint, timeout=0.5), client, {})
        task = asyncio.create_task(service.respond(conversation()))
        await server.wait_for_requests(1)
        server.release()
        assert (await task).texts == ("Hello from the service.",)


async def test_failing_then_ok(client: JsonClient) -> None:
    async with FakeHttp() as server:
        server.behave(Mode.STATUS, status=500, times=1)
        reply = await HttpService(spec(server.endpoint, retries=1), client, {}).respond(
            conversation()
        )
        assert reply.texts == ("Hello from the service.",)


@pytest.mark.parametrize(
    ("mode", "expected"),
    [
        (Mode.MALFORMED, "malformed JSON"),
        (Mode.WRONG_TYPE, "not JSON"),
        (Mode.NON_UTF8, "not UTF-8"),
        (Mode.HUGE_STREAM, "more than 1,000,000 bytes"),
        (Mode.EMPTY_TEXT, "'text' is empty"),
        (Mode.RESET, "closed the connection"),
    ],
)
async def test_garbage(client: JsonClient, mode: Mode, expected: str) -> None:
    async with FakeHttp() as server:
        server.behave(mode)
        with pytest.raises(SystemFailure, match=expected):
            await HttpService(spec(server.endpoint, retries=0), client, {}).respond(conversation())


async def test_down(client: JsonClient) -> None:
    with pytest.raises(SystemFailure, match="connection refused"):
        await HttpService(spec(closed_port_url() + "/chat"), client, {}).respond(conversation())
