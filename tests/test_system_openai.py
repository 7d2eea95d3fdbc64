"""The openai adapter against a local OpenAI-compatible server."""

from __future__ import annotations

import logging
import traceback
from collections.abc import AsyncIterator
from typing import Any

import pytest

from bot.core.conversation import Conversation, SystemReply, Turn
from bot.core.errors import SystemSetupError
from bot.systems.base import SystemFailure
from bot.systems.http_json import JsonClient
from bot.systems.openai import OpenAIChat, completions_url, trim_history
from scenarios.systems import OpenAISystem
from tests.fake_servers import FakeOpenAI, Mode, closed_port_url

KEY = "sk-test-a1b2c3d4e5f6g7h8i9j0"
ENV = {"LLM_KEY": KEY}


@pytest.fixture
async def client() -> AsyncIterator[JsonClient]:
    client = JsonClient(backoff=0.01, max_backoff=0.02)
    yield client
    await client.close()


@pytest.fixture
async def server() -> AsyncIterator[FakeOpenAI]:
    async with FakeOpenAI(reply="I can help with that.", api_key=KEY) as server:
        yield server


def spec(url: str, **fields: Any) -> OpenAISystem:
    settings: dict[str, Any] = {
        "type": "openai",
        "id": "llm",
        "url": url,
        "model": "tiny",
        "api_key_env": "LLM_KEY",
        "timeout": 0.5,
        "retries": 1,
    }
    return OpenAISystem.model_validate(settings | fields)


def conversation(
    message: str = "Find me a game", history: tuple[Turn, ...] = (), **fields: Any
) -> Conversation:
    return Conversation(
        session_id="s-1",
        scenario_id="hmd-gift",
        brief="Find an adventure game for Alex.",
        history=history,
        message=message,
        **fields,
    )


HISTORY = tuple(Turn(f"user {i}", f"system {i}") for i in range(1, 6))


async def test_sends_prompt_history_and_message(client: JsonClient, server: FakeOpenAI) -> None:
    llm = OpenAIChat(
        spec(
            server.url,
            system_prompt='Scenario {scenario}: {brief} Answer as JSON like {"a": 1}.',
            temperature=0.2,
            max_tokens=64,
        ),
        client,
        ENV,
    )
    reply = await llm.respond(conversation(history=HISTORY[:2]))
    assert reply == SystemReply(texts=("I can help with that.",))
    received = server.last
    assert received.path == "/v1/chat/completions"
    assert received.headers["Authorization"] == f"Bearer {KEY}"
    assert received.json == {
        "model": "tiny",
        "temperature": 0.2,
        "max_tokens": 64,
        "messages": [
            {
                "role": "system",
                "content": "Scenario hmd-gift: Find an adventure game for Alex. Answer as JSON "
                'like {"a": 1}.',
            },
            {"role": "user", "content": "user 1"},
            {"role": "assistant", "content": "system 1"},
            {"role": "user", "content": "user 2"},
            {"role": "assistant", "content": "system 2"},
            {"role": "user", "content": "Find me a game"},
        ],
    }


async def test_optional_fields_are_left_out(client: JsonClient) -> None:
    async with FakeOpenAI() as server:
        llm = OpenAIChat(spec(server.url, api_key_env=None), client, {})
        await llm.respond(conversation())
        assert server.last.json == {
            "model": "tiny",
            "messages": [{"role": "user", "content": "Find me a game"}],
        }
        assert "Authorization" not in server.last.headers


async def test_scenario_prompt_replaces_the_study_prompt(
    client: JsonClient, server: FakeOpenAI
) -> None:
    llm = OpenAIChat(spec(server.url, system_prompt="study prompt"), client, ENV)
    await llm.respond(conversation(system_prompt="You sell games. Task: {brief}"))
    first = server.last.json["messages"][0]
    assert first == {
        "role": "system",
        "content": "You sell games. Task: Find an adventure game for Alex.",
    }


async def test_history_is_trimmed_to_turns_then_chars(
    client: JsonClient, server: FakeOpenAI
) -> None:
    llm = OpenAIChat(spec(server.url, history_turns=3, history_chars=30), client, ENV)
    await llm.respond(conversation(history=HISTORY))
    contents = [m["content"] for m in server.last.json["messages"]]
    # turns 3, 4, 5 are 14 characters each: only the last two fit in 30
    assert contents == ["user 4", "system 4", "user 5", "system 5", "Find me a game"]


def test_trim_history() -> None:
    assert trim_history(HISTORY, None, None) == HISTORY
    assert trim_history(HISTORY, 0, None) == ()
    assert trim_history(HISTORY, 10, None) == HISTORY
    assert trim_history(HISTORY, 2, None) == HISTORY[3:]
    assert trim_history(HISTORY, None, 28) == HISTORY[3:]
    assert trim_history(HISTORY, None, 27) == HISTORY[4:]
    assert trim_history(HISTORY, None, 1) == ()


@pytest.mark.parametrize(
    ("base", "expected"),
    [
        ("http://h:1", "http://h:1/v1/chat/completions"),
        ("http://h:1/v1", "http://h:1/v1/chat/completions"),
        ("http://h:1/openai/v1/", "http://h:1/openai/v1/chat/completions"),
        ("http://h:1/v1/chat/completions", "http://h:1/v1/chat/completions"),
    ],
)
def test_completions_url(base: str, expected: str) -> None:
    assert completions_url(base) == expected


async def test_url_ending_in_v1_is_not_doubled(client: JsonClient, server: FakeOpenAI) -> None:
    llm = OpenAIChat(spec(server.url + "/v1"), client, ENV)
    assert (await llm.respond(conversation())).texts == ("I can help with that.",)


async def test_url_env_when_set_names_the_server_in_place_of_url(
    client: JsonClient, server: FakeOpenAI
) -> None:
    """A study keeps a default address and each machine may say where its model is."""
    nowhere = closed_port_url()
    moved = spec(nowhere, url_env="LLM_URL")
    llm = OpenAIChat(moved, client, {**ENV, "LLM_URL": server.url + "/"})
    assert (await llm.respond(conversation())).texts == ("I can help with that.",)
    assert server.requests and llm.endpoint == server.url + "/v1/chat/completions"
    unset = OpenAIChat(moved, client, {**ENV, "LLM_URL": " "})  # empty: the study's url
    assert unset.endpoint == nowhere + "/v1/chat/completions"


def test_a_url_env_that_is_no_address_stops_the_start(client: JsonClient) -> None:
    with pytest.raises(SystemSetupError, match=r"LLM_URL: 'localhost:8081' is not an http") as e:
        OpenAIChat(
            spec("http://127.0.0.1:9", url_env="LLM_URL"),
            client,
            {**ENV, "LLM_URL": "localhost:8081"},
        )
    assert e.value.field == "url_env"
    with pytest.raises(ValueError, match="not an environment variable name"):
        spec("http://127.0.0.1:9", url_env="the server")


def test_missing_key_variable_is_named_at_construction(client: JsonClient) -> None:
    with pytest.raises(SystemSetupError, match=r"LLM_KEY \(api_key_env\) is not set"):
        OpenAIChat(spec("http://127.0.0.1:9"), client, {})
    with pytest.raises(SystemSetupError, match="LLM_KEY") as caught:
        OpenAIChat(spec("http://127.0.0.1:9"), client, {"LLM_KEY": "  "})
    assert "is empty" in str(caught.value)


async def test_wrong_key_fails_without_showing_it(
    client: JsonClient, server: FakeOpenAI, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    llm = OpenAIChat(spec(server.url), client, {"LLM_KEY": "sk-wrong-key-987654321"})
    with pytest.raises(SystemFailure) as caught:
        await llm.respond(conversation())
    message = str(caught.value)
    assert "HTTP 401" in message
    assert "Incorrect API key provided" in message  # the server echoed the key…
    assert "sk-wrong-key-987654321" not in "".join(traceback.format_exception(caught.value))
    assert len(server.requests) == 1  # 4xx: not retried
    assert all("sk-wrong" not in r.getMessage() for r in caplog.records)


@pytest.mark.parametrize(
    ("answer", "expected"),
    [
        ({"choices": [{"message": {"role": "assistant", "content": ""}}]}, "empty reply"),
        ({"choices": [{"message": {"role": "assistant", "content": "  \n"}}]}, "empty reply"),
        ({"choices": [{"message": {"role": "assistant", "content": None}}]}, "empty reply"),
        ({"choices": [{"message": {}, "finish_reason": "length"}]}, "max_tokens too small"),
        ({"choices": []}, "without choices"),
        ({"object": "chat.completion"}, "without choices"),
        ({"error": {"message": "model not loaded"}}, "an error: model not loaded"),
        ({"choices": [{"text": "legacy"}]}, r"without choices\[0\]\.message"),
        ({"choices": [{"message": {"content": 42}}]}, "content as a number, not text"),
        (["not", "an", "object"], "answered with a list, not a completion"),
    ],
)
async def test_strange_answers_are_clear_failures(
    client: JsonClient, answer: Any, expected: str
) -> None:
    async with FakeOpenAI() as server:
        server.completion = lambda content: answer  # type: ignore[method-assign]
        llm = OpenAIChat(spec(server.url, api_key_env=None), client, {})
        with pytest.raises(SystemFailure, match=expected):
            await llm.respond(conversation())


async def test_content_parts_are_joined(client: JsonClient) -> None:
    async with FakeOpenAI() as server:
        parts = [{"type": "text", "text": "Hello "}, {"type": "text", "text": "there"}]
        server.completion = lambda content: {  # type: ignore[method-assign]
            "choices": [{"message": {"content": parts}}]
        }
        llm = OpenAIChat(spec(server.url, api_key_env=None), client, {})
        assert (await llm.respond(conversation())).texts == ("Hello there",)


async def test_empty_text_mode(client: JsonClient, server: FakeOpenAI) -> None:
    server.behave(Mode.EMPTY_TEXT)
    llm = OpenAIChat(spec(server.url), client, ENV)
    with pytest.raises(SystemFailure, match=r"^the system returned an empty reply$"):
        await llm.respond(conversation())


async def test_slow_server_times_out_at_the_spec_timeout(
    client: JsonClient, server: FakeOpenAI
) -> None:
    server.behave(Mode.HOLD)
    llm = OpenAIChat(spec(server.url, timeout=0.2), client, ENV)
    with pytest.raises(SystemFailure, match=r"within 0\.2 s"):
        await llm.respond(conversation())


async def test_500_then_ok_is_retried(client: JsonClient, server: FakeOpenAI) -> None:
    server.behave(Mode.STATUS, status=502, times=1)
    llm = OpenAIChat(spec(server.url, retries=1), client, ENV)
    assert (await llm.respond(conversation())).texts == ("I can help with that.",)
    assert len(server.requests) == 2


@pytest.mark.parametrize(
    ("mode", "expected"),
    [
        (Mode.MALFORMED, "malformed JSON"),
        (Mode.WRONG_TYPE, "not JSON"),
        (Mode.NON_UTF8, "not UTF-8"),
        (Mode.HUGE, "more than the limit"),
        (Mode.EMPTY_BODY, "empty answer"),
    ],
)
async def test_garbage(client: JsonClient, server: FakeOpenAI, mode: Mode, expected: str) -> None:
    server.behave(mode)
    llm = OpenAIChat(spec(server.url), client, ENV)
    with pytest.raises(SystemFailure, match=expected):
        await llm.respond(conversation())


async def test_down(client: JsonClient) -> None:
    llm = OpenAIChat(spec(closed_port_url()), client, ENV)
    with pytest.raises(SystemFailure, match="connection refused"):
        await llm.respond(conversation())
