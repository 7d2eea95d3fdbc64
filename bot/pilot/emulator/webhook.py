"""The emulator's side of ``setWebhook``: pending updates POSTed to the bot, as Telegram's Bot
API server does (``tdlib/telegram-bot-api``, ``WebhookActor``).

- The updates of one chat go one at a time, in id order: the next only after the bot
  answered 2xx to the one before. Different chats' updates go at once, up to
  ``max_connections`` (Telegram's default 40).
- Each POST carries the ``X-Telegram-Bot-Api-Secret-Token`` header when a secret was set.
- Any answer that is not 2xx, and no answer at all (a bot killed, restarting), is tried
  again after a pause that doubles from 50 ms up to :data:`LONGEST_PAUSE` (Telegram's from
  a second up to a minute or two); the chat's later updates wait behind it. An update that
  has waited longer than ``keep_for`` is given up, as Telegram drops one after 23 hours:
  that is the bound on the retries.
- A new ``setWebhook`` (a restarted bot) ends every pause at once.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import aiohttp

from bot.pilot.emulator.updates import UpdateQueue

__all__ = ["KEEP_FOR", "LONGEST_PAUSE", "MAX_CONNECTIONS", "SECRET_HEADER", "WebhookPusher"]

_LOG = logging.getLogger(__name__)

SECRET_HEADER = "X-Telegram-Bot-Api-Secret-Token"
KEEP_FOR = 23 * 3600.0
"""Seconds an update is tried for before it is given up (Telegram's own)."""
LONGEST_PAUSE = 1.0
"""Seconds: the longest pause between two tries of one update."""
MAX_CONNECTIONS = 40
"""POSTs under way at once (``setWebhook``'s default ``max_connections``)."""
_TIMEOUT = 30.0


def _chat(update: dict[str, Any]) -> object:
    """The chat whose order the update keeps (a tap's: its message's); updates without one
    go on their own."""
    for kind, value in update.items():
        if kind == "update_id" or not isinstance(value, dict):
            continue
        for holder in (value, value.get("message")):
            chat = holder.get("chat") if isinstance(holder, dict) else None
            if isinstance(chat, dict) and "id" in chat:
                return chat["id"]
        sender = value.get("from")
        if isinstance(sender, dict) and "id" in sender:
            return sender["id"]
    return ("update", update.get("update_id"))


@dataclass
class _Tries:
    """What the emulator keeps about one update while it is not confirmed."""

    since: float
    failures: int = 0
    next_try: float = 0.0


@dataclass
class WebhookPusher:
    """Posts ``queue``'s pending updates to ``url`` until :meth:`stop`."""

    queue: UpdateQueue
    url: str
    secret_token: str | None
    changed: Callable[[], None]
    """Called after every POST (the emulator's ``wait_until`` re-checks)."""
    keep_for: float = KEEP_FOR
    max_connections: int = MAX_CONNECTIONS
    answers: list[tuple[int, int]] = field(default_factory=list)
    """(update id, HTTP status or 0 for no answer) of every POST, in the order answered."""
    given_up: list[int] = field(default_factory=list)
    """Updates dropped after waiting longer than ``keep_for``."""
    last_error: str | None = None
    _tries: dict[int, _Tries] = field(default_factory=dict)
    _posting: dict[int, asyncio.Task[None]] = field(default_factory=dict)
    _task: asyncio.Task[None] | None = None

    def start(self) -> None:
        self._task = asyncio.create_task(self._run(), name="emulator-webhook")

    def poke(self) -> None:
        """Try now: every pause between tries ends (the bot set its webhook again)."""
        for tries in self._tries.values():
            tries.next_try = 0.0
        self.queue.changed()

    def cancel(self) -> None:
        """Stop posting now (the POSTs under way are cut short); :meth:`stop` waits."""
        if self._task is not None:
            self._task.cancel()

    async def stop(self) -> None:
        self.cancel()
        if self._task is not None:
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
            self._task = None

    async def _run(self) -> None:
        timeout = aiohttp.ClientTimeout(total=_TIMEOUT)
        async with aiohttp.ClientSession(timeout=timeout) as session:
            try:
                while True:
                    pause = self._post_what_is_due(session)
                    await self.queue.wait_for_change(pause)
            finally:
                for task in self._posting.values():
                    task.cancel()
                await asyncio.gather(*self._posting.values(), return_exceptions=True)

    def _post_what_is_due(self, session: aiohttp.ClientSession) -> float:
        """Start the POSTs that may go now; the seconds until the next one may."""
        now = time.monotonic()
        chats: set[object] = set()
        wait = 60.0
        for uid in self.queue.pending_ids():
            chat = _chat(self.queue.get(uid))
            if chat in chats:
                continue  # an earlier update of this chat goes first
            chats.add(chat)
            if uid in self._posting or len(self._posting) >= self.max_connections:
                continue
            tries = self._tries.setdefault(uid, _Tries(since=now))
            if tries.next_try > now:
                wait = min(wait, tries.next_try - now)
                continue
            update = self.queue.hand_out(uid)
            if update is not None:
                self._posting[uid] = asyncio.create_task(self._post(session, uid, update))
        return wait

    async def _post(self, session: aiohttp.ClientSession, uid: int, update: Any) -> None:
        status = 0
        headers = {SECRET_HEADER: self.secret_token} if self.secret_token else {}
        try:
            async with session.post(self.url, json=update, headers=headers) as response:
                await response.read()
                status = response.status
        except (aiohttp.ClientError, TimeoutError) as error:
            _LOG.debug("webhook %s not reached: %s", self.url, error)
        finally:
            self._posting.pop(uid, None)
        self.answers.append((uid, status))
        tries = self._tries[uid]
        if 200 <= status < 300:
            self.queue.forget(uid)
            del self._tries[uid]
            self.last_error = None
        else:
            said = f"Wrong response from the webhook: {status}"
            self.last_error = said if status else "Connection refused"
            now = time.monotonic()
            tries.failures += 1
            tries.next_try = now + min(LONGEST_PAUSE, 0.05 * 2 ** min(tries.failures - 1, 10))
            if now - tries.since > self.keep_for:
                self.queue.forget(uid)
                del self._tries[uid]
                self.given_up.append(uid)
        self.queue.changed()
        self.changed()
