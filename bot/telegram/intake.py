"""The door of the durable inbox, the same for long polling and a webhook: updates as
Telegram sent them (JSON) are read one by one, sealed and committed, and only the new ones
are handed on.

Whoever brings the updates may tell Telegram it has them only after :func:`take_in`
returns: the poller's next ``getUpdates`` offset, the webhook's 200. Each update is read on
its own (``inbound.read_update``), so one the bot cannot read never fails the rest: it is
counted in an event with no content (its id and the error's name) and skipped.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from typing import Any

from telegram import Update

from bot.core.privacy import Privacy
from bot.core.vocabulary import EventKind
from bot.engine import effects as fx
from bot.engine.delivery import Delivery
from bot.store.interface import HotPath
from bot.telegram.inbound import Inbound, UnreadableUpdate, read_update

log = logging.getLogger(__name__)

LARGEST_ID = 2**63  # SQLite's integers are 64-bit: Telegram's update ids stay far below
ALLOWED_UPDATES = [Update.MESSAGE, Update.EDITED_MESSAGE, Update.CALLBACK_QUERY]
"""The kinds of update a study reads; Telegram keeps back the rest, by polling or webhook."""


def update_id(raw: object) -> int | None:
    """The update's id, when it has one that is a number."""
    uid = raw.get("update_id") if isinstance(raw, dict) else None
    return uid if isinstance(uid, int) and not isinstance(uid, bool) else None


def unreadable(uid: int | None, error: Exception) -> fx.Record:
    """The event that counts an update the bot could not read: no content, only its id."""
    log.warning("update %s could not be read (%s): skipped", uid, type(error).__name__)
    data = {"update_id": uid, "error": type(error).__name__}
    return fx.RecordEvent(EventKind.UPDATE_UNREADABLE, None, data)


async def take_in(
    updates: Sequence[Any],
    store: HotPath,
    privacy: Privacy,
    deliver: Callable[[Delivery], None],
) -> None:
    """Read, seal and commit ``updates``; deliver each one the inbox had not seen before.

    Updates without a numeric id are left out (nothing could be confirmed of them); the
    same id twice in one batch is handled once. Returns once the inbox has them."""
    read: dict[int, Inbound | None] = {}
    skipped: list[fx.Record] = []
    for raw in updates:
        uid = update_id(raw)
        if uid is None or uid in read:
            continue  # the same update twice in one batch is handled once
        try:
            if not 0 <= uid < LARGEST_ID:
                raise UnreadableUpdate("the update id is beyond what a database keeps")
            read[uid] = read_update(raw)
        except Exception as error:  # whatever cannot be read: never fatal
            read[uid] = None
            skipped.append(unreadable(uid, error))
    kept = [(uid, item) for uid, item in read.items() if item is not None]
    new = await store.remember_updates([(uid, privacy.seal(item.to_json())) for uid, item in kept])
    if skipped:
        await store.settle(skipped)
    for uid, item in kept:
        if uid in new:
            deliver(item.to_delivery())
