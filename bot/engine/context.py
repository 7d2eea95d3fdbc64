"""What the engine decides on beyond one participant's state: the study, its gates, the
systems that are failing, and how many sessions and places each cell of the design already
holds.

The runner observes these (the console's gates, the systems' health, everyone's tasks) and
passes them in with each event, as it passes the clock: the engine decides, it never looks.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from bot.core.vocabulary import Gate, GateScope, Invitation
from bot.engine.assignment import Cell
from scenarios.models import StudyBundle


@dataclass(frozen=True)
class Context:
    bundle: StudyBundle
    gates: Mapping[GateScope, Gate] = field(default_factory=dict)
    """The study's and the systems' gates (a session's own gate is in its journey)."""
    unavailable: frozenset[str] = frozenset()
    """Systems failing right now: the design leaves them out while others remain."""
    arrival: int = 0
    """How many participants were assigned tasks before (Latin squares go by arrival)."""
    cells: Mapping[Cell, int] = field(default_factory=dict)
    """Sessions per (scenario, system) of active or completed participants (balanced)."""
    places: Mapping[str, int] = field(default_factory=dict)
    """Places taken per cell of the design (``design.quota``): participants assigned to it
    who completed, or who are under way and not abandoned."""
    waiting: int = 0
    """Participants who consented and wait for their cell (in screening): each will take a
    place."""
    invitation: Invitation = Invitation.NONE_HELD
    """A newcomer's invitation code as the store knows it (single-use codes)."""
