"""The votes in ``ozlab demo``'s summary: counted as given per source and pair of systems,
with what the ranking leaves out (onboarding pairs, flagged votes) left out here too."""

from __future__ import annotations

from bot.core.vocabulary import FlagReason, RaterKind, VoteSource, Winner
from bot.core.votes import Vote
from bot.pilot.summary import Summary, format_summary, tally
from bot.store.model import SystemSummary


def _vote(
    n: int, winner: Winner, source: VoteSource = VoteSource.SIDE_BY_SIDE, **more: object
) -> Vote:
    return Vote(
        f"v{n}", source, f"r{n}", RaterKind.PARTICIPANT, "b", "a", winner, "turn",
        **more,  # type: ignore[arg-type]
    )  # fmt: skip


def test_votes_are_tallied_per_source_and_pair_as_given() -> None:
    votes = [
        _vote(1, Winner.A),
        _vote(2, Winner.A),
        _vote(3, Winner.B),
        _vote(4, Winner.TIE),
        _vote(5, Winner.BOTH_BAD),
        _vote(6, Winner.NOT_COMPARABLE),
        _vote(7, Winner.A, flag_reason=FlagReason.SELF_IDENTIFICATION),
        _vote(8, Winner.B, VoteSource.ACUTE, onboarding=True),
        _vote(9, Winner.B, VoteSource.ACUTE),
    ]
    acute, side = tally(votes)
    assert (acute.source, acute.systems, dict(acute.preferred), acute.votes) == (
        VoteSource.ACUTE, ("a", "b"), {"a": 1}, 1
    )  # fmt: skip
    assert dict(side.preferred) == {"b": 2, "a": 1} and side.votes == 6
    assert (side.ties, side.both_bad, side.not_comparable) == (1, 1, 1)
    shown = format_summary(Summary([SystemSummary("a + b", 6, 0, 6, 5.0, {}, True)], [side]))
    assert "a + b   6         -          -     5.0" in shown
    assert "side by side  a + b    6      b 2, a 1   1     1         1" in shown
