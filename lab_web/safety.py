"""What every response and every action goes through: security headers (a Content-Security-
Policy without inline scripts, no framing, no referrer), and the checks on an action (any
request that is not a GET): the session's CSRF token in the form, and an Origin (or
Sec-Fetch-Site) that is the page's own."""

from __future__ import annotations

import hmac
import secrets
from collections.abc import Awaitable, Callable
from urllib.parse import urlsplit

from aiohttp import web
from aiohttp_session import Session, get_session

CSP = (
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:;"
    " connect-src 'self'; frame-src 'self'; form-action 'self'; frame-ancestors 'none';"
    " base-uri 'none'"
)
REPORT_CSP = (
    "default-src 'none'; style-src 'unsafe-inline'; img-src data:; frame-ancestors 'self';"
    " base-uri 'none'; form-action 'none'; sandbox"
)
"""The report is the analytics' own HTML (its styles inline, figures as data: URLs): shown
sandboxed, with no script at all."""
CSRF_FIELD = "csrf_token"
CSRF_HEADER = "X-CSRF-Token"
SAFE = frozenset({"GET", "HEAD", "OPTIONS"})

Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]


def csrf_token(session: Session) -> str:
    """The session's token, made on first use."""
    token = session.get("csrf")
    if not isinstance(token, str):
        token = secrets.token_urlsafe(32)
        session["csrf"] = token
    return token


def same_origin(request: web.Request) -> bool:
    """Whether the request comes from the page itself, as the browser says: its Origin's
    host is the one asked, or (no Origin) Sec-Fetch-Site does not say cross-site."""
    origin = request.headers.get("Origin")
    if origin is not None:
        return origin != "null" and urlsplit(origin).netloc == request.host
    return request.headers.get("Sec-Fetch-Site", "same-origin") in ("same-origin", "none")


def headers(*, behind_tls: bool) -> Callable[[web.Request, web.StreamResponse], Awaitable[None]]:
    """What sets every response's headers as it is prepared (errors and streams too);
    behind a TLS proxy, browsers are also told to come back over HTTPS only."""

    async def secure(request: web.Request, response: web.StreamResponse) -> None:
        response.headers.setdefault("Content-Security-Policy", CSP)
        response.headers["X-Content-Type-Options"] = "nosniff"
        response.headers["Referrer-Policy"] = "same-origin"  # no-referrer makes Origin "null"
        response.headers.setdefault("X-Frame-Options", "DENY")
        if behind_tls:
            response.headers["Strict-Transport-Security"] = "max-age=31536000"
        if not request.path.startswith("/static/"):
            response.headers.setdefault("Cache-Control", "no-store")

    return secure


@web.middleware
async def forgery(request: web.Request, handler: Handler) -> web.StreamResponse:
    """Refuse an action whose origin is another site or whose form lacks the session's
    token (403, nothing done)."""
    if request.method in SAFE:
        return await handler(request)
    if not same_origin(request):
        raise web.HTTPForbidden(text="refused: this request came from another site")
    session = await get_session(request)
    expected = session.get("csrf")
    form = await request.post()
    given = form.get(CSRF_FIELD) or request.headers.get(CSRF_HEADER)
    if not (
        isinstance(expected, str)
        and isinstance(given, str)
        and hmac.compare_digest(expected.encode(), given.encode())
    ):
        raise web.HTTPForbidden(text="refused: the form is stale or forged; reload the page")
    return await handler(request)
