"""PairwiseVotes: a participant's votes kept with the step that took them, an annotator's
with the update they consumed, a file's all or none; read back and in the snapshot alike;
gone with the participant who gave them or whose conversation they showed."""

from __future__ import annotations

from dataclasses import replace

from bot.core.vocabulary import (
    FlagReason,
    RaterKind,
    Strength,
    VoteSource,
    Winner,
)
from bot.core.votes import TURN_QUESTION, Vote
from bot.engine import effects as fx
from bot.store.interface import StudyStore
from bot.store.model import SNAPSHOT_COLUMNS
from tests.store_contract.conftest import Clock, OpenStore
from tests.store_contract.records import conversation, session, step, tables


def turn_vote(participant: str, turn: int, winner: Winner = Winner.A, **fields: object) -> Vote:
    sid = f"{participant}-1"
    return Vote(
        f"{sid}#{turn}", VoteSource.SIDE_BY_SIDE, participant, RaterKind.PARTICIPANT,
        "shop-a", "shop-b", winner, TURN_QUESTION, scenario_id="task", session_id=sid,
        turn=turn, **fields,  # type: ignore[arg-type]
    )  # fmt: skip


def acute_vote(annotator: str, first: str, second: str, **fields: object) -> Vote:
    return Vote(
        f"acute:{annotator}:{first}|{second}", VoteSource.ACUTE, annotator,
        RaterKind.ANNOTATOR, "shop-b", "shop-a", Winner.B, "engagingness",
        session_id=f"pair-{first}-{second}", session_a=first, session_b=second, job="acute",
        **fields,  # type: ignore[arg-type]
    )  # fmt: skip


async def test_a_participants_vote_is_kept_with_their_step_at_its_time(
    open_store: OpenStore,
) -> None:
    clock = Clock(500.0)
    store = await open_store(clock)
    flagged = turn_vote("p", 2, Winner.B, flag_reason=FlagReason.SELF_IDENTIFICATION)
    await store.remember_updates([(9, "sealed")])
    await store.commit_step(
        step("p", *session("p"), fx.RecordVote(turn_vote("p", 1)), fx.RecordVote(flagged),
             update_id=9)
    )  # fmt: skip
    assert await store.pending_updates() == []
    kept = await store.votes()
    assert kept == [("s", replace(turn_vote("p", 1), at=500.0)), ("s", replace(flagged, at=500.0))]
    # The same vote again (a step replayed) changes nothing.
    await store.commit_step(step("p", fx.RecordVote(replace(turn_vote("p", 1), winner=Winner.B))))
    assert [v.winner for _, v in await store.votes()] == [Winner.A, Winner.B]


async def test_an_annotators_votes_are_kept_with_the_update_they_consumed(
    store: StudyStore,
) -> None:
    await store.remember_updates([(3, "sealed")])
    onboarding = acute_vote("A-1", "x-1", "y-1", onboarding=True, expected=Winner.A)
    real = acute_vote("A-1", "x-2", "y-2", at=77.0)
    assert await store.record_votes("s", [onboarding, real], update_id=3) == 2
    assert await store.pending_updates() == []
    assert await store.record_votes("s", [real]) == 0
    by_id = {v.vote_id: v for _, v in await store.votes()}
    assert by_id[real.vote_id] == real
    assert by_id[onboarding.vote_id].correct() is False  # B given, A known
    assert by_id[onboarding.vote_id].onboarding_correct is False


async def test_the_snapshot_gives_every_vote_column(store: StudyStore) -> None:
    preference = Vote(
        "p-2:pref", VoteSource.PREFERENCE, "p", RaterKind.PARTICIPANT, "shop-b", "shop-a",
        Winner.A, "post.which", strength=Strength.MUCH, session_id="p-2", at=12.5,
    )  # fmt: skip
    assert await store.record_votes("s", [preference]) == 1
    found = await tables(store)
    (row,) = found["votes"]
    assert dict(zip(SNAPSHOT_COLUMNS["votes"], row, strict=True)) == {
        "vote_id": "p-2:pref", "study_id": "s", "source": "preference", "rater": "p",
        "rater_kind": "participant", "system_a": "shop-b", "system_b": "shop-a",
        "winner": "a", "strength": "much", "question": "post.which", "scenario_id": None,
        "session_id": "p-2", "turn": None, "session_a": None, "session_b": None,
        "flag_reason": None, "onboarding": 0, "expected": None, "onboarding_correct": None,
        "job": None, "origin": "telegram", "voted_at": 12.5,
    }  # fmt: skip


async def test_a_file_of_votes_is_kept_all_or_none(store: StudyStore) -> None:
    votes = [(2, turn_vote("p", 1, at=1.0)), (3, turn_vote("p", 2, at=2.0))]
    dry = await store.import_votes("s", votes, dry_run=True)
    assert (dry.votes, dry.duplicates, await store.votes()) == (2, (), [])
    assert (await store.import_votes("s", votes[:1])).votes == 1
    again = await store.import_votes("s", votes)
    assert (again.votes, again.duplicates) == (0, (2,))
    assert [v.vote_id for _, v in await store.votes()] == ["p-1#1"]
    (row,) = (await tables(store))["votes"]
    assert row[SNAPSHOT_COLUMNS["votes"].index("origin")] == "import"


async def test_an_erasure_takes_the_participants_votes_and_those_showing_their_sessions(
    store: StudyStore,
) -> None:
    shown = await conversation(store, "p")
    other = await conversation(store, "q")
    await store.commit_step(step("p", fx.RecordVote(turn_vote("p", 1))))
    await store.commit_step(step("q", fx.RecordVote(turn_vote("q", 1))))
    await store.record_votes(
        "s", [acute_vote("A-1", shown, other), acute_vote("A-1", "r-1", other)]
    )

    erased = await store.erase_participant("p")

    assert erased is not None and erased.votes == 2
    left = sorted(v.vote_id for _, v in await store.votes())
    assert left == ["acute:A-1:r-1|q-1", "q-1#1"]
    for row in (await tables(store)).get("votes", []):
        assert not any(value in ("p", shown) for value in row)
