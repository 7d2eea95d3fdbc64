"""How hard a run may press a system: with a rate, at most that many calls a second (a
token bucket, bursts up to one second's worth), and no call longer than a limit. How many
replays run at once is the runner's number of workers per system."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager


class TokenBucket:
    """``rate`` tokens a second, holding at most ``burst``; ``take`` waits for one."""

    def __init__(
        self, rate: float, burst: float | None = None, clock: Callable[[], float] = time.monotonic
    ) -> None:
        if rate <= 0:
            raise ValueError("rate must be positive")
        self.rate = rate
        self.burst = max(1.0, burst if burst is not None else rate)
        self._tokens = self.burst
        self._clock = clock
        self._at = clock()
        self._lock = asyncio.Lock()

    def _refill(self) -> None:
        now = self._clock()
        self._tokens = min(self.burst, self._tokens + (now - self._at) * self.rate)
        self._at = now

    async def take(self) -> None:
        async with self._lock:  # first come, first served
            self._refill()
            while self._tokens < 1:
                await asyncio.sleep((1 - self._tokens) / self.rate)
                self._refill()
            self._tokens -= 1


class Pace:
    """One system's limits on calls."""

    def __init__(self, rate: float | None = None, limit: float = 60.0) -> None:
        self.limit = limit  # seconds one call may take, retries included
        self._bucket = TokenBucket(rate) if rate else None

    @asynccontextmanager
    async def call(self) -> AsyncIterator[None]:
        if self._bucket is not None:
            await self._bucket.take()
        yield
