"""A local Prolific, written from its public API reference (docs.prolific.com/api-reference),
for the endpoints ozlab uses: the token in ``Authorization: Token …`` (401 otherwise), a
study's ``reward`` in cents, its submissions a page at a time (``page``/``page_size``,
``results`` and ``_links.next.href``), bulk approval by submission ids (only a submission
waiting for review is approved; an approved one stays approved). Faults can be queued per
endpoint: ``429`` (with ``Retry-After``), ``500``, ``slow`` (answers after ``slow_for``
seconds) and ``applied_then_hang`` (the request takes effect, then no answer comes)."""

from __future__ import annotations

import asyncio
from collections import defaultdict, deque
from dataclasses import dataclass, field
from typing import Any

from aiohttp import web

TOKEN = "prolific-test-token-0123456789"


@dataclass
class FakeSubmission:
    id: str
    participant_id: str
    status: str = "AWAITING REVIEW"
    started_at: str = "2026-11-01T10:00:00Z"
    completed_at: str | None = "2026-11-01T10:12:00Z"
    entered_code: str | None = "C1A2B3C4"


@dataclass
class FakeProlific:
    study_id: str
    reward: int = 150  # cents
    submissions: list[FakeSubmission] = field(default_factory=list)
    faults: dict[str, deque[str]] = field(default_factory=lambda: defaultdict(deque))
    requests: list[tuple[str, str]] = field(default_factory=list)
    approvals: list[list[str]] = field(default_factory=list)
    slow_for: float = 5.0
    retry_after: str = "0"
    max_page_size: int = 4  # small, so that a study of a dozen is paginated

    def app(self) -> web.Application:
        app = web.Application()
        app.router.add_get("/api/v1/studies/{id}/", self._study)
        app.router.add_get("/api/v1/submissions/", self._submissions)
        app.router.add_post("/api/v1/submissions/bulk-approve/", self._bulk_approve)
        return app

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
        return web.json_response({"id": self.study_id, "reward": self.reward})

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
        if self.faults["approve-after"] and self.faults["approve-after"].popleft():
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
    }
