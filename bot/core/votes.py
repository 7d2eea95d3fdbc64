"""A pairwise judgement, whatever gave it: one row of the votes table and the votes frame.

Side-by-side turns, preference items and ACUTE pairs all become a :class:`Vote`: which
system was shown first (``system_a``) and second, who judged, and the outcome from the first
system's side. The engine makes them for participants, the annotators' flow for ACUTE pairs,
and ``ozlab import votes`` from a file; the store keeps them all alike.
"""

from __future__ import annotations

from dataclasses import dataclass

from bot.core.vocabulary import FlagReason, RaterKind, Strength, VoteSource, Winner

TURN_QUESTION = "turn"
"""The question of a side-by-side vote: which reply to this message was better."""


@dataclass(frozen=True)
class Vote:
    """One judgement between two systems. ``at`` None: the time of the commit that keeps it."""

    vote_id: str
    source: VoteSource
    rater: str  # the participant's or annotator's pseudonym
    rater_kind: RaterKind
    system_a: str  # shown first, as "A", or met first
    system_b: str
    winner: Winner
    question: str  # the item id, the ACUTE question id, or "turn"
    strength: Strength | None = None
    scenario_id: str | None = None
    session_id: str | None = None  # the session, or the ACUTE pair's id
    turn: int | None = None  # side by side: the exchange judged
    session_a: str | None = None  # ACUTE: the logged conversation shown first
    session_b: str | None = None
    flag_reason: FlagReason | None = None  # kept apart from the fit when set
    onboarding: bool = False  # an ACUTE pair with a known answer, never in the fit
    expected: Winner | None = None  # the known answer of an onboarding pair
    onboarding_correct: bool | None = None  # None with ``expected``: judged by it
    job: str | None = None  # the ACUTE annotation job
    at: float | None = None

    @property
    def flagged(self) -> bool:
        return self.flag_reason is not None

    def correct(self) -> bool | None:
        """For an onboarding pair: whether the rater gave the known answer (as given, or
        judged by ``expected``); None for every other vote."""
        if not self.onboarding:
            return None
        if self.onboarding_correct is not None or self.expected is None:
            return self.onboarding_correct
        return self.winner == self.expected
