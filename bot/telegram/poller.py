"""Long polling that loses nothing: an update is stored before Telegram hears we have it.

Telegram forgets updates below the offset of the next ``getUpdates``. python-telegram-bot's
own Updater asks for the next batch before the last one is handled, so a crash in between
loses messages. Here the batch is committed to the inbox (encrypted, stripped of names)
first; only then is the next ``getUpdates`` sent, and the inbox is replayed at start-up.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable

from telegram import Bot, Update
from telegram.error import InvalidToken, NetworkError, TelegramError, TimedOut

from bot.delivery import Delivery
from bot.privacy import Privacy
from bot.store.interface import StudyStore
from bot.telegram.inbound import from_update

log = logging.getLogger(__name__)

ALLOWED_UPDATES = [Update.MESSAGE, Update.EDITED_MESSAGE, Update.CALLBACK_QUERY]


class DurablePoller:
    def __init__(
        self,
        bot: Bot,
        store: StudyStore,
        privacy: Privacy,
        deliver: Callable[[Delivery], None],
        *,
        poll_timeout: int = 20,
    ) -> None:
        self._bot = bot
        self._store = store
        self._privacy = privacy
        self._deliver = deliver
        self._poll_timeout = poll_timeout
        self._offset: int | None = None

    async def run(self) -> None:
        await self._bot.delete_webhook()
        failures = 0
        while True:
            try:
                updates = await self._bot.get_updates(
                    offset=self._offset,
                    timeout=self._poll_timeout,
                    allowed_updates=ALLOWED_UPDATES,
                    read_timeout=self._poll_timeout + 10,
                )
            except InvalidToken:
                raise
            except (TimedOut, NetworkError, TelegramError) as error:
                failures += 1
                delay = min(30.0, 0.5 * 2 ** min(failures, 6))
                log.warning("getUpdates failed (%s); retrying in %.1f s", error, delay)
                await asyncio.sleep(delay)
                continue
            failures = 0
            if updates:
                await self._accept(updates)

    async def _accept(self, updates: tuple[Update, ...]) -> None:
        inbound = [(u.update_id, from_update(u)) for u in updates]
        kept = [(uid, item) for uid, item in inbound if item is not None]
        new = await self._store.remember_updates(
            [(uid, self._privacy.seal(item.to_json())) for uid, item in kept]
        )
        for uid, item in kept:
            if uid in new:
                self._deliver(item.to_delivery())
        # Only now may Telegram forget them: the next getUpdates carries this offset.
        self._offset = max(uid for uid, _ in inbound) + 1

    async def confirm(self) -> None:
        """On a clean shutdown, tell Telegram what is already stored, so it is not resent."""
        if self._offset is not None:
            try:
                await self._bot.get_updates(offset=self._offset, timeout=0, limit=1)
            except TelegramError as error:
                log.info("could not confirm the last updates on shutdown: %s", error)
