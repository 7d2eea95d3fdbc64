"""How simulated participants come from a recruitment platform, for a demo of a paid study:
each with an id as the platform makes them (24 hexadecimal digits, as Prolific's), most on
the first ``/start``, some late (a bare ``/start``, then the link), some opening the link a
second time after the end, some leaving without finishing, so that the payments export and
``ozlab prolific`` have every case to show on a demo database."""

from __future__ import annotations

import random
from dataclasses import dataclass
from enum import StrEnum

from bot.engine.recruitment import PAYLOAD_PREFIX


class Arrival(StrEnum):
    WITH_THE_LINK = "with_the_link"  # the id on the first /start
    LATE = "late"  # a bare /start, then the link before consenting
    TWICE = "twice"  # the link, and the link again after the end
    LEAVES = "leaves"  # the link, consent, then gone without finishing


_ROUND = (Arrival.WITH_THE_LINK, Arrival.LATE, Arrival.WITH_THE_LINK, Arrival.TWICE, Arrival.LEAVES)


@dataclass(frozen=True)
class PlatformVisit:
    platform_id: str
    arrival: Arrival

    @property
    def link_start(self) -> str:
        """The ``/start`` the study's deep link sends."""
        return f"/start {PAYLOAD_PREFIX}{self.platform_id}"

    @property
    def first_start(self) -> str:
        return "/start" if self.arrival is Arrival.LATE else self.link_start


def platform_visit(seed: int, number: int) -> PlatformVisit:
    """The ``number``-th simulated participant's id and way of arriving (the same for a seed)."""
    rng = random.Random(f"{seed}:platform:{number}")
    return PlatformVisit(f"{rng.getrandbits(96):024x}", _ROUND[number % len(_ROUND)])
