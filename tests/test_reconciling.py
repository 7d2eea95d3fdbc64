"""ozlab's records matched with Prolific's submissions, without a server: the standings of
participants who left ozlab early, and what the platform does with the study file's codes."""

from __future__ import annotations

from datetime import UTC, datetime

from bot.core.vocabulary import PaymentStatus
from bot.recruitment.prolific import CompletionCode, Submission
from bot.recruitment.reconciling import (
    Ours,
    Standing,
    code_notes,
    match,
    to_ask_return,
    to_reject,
)
from scenarios.models import Recruitment


def submitted(pid: str, code: str | None, asked: bool = False) -> Submission:
    when = datetime(2026, 11, 2, tzinfo=UTC)
    return Submission(
        f"sub-{pid}", pid, "AWAITING REVIEW", when, when, code, when if asked else None
    )


def test_who_left_early_is_asked_to_return_never_rejected() -> None:
    ours = [
        Ours("late", PaymentStatus.TIMED_OUT, 30.0, code="LATE3"),
        Ours("gone", PaymentStatus.TIMED_OUT, 30.0),
        Ours("asked", PaymentStatus.DECLINED, 1.0),
        Ours("shared", PaymentStatus.STARTED, 2.0),
    ]
    rows = match(
        [
            submitted("late", "LATE3"),
            submitted("gone", "C1A2B3C4"),
            submitted("asked", None, asked=True),
            submitted("shared", "C1A2B3C4"),
        ],
        ours,
    )
    assert [r.standing for r in rows] == [
        Standing.ENDED_WITH_CODE,
        Standing.TO_RETURN,
        Standing.RETURN_ASKED,
        Standing.SHARED_CODE,
    ]
    assert [(s.id, reason) for s, reason in to_ask_return(rows)] == [
        ("sub-gone", "Didn't finish the study")
    ]
    assert [s.id for s, _, _ in to_reject(rows)] == ["sub-shared"]


def test_a_submission_without_the_study_s_code_is_asked_to_return_not_rejected() -> None:
    """Turned away by a full design (ozlab keeps nothing of them), or gone before the end:
    a submission without the completion code is no code passed on."""
    ours = [Ours("left", PaymentStatus.STARTED, 2.0), Ours("shared", PaymentStatus.STARTED, 2.0)]
    submissions = [
        submitted("stranger", None),
        submitted("left", "WRONG"),
        submitted("shared", "C1A2B3C4"),
    ]
    rows = match(submissions, ours, frozenset({"C1A2B3C4"}))
    assert [r.standing for r in rows] == [Standing.NO_CODE, Standing.NO_CODE, Standing.SHARED_CODE]
    assert [(s.id, why) for s, why in to_ask_return(rows)] == [
        ("sub-stranger", "Didn't finish the study"),
        ("sub-left", "Didn't finish the study"),
    ]
    assert [s.id for s, _, _ in to_reject(rows)] == ["sub-shared"]
    # Without the study's codes known, any submission of one who did not finish is suspect.
    assert match(submissions, ours)[0].standing is Standing.SHARED_CODE


def test_what_prolific_does_with_the_study_file_s_codes() -> None:
    recruitment = Recruitment(
        completion_code="C1A2B3C4", declined_code="NOCONSENT7", timed_out_code="LATE3"
    )
    codes = [
        CompletionCode("C1A2B3C4", "COMPLETED", ("AUTOMATICALLY_APPROVE",)),
        CompletionCode("NOCONSENT7", "NO_CONSENT", ("AUTOMATICALLY_APPROVE",)),
    ]
    assert code_notes(recruitment, codes) == [
        "declined_code NOCONSENT7: Prolific approves it, paying the study's whole reward",
        "timed_out_code LATE3 is not a completion code of the Prolific study: add it there",
    ]
