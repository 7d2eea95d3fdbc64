"""AnnotatorWork: a code belongs to the first chat that uses it, a rating only for a target
assigned to its annotator, once per annotator, target, item and round; finishing,
reopening and the adjudication round."""

from __future__ import annotations

from bot.core.annotation import AssignmentPlan
from bot.core.vocabulary import AnnotatorClaim, Origin, RatingOutcome
from bot.store.interface import StudyStore
from tests.store_contract.records import (
    ADJUDICATION,
    EXCHANGE,
    FIRST,
    SESSION,
    give,
    job,
    ready,
    targets_of,
)


async def test_an_annotator_code_belongs_to_the_first_chat_that_uses_it(
    store: StudyStore,
) -> None:
    await ready(store)
    claim, again = await store.claim_annotator("ann-ONE", "hash-1")
    assert claim is AnnotatorClaim.RETURNING and again is not None
    assert again.chat_key == "sealed-1"  # kept: nothing new was sealed
    assert (await store.claim_annotator("ann-ONE", "hash-other"))[0] is AnnotatorClaim.TAKEN
    assert (await store.claim_annotator("ann-NONE", "hash-1"))[0] is AnnotatorClaim.UNKNOWN
    found = await store.annotator_for_chat("hash-1")
    assert found is not None and found.annotator_id == "A-1" and found.origin is Origin.TELEGRAM
    assert await store.annotator_for_chat("hash-other") is None
    assert await store.drop_annotator("A-2")
    assert not await store.drop_annotator("A-2")
    assert (await store.claim_annotator("ann-TWO", "hash-2"))[0] is AnnotatorClaim.DROPPED
    assert await store.set_annotator_paused("A-1", True)
    [one, two] = await store.annotators("hri")
    assert (one.paused, one.dropped, two.dropped) == (True, False, True)


async def test_a_chat_is_known_as_its_annotator_after_they_are_dropped_too(
    store: StudyStore,
) -> None:
    await ready(store)
    await store.save_annotation_job(job("other"))
    assert await store.add_annotators("other", [("B-1", "ann-B-ONE")]) == ["B-1"]
    assert (await store.claim_annotator("ann-B-ONE", "hash-1"))[0] is AnnotatorClaim.JOINED
    assert await store.drop_annotator("B-1")  # joined last, but dropped: the other one first
    found = await store.annotator_for_chat("hash-1")
    assert found is not None and (found.annotator_id, found.dropped) == ("A-1", False)
    assert await store.drop_annotator("A-1")
    gone = await store.annotator_for_chat("hash-1")
    assert gone is not None and gone.dropped and gone.chat_key is None


async def test_a_dropped_annotator_back_from_their_chat_with_a_new_code_is_themselves_again(
    store: StudyStore,
) -> None:
    """The researcher gives a dropped annotator a new code (the bot told them to ask): from
    the same chat it makes them their old pseudonym again, their finished ratings theirs,
    never a second annotator who could rate what they rated; the new code's unused
    pseudonym goes, its open work moves to them. From another chat the code is a newcomer's."""
    sid = await ready(store)
    await give(store, "hri", (f"{sid}#1", EXCHANGE, "A-1"), (f"{sid}#2", EXCHANGE, "A-1"))
    await store.record_annotation("A-1", "hri", f"{sid}#1", EXCHANGE, "cues", "cues.x", 4)
    assert await store.finish_annotation_target("A-1", "hri", f"{sid}#1", EXCHANGE)
    await store.record_annotation("A-1", "hri", f"{sid}#2", EXCHANGE, "cues", "cues.x", 2)
    assert await store.drop_annotator("A-1")
    assert await store.add_annotators("hri", [("A-3", "ann-NEW"), ("A-4", "ann-FOUR")]) == [
        "A-3",
        "A-4",
    ]
    state = await store.annotation_state("hri")
    assert state is not None  # #2 released from A-1 (it had a rating), given to A-3
    released = AssignmentPlan(release=((f"{sid}#2", EXCHANGE, "A-1"),))
    assert await store.apply_assignment_plan("hri", released, state.version)
    await give(
        store,
        "hri",
        (f"{sid}#1", EXCHANGE, "A-3"),
        (f"{sid}#2", EXCHANGE, "A-3"),
        (f"{sid}#3", EXCHANGE, "A-3"),
    )

    claim, back = await store.claim_annotator("ann-NEW", "hash-1", "sealed-again")
    assert claim is AnnotatorClaim.JOINED and back is not None
    assert (back.annotator_id, back.dropped, back.chat_key) == ("A-1", False, "sealed-again")
    assert [a.annotator_id for a in await store.annotators("hri")] == ["A-1", "A-2", "A-4"]
    state = await store.annotation_state("hri")
    assert state is not None
    mine = {(a.target, a.done_at is not None) for a in state.assignments}
    # #1 done and never again; #2 theirs again (its rating too); #3 moved from A-3
    assert mine == {(f"{sid}#1", True), (f"{sid}#2", False), (f"{sid}#3", False)}
    ratings = {(r.annotator, r.target, r.value) for r in await store.annotation_ratings()}
    assert ratings == {("A-1", f"{sid}#1", "4"), ("A-1", f"{sid}#2", "2")}
    task = await store.next_annotation_target("A-1")
    assert task is not None and task.target.target == f"{sid}#2"
    assert task.answers == {"cues.x": "2"}
    again = await store.claim_annotator("ann-NEW", "hash-1")
    assert again[0] is AnnotatorClaim.RETURNING
    assert (await store.claim_annotator("ann-NEW", "hash-other"))[0] is AnnotatorClaim.TAKEN
    assert (await store.claim_annotator("ann-FOUR", "hash-other"))[0] is AnnotatorClaim.JOINED


async def test_the_next_target_comes_with_its_conversation_and_progress(
    store: StudyStore,
) -> None:
    sid = await ready(store)
    await give(store, "hri", *[(t.target, t.level, "A-1") for t in targets_of("hri", sid, 3)])
    task = await store.next_annotation_target("A-1")
    assert task is not None and task.target.target == f"{sid}#1"
    assert [x.turn for x in task.conversation] == [1]
    assert (task.exchange_number, task.exchanges) == (1, 3)
    assert (task.conversation_number, task.conversations, task.round) == (1, 1, FIRST)
    assert task.next_message == "user 2"  # what the participant said to the reply
    assert await store.finish_annotation_target("A-1", "hri", f"{sid}#1", EXCHANGE)
    assert not await store.finish_annotation_target("A-1", "hri", f"{sid}#1", EXCHANGE)
    task = await store.next_annotation_target("A-1")
    assert task is not None and [x.user_text for x in task.conversation] == ["user 1", "user 2"]
    assert task.conversation[-1].system_text == "system 2"
    assert (task.exchange_number, task.exchanges) == (2, 3)
    for turn in (2, 3):
        await store.finish_annotation_target("A-1", "hri", f"{sid}#{turn}", EXCHANGE)
    task = await store.next_annotation_target("A-1")
    assert task is not None and task.target.level is SESSION and len(task.conversation) == 3
    assert task.next_message is None
    assert task.exchange_number == 0
    await store.finish_annotation_target("A-1", "hri", sid, SESSION)
    assert await store.next_annotation_target("A-1") is None
    assert await store.next_annotation_target("A-2") is None


async def test_a_rating_is_kept_once_and_only_from_its_annotator(store: StudyStore) -> None:
    sid = await ready(store)
    target = f"{sid}#1"
    await give(store, "hri", (target, EXCHANGE, "A-1"))

    async def rate(who: str, value: int, item: str = "cues.exchange") -> RatingOutcome:
        return await store.record_annotation(who, "hri", target, EXCHANGE, "cues", item, value)

    assert await rate("A-2", 4) is RatingOutcome.NOT_ASSIGNED  # an old button, someone else's
    assert await rate("A-1", 4) is RatingOutcome.RECORDED
    assert await rate("A-1", 4) is RatingOutcome.UNCHANGED  # a double tap
    assert await rate("A-1", 5) is RatingOutcome.RECORDED  # changed before moving on
    assert (
        await store.record_annotation("A-1", "hri", f"{sid}#2", EXCHANGE, "cues", "cues.x", 3)
        is RatingOutcome.NOT_ASSIGNED
    )
    await store.finish_annotation_target("A-1", "hri", target, EXCHANGE)
    assert await rate("A-1", 2) is RatingOutcome.LOCKED  # seen once: never changed
    assert await rate("A-1", 5) is RatingOutcome.UNCHANGED
    [rating] = await store.annotation_ratings()
    assert rating.value == "5" and rating.round == "first" and rating.origin == "telegram"
    assert (rating.job, rating.level, rating.target, rating.session_id, rating.turn) == (
        "hri",
        "exchange",
        target,
        sid,
        1,
    )
    assert (rating.system, rating.scenario, rating.annotator) == ("sys", "task", "A-1")
    assert (rating.instrument_id, rating.item_id) == ("cues", "cues.exchange")
    assert rating.recorded_at.startswith("1970-01-01T00:16:40")  # the store clock: 1000 s
    assert await store.reopen_annotation_target("A-1") is None  # seen once: no /back


async def test_a_dropped_annotator_cannot_rate_or_finish_their_open_targets(
    store: StudyStore,
) -> None:
    """Declared dropped while the bot runs: their targets stay assigned until the next
    planning releases them, but a tap on one is refused and nothing is kept."""
    sid = await ready(store)
    target = f"{sid}#1"
    await give(store, "hri", (target, EXCHANGE, "A-1"))
    assert await store.drop_annotator("A-1")
    outcome = await store.record_annotation("A-1", "hri", target, EXCHANGE, "cues", "c.i", 4)
    assert outcome is RatingOutcome.NOT_ASSIGNED
    assert not await store.finish_annotation_target("A-1", "hri", target, EXCHANGE)
    assert await store.annotation_ratings() == []
    state = await store.annotation_state("hri")
    assert state is not None
    [open_one] = [a for a in state.assignments if a.target == target]
    assert open_one.done_at is None  # still theirs until released, but not finished by them


async def test_a_chat_claiming_a_second_code_of_its_job_is_told_it_is_their_annotator(
    store: StudyStore,
) -> None:
    """The chat holding ann-ONE (A-1) claims ann-TWO of the same job: it is A-1 already;
    ann-TWO stays unused (another chat can still take it)."""
    await ready(store)
    claim, found = await store.claim_annotator("ann-TWO", "hash-1", "sealed-1")
    assert claim is AnnotatorClaim.ALREADY
    assert found is not None and found.annotator_id == "A-1"
    two = [a for a in await store.annotators("hri") if a.annotator_id == "A-2"]
    assert two[0].joined_at is None and two[0].chat_key is None
    assert (await store.claim_annotator("ann-TWO", "hash-2"))[0] is AnnotatorClaim.JOINED


async def test_a_revisitable_target_can_be_reopened_and_changed(store: StudyStore) -> None:
    sid = await ready(store, "xrec", seen_once=False)
    await give(store, "xrec", (f"{sid}#1", EXCHANGE, "A-1"), (f"{sid}#2", EXCHANGE, "A-1"))
    args = ("A-1", "xrec", f"{sid}#1", EXCHANGE, "x", "x.q1")
    await store.record_annotation(*args, value=1)
    await store.finish_annotation_target("A-1", "xrec", f"{sid}#1", EXCHANGE)
    assert await store.record_annotation(*args, value=0) is RatingOutcome.LOCKED  # old button
    back = await store.reopen_annotation_target("A-1")
    assert back is not None and back.target.target == f"{sid}#1"
    assert dict(back.answers) == {"x.q1": "1"}
    assert await store.record_annotation(*args, value=0) is RatingOutcome.RECORDED
    task = await store.next_annotation_target("A-1")
    assert task is not None and task.target.target == f"{sid}#1"


async def test_an_adjudication_round_is_kept_apart(store: StudyStore) -> None:
    sid = await ready(store, "xrec", seen_once=False)
    await store.add_annotators("xrec", [("A-3", "ann-THREE")])
    target = f"{sid}#1"
    await give(store, "xrec", (target, EXCHANGE, "A-1"), (target, EXCHANGE, "A-2"))
    for who, value in (("A-1", 1), ("A-2", 0)):
        await store.record_annotation(who, "xrec", target, EXCHANGE, "x", "x.q1", value)
        await store.finish_annotation_target(who, "xrec", target, EXCHANGE)
    state = await store.annotation_state("xrec")
    assert state is not None
    assert sorted((r.annotator, r.value) for r in state.first_ratings) == [("A-1", 1), ("A-2", 0)]
    third = AssignmentPlan(assign=((target, EXCHANGE, "A-3", ADJUDICATION),))
    assert await store.apply_assignment_plan("xrec", third, state.version)
    task = await store.next_annotation_target("A-3")
    assert task is not None and task.round is ADJUDICATION
    await store.record_annotation("A-3", "xrec", target, EXCHANGE, "x", "x.q1", 1)
    rounds = sorted((r.annotator, r.round) for r in await store.annotation_ratings())
    assert rounds == [("A-1", "first"), ("A-2", "first"), ("A-3", "adjudication")]
    # an annotator of the first round cannot go back once the adjudication started
    assert await store.reopen_annotation_target("A-1") is None


async def test_whether_a_target_is_still_the_annotators_to_rate(store: StudyStore) -> None:
    sid = await ready(store)
    await give(store, "hri", (f"{sid}#1", EXCHANGE, "A-1"), (f"{sid}#2", EXCHANGE, "A-1"))
    assert await store.holds_annotation_target("A-1", "hri", f"{sid}#1", EXCHANGE)
    assert not await store.holds_annotation_target("A-2", "hri", f"{sid}#1", EXCHANGE)
    assert not await store.holds_annotation_target("A-1", "hri", f"{sid}#3", EXCHANGE)
    assert await store.finish_annotation_target("A-1", "hri", f"{sid}#1", EXCHANGE)
    assert not await store.holds_annotation_target("A-1", "hri", f"{sid}#1", EXCHANGE)  # done
    state = await store.annotation_state("hri")
    assert state is not None
    released = AssignmentPlan(release=((f"{sid}#2", EXCHANGE, "A-1"),))
    assert await store.apply_assignment_plan("hri", released, state.version)
    assert not await store.holds_annotation_target("A-1", "hri", f"{sid}#2", EXCHANGE)
    await give(store, "hri", (f"{sid}#3", EXCHANGE, "A-1"))
    assert await store.holds_annotation_target("A-1", "hri", f"{sid}#3", EXCHANGE)
    assert await store.drop_annotator("A-1")
    assert not await store.holds_annotation_target("A-1", "hri", f"{sid}#3", EXCHANGE)
