"""AnalyticsSnapshot: every table from one read, the annotators' ratings and jobs with
them (the same rows as ``annotation_ratings()``), and the demo's per-system summary."""

from __future__ import annotations

from dataclasses import fields

from analytics.data.loading import ANNOTATION_COLUMNS
from bot.core.vocabulary import AnswerStatus, EndReason, EventKind, Moment, RatingOutcome
from bot.engine import effects as fx
from bot.store.interface import StudyStore
from bot.store.model import AnnotationRating
from tests.store_contract.records import EXCHANGE, give, ready, rows_into, session, step


async def test_a_snapshot_holds_every_table_with_the_moment_of_each_answer(
    store: StudyStore,
) -> None:
    await store.commit_step(
        step(
            "p",
            *session(),
            fx.RecordResponse(
                "p-1",
                "q",
                "q.a",
                4,
                "Agree",
                None,
                AnswerStatus.ANSWERED,
                999.0,
                Moment.EXCHANGE,
                scope="p-1#turn1",
                turn=1,
            ),
        )
    )
    chunks: dict[str, list[tuple[object, ...]]] = {}
    await store.read_snapshot(rows_into(chunks))
    assert {table: len(rows) for table, rows in chunks.items()} == {
        "participants": 1,
        "sessions": 1,
        "responses": 1,
    }
    [row] = chunks["responses"]
    assert row[15:] == ("exchange", "telegram", None)


async def test_the_demo_summary_counts_sessions_per_system(store: StudyStore) -> None:
    await store.commit_step(
        step(
            "p",
            *session(),
            fx.RecordUserTurn("p-1", 1, "hi"),
            fx.RecordSystemTurn("p-1", 1, "hello", 3.0),
            fx.CloseSession("p-1", EndReason.SUCCESS, True),
            fx.RecordResponse(
                "p-1",
                "q",
                "q.a",
                4,
                "Agree",
                None,
                AnswerStatus.ANSWERED,
                999.0,
                Moment.POST_TASK,
            ),
        )
    )
    [summary] = await store.system_summaries()
    assert (summary.system_id, summary.sessions, summary.succeeded, summary.ended) == (
        "sys", 1, 1, 1,
    )  # fmt: skip
    assert (summary.mean_exchanges, dict(summary.item_means)) == (1.0, {"q.a": 4.0})


async def test_the_demo_summary_puts_a_side_by_side_session_under_its_two_systems(
    store: StudyStore,
) -> None:
    """A side-by-side session met two systems: it is neither one's, but the pair's row,
    with its answers, and never counts as a session the design's system did not complete."""
    await store.commit_step(step("p", *session(), fx.CloseSession("p-1", EndReason.SUCCESS, True)))
    drawn = fx.RecordEvent(EventKind.SIDES_DRAWN, "q-1", {"a": "sys", "b": "other"})
    answer = fx.RecordResponse(
        "q-1", "q", "q.a", 2, "Disagree", None, AnswerStatus.ANSWERED, 999.0, Moment.POST_TASK
    )
    closed = fx.CloseSession("q-1", EndReason.PARTICIPANT_DONE, False)
    await store.commit_step(step("q", *session("q"), drawn, answer, closed))
    rows = {s.system_id: s for s in await store.system_summaries()}
    assert set(rows) == {"sys", "other + sys"}
    own, pair = rows["sys"], rows["other + sys"]
    assert (own.sessions, own.succeeded, own.side_by_side) == (1, 1, False)
    assert (pair.sessions, pair.ended, pair.side_by_side) == (1, 1, True)
    assert dict(pair.item_means) == {"q.a": 2.0} and "q.a" not in own.item_means


async def test_the_snapshot_carries_every_rating(store: StudyStore) -> None:
    info = await store.read_snapshot(lambda table, rows: None)
    assert info.annotations == () and info.annotation_jobs == ()
    sid = await ready(store)
    await give(store, "hri", (f"{sid}#1", EXCHANGE, "A-1"), (f"{sid}#2", EXCHANGE, "A-1"))
    for turn, value in ((1, 4), (2, 2)):
        outcome = await store.record_annotation(
            "A-1", "hri", f"{sid}#{turn}", EXCHANGE, "cues", "cues.exchange", value
        )
        assert outcome is RatingOutcome.RECORDED
    info = await store.read_snapshot(lambda table, rows: None)
    assert list(info.annotations) == await store.annotation_ratings()
    assert list(info.annotation_jobs) == await store.annotation_jobs()
    assert [j.job for j in info.annotation_jobs] == ["hri"]
    assert [(r.target, r.value) for r in info.annotations] == [(f"{sid}#1", "4"), (f"{sid}#2", "2")]


def test_analytics_reads_the_fields_in_their_order() -> None:
    assert [f.name for f in fields(AnnotationRating)] == ANNOTATION_COLUMNS
