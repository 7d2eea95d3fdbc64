"""AiohttpRequest with real python-telegram-bot objects, and aiogram (in the test extra),
against the emulator.

Everything runs on 127.0.0.1: the emulator for Bot API behaviour, and two tiny aiohttp
servers for what the emulator cannot show (a server that never answers, and one that records
exactly what the client put on the wire).
"""

from __future__ import annotations

import asyncio
import datetime as dtm
import json
import socket
import time
from collections.abc import AsyncIterator
from typing import Any

import pytest
from aiohttp import web
from telegram import Bot, InlineKeyboardButton, InlineKeyboardMarkup, Update
from telegram.error import BadRequest, Forbidden, InvalidToken, NetworkError, TimedOut
from telegram.ext import ApplicationBuilder, ContextTypes, MessageHandler, filters

from bot.pilot.emulator import BotApiEmulator, Participant
from bot.telegram.request import AiohttpRequest, request_pair, use_aiohttp

pytestmark = pytest.mark.slow  # whole commands, reports or renderings: make test, not make check

TOKEN = "123456:TEST-token"
KEYBOARD = InlineKeyboardMarkup(
    [
        [
            InlineKeyboardButton("Yes", callback_data="y"),
            InlineKeyboardButton("No", callback_data="n"),
        ]
    ]
)


@pytest.fixture
async def emu() -> AsyncIterator[BotApiEmulator]:
    async with BotApiEmulator(TOKEN) as emulator:
        yield emulator


@pytest.fixture
async def bot(emu: BotApiEmulator) -> AsyncIterator[Bot]:
    request, get_updates_request = request_pair()
    async with Bot(
        TOKEN, base_url=emu.base_url, request=request, get_updates_request=get_updates_request
    ) as ptb_bot:
        yield ptb_bot


async def joined(emu: BotApiEmulator, bot: Bot, user_id: int = 42) -> Participant:
    """A participant who wrote /start; the update is fetched and confirmed."""
    participant = emu.participant(user_id)
    update_id = await participant.send_text("/start")
    await bot.get_updates(offset=update_id + 1)
    return participant


# -- tiny loopback servers ----------------------------------------------------------------------


class _Server:
    """An aiohttp app on 127.0.0.1 with a free port."""

    def __init__(self, handler: Any) -> None:
        self._app = web.Application()
        self._app.router.add_route("*", "/{tail:.*}", handler)
        self._runner = web.AppRunner(self._app, access_log=None, shutdown_timeout=1.0)
        self.url = ""

    async def start(self) -> None:
        await self._runner.setup()
        site = web.TCPSite(self._runner, "127.0.0.1", 0)
        await site.start()
        self.url = f"http://127.0.0.1:{self._runner.addresses[0][1]}"

    async def stop(self) -> None:
        await self._runner.cleanup()


class SlowServer(_Server):
    """Accepts requests and answers only when released."""

    def __init__(self) -> None:
        super().__init__(self._handle)
        self.arrived = asyncio.Event()
        self.release = asyncio.Event()

    async def _handle(self, request: web.Request) -> web.Response:
        self.arrived.set()
        await self.release.wait()
        return web.json_response({"ok": True, "result": True})


class CaptureServer(_Server):
    """Records each request's content type and fields, answers with canned results."""

    def __init__(self) -> None:
        super().__init__(self._handle)
        self.seen: list[tuple[str, str, dict[str, Any]]] = []

    async def _handle(self, request: web.Request) -> web.Response:
        form = await request.post()
        fields: dict[str, Any] = {}
        for name, value in form.items():
            fields[name] = value if isinstance(value, str) else (value.filename, value.file.read())
        method = request.path.rsplit("/", 1)[-1]
        self.seen.append((method, request.content_type, fields))
        user = {"id": 123456, "is_bot": True, "first_name": "B", "username": "b_bot"}
        message = {"message_id": 1, "date": 0, "chat": {"id": 42, "type": "private"}, "from": user}
        result = {
            "getMe": user,
            "sendDocument": message | {"document": {"file_id": "f", "file_unique_id": "u"}},
        }
        return web.json_response(
            {"ok": True, "result": result.get(method, message | {"text": "x"})}
        )


@pytest.fixture
async def slow() -> AsyncIterator[SlowServer]:
    server = SlowServer()
    await server.start()
    yield server
    server.release.set()
    await server.stop()


@pytest.fixture
async def capture() -> AsyncIterator[CaptureServer]:
    server = CaptureServer()
    await server.start()
    yield server
    await server.stop()


# -- python-telegram-bot ------------------------------------------------------------------------


async def test_get_me_keyboard_edit_and_callback(emu: BotApiEmulator, bot: Bot) -> None:
    me = await bot.get_me()
    assert me.username == "ozlab_test_bot" and me.id == 123456
    alice = await joined(emu, bot)
    sent = await bot.send_message(42, "Consent?", reply_markup=KEYBOARD)
    assert sent.reply_markup == KEYBOARD
    assert (await alice.wait_for_text("Consent")).buttons == ["Yes", "No"]
    tap = await alice.tap(text="Yes")
    (update,) = await bot.get_updates(offset=tap, timeout=5)
    query = update.callback_query
    assert query is not None and query.data == "y" and query.message is not None
    assert query.message.message_id == sent.message_id
    assert await bot.answer_callback_query(query.id, text="Thanks") is True
    assert await alice.wait_for_toast("Thanks") == "Thanks"
    with pytest.raises(BadRequest, match="Query is too old"):
        await bot.answer_callback_query(query.id)
    edited = await bot.edit_message_text("Consent given", chat_id=42, message_id=sent.message_id)
    assert isinstance(edited, object) and alice.messages[-1].keyboard == []
    with pytest.raises(BadRequest, match="Message is not modified"):
        await bot.edit_message_text("Consent given", chat_id=42, message_id=sent.message_id)
    assert emu.internal_errors == []


async def test_long_poll_returns_on_update_and_on_timeout(emu: BotApiEmulator, bot: Bot) -> None:
    alice = emu.participant(42)
    poll = asyncio.create_task(bot.get_updates(timeout=10))
    await emu.wait_until(lambda e: e.parked_polls == 1)
    started = time.monotonic()
    update_id = await alice.send_text("hello")
    (update,) = await asyncio.wait_for(poll, 3)
    assert update.update_id == update_id and update.message is not None
    assert time.monotonic() - started < 1
    started = time.monotonic()
    assert (
        await bot.get_updates(offset=update_id + 1, timeout=dtm.timedelta(milliseconds=200)) == ()
    )
    assert 0.15 < time.monotonic() - started < 2


async def test_telegram_errors_map_to_ptb_exceptions(emu: BotApiEmulator, bot: Bot) -> None:
    alice = await joined(emu, bot)
    with pytest.raises(BadRequest, match="Message is too long"):
        await bot.send_message(42, "x" * 4097)
    with pytest.raises(BadRequest, match="Chat not found"):
        await bot.send_message(777, "hi")
    long_data = InlineKeyboardMarkup([[InlineKeyboardButton("b", callback_data="x" * 65)]])
    with pytest.raises(BadRequest, match=r"(?i)button_data_invalid"):
        await bot.send_message(42, "kb", reply_markup=long_data)
    with pytest.raises(BadRequest, match=r"(?i)can't parse entities"):
        await bot.send_message(42, "snake_case", parse_mode="Markdown")
    alice.block()
    with pytest.raises(Forbidden, match="bot was blocked by the user"):
        await bot.send_message(42, "still there?")
    request, get_updates_request = request_pair()
    wrong = Bot(
        "999:wrong", base_url=emu.base_url, request=request, get_updates_request=get_updates_request
    )
    with pytest.raises(InvalidToken):
        await wrong.initialize()
    await wrong.shutdown()


async def test_read_timeout_is_timed_out(slow: SlowServer) -> None:
    async with AiohttpRequest(read_timeout=0.2) as request:
        started = time.monotonic()
        with pytest.raises(TimedOut):
            await request.post(f"{slow.url}/botX/getMe")
        assert time.monotonic() - started < 2
        assert slow.arrived.is_set()


async def test_full_pool_is_timed_out_without_sending(slow: SlowServer) -> None:
    async with AiohttpRequest(
        connection_pool_size=1, pool_timeout=0.1, read_timeout=None
    ) as request:
        first = asyncio.create_task(request.post(f"{slow.url}/botX/getMe"))
        await asyncio.wait_for(slow.arrived.wait(), 3)
        with pytest.raises(TimedOut, match="Pool timeout"):
            await request.post(f"{slow.url}/botX/getMe")
        slow.release.set()
        assert await asyncio.wait_for(first, 3) is True


async def test_refused_connection_is_network_error() -> None:
    with socket.socket() as sock:  # a port that was just free: nothing listens there
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    async with AiohttpRequest(connect_timeout=2) as request:
        with pytest.raises(NetworkError) as caught:
            await request.post(f"http://127.0.0.1:{port}/botX/getMe")
        assert not isinstance(caught.value, TimedOut)
        assert "aiohttp.ClientConnectorError" in str(caught.value)


async def test_lifecycle() -> None:
    request = AiohttpRequest(connection_pool_size=4, read_timeout=7)
    assert request.read_timeout == 7 and request.connection_pool_size == 4
    with pytest.raises(NetworkError, match="not initialized"):  # PTB wraps the RuntimeError
        await request.post("http://127.0.0.1:1/botX/getMe")
    await request.shutdown()  # before initialize: harmless
    await request.initialize()
    await request.initialize()  # idempotent
    await request.shutdown()
    await request.shutdown()
    with pytest.raises(ValueError):
        AiohttpRequest(connection_pool_size=0)


async def test_wire_format_matches_httpx_request(capture: CaptureServer) -> None:
    request, get_updates_request = request_pair()
    async with Bot(
        TOKEN,
        base_url=f"{capture.url}/bot",
        request=request,
        get_updates_request=get_updates_request,
    ) as ptb_bot:
        await ptb_bot.send_message(42, "1 < 2 *", reply_markup=KEYBOARD, disable_notification=True)
        await ptb_bot.send_document(42, document=b"data", filename="notes.txt", caption="c")
    get_me, send_message, send_document = capture.seen
    assert get_me[:2] == ("getMe", "application/octet-stream")  # empty body, like httpx
    method, content_type, fields = send_message
    assert (method, content_type) == ("sendMessage", "application/x-www-form-urlencoded")
    assert fields["chat_id"] == "42" and fields["text"] == "1 < 2 *"
    assert fields["disable_notification"] == "true"
    assert json.loads(fields["reply_markup"]) == KEYBOARD.to_dict()
    method, content_type, fields = send_document
    assert (method, content_type) == ("sendDocument", "multipart/form-data")
    assert fields["chat_id"] == "42" and fields["caption"] == "c"
    assert fields["document"] == ("notes.txt", b"data")


async def test_application_polls_and_shuts_down_fast(emu: BotApiEmulator) -> None:
    async def echo(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
        assert update.effective_chat is not None and update.effective_message is not None
        await context.bot.send_message(
            update.effective_chat.id, f"echo: {update.effective_message.text}"
        )

    builder = ApplicationBuilder().token(TOKEN).base_url(emu.base_url).concurrent_updates(8)
    application = use_aiohttp(builder, 16).build()
    application.add_handler(MessageHandler(filters.TEXT, echo))
    people = [emu.participant(100 + i) for i in range(20)]
    async with application:
        await application.start()
        assert application.updater is not None
        await application.updater.start_polling(timeout=10)
        for round_ in range(3):
            for person in people:
                await person.send_text(f"r{round_}")
            for person in people:
                await person.wait_for_text(f"echo: r{round_}")
        started = time.monotonic()
        await application.updater.stop()
        await application.stop()
        assert time.monotonic() - started < 2
    assert emu.pending_updates == 0  # PTB's final getUpdates confirmed everything
    assert emu.requests["deleteWebhook"] == 1 and emu.internal_errors == []


# -- aiogram --------------------------------------------------------------------------------------


async def test_aiogram_get_me_send_and_get_updates(emu: BotApiEmulator) -> None:
    from aiogram import Bot as AiogramBot
    from aiogram.client.session.aiohttp import AiohttpSession
    from aiogram.client.telegram import TelegramAPIServer
    from aiogram.exceptions import TelegramBadRequest
    from aiogram.types import InlineKeyboardButton as Button
    from aiogram.types import InlineKeyboardMarkup as Markup

    session = AiohttpSession(api=TelegramAPIServer.from_base(emu.server_url))
    aiogram_bot = AiogramBot(TOKEN, session=session)
    try:
        me = await aiogram_bot.get_me()
        assert me.username == "ozlab_test_bot"
        alice = emu.participant(42)
        update_id = await alice.send_text("/start")
        (update,) = await aiogram_bot.get_updates(timeout=5)
        assert update.update_id == update_id and update.message is not None
        assert update.message.text == "/start"
        markup = Markup(inline_keyboard=[[Button(text="Go", callback_data="go")]])
        sent = await aiogram_bot.send_message(
            42, "<b>Ready?</b>", parse_mode="HTML", reply_markup=markup
        )
        assert sent.text == "Ready?" and sent.entities is not None
        await alice.tap(text="Go")
        (update,) = await aiogram_bot.get_updates(offset=update_id + 1, timeout=5)
        assert update.callback_query is not None and update.callback_query.data == "go"
        await aiogram_bot.answer_callback_query(update.callback_query.id, text="Off we go")
        assert alice.toasts == ["Off we go"]
        with pytest.raises(TelegramBadRequest, match="message is too long"):
            await aiogram_bot.send_message(42, "x" * 5000)
        assert emu.internal_errors == []
    finally:
        await session.close()


async def test_aiogram_dispatcher_polls(emu: BotApiEmulator) -> None:
    from aiogram import Bot as AiogramBot
    from aiogram import Dispatcher
    from aiogram.client.session.aiohttp import AiohttpSession
    from aiogram.client.telegram import TelegramAPIServer
    from aiogram.types import Message

    session = AiohttpSession(api=TelegramAPIServer.from_base(emu.server_url))
    aiogram_bot = AiogramBot(TOKEN, session=session)
    dispatcher = Dispatcher()

    @dispatcher.message()
    async def echo(message: Message) -> None:
        await message.answer(f"echo: {message.text}")

    polling = asyncio.create_task(
        dispatcher.start_polling(
            aiogram_bot, handle_signals=False, polling_timeout=10, close_bot_session=True
        )
    )
    try:
        alice = emu.participant(42)
        await alice.send_text("hi")
        await alice.wait_for_text("echo: hi")
    finally:
        await dispatcher.stop_polling()
        await asyncio.wait_for(polling, 5)
    assert emu.internal_errors == []
