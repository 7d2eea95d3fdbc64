"""Live updates: one watcher per study asks the store whether anything was committed (the
desk's change token, which an idle study answers without reading anything) while somebody
is watching, and wakes every page that is; each page then reads what it shows."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator, Awaitable, Callable

from bot.desk import Desk

log = logging.getLogger(__name__)

INTERVAL = 0.4
"""Seconds between two looks at the change token while a page watches (the console looks
every 0.25 s): what a change waits at most before the pages hear of it. Each look that finds
a change costs every open page a read, which a bot at full load pays for in its exchanges."""


class Watcher:
    """Counts the study's changes for the pages that wait on them."""

    def __init__(self, desk: Desk, interval: float = INTERVAL) -> None:
        self._desk = desk
        self._interval = interval
        self._changed = asyncio.Condition()
        self.generation = 0
        self._watching = 0
        self._task: asyncio.Task[None] | None = None
        self._made: tuple[int, asyncio.Future[str]] | None = None
        self.stopped = False
        """The server is stopping: every page's stream ends now, not at its next ping."""

    @contextlib.asynccontextmanager
    async def watching(self) -> AsyncIterator[None]:
        self._watching += 1
        if self._task is None or self._task.done():
            self._task = asyncio.create_task(self._watch(), name="lab-web-watcher")
        try:
            yield
        finally:
            self._watching -= 1

    async def changed_after(self, generation: int, seconds: float) -> int:
        """The generation once it is past ``generation`` (or ``seconds`` passed)."""
        async with self._changed:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(
                    self._changed.wait_for(lambda: self.generation > generation or self.stopped),
                    seconds,
                )
            return self.generation

    async def once(self, generation: int, make: Callable[[], Awaitable[str]]) -> str:
        """What ``make`` gives at ``generation`` (the sessions table), made once for every
        page that asks."""
        if self._made is None or self._made[0] != generation:
            self._made = (generation, asyncio.ensure_future(make()))
        return await asyncio.shield(self._made[1])

    async def _watch(self) -> None:
        token = await self._desk.changes()
        while self._watching > 0:
            await asyncio.sleep(self._interval)
            try:
                now = await self._desk.changes()
            except Exception as error:  # the store is gone: the pages see it on their reads
                log.warning("ozlab web: the study could not be read: %s", error)
                continue
            if now != token:
                token = now
                async with self._changed:
                    self.generation += 1
                    self._changed.notify_all()

    async def stop(self) -> None:
        """Wake every waiting page for the last time (the server's shutdown)."""
        async with self._changed:
            self.stopped = True
            self._changed.notify_all()

    async def close(self) -> None:
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
