"""What a stress test is made of: a logged utterance and its one perturbation."""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

from bot.stress.phenomena import StressType


class Source(StrEnum):
    GENERATED = "generated"
    PROPOSED = "proposed"
    AUTHORED = "authored"


@dataclass(frozen=True)
class Utterance:
    """A participant's logged line and the system reply it answered."""

    session_id: str
    turn: int
    text: str
    system: str
    scenario: str
    previous_reply: str = ""


@dataclass(frozen=True)
class Perturbation:
    """One logged utterance minimally changed by one phenomenon."""

    session_id: str
    turn: int
    stress_type: StressType
    original: str
    perturbed: str
    source: Source
    ad_hoc: bool = False
    change: str = ""
