"""An ACUTE pair in the store: its next target comes with both conversations whole (in its
name's order), the second one's system and the side its annotator is shown it in; its votes
are kept with its finish, only from its annotator, replaced when judged again; erasing
either participant takes the pair, its assignments and its ratings with it."""

from __future__ import annotations

import pytest

from bot.core.annotation import AnnotationTarget, AssignmentPlan
from bot.core.vocabulary import (
    AnnotationLevel,
    AnnotationRound,
    AnnotatorClaim,
    RaterKind,
    VoteSource,
    Winner,
)
from bot.core.votes import Vote
from bot.engine.annotating.model import FinishTarget, RecordVotes, ReopenLast
from bot.engine.annotating.pairs import pair_target
from bot.store.interface import StudyStore
from tests.store_contract.records import conversation, give, job

PAIR = AnnotationLevel.PAIR


async def _paired(store: StudyStore, *, seen_once: bool = True) -> tuple[str, str]:
    first = await conversation(store, "p", turns=2)
    second = await conversation(store, "q", turns=3)
    name = pair_target(first, second)
    await store.save_annotation_job(job("acute", seen_once=seen_once))
    target = AnnotationTarget("acute", name, PAIR, 0, first, None, "sys", "task")
    assert await store.add_annotation_targets("acute", [target]) == 1
    assert await store.add_annotators("acute", [("A-1", "ann-ONE")]) == ["A-1"]
    assert (await store.claim_annotator("ann-ONE", "hash-1", "sealed"))[0] is AnnotatorClaim.JOINED
    await give(store, "acute", (name, PAIR, "A-1"))
    return first, name


async def test_a_pair_comes_with_both_conversations_whole(store: StudyStore) -> None:
    first, name = await _paired(store)
    task = await store.next_annotation_target("A-1")
    assert task is not None and task.target.target == name and task.target.level is PAIR
    assert [x.user_text for x in task.conversation] == ["user 1", "user 2"]
    assert [x.system_text for x in task.second] == ["system 1", "system 2", "system 3"]
    assert task.second_system == "sys" and task.target.session_id == first
    assert (task.conversation_number, task.conversations) == (1, 1)
    await store.record_annotation("A-1", "acute", name, PAIR, "acute-eval", "acute-eval.x", 2)
    [rating] = await store.annotation_ratings()
    assert (rating.level, rating.target, rating.value) == ("pair", name, "2")


async def test_a_pair_given_swapped_is_shown_swapped_and_keeps_its_side_when_given_back(
    store: StudyStore,
) -> None:
    first, name = await _paired(store)
    await store.add_annotators("acute", [("A-2", "ann-TWO")])
    state = await store.annotation_state("acute")
    assert state is not None and state.pair_systems == {name: ("sys", "sys")}
    [given] = state.assignments
    assert not given.swapped  # given without a side: its name's order
    swapped = AssignmentPlan(
        assign=((name, PAIR, "A-2", AnnotationRound.FIRST),), swapped=((name, "A-2"),)
    )
    assert await store.apply_assignment_plan("acute", swapped, state.version)
    task = await store.next_annotation_target("A-2")
    assert task is not None and task.swapped and task.target.session_id == first
    assert [x.user_text for x in task.conversation] == ["user 1", "user 2"]  # name's order
    mine = await store.next_annotation_target("A-1")
    assert mine is not None and not mine.swapped
    # released (they dropped out), then given back without a side: it keeps its own
    state = await store.annotation_state("acute")
    assert state is not None
    assert {(a.annotator, a.swapped) for a in state.assignments} == {("A-1", False), ("A-2", True)}
    released = AssignmentPlan(release=((name, PAIR, "A-2"),))
    assert await store.apply_assignment_plan("acute", released, state.version)
    state = await store.annotation_state("acute")
    assert state is not None and state.swapped_before == {(name, "A-2"): True}
    again = AssignmentPlan(assign=((name, PAIR, "A-2", AnnotationRound.FIRST),))
    assert await store.apply_assignment_plan("acute", again, state.version)
    await store.record_annotation("A-2", "acute", name, PAIR, "acute-eval", "acute-eval.x", 2)
    assert await store.commit_annotator_step([FinishTarget("A-2", "acute", name, PAIR)], None)
    state = await store.annotation_state("acute")
    assert state is not None and state.swapped_before == {}
    [rating] = state.first_ratings
    assert (rating.annotator, rating.value, rating.swapped) == ("A-2", 2, True)


@pytest.mark.parametrize("participant", ["p", "q"])  # shown first, shown second
async def test_erasing_either_participant_takes_the_pair_with_it(
    store: StudyStore, participant: str
) -> None:
    _, name = await _paired(store)
    await store.record_annotation("A-1", "acute", name, PAIR, "acute-eval", "acute-eval.x", 1)
    assert await store.erase_participant(participant) is not None
    assert await store.annotation_targets("acute") == []
    assert await store.annotation_ratings() == []
    assert await store.next_annotation_target("A-1") is None


def _vote(name: str, winner: Winner, question: str = "engagingness") -> Vote:
    return Vote(
        vote_id=f"acute:{name}:A-1:{question}", source=VoteSource.ACUTE, rater="A-1",
        rater_kind=RaterKind.ANNOTATOR, system_a="sys", system_b="sys", winner=winner,
        question=question, session_id=name, job="acute",
    )  # fmt: skip


async def test_a_pairs_votes_are_kept_with_its_finish_and_replaced_when_judged_again(
    store: StudyStore,
) -> None:
    _, name = await _paired(store, seen_once=False)
    first = RecordVotes("A-1", "acute", name, (_vote(name, Winner.A), _vote(name, Winner.B, "x")))
    finish = FinishTarget("A-1", "acute", name, PAIR)
    assert await store.commit_annotator_step([first, finish], None) == [2, True]
    assert await store.commit_annotator_step([first], None) == [0]  # done: nothing more
    assert [v.winner for _, v in await store.votes()] == [Winner.A, Winner.B]
    # reopened (a job that allows /back) and judged again: the new judgement replaces it
    await store.commit_annotator_step([ReopenLast("A-1")], None)
    again = RecordVotes("A-1", "acute", name, (_vote(name, Winner.B),))
    assert await store.commit_annotator_step([again, finish], None) == [1, True]
    [(study, vote)] = await store.votes()
    assert (study, vote.winner, vote.rater_kind) == ("s", Winner.B, RaterKind.ANNOTATOR)
    stranger = RecordVotes("A-2", "acute", name, (_vote(name, Winner.A),))
    assert await store.commit_annotator_step([stranger], None) == [0]  # not theirs
