"""Telegram out of reach: the bot waits, tries again with longer pauses, and goes on when the
network is back; its log says so in one warning line a minute, not one traceback a try.

A lost network is the ordinary weather of a study that runs for weeks (a laptop's Wi-Fi, a
router's restart, Telegram's own 502s): nothing a participant sent is lost meanwhile, since
Telegram keeps the updates until the bot confirms them. What is not weather ends the bot:
a token Telegram refuses (``InvalidToken``), a server that does not answer as a Bot API
does. Every call the bot cannot do without (``getMe``, ``deleteWebhook``, ``getUpdates``)
goes through :func:`reach`; the outbox's sends keep their own retries.

:class:`Outage` tells of any such weather in the same words: the bot's loss of its database
server is told by one too (``bot.runtime.app``).
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable
from typing import TypeVar

from telegram.error import BadRequest, InvalidToken, NetworkError, RetryAfter, TelegramError

log = logging.getLogger(__name__)

T = TypeVar("T")

TOLD_EVERY = 60.0
"""Seconds between two warnings about one and the same outage."""
LONGEST_PAUSE = 30.0
"""The pauses between tries double up to this (python-telegram-bot's own Updater's too)."""


def pause(failures: int) -> float:
    """Seconds to wait after the ``failures``-th failure in a row: 1, 2, 4 ... 30."""
    return min(LONGEST_PAUSE, 0.5 * 2 ** min(failures, 6))


class Outage:
    """Tells of an outage in the log: one warning as it begins, one a minute while it lasts
    (with how many tries failed so far), one line when ``what`` answers again."""

    def __init__(
        self,
        clock: Callable[[], float] = time.monotonic,
        every: float = TOLD_EVERY,
        *,
        what: str = "Telegram",
        meanwhile: str = "nothing participants send is lost meanwhile",
    ) -> None:
        self._clock = clock
        self._every = every
        self._what = what
        self._meanwhile = meanwhile
        self._since: float | None = None
        self._told = 0.0
        self._failures = 0

    @property
    def failures(self) -> int:
        """Failed tries in a row (0: the last one was answered)."""
        return self._failures

    def failed(self, error: BaseException) -> None:
        now = self._clock()
        self._failures += 1
        if self._since is None:
            self._since, self._told = now, now
            log.warning(
                "%s cannot be reached (%s): trying again, less often the longer it lasts; %s",
                self._what,
                _reason(error),
                self._meanwhile,
            )
            return
        if now - self._told >= self._every:
            self._told = now
            log.warning(
                "%s still cannot be reached after %.0f s (%s; failed tries: %d)",
                self._what,
                now - self._since,
                _reason(error),
                self._failures,
            )

    def over(self) -> None:
        """It answered: say so once if it had not."""
        if self._since is not None:
            log.info(
                "%s reached again after %.0f s (failed tries: %d)",
                self._what,
                self._clock() - self._since,
                self._failures,
            )
        self._since, self._failures = None, 0


def _reason(error: BaseException) -> str:
    """The error's own words, on one line (an HTML error page has many)."""
    words = " ".join(str(error).split())
    return words[:200] if words else type(error).__name__


async def reach(
    call: Callable[[], Awaitable[T]],
    outage: Outage,
    *,
    only_network: bool = True,
) -> T:
    """``call()``'s result, tried again for as long as Telegram cannot be reached.

    ``InvalidToken`` always ends it, and with ``only_network`` every error that is not the
    network's (a server that answers, but not as a Bot API does): the bot cannot go on as it
    is. Telegram's flood limit is waited out for as long as it says."""
    while True:
        try:
            result = await call()
        except InvalidToken:
            raise
        except RetryAfter as error:
            await asyncio.sleep(_retry_seconds(error))
            continue
        except BadRequest as error:  # a NetworkError in PTB's tree, but the server answered
            if only_network:
                raise
            outage.failed(error)
        except NetworkError as error:  # also TimedOut, and 5xx answers of a gateway
            outage.failed(error)
        except TelegramError as error:
            if only_network:
                raise
            outage.failed(error)
        else:
            outage.over()
            return result
        await asyncio.sleep(pause(outage.failures))


def _retry_seconds(error: RetryAfter) -> float:
    """Telegram's wait and half a second, as PTB's own Updater waits (the public attribute
    warns in PTB 22 that its type will change)."""
    return error._retry_after.total_seconds() + 0.5
