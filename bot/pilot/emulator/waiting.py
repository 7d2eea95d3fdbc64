"""Event-driven waiting: coroutines park until something changes, never by sleeping.

Long polls, participants' ``wait_for_*`` helpers and ``BotApiEmulator.wait_until`` all park on
a :class:`Waiters` and are woken by whoever changes the state they watch, so a reply reaches a
test the moment it arrives and an idle emulator burns no CPU.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable

__all__ = ["Waiters"]


class Waiters:
    """Parked coroutines, woken all at once by :meth:`wake`."""

    __slots__ = ("_futures",)

    def __init__(self) -> None:
        self._futures: list[asyncio.Future[None]] = []

    def wake(self) -> None:
        """Wake every parked coroutine (cheap when none is parked)."""
        if self._futures:
            futures, self._futures = self._futures, []
            for future in futures:
                if not future.done():
                    future.set_result(None)

    async def park(self, seconds: float) -> None:
        """Return at the next :meth:`wake` or after ``seconds``, whichever comes first."""
        future: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._futures.append(future)
        try:
            await asyncio.wait((future,), timeout=seconds)
        finally:
            if not future.done():
                future.cancel()
                if future in self._futures:
                    self._futures.remove(future)

    async def until(
        self, check: Callable[[], bool], seconds: float, why: Callable[[], str]
    ) -> None:
        """Return once ``check()`` is true, re-checking at each wake; ``TimeoutError(why())``."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + seconds
        while not check():
            remaining = deadline - loop.time()
            if remaining <= 0:
                raise TimeoutError(why())
            await self.park(remaining)
