"""What the stress tests work on: logged utterances in, perturbations out.

Plain frozen dataclasses: the store (owned by the ``ozlab stress`` commands) turns its rows
into :class:`Utterance` and keeps every :class:`Perturbation` it is given.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

from bot.core.phenomena import StressType


class Source(StrEnum):
    """Who made a stress test: the offline generator, a language model (then a person
    accepted or edited it: see :func:`bot.stress.propose.review`), or a person."""

    GENERATED = "generated"
    PROPOSED = "proposed"
    AUTHORED = "authored"


@dataclass(frozen=True)
class Utterance:
    """A logged participant message, with the system's message just before it
    (``previous_reply``; ST-10 needs the choice the system offered)."""

    session_id: str
    turn: int
    text: str
    system: str
    scenario: str
    previous_reply: str = ""


@dataclass(frozen=True)
class Perturbation:
    """One stress test: the utterance of ``(session_id, turn)`` changed by one phenomenon.

    ``ad_hoc``: written by a person where no logged utterance fitted (IDIAL allows it);
    ``original`` is then the person's own unperturbed text. ``change`` says in words what
    changed (``"don't → dont"``), for reports and reviews.
    """

    session_id: str
    turn: int
    stress_type: StressType
    original: str
    perturbed: str
    source: Source
    ad_hoc: bool = False
    change: str = ""
