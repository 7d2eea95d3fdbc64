"""Long polling that loses nothing: an update is stored before Telegram hears we have it.

Telegram forgets updates below the offset of the next ``getUpdates``. python-telegram-bot's
own Updater asks for the next batch before the last one is handled, so a crash in between
loses messages. Here the batch is committed to the inbox (encrypted, stripped of names)
first; only then is the next ``getUpdates`` sent, and the inbox is replayed at start-up.

Each update is read on its own (``bot.telegram.intake``, the webhook's door too):
``Bot.get_updates`` parses a batch whole, so one update the library cannot read (from an
older or a self-hosted Bot API server) would fail the batch on every restart and log it raw,
names and all. An update that is not readable at all is confirmed, counted in an event with
no content, and skipped; the rest of its batch is handled.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

from telegram import Bot
from telegram.error import TelegramError

from bot.core.privacy import Privacy
from bot.engine.delivery import Delivery
from bot.store.interface import HotPath
from bot.telegram.intake import ALLOWED_UPDATES, take_in, update_id
from bot.telegram.outage import Outage, reach

log = logging.getLogger(__name__)


class DurablePoller:
    def __init__(
        self,
        bot: Bot,
        store: HotPath,
        privacy: Privacy,
        deliver: Callable[[Delivery], None],
        *,
        poll_timeout: int = 20,
        outage: Outage | None = None,
    ) -> None:
        self._bot = bot
        self._store = store
        self._privacy = privacy
        self._deliver = deliver
        self._poll_timeout = poll_timeout
        self._offset: int | None = None
        self._outage = outage or Outage()

    async def run(self, ready: Callable[[], None] = lambda: None) -> None:
        """Poll until cancelled (``ready`` is called as polling begins); a lost network is
        waited out (``bot.telegram.outage``), a token Telegram refuses ends it."""
        # A webhook left set by an earlier ``ozlab run --webhook`` would make getUpdates fail
        # (409); deleting it keeps what Telegram holds (no drop_pending_updates).
        await reach(self._bot.delete_webhook, self._outage)
        ready()
        while True:
            # Any error of Telegram's is tried again here: the bot is known to work by now.
            updates = await reach(self._get_updates, self._outage, only_network=False)
            if updates:
                await self._accept(updates)

    async def _get_updates(self) -> list[Any]:
        """The batch as Telegram sent it (JSON), to be read update by update."""
        data = {
            "offset": self._offset,
            "timeout": self._poll_timeout,
            "allowed_updates": ALLOWED_UPDATES,
        }
        # Bot.get_updates would parse the whole batch at once (see the module's docstring).
        raw = await self._bot._post("getUpdates", data, read_timeout=self._poll_timeout + 10)
        return raw if isinstance(raw, list) else []

    async def _accept(self, updates: list[Any]) -> None:
        await take_in(updates, self._store, self._privacy, self._deliver)
        known = [uid for uid in map(update_id, updates) if uid is not None]
        # Only now may Telegram forget them: the next getUpdates carries this offset.
        if known:
            self._offset = max(known) + 1

    async def confirm(self) -> None:
        """On a clean shutdown, tell Telegram what is already stored, so it is not resent."""
        if self._offset is not None:
            try:
                await self._bot.get_updates(offset=self._offset, timeout=0, limit=1)
            except TelegramError as error:
                log.info("could not confirm the last updates on shutdown: %s", error)
