"""Data-quality flags on a real study database, and the report without the flagged."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from analytics.data.loading import load_study_data
from analytics.data.synthetic import synthetic_bundle
from analytics.report.numbers import build_report
from analytics.statistics.quality import (
    ReadingTime,
    exclude_flagged,
    flagged_participants,
    quality_flags,
    reading_times,
)
from bot.core.vocabulary import AnswerStatus, Consent, EndReason, Moment, SessionState
from bot.engine import effects as fx
from bot.store.definition import definition_json
from bot.store.model import StepCommit
from bot.store.sqlite import SqliteStore, open_store

POST = "synthetic-post"
Q1_TEXT = "The assistant understood what I wanted."  # 39 characters
Q1_MINIMUM = 0.5 + 0.03 * len(Q1_TEXT)  # 1.67 s


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


# The post-task answers of each participant: q2 is reverse-worded, q4 an attention check
# ("Please choose Agree", 4), and how many seconds each answer took.
PARTICIPANTS = {
    "good": ([4, 2, 4, 4, 5], 5.0),
    "inattentive": ([4, 2, 4, 1, 5], 5.0),
    "liner": ([5, 5, 5, 4, 5], 5.0),  # the same answer everywhere but the attention check
    "neutral": ([3, 3, 3, 4, 3], 5.0),  # the midpoint throughout: not a contradiction
    "speedy": ([4, 2, 4, 4, 4], 0.3),
    "quitter": ([4, 2, 4, 4, 5], 5.0),
}


async def _study(db: Path) -> None:
    clock = Clock()
    store = await open_store(db, clock)
    bundle = synthetic_bundle(2, "between")
    try:
        await store.record_definition("synthetic", definition_json(bundle))
        for index, (participant, (answers, took)) in enumerate(PARTICIPANTS.items()):
            session, start = f"{participant}-1", 1000.0 * (index + 1)
            system = ("system-a", "system-b")[index % 2]
            records: list[fx.Record] = [
                fx.RecordConsent(Consent.ACCEPTED),
                fx.OpenSession(session, "find-gift", system, 0, "balanced", "1"),
                fx.CloseSession(session, EndReason.SUCCESS, True),
            ]
            clock.now = start
            await _commit(store, participant, records)
            for n, value in enumerate(answers, start=1):
                shown = start + 10 * n
                clock.now = shown + took
                ok = None if n != 4 else value == 4
                answer = fx.RecordResponse(
                    session, POST, f"{POST}.q{n}", value, None, None, AnswerStatus.ANSWERED,
                    shown, Moment.POST_TASK, attention_ok=ok,
                )  # fmt: skip
                await _commit(store, participant, [answer])
            state = SessionState.ABANDONED if participant == "quitter" else SessionState.ENDED
            await _commit(store, participant, [fx.SetSessionState(session, state)])
    finally:
        await store.close()


async def _commit(store: SqliteStore, participant: str, records: list[fx.Record]) -> None:
    await store.commit_step(StepCommit("synthetic", participant, "{}", None, None, records))


@pytest.fixture
async def data(tmp_path: Path):
    await _study(tmp_path / "study.sqlite")
    return load_study_data(tmp_path / "study.sqlite")


async def test_each_kind_of_flag_finds_its_participant(data) -> None:
    flags = quality_flags(data)
    found = {(row.participant_id, row.flag) for row in flags.itertuples()}
    assert found == {
        ("inattentive", "attention_failed"),
        ("liner", "straight_lining"),
        ("speedy", "too_fast"),
        ("quitter", "abandoned"),
    }
    details = dict(zip(flags["flag"], flags["detail"], strict=True))
    assert details["attention_failed"] == "failed synthetic-post.q4"
    assert details["straight_lining"] == "synthetic-post (liner-1): all 5"
    assert details["too_fast"] == "5 of 5 answers faster than reading time (median 0.3 s)"
    assert details["abandoned"] == "1 of 1 sessions abandoned"
    people = flagged_participants(flags)
    assert list(people["participant_id"]) == ["inattentive", "liner", "quitter", "speedy"]


async def test_flags_do_not_depend_on_the_order_answers_come_in(data) -> None:
    shuffled = replace(data, responses=data.responses.sample(frac=1.0, random_state=7))
    assert quality_flags(shuffled).equals(quality_flags(data))


async def test_reading_time_is_half_a_second_plus_3_ms_per_character(data) -> None:
    times = reading_times(data.responses, data.items)
    q1 = times[times["item_id"] == f"{POST}.q1"]
    assert q1["minimum"].tolist() == pytest.approx([Q1_MINIMUM] * len(PARTICIPANTS))
    strict = ReadingTime(base_s=0.5, per_char_s=0.03, too_fast_share=0.2)
    assert strict.describe().startswith("answered sooner than 0.5 s + 0.03 s per character")
    # 5.0 s is plausible for every item here, 0.3 s for none of them.
    slow = ReadingTime(base_s=5.1, per_char_s=0.0)
    flags = quality_flags(data, slow)
    assert set(flags.loc[flags["flag"] == "too_fast", "participant_id"]) == set(PARTICIPANTS)


async def test_excluding_the_flagged_reruns_the_report_without_them(data) -> None:
    flags = quality_flags(data)
    kept, exclusion = exclude_flagged(data, flags)
    assert (exclusion.participants_before, exclusion.excluded) == (6, 4)
    assert dict(zip(exclusion.by_flag["flag"], exclusion.by_flag["participants"], strict=True)) == {
        "attention_failed": 1,
        "straight_lining": 1,
        "too_fast": 1,
        "abandoned": 1,
    }
    assert set(kept.responses["participant_id"]) == {"good", "neutral"}
    assert set(kept.sessions["participant_id"]) == {"good", "neutral"}
    only_attention, summary = exclude_flagged(data, flags, kinds=["attention_failed"])
    assert summary.excluded == 1 and len(only_attention.participants) == 5

    report = build_report(data, exclude_flagged=True)
    assert report.participation.overall["participants"] == 2
    assert report.quality.exclusion is not None and report.quality.exclusion.excluded == 4
    assert len(report.quality.flags) == 4  # the flags are still listed
    assert any(note.startswith("4 of 6 participants were excluded") for note in report.notes)
    assert build_report(data).quality.exclusion is None
