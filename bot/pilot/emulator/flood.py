"""Telegram's flood answers, for bots that must be tested against them (off by default).

Telegram refuses a message beyond its limits with ``429 Too Many Requests: retry after N``
and ``parameters: {"retry_after": N}``, N in whole seconds. The limits are those of the bot
FAQ: in one chat about one message a second, with short bursts allowed (here a token bucket:
``chat_burst`` at once, refilled at ``chat_rate``); for the whole bot no more than
``bot_rate`` messages in any second. A refused request counts for nothing.

Requests are judged by when they reach the emulator, which is a little after the bot let them
go and by a varying amount: ``jitter`` forgives that much earliness, as the real limits are
"about" and "or so".
"""

from __future__ import annotations

import math
from collections import deque
from dataclasses import dataclass
from typing import Any, NoReturn

from bot.pilot.emulator.wire import ApiError

__all__ = ["FLOODED_METHODS", "FloodControl", "FloodRules"]

FLOODED_METHODS = frozenset(
    {"sendMessage", "sendVoice", "sendPhoto", "editMessageText", "editMessageReplyMarkup"}
)
"""The emulated methods that put a message in a chat; answers and chat actions are free."""
_WINDOW = 1.0  # seconds: ``bot_rate`` is per second


@dataclass(frozen=True, slots=True)
class FloodRules:
    """The limits the emulator enforces; the defaults are Telegram's as documented."""

    chat_rate: float = 1.0
    chat_burst: int = 4
    bot_rate: int = 30
    jitter: float = 0.1


class FloodControl:
    """Admits or refuses each message by the time it arrived (``time.monotonic()``)."""

    def __init__(self, rules: FloodRules) -> None:
        self.rules = rules
        self._interval = 1.0 / rules.chat_rate
        self._burst_span = (rules.chat_burst - 1) * self._interval
        self._due: dict[Any, float] = {}  # chat -> when its bucket is full again
        self._sent: deque[float] = deque()  # the bot's admitted messages in the last second
        self.refused = 0
        """429 answers given so far."""

    def admit(self, chat_id: Any, arrived: float) -> None:
        """Count the message, or raise the 429 Telegram would answer."""
        rules = self.rules
        sent = self._sent
        while sent and sent[0] <= arrived - _WINDOW + rules.jitter:
            sent.popleft()
        if len(sent) >= rules.bot_rate:
            self._refuse(sent[0] + _WINDOW - rules.jitter - arrived)
        due = self._due.get(chat_id, arrived)
        early = due - self._burst_span - arrived
        if early > rules.jitter:
            self._refuse(early)
        sent.append(arrived)
        self._due[chat_id] = max(due, arrived) + self._interval

    def _refuse(self, seconds: float) -> NoReturn:
        self.refused += 1
        wait = max(1, math.ceil(seconds))  # whole seconds, never 0, as Telegram gives them
        raise ApiError(429, f"Too Many Requests: retry after {wait}", retry_after=wait)
