"""The annotators' ratings and the jobs come with the snapshot analytics reads: the same
rows as ``annotation_ratings()`` and ``annotation_jobs()``, from the same read as sessions
and answers (issue 11)."""

from __future__ import annotations

from dataclasses import fields

from analytics.data import ANNOTATION_COLUMNS
from bot.store.interface import StudyStore
from bot.store.model import AnnotationRating
from bot.vocabulary import RatingOutcome
from tests.store_contract.test_annotation_contract import EXCHANGE, give, ready


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
