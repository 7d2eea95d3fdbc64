"""The platform's submissions matched with ozlab's payment records, participant by
participant (by the platform id, opened from the store's seal), each in one standing: what
``ozlab prolific status`` shows and ``ozlab prolific approve`` acts on.

The completion code is the study's, the same for everyone: who finishes can pass it on, so
a submission that entered it while ozlab never saw its participant finish is told apart
(suggested for rejection, with the platform's reason for a code used without the work).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from enum import StrEnum

from bot.core.vocabulary import PaymentStatus
from bot.recruitment.prolific import Submission

CHECKS_TO_REJECT = 2
"""Failed attention checks that let a submission be rejected: Prolific's policy asks for more
than one in a study of five minutes or more (one only in a shorter one); ozlab asks two."""


class Standing(StrEnum):
    COMPLETED = "completed in both"
    APPROVED = "approved"
    SHARED_CODE = "submitted on Prolific, not finished in ozlab (suggested: reject)"
    FAILED_CHECKS = "failed two attention checks or more (suggested: reject)"
    NOT_SUBMITTED = "finished in ozlab, not submitted on Prolific"
    RETURNED = "returned"
    TIMED_OUT = "timed out"
    REJECTED = "rejected"
    SCREENED_OUT = "screened out"
    UNDER_WAY = "under way"


REJECTABLE: dict[Standing, tuple[str, str]] = {
    # standing: (the platform's rejection category, the message to the participant)
    Standing.SHARED_CODE: (
        "NO_DATA",
        "This submission entered the study's completion code, but our study has no record of"
        " you finishing it: the code is given only at the end of the study, in our Telegram"
        " chat. If this is a mistake, please write to us through Prolific.",
    ),
    Standing.FAILED_CHECKS: (
        "FAILED_CHECK",
        "This submission failed two or more of the attention checks in our study, which the"
        " study's description and Prolific's attention check policy allow us to reject. If"
        " you think this is a mistake, please write to us through Prolific.",
    ),
}


@dataclass(frozen=True)
class Ours:
    """ozlab's record of one platform participant (their id opened, for matching only)."""

    platform_id: str
    status: PaymentStatus
    minutes: float
    row: int = 0  # the payments record, to note what the platform said
    failed_checks: int = 0  # attention checks failed


@dataclass(frozen=True)
class Matched:
    standing: Standing
    submission: Submission | None
    ours: Ours | None


def _standing(submission: Submission | None, ours: Ours | None) -> Standing:
    finished = ours is not None and ours.status is PaymentStatus.COMPLETED
    if submission is None:
        return Standing.NOT_SUBMITTED if finished else Standing.UNDER_WAY
    match submission.status:
        case "APPROVED":
            return Standing.APPROVED
        case "RETURNED":
            return Standing.RETURNED
        case "TIMED-OUT":
            return Standing.TIMED_OUT
        case "REJECTED":
            return Standing.REJECTED
        case "SCREENED OUT":
            return Standing.SCREENED_OUT
        case "AWAITING REVIEW":
            if ours is not None and ours.status is PaymentStatus.SCREENED_OUT:
                return Standing.SCREENED_OUT  # their code was the screen-out's (an onboarding)
            if not finished:
                return Standing.SHARED_CODE
            assert ours is not None
            return (
                Standing.FAILED_CHECKS
                if ours.failed_checks >= CHECKS_TO_REJECT
                else Standing.COMPLETED
            )
        case _:
            return Standing.NOT_SUBMITTED if finished else Standing.UNDER_WAY


def match(submissions: Sequence[Submission], ours: Sequence[Ours]) -> list[Matched]:
    """One row per participant either side knows, the platform's order first."""
    by_id = {o.platform_id: o for o in ours}
    rows = [
        Matched(_standing(s, by_id.get(s.participant_id)), s, by_id.get(s.participant_id))
        for s in submissions
    ]
    submitted = {s.participant_id for s in submissions}
    rows += [Matched(_standing(None, o), None, o) for o in ours if o.platform_id not in submitted]
    return rows


def to_reject(rows: Sequence[Matched]) -> list[tuple[Submission, str, str]]:
    """The submissions ozlab may reject, each with the platform's category and message:
    the study's code without an ozlab completion, and two failed attention checks."""
    return [
        (r.submission, *REJECTABLE[r.standing])
        for r in rows
        if r.submission is not None and r.standing in REJECTABLE
    ]


def to_approve(rows: Sequence[Matched]) -> list[Submission]:
    """Submissions waiting for review whose participant ozlab saw finish, and only those."""
    return [r.submission for r in rows if r.standing is Standing.COMPLETED and r.submission]
