"""A local Telegram Bot API server for tests and benchmarks.

Real bots (python-telegram-bot, aiogram) talk HTTP to it exactly as to api.telegram.org, so
tests exercise the real client stack: parameter encoding, error mapping, long polling,
offsets and redelivery (queue semantics: :mod:`bot.pilot.emulator.updates`). Simulated participants
live in the same event loop (:mod:`bot.pilot.emulator.participant`) and produce updates directly.
"""
# ruff: noqa: ASYNC109 - wait_until takes ``timeout=`` like the participants' helpers

from __future__ import annotations

import logging
import time
from collections import Counter, deque
from collections.abc import Callable
from dataclasses import dataclass
from types import TracebackType
from typing import Any, Self

from aiohttp import web

from bot.pilot.emulator.chat import ChatLog
from bot.pilot.emulator.files import FileStore
from bot.pilot.emulator.flood import FLOODED_METHODS, FloodControl, FloodRules
from bot.pilot.emulator.methods import METHODS
from bot.pilot.emulator.participant import Participant
from bot.pilot.emulator.updates import UpdateQueue
from bot.pilot.emulator.waiting import Waiters
from bot.pilot.emulator.webhook import KEEP_FOR, WebhookPusher
from bot.pilot.emulator.wire import ApiError, decode_params, error_response, ok_response

__all__ = ["ApiCall", "BotApiEmulator"]

_LOG = logging.getLogger(__name__)
_WEBHOOK_ACTIVE = (
    "Conflict: can't use getUpdates method while webhook is active;"
    " use deleteWebhook to delete the webhook first"
)
_CANONICAL = {name.lower(): name for name in [*METHODS, "getUpdates"]}


@dataclass(frozen=True, slots=True)
class ApiCall:
    """One request the bot made, for assertions in tests."""

    method: str
    params: dict[str, Any]
    arrived_at: float
    status: int


class BotApiEmulator:
    """An aiohttp server speaking the Bot API on loopback, plus in-process participants."""

    def __init__(
        self,
        token: str,
        *,
        host: str = "127.0.0.1",
        port: int = 0,
        bot_username: str = "ozlab_test_bot",
        bot_first_name: str = "Ozlab Test",
        call_log_size: int = 10_000,
        flood: FloodRules | None = None,
        first_update_id: int = 1,
        webhook_keep_for: float = KEEP_FOR,
    ) -> None:
        """``flood`` answers messages beyond Telegram's flood limits with 429, as Telegram
        does; without it every message is accepted at once. ``first_update_id``: where the
        update ids begin; on a study database that a bot has run on, after the highest it
        has seen (``StudyStore.highest_update_id``), or the bot takes the new updates for
        ones it has already handled. ``webhook_keep_for``: seconds a webhook's update is
        tried for before it is given up (Telegram's 23 hours by default)."""
        self.token = token
        self.host = host
        self._wanted_port = port
        prefix = token.split(":", 1)[0]
        self.bot_user: dict[str, Any] = {
            "id": int(prefix) if prefix.isdigit() else 1_000_000_001,
            "is_bot": True,
            "first_name": bot_first_name,
            "username": bot_username,
        }
        self.requests: Counter[str] = Counter()
        """Requests received, by canonical method name (failed ones included)."""
        self.calls: deque[ApiCall] = deque(maxlen=call_log_size)
        """The most recent requests with their decoded parameters."""
        self.internal_errors: list[Exception] = []
        """Exceptions raised inside the emulator (answered with 500); should stay empty."""
        self.commands: dict[tuple[str, str], list[dict[str, str]]] = {}
        """(JSON of the scope, language_code) -> commands set with ``setMyCommands``."""
        self.files = FileStore()
        """Every file participants sent and the bot uploaded (``getFile``, the download path)."""
        self.downloads: Counter[str] = Counter()
        """Files the bot downloaded from ``/file/bot<token>/<file_path>``, by ``file_path``."""
        self.flood = FloodControl(flood) if flood is not None else None
        """The flood limits enforced (``flood.refused`` counts the 429s), or None."""
        self._state_waiters = Waiters()
        self.queue = UpdateQueue(on_park=self._state_waiters.wake, first_id=first_update_id)
        self._chats: dict[int, ChatLog] = {}
        self._participants: dict[int, Participant] = {}
        self._queries: dict[str, Participant] = {}
        self._next_query = 1
        self._runner: web.AppRunner | None = None
        self._port: int | None = None
        self.webhook: WebhookPusher | None = None
        """Posting updates to the bot's webhook since ``setWebhook``; None while polled."""
        self._retired: list[WebhookPusher] = []
        self.webhooks_set = 0
        self._webhook_keep_for = webhook_keep_for
        """How many times the bot set a webhook (a test waits for a restarted bot's)."""

    # -- lifecycle ---------------------------------------------------------------------------

    async def start(self) -> None:
        """Bind and serve; with ``port=0`` the OS picks a free port (see :attr:`port`)."""
        if self._runner is not None:
            return
        app = web.Application(client_max_size=50 * 1024 * 1024)
        app.router.add_route("*", "/bot{token}/{method}", self._handle)
        app.router.add_get("/file/bot{token}/{path:.+}", self._download)
        app.router.add_route("*", "/{tail:.*}", self._not_found)
        runner = web.AppRunner(app, access_log=None, handle_signals=False, shutdown_timeout=2.0)
        await runner.setup()
        site = web.TCPSite(runner, self.host, self._wanted_port)
        await site.start()
        self._runner = runner
        self._port = runner.addresses[0][1]
        self.queue.closing = False

    async def stop(self) -> None:
        """Answer parked long polls with ``[]`` at once, then close the server."""
        self.queue.close()
        self._state_waiters.wake()
        self.unset_webhook()
        for pusher in self._retired:
            await pusher.stop()
        self._retired.clear()
        runner, self._runner = self._runner, None
        if runner is not None:
            await runner.cleanup()

    async def __aenter__(self) -> Self:
        await self.start()
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.stop()

    @property
    def port(self) -> int:
        """The bound TCP port (after :meth:`start`)."""
        if self._port is None:
            raise RuntimeError("BotApiEmulator is not started")
        return self._port

    @property
    def server_url(self) -> str:
        """``http://host:port``: what aiogram's ``TelegramAPIServer.from_base`` takes."""
        return f"http://{self.host}:{self.port}"

    @property
    def base_url(self) -> str:
        """``http://host:port/bot``: what python-telegram-bot's ``base_url`` takes."""
        return f"{self.server_url}/bot"

    @property
    def base_file_url(self) -> str:
        """``http://host:port/file/bot``: what python-telegram-bot's ``base_file_url`` takes."""
        return f"{self.server_url}/file/bot"

    # -- participants and chats --------------------------------------------------------------

    def participant(
        self,
        user_id: int,
        *,
        first_name: str = "Test",
        username: str | None = None,
        language_code: str | None = "en",
        last_name: str | None = None,
        is_bot: bool = False,
    ) -> Participant:
        """The simulated user ``user_id`` (created on first call, the same object after)."""
        existing = self._participants.get(user_id)
        if existing is not None:
            return existing
        participant = Participant(
            self,
            user_id,
            first_name=first_name,
            username=username,
            language_code=language_code,
            last_name=last_name,
        )
        participant.user["is_bot"] = is_bot
        self._participants[user_id] = participant
        self._chats[user_id] = participant
        return participant

    @property
    def participants(self) -> list[Participant]:
        """Every participant created so far, in creation order."""
        return list(self._participants.values())

    def chat(self, chat_id: int) -> ChatLog:
        """The log of a chat that exists (private or group); ``KeyError`` otherwise."""
        return self._chats[chat_id]

    def find_chat(self, chat_id: Any) -> ChatLog | None:
        """The chat a bot may write to: someone must have written there first."""
        chat = self._chats.get(chat_id) if isinstance(chat_id, int) else None
        return chat if chat is not None and chat.known else None

    async def group_message(
        self,
        chat_id: int,
        user_id: int,
        text: str,
        *,
        title: str = "Test group",
        first_name: str = "Test",
        username: str | None = None,
        is_bot: bool = False,
    ) -> int:
        """A text from ``user_id`` in a group (``supergroup`` below -10**12); its update id."""
        chat = self._chats.get(chat_id)
        if chat is None:
            kind = "supergroup" if chat_id <= -1_000_000_000_000 else "group"
            chat = ChatLog({"id": chat_id, "title": title, "type": kind})
            self._chats[chat_id] = chat
        known_user = self._participants.get(user_id)
        sender = (
            known_user.user
            if known_user is not None
            else {"id": user_id, "is_bot": is_bot, "first_name": first_name}
            | ({"username": username} if username else {})
        )
        message = {
            "message_id": chat.next_message_id(),
            "from": sender,
            "chat": chat.chat,
            "date": int(time.time()),
            **self.text_content(text),
        }
        chat.user_messages[message["message_id"]] = message
        chat.known = True
        return self.inject_update("message", message)

    async def bot_message(self, user_id: int, text: str, *, username: str | None = None) -> int:
        """A private-chat text whose sender has ``is_bot: true`` (another bot)."""
        other = self.participant(
            user_id,
            first_name="Other bot",
            username=username or f"other{user_id}_bot",
            language_code=None,
            is_bot=True,
        )
        return await other.send_text(text)

    def text_content(self, text: str) -> dict[str, Any]:
        """``text`` plus the ``bot_command`` entity Telegram adds for a leading ``/command``."""
        content: dict[str, Any] = {"text": text}
        if text.startswith("/"):
            command = text.split(maxsplit=1)[0] if text.strip() else ""
            if len(command) > 1:
                length = len(command.encode("utf-16-le")) // 2
                content["entities"] = [{"offset": 0, "length": length, "type": "bot_command"}]
        return content

    def new_callback_query(self, participant: Participant) -> str:
        query_id = str(7_000_000_000_000_000 + self._next_query)
        self._next_query += 1
        self._queries[query_id] = participant
        return query_id

    def take_query(self, query_id: str) -> Participant | None:
        """The participant behind an unanswered query; the query can be answered once."""
        return self._queries.pop(query_id, None)

    def membership_change(self, participant: Participant, old: str, new: str) -> dict[str, Any]:
        """A ``ChatMemberUpdated`` for the bot's status in a private chat."""
        date = int(time.time())

        def member(status: str) -> dict[str, Any]:
            doc: dict[str, Any] = {"user": self.bot_user, "status": status}
            if status == "kicked":
                doc["until_date"] = 0
            return doc

        return {
            "chat": participant.chat,
            "from": participant.user,
            "date": date,
            "old_chat_member": member(old),
            "new_chat_member": member(new),
        }

    # -- updates ---------------------------------------------------------------------------

    def inject_update(self, kind: str, payload: dict[str, Any]) -> int:
        """Queue an update ``{"update_id": ..., kind: payload}``; return its id."""
        update_id = self.queue.add(kind, payload)
        self._state_waiters.wake()
        return update_id

    def update(self, update_id: int) -> dict[str, Any]:
        """The update as it was (or will be) delivered."""
        return self.queue.get(update_id)

    def redeliver(self, update_id: int) -> None:
        """Hand an already confirmed update out once more, with the same ``update_id``."""
        self.queue.redeliver(update_id)

    def drop_pending(self) -> None:
        """Forget every pending update (``deleteWebhook`` with ``drop_pending_updates``)."""
        self.queue.drop_pending()

    @property
    def confirmed_offset(self) -> int:
        """The highest ``offset`` the bot has sent: every update below it is confirmed."""
        return self.queue.confirmed_offset

    @property
    def pending_updates(self) -> int:
        """Updates not yet confirmed (handed out or not)."""
        return self.queue.pending

    @property
    def parked_polls(self) -> int:
        """``getUpdates`` requests waiting for updates right now (to sync tests on)."""
        return self.queue.parked

    @property
    def delivery_times(self) -> dict[int, float]:
        """update_id -> ``time.monotonic()`` when ``getUpdates`` first handed it out."""
        return self.queue.delivery_times

    @property
    def created_times(self) -> dict[int, float]:
        """update_id -> ``time.monotonic()`` when the update was created."""
        return self.queue.created_times

    # -- webhook ---------------------------------------------------------------------------

    def set_webhook(self, url: str, secret_token: str | None) -> None:
        """Post pending updates to ``url`` from now on (``setWebhook``)."""
        self.webhooks_set += 1
        pusher = self.webhook
        if pusher is not None and pusher.url == url:
            pusher.secret_token = secret_token
            pusher.poke()  # a restarted bot: try again at once
            return
        self.unset_webhook()
        self.webhook = WebhookPusher(
            self.queue, url, secret_token, self._state_waiters.wake, self._webhook_keep_for
        )
        self.webhook.start()

    def unset_webhook(self) -> None:
        """Stop posting (``deleteWebhook``); ``getUpdates`` works again."""
        pusher, self.webhook = self.webhook, None
        if pusher is not None:
            pusher.cancel()
            self._retired.append(pusher)

    # -- HTTP --------------------------------------------------------------------------------

    async def _not_found(self, request: web.Request) -> web.Response:
        return error_response(ApiError(404, "Not Found"))

    async def _download(self, request: web.Request) -> web.Response:
        """A file's bytes at the path ``getFile`` gave, as Telegram serves them."""
        if request.match_info["token"] != self.token:
            return error_response(ApiError(401, "Unauthorized"))
        path = request.match_info["path"]
        stored = self.files.by_path(path)
        if stored is None or "file_path" not in stored.to_api():
            return error_response(ApiError(404, "Not Found"))
        self.downloads[path] += 1
        self._state_waiters.wake()
        return web.Response(body=stored.data, content_type="application/octet-stream")

    async def _handle(self, request: web.Request) -> web.Response:
        arrived = time.monotonic()
        if request.match_info["token"] != self.token:
            return error_response(ApiError(401, "Unauthorized"))
        method = _CANONICAL.get(request.match_info["method"].lower())
        if method is None:
            return error_response(ApiError(404, "Not Found"))
        self.requests[method] += 1
        params: dict[str, Any] = {}
        try:
            params = await decode_params(request)
            if method == "getUpdates":
                if self.webhook is not None:
                    raise ApiError(409, _WEBHOOK_ACTIVE)
                result = await self.queue.get_updates(params)
            else:
                if self.flood is not None and method in FLOODED_METHODS:
                    self.flood.admit(params.get("chat_id"), arrived)
                result = METHODS[method](self, params, arrived)
            response = ok_response(result)
        except ApiError as error:
            response = error_response(error)
        except Exception as exc:  # an emulator bug: answer like Telegram would, keep it visible
            _LOG.exception("emulator failed on %s", method)
            self.internal_errors.append(exc)
            response = error_response(ApiError(500, "Internal Server Error"))
        self.calls.append(ApiCall(method, params, arrived, response.status))
        self._state_waiters.wake()
        return response

    async def wait_until(
        self, predicate: Callable[[BotApiEmulator], bool], timeout: float = 10.0
    ) -> None:
        """Wait until ``predicate(emulator)`` holds; re-checked after every request/update."""

        def why() -> str:
            return (
                f"condition not met within {timeout:g} s; requests so far: "
                f"{dict(self.requests)}, pending updates: {self.pending_updates}"
            )

        await self._state_waiters.until(lambda: predicate(self), timeout, why)
