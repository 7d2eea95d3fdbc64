"""``ozlab demo``'s summary: votes counted as given per source and pair of systems, with what
the ranking leaves out (onboarding pairs, flagged votes) left out here too; a system that
cannot report success itself, and whose sessions nothing marked successful, is not
measured there either (never 0 %)."""

from __future__ import annotations

from bot.core.vocabulary import FlagReason, RaterKind, VoteSource, Winner
from bot.core.votes import Vote
from bot.pilot.summary import Summary, format_summary, tally
from bot.store.model import SystemSummary
from scenarios.loading import load_study
from scenarios.systems import reports_success


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


def test_a_system_that_cannot_report_success_is_not_measured_never_zero() -> None:
    summaries = [
        SystemSummary("shop-v0", 4, 0, 4, 3.0, {}),
        SystemSummary("talker", 3, 0, 3, 10.0, {}),
        SystemSummary("tooled", 3, 2, 3, 3.0, {}),
    ]
    lines = format_summary(Summary(summaries, []), silent={"talker", "tooled"}).splitlines()
    rows = {line.split()[0]: line.split() for line in lines[1:] if line.split()}
    assert rows["shop-v0"][2:4] == ["0", "0%"]  # it could have said so: a measured 0 %
    assert rows["talker"][2:5] == ["-", "not", "measured"]
    assert rows["tooled"][2:4] == ["2", "67%"]  # its tool calls spoke
    assert lines[-1].startswith("not measured: ")


def test_which_systems_report_success_themselves() -> None:
    systems = {s.id: reports_success(s) for s in load_study("hmd-llm").study.systems}
    assert systems == {"shop-llm": False, "shop-v1": True}
    # An open chat with the demo's companion is no task: not measured, never 0 %.
    assert [reports_success(s) for s in load_study("hri-cues").study.systems] == [False]
