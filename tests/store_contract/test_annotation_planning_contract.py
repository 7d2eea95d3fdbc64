"""AnnotationPlanning: jobs keep their targets once and in order, annotators are never
participants, a plan made from a stale state is refused, a released target leaves its
annotator, progress counts targets and conversations."""

from __future__ import annotations

from bot.core.annotation import AssignmentPlan
from bot.core.errors import StoreError
from bot.core.vocabulary import RatingOutcome, SessionState
from bot.store.interface import StudyStore
from tests.store_contract.records import EXCHANGE, FIRST, give, ready, rows_into, targets_of


async def test_a_job_keeps_its_targets_once_and_in_order(store: StudyStore) -> None:
    sid = await ready(store)
    assert await store.add_annotation_targets("hri", targets_of("hri", sid, 3)) == 0
    stored = await store.annotation_targets("hri")
    assert [t.target for t in stored] == [f"{sid}#1", f"{sid}#2", f"{sid}#3", sid]
    assert (stored[1].turn, stored[1].system, stored[1].scenario) == (2, "sys", "task")
    [record] = await store.annotation_jobs()
    assert (record.job, record.seen_once, record.drop_out_after) == ("hri", True, 3600.0)
    [annotatable] = await store.annotatable_sessions()
    assert (annotatable.session_id, annotatable.turns) == (sid, (1, 2, 3))
    assert annotatable.state is SessionState.ENDED


async def test_targets_and_annotators_need_a_stored_job(store: StudyStore) -> None:
    for call in (
        store.add_annotation_targets("nojob", targets_of("nojob", "x-1", 1)),
        store.add_annotators("nojob", [("A-9", "ann-NINE")]),
    ):
        try:
            await call
        except StoreError as error:
            assert "nojob" in str(error)
        else:
            raise AssertionError("a job that is not stored was accepted")


async def test_annotators_are_never_participants(store: StudyStore) -> None:
    await ready(store)
    assert [p.participant_id for p in await store.live_participants()] == ["p"]
    rows: dict[str, list[tuple[object, ...]]] = {}
    await store.read_snapshot(rows_into(rows))
    assert [row[0] for row in rows.get("participants", [])] == ["p"]


async def test_a_plan_from_a_stale_state_is_refused(store: StudyStore) -> None:
    sid = await ready(store)
    state = await store.annotation_state("hri")
    assert state is not None and len(state.targets) == 4 and len(state.annotators) == 2
    plan = AssignmentPlan(assign=((f"{sid}#1", EXCHANGE, "A-1", FIRST),))
    await store.add_annotators("hri", [("A-3", "ann-THREE")])  # the job changed meanwhile
    assert not await store.apply_assignment_plan("hri", plan, state.version)
    fresh = await store.annotation_state("hri")
    assert fresh is not None and fresh.assignments == ()
    assert await store.apply_assignment_plan("hri", plan, fresh.version)
    after = await store.annotation_state("hri")
    assert after is not None
    assert [(a.target, a.annotator, a.round) for a in after.assignments] == [
        (f"{sid}#1", "A-1", FIRST)
    ]


async def test_a_released_target_is_no_longer_the_annotators(store: StudyStore) -> None:
    sid = await ready(store)
    await give(store, "hri", (f"{sid}#1", EXCHANGE, "A-2"))
    half = await store.record_annotation("A-2", "hri", f"{sid}#1", EXCHANGE, "c", "c.i", 2)
    assert half is RatingOutcome.RECORDED  # then A-2 drops out before finishing
    state = await store.annotation_state("hri")
    assert state is not None
    released = AssignmentPlan(
        assign=((f"{sid}#1", EXCHANGE, "A-1", FIRST),), release=((f"{sid}#1", EXCHANGE, "A-2"),)
    )
    assert await store.apply_assignment_plan("hri", released, state.version)
    assert await store.next_annotation_target("A-2") is None
    outcome = await store.record_annotation("A-2", "hri", f"{sid}#1", EXCHANGE, "c", "c.i", 3)
    assert outcome is RatingOutcome.NOT_ASSIGNED
    task = await store.next_annotation_target("A-1")
    assert task is not None and task.target.target == f"{sid}#1"
    assert await store.annotation_ratings() == []  # A-2's partial rating does not count
    await store.record_annotation("A-1", "hri", f"{sid}#1", EXCHANGE, "c", "c.i", 4)
    assert [r.annotator for r in await store.annotation_ratings()] == ["A-1"]


async def test_progress_counts_targets_and_conversations(store: StudyStore) -> None:
    sid = await ready(store)
    await give(store, "hri", *[(t.target, t.level, "A-1") for t in targets_of("hri", sid, 3)])
    for turn in (1, 2):
        await store.finish_annotation_target("A-1", "hri", f"{sid}#{turn}", EXCHANGE)
    one, two = await store.annotation_progress()
    assert (one.annotator, one.assigned, one.done, one.conversations) == ("A-1", 4, 2, 1)
    assert (one.conversations_done, one.joined) == (0, True)
    assert (two.annotator, two.assigned, two.done, two.joined) == ("A-2", 0, 0, False)
