"""The platform's submissions matched with ozlab's payment records, participant by
participant (by the platform id, opened from the store's seal), each in one standing: what
``ozlab prolific status`` shows and ``ozlab prolific approve`` acts on.

The completion code is the study's, the same for everyone: who finishes can pass it on, so
a submission that entered it while ozlab never saw its participant finish is told apart
(suggested for rejection, with the platform's reason for a code used without the work).
Not so for a participant ozlab screened out, who declined or timed out: their submission is
left to the researcher when it entered the code the study gave them for it, else they are
asked to return it (Prolific allows no rejection for a screen-out).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from enum import StrEnum

from bot.core.visible_text import visible
from bot.core.vocabulary import PaymentStatus
from bot.recruitment.prolific import CompletionCode, Submission
from scenarios.models import Recruitment

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
    ENDED_WITH_CODE = "ended in ozlab with the code for it (review on Prolific)"
    TO_RETURN = "screened out, declined or timed out in ozlab (suggested: ask for a return)"
    NO_CODE = (
        "submitted without the study's code, not finished in ozlab (suggested: ask for a return)"
    )
    RETURN_ASKED = "not finished in ozlab, asked to return"
    UNDER_WAY = "under way"


NOT_FINISHED = "Didn't finish the study"
"""The reason to return a submission that did not enter the study's code, as Prolific's."""

LEFT_EARLY = {
    # how a part ended in ozlab before its end: the reason a return is asked for, in the
    # words of Prolific's own reasons
    PaymentStatus.SCREENED_OUT: "Did not meet the study's screening criteria",
    PaymentStatus.DECLINED: "Withdrew consent",
    PaymentStatus.TIMED_OUT: NOT_FINISHED,
}
"""Endings before the end: never rejected (Prolific counts a screen-out no reason to reject,
and asks for a return when consent was withdrawn or the study not finished)."""


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
    code: str | None = None  # the code the study gave for how their part ended, if any


@dataclass(frozen=True)
class Matched:
    standing: Standing
    submission: Submission | None
    ours: Ours | None


def _standing(
    submission: Submission | None, ours: Ours | None, completion_codes: frozenset[str]
) -> Standing:
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
        case "AWAITING REVIEW" if not finished and submission.return_requested:
            return Standing.RETURN_ASKED
        case "AWAITING REVIEW" if ours is not None and ours.status in LEFT_EARLY:
            told = ours.code is not None and submission.entered_code == ours.code
            return Standing.ENDED_WITH_CODE if told else Standing.TO_RETURN
        case "AWAITING REVIEW":
            shared = not completion_codes or submission.entered_code in completion_codes
            if not finished:
                return Standing.SHARED_CODE if shared else Standing.NO_CODE
            assert ours is not None
            return (
                Standing.FAILED_CHECKS
                if ours.failed_checks >= CHECKS_TO_REJECT
                else Standing.COMPLETED
            )
        case _:
            return Standing.NOT_SUBMITTED if finished else Standing.UNDER_WAY


def match(
    submissions: Sequence[Submission],
    ours: Sequence[Ours],
    completion_codes: frozenset[str] = frozenset(),
) -> list[Matched]:
    """One row per participant either side knows, the platform's order first.
    ``completion_codes``: the studies' codes for a completion, which tell a code passed on
    from a submission without it (anyone's code counts when none are known)."""
    by_id = {o.platform_id: o for o in ours}
    rows = [
        Matched(
            _standing(s, by_id.get(s.participant_id), completion_codes),
            s,
            by_id.get(s.participant_id),
        )
        for s in submissions
    ]
    submitted = {s.participant_id for s in submissions}
    rows += [
        Matched(_standing(None, o, completion_codes), None, o)
        for o in ours
        if o.platform_id not in submitted
    ]
    return rows


def to_reject(rows: Sequence[Matched]) -> list[tuple[Submission, str, str]]:
    """The submissions ozlab may reject, each with the platform's category and message:
    the study's code without an ozlab completion, and two failed attention checks."""
    return [
        (r.submission, *REJECTABLE[r.standing])
        for r in rows
        if r.submission is not None and r.standing in REJECTABLE
    ]


def to_ask_return(rows: Sequence[Matched]) -> list[tuple[Submission, str]]:
    """The submissions of participants who left ozlab early (screened out, declined, timed
    out) or submitted without the study's code (turned away by a full design, or gone
    before the end), not asked yet: each with the reason to return it."""
    return [
        (r.submission, LEFT_EARLY.get(r.ours.status, NOT_FINISHED) if r.ours else NOT_FINISHED)
        for r in rows
        if r.standing in (Standing.TO_RETURN, Standing.NO_CODE) and r.submission is not None
    ]


def to_approve(rows: Sequence[Matched]) -> list[Submission]:
    """Submissions waiting for review whose participant ozlab saw finish, and only those."""
    return [r.submission for r in rows if r.standing is Standing.COMPLETED and r.submission]


_CODES = (
    ("completion_code", PaymentStatus.COMPLETED),
    ("screened_out_code", PaymentStatus.SCREENED_OUT),
    ("declined_code", PaymentStatus.DECLINED),
    ("timed_out_code", PaymentStatus.TIMED_OUT),
)


def code_notes(recruitment: Recruitment, codes: Sequence[CompletionCode]) -> list[str]:
    """What the platform does with each code the study file gives: one it does not know
    (whoever enters it shows as NOCODE), an early ending it approves automatically (paid
    the whole reward), a screen-out it pays by itself (a fixed screen-out payment)."""
    on_platform = {c.code: c for c in codes}
    notes = []
    for field, status in _CODES:
        code = getattr(recruitment, field)
        if code is None:
            continue
        found = on_platform.get(code)
        named = f"{field} {visible(code)}"
        if found is None:
            notes.append(f"{named} is not a completion code of the Prolific study: add it there")
        elif status is not PaymentStatus.COMPLETED and "AUTOMATICALLY_APPROVE" in found.actions:
            notes.append(f"{named}: Prolific approves it, paying the study's whole reward")
        elif "FIXED_SCREEN_OUT_PAYMENT" in found.actions:
            reward = (
                ""
                if found.screen_out_reward is None
                else f" of {found.screen_out_reward / 100:.2f}"
            )
            notes.append(
                f"{named}: Prolific screens out and pays its fixed screen-out reward{reward} itself"
            )
    return notes
