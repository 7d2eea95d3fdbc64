"""One log line a minute saying the bot is alive, for an operator to grep or a monitor to
watch::

    ozlab alive: study hmd · 12 participants · 3 active · 0 waiting · last update 41 s ago

A quiet study logs nothing else for hours; this line tells a bot that waits for
participants from one that hangs. It holds counts only (no names, pseudonyms or session
ids): it goes wherever logs go. The counts are the read model the wizard console reads;
the time of the last update is when the poller last handed one over, on the bot's clock.
"""

from __future__ import annotations

import logging
from collections.abc import Callable

from bot.core.vocabulary import Stage
from bot.engine.delivery import Delivery
from bot.store.interface import ConsoleReadModel

log = logging.getLogger(__name__)

PREFIX = "ozlab alive:"
OVER = frozenset({Stage.DECLINED, Stage.FINISHED, Stage.INELIGIBLE, Stage.CLOSED})
"""Stages a participant has left the study in."""


class Heartbeat:
    """Counts what the bot holds and logs it when :meth:`beat` is called (every minute)."""

    def __init__(self, study_id: str, store: ConsoleReadModel, clock: Callable[[], float]) -> None:
        self._study_id = study_id
        self._store = store
        self._clock = clock
        self._started = clock()
        self._last_update: float | None = None

    def counting(self, deliver: Callable[[Delivery], None]) -> Callable[[Delivery], None]:
        """``deliver``, noting when each update from Telegram is handed over."""

        def counted(delivery: Delivery) -> None:
            self._last_update = self._clock()
            deliver(delivery)

        return counted

    async def line(self) -> str:
        """The heartbeat as it would be logged now."""
        everyone = [
            p for p in await self._store.live_participants() if p.study_id == self._study_id
        ]
        active = sum(p.status.stage not in OVER and not p.status.abandoned for p in everyone)
        waiting = sum(p.status.held is not None for p in everyone)
        now = self._clock()
        if self._last_update is None:
            last = f"no update since the start {ago(now - self._started)} ago"
        else:
            last = f"last update {ago(now - self._last_update)} ago"
        people = "participant" if len(everyone) == 1 else "participants"
        return (
            f"{PREFIX} study {self._study_id} · {len(everyone)} {people} · {active} active"
            f" · {waiting} waiting · {last}"
        )

    async def beat(self) -> None:
        """Log the line; a database that cannot be read is logged too, without the prefix
        (a monitor looking for the prefix sees the heartbeat stop)."""
        try:
            line = await self.line()
        except Exception as error:
            log.warning("ozlab heartbeat: the study database could not be read: %s", error)
            return
        log.info("%s", line)


def ago(seconds: float) -> str:
    """``41 s``, ``12 min``, ``3 h``, ``2 d``: whole units, rounded down."""
    seconds = max(0.0, seconds)
    for size, unit in ((86_400, "d"), (3_600, "h"), (60, "min")):
        if seconds >= 2 * size:
            return f"{int(seconds // size)} {unit}"
    return f"{int(seconds)} s"
