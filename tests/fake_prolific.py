"""A local Prolific, written from its public API reference (docs.prolific.com/api-reference),
for the endpoints ozlab uses: the token in ``Authorization: Token …`` (401 otherwise), a
study's ``reward`` in cents and ``completion_codes`` (with their ``actions``), its
submissions a page at a time (``page``/``page_size``, ``results`` and ``_links.next.href``),
bulk approval by submission ids (only a submission waiting for review is approved; an
approved one stays approved), a request to return a submission (its reasons required; the
submission then shows ``return_requested``). Faults can be queued per endpoint: ``429``
(with ``Retry-After``), ``500``, ``slow`` (answers after ``slow_for`` seconds) and
``applied_then_hang`` (the request takes effect, then no answer comes)."""

from __future__ import annotations

import asyncio
from collections import defaultdict, deque
from dataclasses import dataclass, field
from typing import Any

from aiohttp import web

TOKEN = "prolific-test-token-0123456789"


REJECTION_CATEGORIES = frozenset(
    (
        "TOO_QUICKLY",
        "TOO_SLOWLY",
        "FAILED_INSTRUCTIONS",
        "INCOMP_LONGITUDINAL",
        "FAILED_CHECK",
        "LOW_EFFORT",
        "MALINGERING",
        "NO_CODE",
        "BAD_CODE",
        "NO_DATA",
        "UNSUPP_DEVICE",
        "OTHER",
    )
)


@dataclass
class FakeSubmission:
    id: str
    participant_id: str
    status: str = "AWAITING REVIEW"
    started_at: str = "2026-11-01T10:00:00Z"
    completed_at: str | None = "2026-11-01T10:12:00Z"
    entered_code: str | None = "C1A2B3C4"
    bonus_payments: list[float] = field(default_factory=list)  # cents, as paid
    return_requested: str | None = None  # when the participant was asked to return it


@dataclass
class FakeProlific:
    study_id: str
    reward: int = 150  # cents
    completion_codes: list[dict[str, Any]] = field(
        default_factory=lambda: [
            {
                "code": "C1A2B3C4",
                "code_type": "COMPLETED",
                "actions": [{"action": "MANUALLY_REVIEW"}],
            }
        ]
    )
    submissions: list[FakeSubmission] = field(default_factory=list)
    faults: dict[str, deque[str]] = field(default_factory=lambda: defaultdict(deque))
    requests: list[tuple[str, str]] = field(default_factory=list)
    approvals: list[list[str]] = field(default_factory=list)
    bulks: dict[str, dict[str, int]] = field(default_factory=dict)  # id -> cents per participant
    rejections: list[tuple[str, str]] = field(default_factory=list)
    return_requests: list[tuple[str, list[str]]] = field(default_factory=list)
    pays: list[str] = field(default_factory=list)  # every pay request applied, repeats included
    hanging: asyncio.Event = field(default_factory=asyncio.Event)
    slow_for: float = 5.0
    retry_after: str = "0"
    max_page_size: int = 4  # small, so that a study of a dozen is paginated

    def app(self) -> web.Application:
        app = web.Application()
        app.router.add_get("/api/v1/studies/{id}/", self._study)
        app.router.add_get("/api/v1/submissions/", self._submissions)
        app.router.add_post("/api/v1/submissions/bulk-approve/", self._bulk_approve)
        app.router.add_post("/api/v1/submissions/bonus-payments/", self._set_up_bonuses)
        app.router.add_get("/api/v1/submissions/{id}/", self._submission)
        app.router.add_post("/api/v1/submissions/{id}/transition/", self._transition)
        app.router.add_post("/api/v1/submissions/{id}/request-return/", self._request_return)
        app.router.add_post("/api/v1/bulk-bonus-payments/{id}/pay/", self._pay)
        return app

    async def _hang(self) -> None:
        """No answer, ever (the command is killed, or gives up waiting)."""
        self.hanging.set()
        await asyncio.sleep(3600)

    async def _submission(self, request: web.Request) -> web.Response:
        if (refused := await self._guard(request, "submission")) is not None:
            return refused
        found = [s for s in self.submissions if s.id == request.match_info["id"]]
        if not found:
            return web.json_response({"error": {"detail": "Not found."}}, status=404)
        return web.json_response({**_listed(found[0]), "bonus_payments": found[0].bonus_payments})

    async def _set_up_bonuses(self, request: web.Request) -> web.Response:
        """Set up, not paid; 400 naming what is wrong when an id took no part."""
        if (refused := await self._guard(request, "set-up")) is not None:
            return refused
        if self._take("set-up-hang-before"):
            await self._hang()
        body = await request.json()
        by_participant = {s.participant_id for s in self.submissions}
        cents: dict[str, int] = {}
        for line in str(body.get("csv_bonuses") or "").splitlines():
            pid, _, amount = line.partition(",")
            if pid not in by_participant or body.get("study_id") != self.study_id:
                return web.json_response(
                    {"error": {"detail": [f"{pid} is not in the study"]}}, status=400
                )
            cents[pid] = round(float(amount) * 100)
        bulk_id = f"bulk{len(self.bulks) + 1:020d}"
        self.bulks[bulk_id] = cents
        amount = sum(cents.values())
        fees = round(amount / 3)
        if self._take("set-up-hang-after"):
            await self._hang()
        return web.json_response(
            {
                "id": bulk_id,
                "study": self.study_id,
                "amount": amount,
                "fees": fees,
                "total_amount": amount + fees,
            },
            status=201,
        )

    async def _pay(self, request: web.Request) -> web.Response:
        """Not idempotent, as the reference warns: each request pays everyone again."""
        if (refused := await self._guard(request, "pay")) is not None:
            return refused
        if self._take("pay-hang-before"):
            await self._hang()
        bulk = self.bulks.get(request.match_info["id"])
        if bulk is None:
            return web.json_response({"error": {"detail": "Not found."}}, status=404)
        for s in self.submissions:
            if s.participant_id in bulk:
                s.bonus_payments.append(float(bulk[s.participant_id]))
        self.pays.append(request.match_info["id"])
        if self._take("pay-hang-after"):
            await self._hang()
        return web.json_response({}, status=202)

    async def _transition(self, request: web.Request) -> web.Response:
        """REJECT needs a category and a message of 100 characters or more; a completed
        submission only; the same request again is ignored (idempotent)."""
        if (refused := await self._guard(request, "transition")) is not None:
            return refused
        body = await request.json()
        found = [s for s in self.submissions if s.id == request.match_info["id"]]
        if not found:
            return web.json_response({"error": {"detail": "Not found."}}, status=404)
        submission = found[0]
        if body.get("action") != "REJECT" or len(str(body.get("message") or "")) < 100:
            return web.json_response({"error": {"detail": "Invalid request."}}, status=400)
        if body.get("rejection_category") not in REJECTION_CATEGORIES:
            return web.json_response({"error": {"detail": "Invalid category."}}, status=400)
        if submission.status == "AWAITING REVIEW":
            submission.status = "REJECTED"
            self.rejections.append((submission.id, str(body["rejection_category"])))
        elif submission.status != "REJECTED":
            return web.json_response({"error": {"detail": "Cannot transition."}}, status=400)
        return web.json_response(_listed(submission))

    async def _request_return(self, request: web.Request) -> web.Response:
        """A message to the participant asking to return the submission: the reasons are
        required (free text); the submission shows when it was asked."""
        if (refused := await self._guard(request, "request-return")) is not None:
            return refused
        body = await request.json()
        reasons = body.get("request_return_reasons")
        found = [s for s in self.submissions if s.id == request.match_info["id"]]
        if not found:
            return web.json_response({"error": {"detail": "Not found."}}, status=404)
        if not isinstance(reasons, list) or not reasons or not all(reasons):
            return web.json_response({"error": {"detail": "Reasons are required."}}, status=400)
        submission = found[0]
        submission.return_requested = "2026-11-02T09:00:00Z"
        self.return_requests.append((submission.id, [str(r) for r in reasons]))
        return web.json_response(
            {
                "id": submission.id,
                "status": submission.status,
                "participant": submission.participant_id,
                "return_requested": submission.return_requested,
            }
        )

    def _take(self, fault: str) -> bool:
        queued = self.faults[fault]
        return bool(queued) and bool(queued.popleft())

    def bonuses_of(self, participant_id: str) -> list[float]:
        return next(
            s.bonus_payments for s in self.submissions if s.participant_id == participant_id
        )

    def fault(self, endpoint: str, *kinds: str) -> None:
        """Queue faults for the next requests to ``endpoint`` (a route name, e.g. "approve")."""
        self.faults[endpoint].extend(kinds)

    async def _guard(self, request: web.Request, endpoint: str) -> web.Response | None:
        """The token, then an injected fault, if any, for this request."""
        self.requests.append((request.method, request.path_qs))
        if request.headers.get("Authorization") != f"Token {TOKEN}":
            return web.json_response({"error": {"detail": "Invalid token."}}, status=401)
        queued = self.faults[endpoint]
        fault = queued.popleft() if queued else None
        if fault == "429":
            return web.json_response(
                {"error": {"detail": "Request was throttled."}},
                status=429,
                headers={"Retry-After": self.retry_after},
            )
        if fault == "500":
            return web.json_response({"error": {"detail": "Server error"}}, status=500)
        if fault == "slow":
            await asyncio.sleep(self.slow_for)
        return None

    async def _study(self, request: web.Request) -> web.Response:
        if (refused := await self._guard(request, "study")) is not None:
            return refused
        if request.match_info["id"] != self.study_id:
            return web.json_response({"error": {"detail": "Not found."}}, status=404)
        return web.json_response(
            {"id": self.study_id, "reward": self.reward, "completion_codes": self.completion_codes}
        )

    async def _submissions(self, request: web.Request) -> web.Response:
        if (refused := await self._guard(request, "submissions")) is not None:
            return refused
        if request.query.get("study") != self.study_id:
            return web.json_response({"results": [], "_links": {"next": {"href": None}}})
        size = min(int(request.query.get("page_size", "20")), self.max_page_size)
        page = int(request.query.get("page", "1"))
        chosen = self.submissions[(page - 1) * size : page * size]
        more = page * size < len(self.submissions)
        following = (
            str(request.url.update_query({"page": str(page + 1), "page_size": str(size)}))
            if more
            else None
        )
        return web.json_response(
            {
                "results": [_listed(s) for s in chosen],
                "_links": {"next": {"href": following}},
                "meta": {"count": len(self.submissions)},
            }
        )

    async def _bulk_approve(self, request: web.Request) -> web.Response:
        if (refused := await self._guard(request, "approve")) is not None:
            return refused
        body = await request.json()
        ids = list(body.get("submission_ids") or ())
        by_id = {s.id: s for s in self.submissions}
        if not ids or any(i not in by_id for i in ids):
            return web.json_response({"error": {"detail": "Unknown submissions."}}, status=400)
        for i in ids:
            if by_id[i].status == "AWAITING REVIEW":
                by_id[i].status = "APPROVED"
        self.approvals.append(ids)
        if self._take("approve-after"):
            await asyncio.sleep(self.slow_for)  # applied, and the answer never comes in time
        return web.json_response("The request to bulk approve has been made successfully.")

    def status_of(self, participant_id: str) -> str:
        return next(s.status for s in self.submissions if s.participant_id == participant_id)


def _listed(s: FakeSubmission) -> dict[str, Any]:
    return {
        "id": s.id,
        "participant_id": s.participant_id,
        "status": s.status,
        "started_at": s.started_at,
        "completed_at": s.completed_at,
        "entered_code": s.entered_code,
        "return_requested": s.return_requested,
    }
