"""A job's whole round through the real store and the planner, as the annotators' flow
drives it: annotators rate their next targets, finishing brings in a third annotator only
where the first two disagree, and a dropped annotator's open targets go to someone else."""

from __future__ import annotations

from pathlib import Path

from bot.annotation.jobs import assign, assign_on_the_clock, prepare_job
from bot.core.annotation import AssignmentPlan
from bot.core.vocabulary import AnnotationRound, RatingOutcome
from bot.store.interface import StudyStore
from bot.store.sqlite import open_store
from scenarios.loading import load_study
from tests.annotation_support import store_study

XREC = [("p2123456789abcde-1", "shop-v1", 2), ("p3123456789abcde-1", "shop-v0", 1)]
Q1, Q2 = "xrec-exchange.q1_recommendation_rate", "xrec-exchange.q2_explanation_rate"


async def rate_all(store: StudyStore, who: str, answers: dict[str, int]) -> int:
    """``who`` rates every open target with ``answers``; how many targets."""
    done = 0
    while (task := await store.next_annotation_target(who)) is not None:
        t = task.target
        for item, value in answers.items():
            outcome = await store.record_annotation(
                who, t.job, t.target, t.level, "xrec-exchange", item, value
            )
            assert outcome is RatingOutcome.RECORDED
        assert await store.finish_annotation_target(who, t.job, t.target, t.level)
        done += 1
    return done


async def test_a_third_annotator_rates_only_where_the_first_two_disagree(
    tmp_path: Path,
) -> None:
    bundle = load_study("xrec")
    job = bundle.jobs["xrec"]
    store = await open_store(tmp_path / "xrec.sqlite", lambda: 10.0)
    try:
        await store_study(store, "xrec", "xrec-recommend", XREC)
        assert await prepare_job(store, bundle, job) == 3
        await store.add_annotators("xrec", [("A-1", "ann-1"), ("A-2", "ann-2"), ("A-3", "ann-3")])
        first = await assign(store, bundle, job, 10.0)
        assert len(first.assign) == 6  # three exchanges, two annotators each
        state = await store.annotation_state("xrec")
        assert state is not None
        raters = {
            t.target: sorted(a.annotator for a in state.assignments if a.target == t.target)
            for t in state.targets
        }
        says = {"A-1": 1, "A-2": 0, "A-3": 1}  # A-2 disagrees with the others on Q1
        for who, value in says.items():
            await rate_all(store, who, {Q1: value, Q2: 1})
        third = await assign(store, bundle, job, 11.0)
        disagreeing = {t for t, pair in raters.items() if "A-2" in pair}
        assert {target for target, *_ in third.assign} == disagreeing
        assert all(r is AnnotationRound.ADJUDICATION for *_, r in third.assign)
        for target, _, who, _ in third.assign:
            assert who not in raters[target]
            task = await store.next_annotation_target(who)
            assert task is not None and task.round is AnnotationRound.ADJUDICATION
        for who in says:
            await rate_all(store, who, {Q1: 1, Q2: 1})
        assert (await assign(store, bundle, job, 12.0)).assign == ()  # asked once
        ratings = await store.annotation_ratings()
        adjudicated = {r.target for r in ratings if r.round == "adjudication"}
        assert adjudicated == disagreeing
        assert {r.system for r in ratings} == {"shop-v1", "shop-v0"}
    finally:
        await store.close()


async def test_a_dropped_annotators_open_targets_go_to_someone_else(tmp_path: Path) -> None:
    bundle = load_study("hri-cues")
    job = bundle.jobs["hri-cues"]
    store = await open_store(tmp_path / "cues.sqlite", lambda: 10.0)
    try:
        conversation = [("p0123456789abcde-1", "companion", 3)]
        await store_study(store, "hri-cues", "hri-cues-chat", conversation)
        await prepare_job(store, bundle, job)
        people = [("A-1", "ann-1"), ("A-2", "ann-2"), ("A-3", "ann-3"), ("A-4", "ann-4")]
        await store.add_annotators("hri-cues", people)
        await assign(store, bundle, job, 10.0)
        state = await store.annotation_state("hri-cues")
        assert state is not None
        busy = sorted({a.annotator for a in state.assignments})
        idle = ({"A-1", "A-2", "A-3", "A-4"} - set(busy)).pop()
        assert len(busy) == 3 and await store.next_annotation_target(idle) is None
        quitter = busy[0]
        task = await store.next_annotation_target(quitter)
        assert task is not None
        t = task.target
        await store.record_annotation(quitter, t.job, t.target, t.level, "hri-cues",
                                      "hri-cues.exchange", 4)  # fmt: skip
        await store.finish_annotation_target(quitter, t.job, t.target, t.level)
        assert await store.drop_annotator(quitter)
        moved = await assign(store, bundle, job, 20.0)
        assert {who for *_, who in moved.release} == {quitter}
        assert {who for _, _, who, _ in moved.assign} == {idle}
        taken_over = await store.next_annotation_target(idle)
        assert taken_over is not None and taken_over.target.turn == 2  # exchange 1 was done
        assert (taken_over.exchange_number, taken_over.exchanges) == (1, 2)
        [kept] = await store.annotation_ratings()
        assert kept.annotator == quitter  # their finished rating stays: research data
    finally:
        await store.close()


async def test_on_the_clock_a_silent_annotators_targets_move_and_the_next_deadline_follows(
    tmp_path: Path,
) -> None:
    bundle = load_study("xrec")
    job = bundle.jobs["xrec"].model_copy(update={"drop_out_after": 100.0})
    now = [10.0]
    store = await open_store(tmp_path / "xrec.sqlite", lambda: now[0])
    try:
        await store_study(store, "xrec", "xrec-recommend", XREC)
        await prepare_job(store, bundle, job)
        await store.add_annotators("xrec", [("A-1", "ann-1"), ("A-2", "ann-2"), ("A-3", "ann-3")])
        given, deadline = await assign_on_the_clock(store, bundle, job, 10.0)
        assert len(given.assign) == 6 and deadline == 110.0  # silent since the work was given
        assert await assign_on_the_clock(store, bundle, job, 110.0) == (AssignmentPlan(), 110.0)
        busy = sorted({who for _, _, who, _ in given.assign})
        for who in busy[1:]:  # all but one rate everything
            await rate_all(store, who, {Q1: 1, Q2: 1})
        silent = busy[0]
        now[0] = 111.0
        moved, deadline = await assign_on_the_clock(store, bundle, job, 111.0)
        assert {who for *_, who in moved.release} == {silent}
        assert silent not in {who for _, _, who, _ in moved.assign}
        assert deadline == 211.0  # whoever took their targets is silent from now on
    finally:
        await store.close()
