"""Telegram's flood limits, kept before a message goes out, so that none earns a 429.

Telegram's bot FAQ: in one chat, "avoid sending more than one message per second. We may
allow short bursts that go over this limit"; overall, "not more than 30 messages per second
or so". A private chat is paced as a token bucket (one float per chat, the GCRA form): it
refills at ``chat_rate`` and holds ``chat_burst`` messages, so a quiet chat takes a short
burst at once and a busy one gets about one message a second. The bot as a whole sends at
most ``bot_rate`` messages in any second (a sliding window of its last send times).

A message first waits for its own chat, then takes the next bot-wide slot: a chat that waits
holds no other chat up, and bot-wide slots are handed out in time order.
"""

from __future__ import annotations

import asyncio
import time
from collections import deque
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

Clock = Callable[[], float]
Sleep = Callable[[float], Awaitable[None]]

_WINDOW = 1.0  # seconds: ``bot_rate`` is per second


@dataclass(frozen=True)
class FloodLimits:
    """How fast messages may go out; the defaults are Telegram's.

    ``chat_burst`` is 4: the largest burst a turn makes in ordinary use is a long system
    reply split in three parts (a 10,000-character text at 4096 a part) followed by the
    question rating it, and those four go out together; a fifth waits about a second.
    Telegram documents only "short bursts"; the rare 429 beyond them is waited out by the
    outbox, never lost.
    """

    chat_rate: float = 1.0
    """Messages per second into one chat, sustained."""
    chat_burst: int = 4
    """Messages a chat that has been quiet for a while may receive at once."""
    bot_rate: int = 30
    """Messages per second into all chats together."""

    def __post_init__(self) -> None:
        if self.chat_rate <= 0 or self.chat_burst < 1 or self.bot_rate < 1:
            raise ValueError(f"flood limits must be positive: {self}")


TELEGRAM_LIMITS = FloodLimits()


class FloodPacer:
    """Hands out send slots within :class:`FloodLimits`; one per message put in a chat.

    ``clock`` must be monotonic and ``sleep`` must wait on the same clock (tests pass a
    simulated pair). Calls for one chat are served in the order they come (the runner makes
    them one at a time anyway).
    """

    def __init__(
        self,
        limits: FloodLimits = TELEGRAM_LIMITS,
        *,
        clock: Clock = time.monotonic,
        sleep: Sleep = asyncio.sleep,
    ) -> None:
        self.limits = limits
        self._clock = clock
        self._sleep = sleep
        self._interval = 1.0 / limits.chat_rate
        self._burst_span = (limits.chat_burst - 1) * self._interval
        self._due: dict[int, float] = {}  # chat -> when its bucket is full again (GCRA's TAT)
        self._recent: deque[float] = deque(maxlen=limits.bot_rate)  # the last bot-wide slots

    async def wait(self, chat_id: int) -> None:
        """Return when a message may go to ``chat_id``; the slot is taken on return."""
        now = self._clock()
        early = self._due.get(chat_id, now) - self._burst_span - now
        while early > 0:  # this chat's bucket is empty: only this chat waits
            await self._sleep(early)
            now = self._clock()
            early = self._due.get(chat_id, now) - self._burst_span - now
        slot = now
        recent = self._recent
        if len(recent) == recent.maxlen and recent[0] + _WINDOW > now:
            slot = recent[0] + _WINDOW
        recent.append(slot)  # taken now, in time order: a later caller queues behind it
        self._due[chat_id] = max(self._due.get(chat_id, slot), slot) + self._interval
        if slot > now:
            await self._sleep(slot - now)
