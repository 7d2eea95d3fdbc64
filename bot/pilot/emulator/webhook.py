"""The emulator's side of ``setWebhook``: pending updates POSTed to the bot, as Telegram does.

One update at a time, in id order, with the ``X-Telegram-Bot-Api-Secret-Token`` header when
a secret was set. A 2xx answer confirms the update; any other answer is tried again after a
pause, and after :data:`ATTEMPTS` answers that were not 2xx the update is given up, as
Telegram gives up "after a reasonable amount of attempts". A bot that cannot be reached at
all (killed, restarting) is tried again without end, with pauses up to :data:`LONGEST_PAUSE`:
Telegram keeps such updates for a day. A new ``setWebhook`` (a restarted bot) ends the pause
at once.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable
from dataclasses import dataclass, field

import aiohttp

from bot.pilot.emulator.updates import UpdateQueue
from bot.pilot.emulator.waiting import Waiters

__all__ = ["ATTEMPTS", "LONGEST_PAUSE", "WebhookPusher"]

_LOG = logging.getLogger(__name__)

ATTEMPTS = 5
"""Answers other than 2xx after which one update is given up."""
LONGEST_PAUSE = 1.0
"""Seconds: the pauses between tries double from 50 ms up to this (Telegram's are longer)."""
_TIMEOUT = 30.0
SECRET_HEADER = "X-Telegram-Bot-Api-Secret-Token"


@dataclass
class WebhookPusher:
    """Posts ``queue``'s pending updates to ``url`` until :meth:`stop`."""

    queue: UpdateQueue
    url: str
    secret_token: str | None
    changed: Callable[[], None]
    """Called after every POST (the emulator's ``wait_until`` re-checks)."""
    answers: list[tuple[int, int]] = field(default_factory=list)
    """(update id, HTTP status or 0 for no answer) of every POST, in order."""
    given_up: list[int] = field(default_factory=list)
    """Updates dropped after :data:`ATTEMPTS` answers that were not 2xx."""
    last_error: str | None = None
    _wake: Waiters = field(default_factory=Waiters)
    _task: asyncio.Task[None] | None = None

    def start(self) -> None:
        self._task = asyncio.create_task(self._run(), name="emulator-webhook")

    def poke(self) -> None:
        """Try now: a pause between tries ends (the bot set its webhook again)."""
        self._wake.wake()

    def cancel(self) -> None:
        """Stop posting now (a POST under way is cut short); :meth:`stop` waits for it."""
        if self._task is not None:
            self._task.cancel()

    async def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
            self._task = None

    async def _run(self) -> None:
        timeout = aiohttp.ClientTimeout(total=_TIMEOUT)
        async with aiohttp.ClientSession(timeout=timeout) as session:
            failures = 0
            refused: dict[int, int] = {}
            while True:
                update = self.queue.first()
                if update is None:
                    await self.queue.wait_for_update()
                    continue
                uid = update["update_id"]
                status = await self._post(session, update)
                self.answers.append((uid, status))
                if 200 <= status < 300:
                    self.queue.forget(uid)
                    refused.pop(uid, None)
                    failures = 0
                    self.last_error = None
                else:
                    failures += 1
                    self.last_error = (
                        f"Wrong response from the webhook: {status}" if status else "No answer"
                    )
                    if status:
                        refused[uid] = refused.get(uid, 0) + 1
                        if refused[uid] >= ATTEMPTS:
                            self.queue.forget(uid)
                            self.given_up.append(uid)
                            del refused[uid]
                self.changed()
                if failures:
                    await self._wake.park(min(LONGEST_PAUSE, 0.05 * 2 ** min(failures - 1, 5)))

    async def _post(self, session: aiohttp.ClientSession, update: dict[str, object]) -> int:
        """The bot's HTTP status for ``update``, or 0 when nothing answered."""
        headers = {SECRET_HEADER: self.secret_token} if self.secret_token else {}
        try:
            async with session.post(self.url, json=update, headers=headers) as response:
                await response.read()
                return response.status
        except (aiohttp.ClientError, TimeoutError) as error:
            _LOG.debug("webhook %s not reached: %s", self.url, error)
            return 0
