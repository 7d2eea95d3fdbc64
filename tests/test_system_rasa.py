"""The rasa adapter against a local server speaking Rasa's REST channel."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import pytest

from bot.core.conversation import Conversation, SystemReply, Turn
from bot.systems.base import SystemFailure
from bot.systems.http_json import JsonClient
from bot.systems.rasa import RasaRest, parse_rasa, webhook_url
from scenarios.systems import RasaSystem
from tests.fake_servers import FakeRasa, Mode, closed_port_url


@pytest.fixture
async def client() -> AsyncIterator[JsonClient]:
    client = JsonClient(backoff=0.01, max_backoff=0.02)
    yield client
    await client.close()


def spec(url: str, **fields: Any) -> RasaSystem:
    settings: dict[str, Any] = {"type": "rasa", "id": "rasa", "url": url, "timeout": 0.5}
    return RasaSystem.model_validate(settings | fields)


def conversation(message: str = "hello") -> Conversation:
    return Conversation("session-7", "hmd-gift", "brief", (Turn("hi", "Hello!"),), message)


async def test_sends_sender_and_message_and_delivers_all_messages(client: JsonClient) -> None:
    messages = [
        {"text": "Hi! I am the shop bot."},
        {"image": "https://example.org/shop.png"},
        {
            "text": "Shall I search?",
            "buttons": [
                {"title": "Yes", "payload": "/affirm"},
                {"title": "No", "payload": "/deny"},
            ],
        },
        {"custom": {"blocks": [1, 2]}},  # for another channel: ignored
    ]
    async with FakeRasa(messages) as server:
        rasa = RasaRest(spec(server.url), client)
        reply = await rasa.respond(conversation())
        assert server.last.path == "/webhooks/rest/webhook"
        assert server.last.json == {"sender": "session-7", "message": "hello"}
    assert reply == SystemReply(
        texts=("Hi! I am the shop bot.", "https://example.org/shop.png", "Shall I search?"),
        buttons=(("Yes", "/affirm"), ("No", "/deny")),
    )


async def test_custom_events(client: JsonClient) -> None:
    messages = [
        {"text": "Added to your wishlist!", "custom": {"event": "task_success"}},
        {"custom": {"events": ["end_dialogue"]}},
    ]
    async with FakeRasa(messages) as server:
        reply = await RasaRest(spec(server.url), client).respond(conversation())
    assert reply.texts == ("Added to your wishlist!",)
    assert reply.events == {"task_success", "end_dialogue"}


async def test_empty_list_is_a_failure(client: JsonClient) -> None:
    async with FakeRasa() as server:
        server.behave(Mode.EMPTY_TEXT)
        with pytest.raises(SystemFailure, match="the assistant sent no message"):
            await RasaRest(spec(server.url), client).respond(conversation())


def test_events_without_text_are_a_reply_that_ends_the_task_silently() -> None:
    reply = parse_rasa([{"custom": {"event": "task_success"}}])
    assert (reply.texts, reply.events) == ((), {"task_success"})


@pytest.mark.parametrize(
    ("answer", "expected"),
    [
        ({"error": "oops"}, "answered with an object, not a list of messages"),
        (["hello"], "message 1 of the answer is a string, not an object"),
        ([{"text": 3}], "the text of message 1 is a number, not a string"),
        ([{"text": "a", "buttons": "yes"}], "buttons of message 1 are not a list"),
        ([{"text": "a", "buttons": [{}]}], "has no title or payload"),
        ([{"text": "a", "custom": {"event": 5}}], "custom events of message 1"),
        ([{"text": "   "}], "sent no message"),
    ],
)
def test_strange_answers(answer: Any, expected: str) -> None:
    with pytest.raises(SystemFailure, match=expected):
        parse_rasa(answer)


def test_button_without_payload_sends_its_title() -> None:
    reply = parse_rasa([{"text": "Pick", "buttons": [{"title": "Zelda"}, {"payload": "/x"}]}])
    assert reply.buttons == (("Zelda", "Zelda"), ("/x", "/x"))


def test_webhook_url() -> None:
    assert webhook_url("http://h:5005") == "http://h:5005/webhooks/rest/webhook"
    assert webhook_url("http://h:5005/webhooks/rest/webhook") == (
        "http://h:5005/webhooks/rest/webhook"
    )


async def test_slow_rasa_times_out(client: JsonClient) -> None:
    async with FakeRasa() as server:
        server.behave(Mode.SLOW, delay=0.5)
        with pytest.raises(SystemFailure, match=r"within 0\.2 s"):
            await RasaRest(spec(server.url, timeout=0.2), client).respond(conversation())


async def test_500_then_ok(client: JsonClient) -> None:
    async with FakeRasa() as server:
        server.behave(Mode.STATUS, status=500, times=2)
        reply = await RasaRest(spec(server.url, retries=2), client).respond(conversation())
        assert reply.texts == ("Hello from Rasa.",)
        assert len(server.requests) == 3


async def test_404_wrong_path_is_clear(client: JsonClient) -> None:
    async with FakeRasa() as server:
        server.path = "/other"
        with pytest.raises(SystemFailure, match="HTTP 404"):
            await RasaRest(spec(server.url), client).respond(conversation())
        assert len(server.requests) == 1


@pytest.mark.parametrize("mode", [Mode.MALFORMED, Mode.WRONG_TYPE, Mode.NON_UTF8, Mode.HUGE])
async def test_garbage(client: JsonClient, mode: Mode) -> None:
    async with FakeRasa() as server:
        server.behave(mode)
        with pytest.raises(SystemFailure, match=server.endpoint):
            await RasaRest(spec(server.url), client).respond(conversation())


async def test_down(client: JsonClient) -> None:
    with pytest.raises(SystemFailure, match="connection refused"):
        await RasaRest(spec(closed_port_url()), client).respond(conversation())
