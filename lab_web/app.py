"""The page's aiohttp application: sessions in an encrypted cookie (aiohttp-session),
templates with autoescape (aiohttp-jinja2), live events (aiohttp-sse), the static files
shipped in the package, and the checks every request goes through (``lab_web.safety``)."""

from __future__ import annotations

import time
import warnings

import aiohttp_jinja2
import jinja2
from aiohttp import web
from aiohttp_session import get_session, session_middleware
from aiohttp_session.cookie_storage import EncryptedCookieStorage

from bot.core.visible_text import visible
from bot.runtime.heartbeat import ago
from lab_web import pages, safety
from lab_web.accounts import Accounts
from lab_web.held import ACCOUNTS, LAB, RESULTS, WHO, Settings
from lab_web.lab import Lab
from lab_web.results import Results

# aiohttp-session keeps its session under a string key, which aiohttp asks to be a RequestKey
warnings.filterwarnings("ignore", "It is recommended to use web.RequestKey", web.NotAppKeyWarning)

COOKIE = "ozlab_web"
SESSION_HOURS = 12
SHOWN_FLAGGED = 20
"""Flagged participants the overview lists of each study (the report has every one)."""
OPEN = ("/signin", "/welcome", "/static/")
"""Addresses that need nobody signed in."""


@web.middleware
async def signed_in(request: web.Request, handler: safety.Handler) -> web.StreamResponse:
    """Who is signed in (``request[WHO]``), as the stores say now; the sign-in page for
    anybody else."""
    if request.path.startswith(OPEN):
        return await handler(request)
    session = await get_session(request)
    name, kept = session.get("name"), session.get("kept")
    who = None
    if isinstance(name, str) and isinstance(kept, dict):
        who = await request.app[ACCOUNTS].who(name, kept)
    if who is None:
        session.pop("name", None)
        session.pop("kept", None)
        if request.method in safety.SAFE and request.headers.get("Accept") != "text/event-stream":
            raise web.HTTPSeeOther("/signin")
        raise web.HTTPForbidden(text="sign in first")
    request[WHO] = who
    return await handler(request)


async def _context(request: web.Request) -> dict[str, object]:
    session = await get_session(request)
    return {
        "who": request.get(WHO),
        "csrf": safety.csrf_token(session),
        "csrf_field": safety.CSRF_FIELD,
        "lab": request.app[LAB],
        "flash": session.pop("flash", None),
    }


def make_app(lab: Lab, key: bytes, settings: Settings | None = None) -> web.Application:
    settings = settings or Settings()
    storage = EncryptedCookieStorage(
        key,
        cookie_name=COOKIE,
        httponly=True,
        samesite="Strict",
        secure=settings.secure,
        max_age=SESSION_HOURS * 3600,
    )
    app = web.Application(
        middlewares=[session_middleware(storage), safety.forgery, signed_in],
        client_max_size=256 * 1024,
    )
    app[LAB] = lab
    app[ACCOUNTS] = Accounts(lab, settings.clock, settings.passwords)
    app[RESULTS] = {slug: Results(study) for slug, study in lab.studies.items()}

    async def forget_results(app: web.Application) -> None:
        for results in app[RESULTS].values():
            results.close()

    async def end_live_streams(app: web.Application) -> None:
        for study in app[LAB].studies.values():
            await study.watcher.stop()

    app.on_shutdown.append(end_live_streams)
    app.on_cleanup.append(forget_results)
    environment = aiohttp_jinja2.setup(
        app,
        loader=jinja2.PackageLoader("lab_web", "templates"),
        autoescape=True,
        undefined=jinja2.StrictUndefined,
        context_processors=[_context],
    )
    environment.filters["visible"] = lambda text: visible(str(text), lines=True)
    environment.filters["ago"] = lambda at: "never" if at is None else ago(time.time() - at)
    environment.filters["decimals"] = lambda x: "–" if x is None else f"{x:.2f}"
    environment.filters["percent"] = lambda x: "–" if x is None else f"{x:.0%}"
    environment.globals["shown_flagged"] = SHOWN_FLAGGED
    app.on_response_prepare.append(safety.headers(behind_tls=settings.secure))
    app.router.add_static("/static/", pages.STATIC, name="static", append_version=True)
    pages.routes(app)
    return app
