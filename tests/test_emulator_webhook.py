"""The emulator's webhooks: after ``setWebhook`` it POSTs each update to the bot, with the
secret header, one chat's updates one at a time and in order, other chats' at once; it tries
again on any answer that is not 2xx and while nothing answers (giving an update up only once
it is older than Telegram keeps one), and refuses ``getUpdates`` with 409 as Telegram does.
The bot here is a small aiohttp server on loopback that answers as a test tells it."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

import aiohttp
import pytest
from aiohttp import web

from bot.pilot.emulator import BotApiEmulator
from bot.pilot.emulator.waiting import Waiters
from bot.pilot.emulator.webhook import SECRET_HEADER
from tests.conftest import free_port
from tests.test_emulator import TOKEN, call, ok


class Receiver:
    """A webhook that records what it got and answers with ``status``; while ``held`` is
    clear, it answers nothing yet (the posts stay under way)."""

    def __init__(self, status: int = 200) -> None:
        self.status = status
        self.got: list[tuple[str | None, dict[str, Any]]] = []
        self.port = free_port()
        self.held = asyncio.Event()
        self.held.set()
        self.arrived = Waiters()
        self._runner: web.AppRunner | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/hook"

    async def _post(self, request: web.Request) -> web.Response:
        self.got.append((request.headers.get(SECRET_HEADER), await request.json()))
        self.arrived.wake()
        await self.held.wait()
        return web.Response(status=self.status)

    def ids(self) -> list[int]:
        return [update["update_id"] for _, update in self.got]

    async def start(self) -> None:
        app = web.Application()
        app.router.add_post("/hook", self._post)
        self._runner = web.AppRunner(app, access_log=None)
        await self._runner.setup()
        await web.TCPSite(self._runner, "127.0.0.1", self.port).start()

    async def stop(self) -> None:
        if self._runner is not None:
            await self._runner.cleanup()
            self._runner = None


@pytest.fixture
async def emu() -> AsyncIterator[BotApiEmulator]:
    async with BotApiEmulator(TOKEN) as emulator:
        yield emulator


@pytest.fixture
async def http() -> AsyncIterator[aiohttp.ClientSession]:
    async with aiohttp.ClientSession() as session:
        yield session


@pytest.fixture
async def receiver() -> AsyncIterator[Receiver]:
    hook = Receiver()
    await hook.start()
    yield hook
    await hook.stop()


async def test_updates_are_posted_with_the_secret_and_polling_is_refused(
    emu: BotApiEmulator, http: aiohttp.ClientSession, receiver: Receiver
) -> None:
    p = emu.participant(11)
    first = await p.send_text("before the webhook")  # waits, then goes out by webhook
    assert await ok(http, emu, "setWebhook", url=receiver.url, secret_token="s3cret_-X") is True
    second = await p.send_text("after")
    await emu.wait_until(lambda e: e.pending_updates == 0)
    assert [(secret, u["update_id"]) for secret, u in receiver.got] == [
        ("s3cret_-X", first),
        ("s3cret_-X", second),
    ]
    assert receiver.got[1][1]["message"]["text"] == "after"
    status, body = await call(http, emu, "getUpdates")
    assert (status, body["error_code"]) == (409, 409)
    assert "webhook is active" in body["description"]
    info = await ok(http, emu, "getWebhookInfo")
    assert (info["url"], info["pending_update_count"]) == (receiver.url, 0)

    assert await ok(http, emu, "deleteWebhook") is True
    third = await p.send_text("polled again")
    assert [u["update_id"] for u in await ok(http, emu, "getUpdates")] == [third]
    assert (await ok(http, emu, "getWebhookInfo"))["url"] == ""


async def test_an_answer_other_than_2xx_is_tried_again_until_the_update_is_too_old(
    http: aiohttp.ClientSession, receiver: Receiver
) -> None:
    """Telegram gives an update up only once it has kept it for 23 hours; here 0.3 s."""
    receiver.status = 500
    async with BotApiEmulator(TOKEN, webhook_keep_for=0.3) as emu:
        await ok(http, emu, "setWebhook", url=receiver.url)
        p = emu.participant(12)
        refused = await p.send_text("refused")
        behind = await p.send_text("behind it")  # the chat's next waits for it
        await emu.wait_until(lambda e: e.webhook is not None and refused in e.webhook.given_up)
        assert len(receiver.got) >= 3 and set(receiver.ids()) == {refused}
        assert receiver.got[0][0] is None  # no secret set: no header
        info = await ok(http, emu, "getWebhookInfo")
        assert info["last_error_message"] == "Wrong response from the webhook: 500"
        receiver.status = 200
        await emu.wait_until(lambda e: e.pending_updates == 0)
        assert receiver.ids()[-1] == behind


async def test_one_chat_waits_for_its_answer_and_other_chats_do_not(
    emu: BotApiEmulator, http: aiohttp.ClientSession, receiver: Receiver
) -> None:
    receiver.held.clear()  # the bot takes its time over every update
    await ok(http, emu, "setWebhook", url=receiver.url)
    alice, bob = emu.participant(15), emu.participant(16)
    first = await alice.send_text("one")
    await alice.send_text("two")
    third = await bob.send_text("three")
    await receiver.arrived.until(lambda: len(receiver.got) == 2, 10, lambda: str(receiver.got))
    assert sorted(receiver.ids()) == [first, third]  # alice's "two" waits for "one"'s answer
    receiver.held.set()
    await emu.wait_until(lambda e: e.pending_updates == 0)
    assert receiver.ids()[2] == first + 1


async def test_a_bot_that_does_not_answer_gets_the_update_once_it_is_back(
    emu: BotApiEmulator, http: aiohttp.ClientSession, receiver: Receiver
) -> None:
    await receiver.stop()  # the bot is down (killed, restarting)
    await ok(http, emu, "setWebhook", url=receiver.url, secret_token="abc")
    waiting = await emu.participant(13).send_text("while you were away")
    assert emu.webhook is not None
    pusher = emu.webhook
    await emu.wait_until(lambda e: len(pusher.answers) >= 4, timeout=15)
    assert {status for _, status in pusher.answers} == {0} and pusher.given_up == []
    await receiver.start()
    await ok(http, emu, "setWebhook", url=receiver.url, secret_token="abc")  # back: at once
    await emu.wait_until(lambda e: e.pending_updates == 0)
    assert [u["update_id"] for _, u in receiver.got] == [waiting]


async def test_a_redelivered_update_is_posted_again(
    emu: BotApiEmulator, http: aiohttp.ClientSession, receiver: Receiver
) -> None:
    await ok(http, emu, "setWebhook", url=receiver.url)
    sent = await emu.participant(14).send_text("again")
    await emu.wait_until(lambda e: e.pending_updates == 0)
    emu.redeliver(sent)
    await emu.wait_until(lambda e: len(receiver.got) == 2)
    assert [u["update_id"] for _, u in receiver.got] == [sent, sent]


@pytest.mark.parametrize(
    ("params", "description"),
    [
        ({"url": "http://example.org/hook"}, "Failed to resolve host"),
        ({"url": "https://example.org/hook"}, "Failed to resolve host"),
        ({"url": "ftp://127.0.0.1/hook"}, "An HTTPS URL must be provided"),
        ({"url": "https://127.0.0.1:8080/hook"}, "only on ports 80, 88, 443 or 8443"),
        ({"url": "http://127.0.0.1/hook", "secret_token": "no spaces"}, "unallowed characters"),
    ],
)
async def test_a_webhook_telegram_would_not_take_is_refused(
    emu: BotApiEmulator, http: aiohttp.ClientSession, params: dict[str, str], description: str
) -> None:
    status, body = await call(http, emu, "setWebhook", **params)
    assert status == 400 and description in body["description"], body
    assert emu.webhook is None and emu.webhooks_set == 0


async def test_an_empty_url_removes_the_webhook(
    emu: BotApiEmulator, http: aiohttp.ClientSession, receiver: Receiver
) -> None:
    await ok(http, emu, "setWebhook", url=receiver.url)
    assert await ok(http, emu, "setWebhook", url="") is True
    assert emu.webhook is None
    assert await ok(http, emu, "getUpdates", timeout=0) == []
