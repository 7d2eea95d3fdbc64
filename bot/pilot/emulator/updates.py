"""The emulator's update queue with Telegram's ``getUpdates`` semantics.

Every update gets a globally increasing id. A ``getUpdates`` with ``offset=N`` confirms
(forgets) every update below ``N``; unconfirmed updates are handed out again to the next
``getUpdates`` that does not confirm them, which is how a bot that crashed before confirming
gets them again. A newer ``getUpdates`` ends a parked one with 409 Conflict, as Telegram does
when two bot instances poll. Timing is recorded so benchmarks can measure latency.
"""

from __future__ import annotations

import asyncio
import bisect
import time
from collections.abc import Callable
from typing import Any

from bot.pilot.emulator.waiting import Waiters
from bot.pilot.emulator.wire import ApiError

__all__ = ["DEFAULT_ALLOWED_UPDATES", "UpdateQueue"]

DEFAULT_ALLOWED_UPDATES = frozenset(
    {
        "message",
        "edited_message",
        "channel_post",
        "edited_channel_post",
        "business_connection",
        "business_message",
        "edited_business_message",
        "deleted_business_messages",
        "inline_query",
        "chosen_inline_result",
        "callback_query",
        "shipping_query",
        "pre_checkout_query",
        "purchased_paid_media",
        "poll",
        "poll_answer",
        "my_chat_member",
        "chat_join_request",
        "chat_boost",
        "removed_chat_boost",
    }
)
"""Telegram's default when ``allowed_updates`` is empty or was never set."""

_CONFLICT = (
    "Conflict: terminated by other getUpdates request; "
    "make sure that only one bot instance is running"
)


class UpdateQueue:
    """Pending updates, offsets, long polls and delivery timing."""

    def __init__(self, on_park: Callable[[], None] | None = None, *, first_id: int = 1) -> None:
        """``first_id``: the id of the first update, as Telegram's go on from the bot's
        last one (never from 1 again for a bot that already had updates)."""
        if first_id < 1:
            raise ValueError(f"update ids start at 1 or more, not {first_id}")
        self.delivery_times: dict[int, float] = {}
        """update_id -> ``time.monotonic()`` when ``getUpdates`` first handed it out."""
        self.created_times: dict[int, float] = {}
        """update_id -> ``time.monotonic()`` when the update was created."""
        self.confirmed_offset = 0
        """The highest ``offset`` the bot has sent: every update below it is confirmed."""
        self.allowed = DEFAULT_ALLOWED_UPDATES
        self.closing = False
        self.parked = 0
        """Long polls waiting for updates right now."""
        self._on_park = on_park
        self._updates: dict[int, dict[str, Any]] = {}
        self._pending: list[int] = []  # sorted
        self._redelivered: set[int] = set()  # re-queued by redeliver(), not yet handed out
        self._next_id = first_id
        self._polls = Waiters()
        self._poll_seq = 0

    @property
    def pending(self) -> int:
        """Updates not yet confirmed (handed out or not)."""
        return len(self._pending)

    def add(self, kind: str, payload: dict[str, Any]) -> int:
        """Queue ``{"update_id": ..., kind: payload}``; types the bot did not allow are dropped."""
        update_id = self._next_id
        self._next_id += 1
        self._updates[update_id] = {"update_id": update_id, kind: payload}
        self.created_times[update_id] = time.monotonic()
        if kind in self.allowed:
            self._pending.append(update_id)
            self._polls.wake()
        return update_id

    def get(self, update_id: int) -> dict[str, Any]:
        return self._updates[update_id]

    def redeliver(self, update_id: int) -> None:
        """Queue an update again, same id, to be handed out once more even below the offset."""
        if update_id not in self._updates:
            raise KeyError(update_id)
        index = bisect.bisect_left(self._pending, update_id)
        if index < len(self._pending) and self._pending[index] == update_id:
            return
        self._pending.insert(index, update_id)
        self._redelivered.add(update_id)
        self._polls.wake()

    def drop_pending(self) -> None:
        """Forget every pending update (``deleteWebhook`` with ``drop_pending_updates``)."""
        self._pending.clear()
        self._redelivered.clear()
        self.confirmed_offset = max(self.confirmed_offset, self._next_id)

    def pending_ids(self) -> list[int]:
        """The pending updates' ids, oldest first (for a webhook to post)."""
        return list(self._pending)

    def hand_out(self, update_id: int) -> dict[str, Any] | None:
        """The update, as a webhook posts it now; None (and forgotten) when the bot did not
        allow its kind."""
        update = self._updates[update_id]
        if self.allowed.isdisjoint(update):
            self.forget(update_id)
            return None
        self.delivery_times.setdefault(update_id, time.monotonic())
        self._redelivered.discard(update_id)
        return update

    def forget(self, update_id: int) -> None:
        """A webhook's update is confirmed (the bot answered 2xx) or given up."""
        index = bisect.bisect_left(self._pending, update_id)
        if index < len(self._pending) and self._pending[index] == update_id:
            del self._pending[index]
        self._redelivered.discard(update_id)
        self.confirmed_offset = max(self.confirmed_offset, update_id + 1)

    async def wait_for_change(self, seconds: float) -> None:
        """Return when an update is added or redelivered, at :meth:`changed`, or after
        ``seconds``."""
        await self._polls.park(seconds)

    def changed(self) -> None:
        """Wake whoever waits in :meth:`wait_for_change` (a webhook's post has ended)."""
        self._polls.wake()

    def close(self) -> None:
        """Answer parked polls with ``[]`` now and any later poll at once."""
        self.closing = True
        self._polls.wake()

    def _confirm(self, offset: int) -> None:
        if offset < 0:  # keep only the last -offset updates
            if len(self._pending) > -offset:
                del self._pending[: len(self._pending) + offset]
            first = self._pending[0] if self._pending else self._next_id
            self.confirmed_offset = max(self.confirmed_offset, first)
            return
        self.confirmed_offset = max(self.confirmed_offset, offset)
        index = bisect.bisect_left(self._pending, offset)
        if not index:
            return
        if self._redelivered:  # redelivered but not handed out yet: an old offset keeps them
            self._pending[:index] = [u for u in self._pending[:index] if u in self._redelivered]
        else:
            del self._pending[:index]

    def _take(self, limit: int) -> list[dict[str, Any]]:
        batch: list[dict[str, Any]] = []
        dropped: list[int] = []
        now = time.monotonic()
        for update_id in self._pending:
            update = self._updates[update_id]
            if self.allowed.isdisjoint(update):
                dropped.append(update_id)  # Telegram does not keep unwanted update types
                continue
            batch.append(update)
            self.delivery_times.setdefault(update_id, now)
            self._redelivered.discard(update_id)
            if len(batch) >= limit:
                break
        for update_id in dropped:
            self._pending.remove(update_id)
        return batch

    async def get_updates(self, params: dict[str, Any]) -> list[dict[str, Any]]:
        """``getUpdates``: confirm by offset, then answer at once or within ``timeout``."""
        allowed = params.get("allowed_updates")
        if isinstance(allowed, list):
            self.allowed = frozenset(allowed) if allowed else DEFAULT_ALLOWED_UPDATES
        if "offset" in params:
            self._confirm(int(params["offset"]))
        limit = min(max(int(params.get("limit", 100)), 1), 100)
        timeout = max(float(params.get("timeout", 0)), 0.0)
        self._poll_seq += 1
        seq = self._poll_seq
        self._polls.wake()  # a parked older poll ends with 409
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        while True:
            batch = self._take(limit)
            if batch or self.closing:
                return batch
            remaining = deadline - loop.time()
            if remaining <= 0:
                return []
            self.parked += 1
            if self._on_park is not None:
                self._on_park()
            try:
                await self._polls.park(remaining)
            finally:
                self.parked -= 1
            if seq != self._poll_seq:
                raise ApiError(409, _CONFLICT)
