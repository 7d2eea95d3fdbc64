"""Simulated time: a clock the simulated participants move on at a person's pace.

``ozlab demo`` and ``ozlab pilot`` give the bot this clock instead of the wall clock, and
each simulated participant moves it forward by the time a person would take to read what
the bot sent and to type or tap an answer. Timestamps then look like a person's (the
data-quality "too fast" flag has nothing to flag), and with participants played one after
another every timestamp follows from the seed.
"""

from __future__ import annotations

import random

DEMO_EPOCH = 1_767_600_000.0  # Monday 5 January 2026, 08:00 UTC: where a demo's clock starts

READ_BASE_S = 1.0
READ_PER_CHAR_S = 0.05  # about 240 words a minute: careful reading
TYPE_BASE_S = 2.0
TYPE_PER_CHAR_S = 0.25  # about 40 words a minute on a phone
TAP_S = 1.0


class SimulatedClock:
    """A clock that stands still until a simulated participant moves it on."""

    def __init__(self, start: float = DEMO_EPOCH) -> None:
        self._now = start

    def __call__(self) -> float:
        return self._now

    def advance(self, seconds: float) -> None:
        self._now += max(0.0, seconds)


class Pace:
    """How long one simulated participant takes to read, type and tap (with their own
    seeded variation: some read slower than others, none faster than a careful reader)."""

    def __init__(self, clock: SimulatedClock, rng: random.Random) -> None:
        self.clock = clock
        self.rng = rng
        self.slowness = 1.0 + rng.random() * 0.6

    def read(self, text: str) -> None:
        self.clock.advance(self.slowness * (READ_BASE_S + READ_PER_CHAR_S * len(text)))

    def type(self, text: str) -> None:
        self.clock.advance(self.slowness * (TYPE_BASE_S + TYPE_PER_CHAR_S * len(text)))

    def tap(self) -> None:
        self.clock.advance(self.slowness * TAP_S)
