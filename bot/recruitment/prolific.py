"""Prolific's API, the endpoints ``ozlab prolific`` uses, as its public reference describes
them (https://docs.prolific.com/api-reference):

- ``GET /api/v1/studies/{id}/``: the study, for its reward (in cents) and its
  ``completion_codes`` (each ``code``, ``code_type`` and ``actions``; a custom screening
  code's ``FIXED_SCREEN_OUT_PAYMENT`` action with its ``fixed_screen_out_reward`` in cents);
- ``GET /api/v1/submissions/?study={id}&page_size=…``: the study's submissions, a page at a
  time (``results``, and ``_links.next.href`` while there are more);
- ``POST /api/v1/submissions/bulk-approve/`` with ``submission_ids``: approval of many
  submissions at once (the reference recommends submission ids over participant ids);
- ``POST /api/v1/submissions/{id}/transition/`` with ``action: REJECT``, a
  ``rejection_category`` and a ``message`` of 100 characters or more;
- ``GET /api/v1/submissions/{id}/``: a submission's ``bonus_payments`` (cents);
- ``POST /api/v1/submissions/bonus-payments/`` with ``study_id`` and ``csv_bonuses``: a bulk
  bonus set up (its ``id``, ``amount``, ``fees``, ``total_amount``), not paid;
- ``POST /api/v1/bulk-bonus-payments/{id}/pay/``: paid, asynchronously. Not idempotent: the
  reference warns that a second request pays everyone again;
- ``POST /api/v1/submissions/{id}/request-return/`` with ``request_return_reasons``: the
  participant is asked to return their submission (an experimental endpoint, the reference
  says; Prolific words the message around the reasons). Moves no money.

Every request carries ``Authorization: Token <token>``. A ``429`` is waited out as its
``Retry-After`` says and tried again; a ``5xx`` or a lost connection is tried again only for a
reading (a GET); anything else ends the command in one line. No message ever holds the token
or a participant's id: the platform's error bodies can name participants, so they are not
repeated.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import aiohttp

from bot.core.errors import PlatformError

_PAGE_SIZE = 200
_TRIES = 5
_LONGEST_WAIT = 60.0


class Refused(PlatformError):
    """The platform answered, and said no (a 4xx): the request was not applied."""


@dataclass(frozen=True)
class Submission:
    """One submission as the platform lists it (the participant's id is the platform's)."""

    id: str
    participant_id: str
    status: str  # ACTIVE, AWAITING REVIEW, APPROVED, REJECTED, RETURNED, TIMED-OUT, SCREENED OUT
    started_at: datetime | None
    completed_at: datetime | None
    entered_code: str | None
    return_requested: datetime | None = None  # when the participant was asked to return it

    @property
    def minutes(self) -> float | None:
        """The time taken by the platform's clock, from its start to its completion."""
        if self.started_at is None or self.completed_at is None:
            return None
        return (self.completed_at - self.started_at).total_seconds() / 60


def _when(raw: object) -> datetime | None:
    if not isinstance(raw, str) or not raw:
        return None
    try:
        return datetime.fromisoformat(raw.replace("Z", "+00:00"))
    except ValueError:
        return None


def _submission(raw: Mapping[str, Any]) -> Submission:
    participant = raw.get("participant_id") or raw.get("participant") or ""
    return Submission(
        id=str(raw.get("id", "")),
        participant_id=str(participant),
        status=str(raw.get("status", "")).upper().replace("_", " "),
        started_at=_when(raw.get("started_at")),
        completed_at=_when(raw.get("completed_at")),
        entered_code=raw.get("entered_code") or raw.get("study_code"),
        return_requested=_when(raw.get("return_requested")),
    )


class Prolific:
    """A session with the platform for one command; ``timeout``: seconds a request may take."""

    def __init__(self, token: str, base_url: str, *, timeout: float = 30.0) -> None:
        self._base = base_url.rstrip("/")
        self._session = aiohttp.ClientSession(
            headers={"Authorization": f"Token {token}"},
            timeout=aiohttp.ClientTimeout(total=timeout),
        )

    async def close(self) -> None:
        await self._session.close()

    async def __aenter__(self) -> Prolific:
        return self

    async def __aexit__(self, *_: object) -> None:
        await self.close()

    async def _request(
        self, method: str, url: str, what: str, body: Mapping[str, Any] | None = None
    ) -> Any:
        """The answer's JSON; waits out a 429, tries a reading again after a 5xx."""
        reading = method == "GET"
        for attempt in range(1, _TRIES + 1):
            last = attempt == _TRIES
            try:
                async with self._session.request(method, url, json=body) as answer:
                    if answer.status == 429 and not last:
                        await asyncio.sleep(_retry_after(answer.headers.get("Retry-After")))
                        continue
                    if answer.status >= 500 and reading and not last:
                        continue
                    if answer.status == 401:
                        raise Refused(f"Prolific refused the token to {what}")
                    if answer.status == 404:
                        raise Refused(f"Prolific does not know what was asked to {what}")
                    if 400 <= answer.status < 500:
                        raise Refused(f"Prolific answered {answer.status} to {what}")
                    if answer.status >= 500:
                        raise PlatformError(f"Prolific answered {answer.status} to {what}")
                    if answer.status == 204:
                        return None
                    return await answer.json(content_type=None)
            except (TimeoutError, aiohttp.ClientError) as error:
                if reading and not last:
                    continue
                kind = (
                    "did not answer in time"
                    if isinstance(error, TimeoutError)
                    else "cannot be reached"
                )
                raise PlatformError(f"Prolific {kind} ({self._base}) to {what}") from None
        raise AssertionError("unreachable: the last attempt returns or raises")

    async def completion_codes(self, study_id: str) -> list[CompletionCode]:
        """The study's ``completion_codes``: each code, its ``code_type`` and the
        ``actions`` Prolific takes when a participant enters it."""
        study = await self._request(
            "GET", f"{self._base}/api/v1/studies/{study_id}/", "read the study"
        )
        return [_completion_code(raw) for raw in study.get("completion_codes") or ()]

    async def reward_cents(self, study_id: str) -> float:
        """What one approved submission pays (the study's ``reward``, in cents)."""
        study = await self._request(
            "GET", f"{self._base}/api/v1/studies/{study_id}/", "read the study"
        )
        return float(study.get("reward") or 0)

    async def submissions(self, study_id: str) -> list[Submission]:
        """Every submission of the study, page after page."""
        url: str | None = (
            f"{self._base}/api/v1/submissions/?study={study_id}&page_size={_PAGE_SIZE}"
        )
        found: list[Submission] = []
        while url:
            page = await self._request("GET", url, "list the study's submissions")
            found += [_submission(raw) for raw in page.get("results", ())]
            following = (page.get("_links") or {}).get("next") or {}
            url = following.get("href") if isinstance(following, dict) else None
        return found

    async def bonus_payments(self, submission_id: str) -> list[float]:
        """The bonuses paid on a submission so far, in cents (``bonus_payments``)."""
        raw = await self._request(
            "GET", f"{self._base}/api/v1/submissions/{submission_id}/", "read a submission"
        )
        return [float(b) for b in raw.get("bonus_payments") or ()]

    async def set_up_bonuses(self, study_id: str, cents: Mapping[str, int]) -> BulkBonus:
        """``POST /api/v1/submissions/bonus-payments/``: set up, not paid (safe to repeat)."""
        raw = await self._request(
            "POST",
            f"{self._base}/api/v1/submissions/bonus-payments/",
            f"set up the bonuses of {len(cents)} participants",
            {"study_id": study_id, "csv_bonuses": csv_bonuses(cents)},
        )
        return BulkBonus(
            id=str(raw["id"]),
            amount=float(raw.get("amount") or 0),
            fees=float(raw.get("fees") or 0),
            total_amount=float(raw.get("total_amount") or 0),
        )

    async def pay_bonuses(self, bulk_id: str) -> None:
        """``POST /api/v1/bulk-bonus-payments/{id}/pay/``: not idempotent, never repeated
        here (a 429 only, which the platform did not apply); the money path decides."""
        await self._request(
            "POST",
            f"{self._base}/api/v1/bulk-bonus-payments/{bulk_id}/pay/",
            "pay the bonuses",
        )

    async def reject(self, submission_id: str, category: str, message: str) -> None:
        """``POST /api/v1/submissions/{id}/transition/`` with ``REJECT``, the platform's
        ``rejection_category`` and a ``message`` to the participant (100 characters or more).
        Idempotent, as the reference says."""
        await self._request(
            "POST",
            f"{self._base}/api/v1/submissions/{submission_id}/transition/",
            "reject a submission",
            {"action": "REJECT", "rejection_category": category, "message": message},
        )

    async def request_return(self, submission_id: str, reasons: list[str]) -> None:
        """``POST /api/v1/submissions/{id}/request-return/``: the participant is asked to
        return the submission, for ``reasons`` (free text; Prolific's own: "Didn't finish
        the study", "Encountered technical problems", "Withdrew consent")."""
        await self._request(
            "POST",
            f"{self._base}/api/v1/submissions/{submission_id}/request-return/",
            "ask a participant to return a submission",
            {"request_return_reasons": reasons},
        )

    async def bulk_approve(self, submission_ids: list[str]) -> None:
        await self._request(
            "POST",
            f"{self._base}/api/v1/submissions/bulk-approve/",
            f"approve {len(submission_ids)} submissions",
            {"submission_ids": submission_ids},
        )


@dataclass(frozen=True)
class CompletionCode:
    """A code of the study on the platform and what entering it does (``actions``:
    ``AUTOMATICALLY_APPROVE``, ``MANUALLY_REVIEW``, ``FIXED_SCREEN_OUT_PAYMENT``, …)."""

    code: str
    code_type: str
    actions: tuple[str, ...]
    screen_out_reward: float | None = None  # cents: a fixed screen-out payment's reward


def _completion_code(raw: Mapping[str, Any]) -> CompletionCode:
    actions = [a for a in raw.get("actions") or () if isinstance(a, Mapping)]
    rewards = [a.get("fixed_screen_out_reward") for a in actions]
    reward = next((float(r) for r in rewards if isinstance(r, int | float)), None)
    return CompletionCode(
        code=str(raw.get("code", "")),
        code_type=str(raw.get("code_type", "")),
        actions=tuple(str(a.get("action", "")) for a in actions),
        screen_out_reward=reward,
    )


@dataclass(frozen=True)
class BulkBonus:
    """A bulk bonus payment as the platform set it up (amounts in cents), not paid yet."""

    id: str
    amount: float
    fees: float
    total_amount: float


def csv_bonuses(cents: Mapping[str, int]) -> str:
    """The ``csv_bonuses`` field: ``<participant_id>,<amount>`` lines, in the study's
    currency as a decimal (the reference warns that 30 pays 30.00)."""
    return "".join(f"{pid},{amount // 100}.{amount % 100:02d}\n" for pid, amount in cents.items())


def _retry_after(header: str | None) -> float:
    try:
        return min(max(float(header or 1), 0.0), _LONGEST_WAIT)
    except ValueError:
        return 1.0
