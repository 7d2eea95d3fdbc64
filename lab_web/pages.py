"""The page's addresses: signing in, the studies at a glance, a study's live sessions, a
session's transcript, and the desk's actions, each through ``bot.desk`` as the console's."""

from __future__ import annotations

import asyncio
import contextlib
from pathlib import Path
from urllib.parse import quote

import aiohttp_jinja2
from aiohttp import web
from aiohttp_session import get_session, new_session
from aiohttp_sse import sse_response

from bot.core.errors import StudyDataError
from bot.desk import Desk, DeskError
from bot.desk.desk import NOT_YET_WORDS, OUTCOME_WORDS
from lab_web import safety, work
from lab_web.accounts import SignInRefused
from lab_web.glance import glance
from lab_web.held import ACCOUNTS, LAB, RESULTS, study_of, who_of
from lab_web.lab import Study

STATIC = Path(__file__).with_name("static")
EVENTS_TIMEOUT = 15.0
"""Seconds a live stream waits for a change before it sends the page a ping."""
ACTION_WAIT = 3.0
"""Seconds an action waits for the bot to apply its command before the page says so."""
NO_BOT_WORDS = "not applied yet: no bot is running on this study (one applies it when it starts)"
SESSION_ACTIONS = {
    "end": "end the session",
    "pause": "pause the session",
    "resume": "resume the session",
    "say": "write as the wizard",
}


def routes(app: web.Application) -> None:
    add = app.router
    add.add_get("/signin", signin_form)
    add.add_post("/signin", signin)
    add.add_get("/welcome", welcome_form)
    add.add_post("/welcome", welcome)
    add.add_post("/signout", signout)
    add.add_get("/", overview)
    add.add_get("/s/{study}/", sessions_page)
    add.add_get("/s/{study}/events", sessions_events)
    add.add_post("/s/{study}/gate", gate)
    add.add_get("/s/{study}/session/{session}", session_page)
    add.add_get("/s/{study}/session/{session}/events", transcript_events)
    add.add_post("/s/{study}/session/{session}/{kind}", session_action)
    add.add_get("/s/{study}/annotation", annotation_page)
    add.add_get("/s/{study}/money", money_page)
    add.add_get("/s/{study}/results", results_page)
    add.add_post("/s/{study}/results/{kind:report|exports}", build_results)
    add.add_get("/s/{study}/report.html", report_file)
    add.add_get("/s/{study}/exports/{name}", export_file)


# --- signing in ---------------------------------------------------------------------------


@aiohttp_jinja2.template("signin.html")
async def signin_form(request: web.Request) -> dict[str, object]:
    return {"refused": None}


async def signin(request: web.Request) -> web.StreamResponse:
    form = await request.post()
    name, password = str(form.get("name", "")), str(form.get("password", ""))
    try:
        kept = await request.app[ACCOUNTS].sign_in(name.strip(), password)
    except SignInRefused as refused:
        return aiohttp_jinja2.render_template(
            "signin.html", request, {"refused": str(refused)}, status=401
        )
    return await _signed_in(request, name.strip(), kept)


async def _signed_in(request: web.Request, name: str, kept: dict[str, str]) -> web.StreamResponse:
    session = await new_session(request)  # a new session: nothing of before carries over
    session["name"], session["kept"] = name, kept
    raise web.HTTPSeeOther("/")


@aiohttp_jinja2.template("welcome.html")
async def welcome_form(request: web.Request) -> dict[str, object]:
    query = request.query
    return {"token": query.get("token", ""), "name": query.get("name", ""), "refused": None}


async def welcome(request: web.Request) -> web.StreamResponse:
    form = await request.post()
    token = str(form.get("token", ""))
    try:
        name, kept = await request.app[ACCOUNTS].welcome(
            token, str(form.get("name", "")), str(form.get("password", ""))
        )
    except SignInRefused as refused:
        return aiohttp_jinja2.render_template(
            "welcome.html",
            request,
            {"token": token, "name": str(form.get("name", "")), "refused": str(refused)},
            status=400,
        )
    return await _signed_in(request, name, kept)


async def signout(request: web.Request) -> web.StreamResponse:
    (await get_session(request)).invalidate()
    raise web.HTTPSeeOther("/signin")


# --- reading -------------------------------------------------------------------------------


@aiohttp_jinja2.template("overview.html")
async def overview(request: web.Request) -> dict[str, object]:
    who = who_of(request)
    lab = request.app[LAB]
    shown = [s for slug, s in lab.studies.items() if who.sees(slug)]
    results = request.app[RESULTS]
    return {
        "glances": await asyncio.gather(*(glance(s) for s in shown)),
        "findings": {s.slug: await results[s.slug].findings() for s in shown},
    }


async def _sessions(study: Study) -> dict[str, object]:
    return {
        "study": study,
        "sessions": await study.desk.live_sessions(),
        "waiting": await study.desk.waiting_replies(),
        "gates": await study.desk.gates(),
    }


@aiohttp_jinja2.template("study.html")
async def sessions_page(request: web.Request) -> dict[str, object]:
    study = study_of(request)
    return {**await _sessions(study), "acts": who_of(request).acts(study.slug)}


async def sessions_events(request: web.Request) -> web.StreamResponse:
    """The sessions table again, whenever the study changed: rendered once per change for
    every viewer of the study (it holds nothing of who looks)."""
    study = study_of(request)
    async with study.watcher.watching(), sse_response(request) as stream:
        seen = study.watcher.generation
        with contextlib.suppress(ConnectionResetError):  # the page was closed: done
            while stream.is_connected() and not study.watcher.stopped:
                rows = await study.watcher.once(seen, lambda: _sessions_rows(request, study))
                await stream.send(rows, event="sessions")
                seen = await study.watcher.changed_after(seen, EVENTS_TIMEOUT)
    return stream


async def _sessions_rows(request: web.Request, study: Study) -> str:
    return fragment(request, "sessions_rows.html", await _sessions(study))


def fragment(request: web.Request, template: str, context: dict[str, object]) -> str:
    """A piece of a page for its live events: the template alone, without the page's
    context (who looks, their form token), as every viewer gets the same."""
    return aiohttp_jinja2.get_env(request.app).get_template(template).render(context)


async def _session(study: Study, session_id: str) -> dict[str, object]:
    """The session's row: among the live ones first (cheap, kept per change), else among
    every session, ended and past ones counted."""
    if not await study.desk.knows(session_id):
        raise web.HTTPNotFound(text="no such session")
    found = [s for s in await study.desk.live_sessions() if s.session_id == session_id]
    if not found:
        every = await study.desk.live_sessions(include_ended=True)
        found = [s for s in every if s.session_id == session_id]
    return {"study": study, "session": found[-1] if found else None}


@aiohttp_jinja2.template("session.html")
async def session_page(request: web.Request) -> dict[str, object]:
    study = study_of(request)
    session_id = request.match_info["session"]
    shown = await _session(study, session_id)
    return {
        **shown,
        "session_id": session_id,
        "lines": await study.desk.transcript(session_id),
        "acts": who_of(request).acts(study.slug),
        "actions": SESSION_ACTIONS,
    }


async def transcript_events(request: web.Request) -> web.StreamResponse:
    """The transcript's new lines, and the session's state, as they are committed."""
    study = study_of(request)
    session_id = request.match_info["session"]
    await _session(study, session_id)
    sent: set[str] = set()
    async with study.watcher.watching(), sse_response(request) as stream:
        seen = study.watcher.generation
        event = "transcript"  # the whole transcript first, in place of what the page showed
        with contextlib.suppress(ConnectionResetError):  # the page was closed: done
            while stream.is_connected() and not study.watcher.stopped:
                found = await study.desk.transcript(session_id)
                lines = [line for line in found if line.key not in sent]
                if lines or event == "transcript":
                    sent.update(line.key for line in lines)
                    html = fragment(request, "lines.html", {"lines": lines})
                    await stream.send(html, event=event)
                    event = "lines"
                row = await _session(study, session_id)
                await stream.send(fragment(request, "session_state.html", row), event="state")
                seen = await study.watcher.changed_after(seen, EVENTS_TIMEOUT)
    return stream


@aiohttp_jinja2.template("annotation.html")
async def annotation_page(request: web.Request) -> dict[str, object]:
    study = study_of(request)
    return {
        "study": study,
        "work": await work.annotation(study),
        "findings": await request.app[RESULTS][study.slug].findings(),
    }


@aiohttp_jinja2.template("money.html")
async def money_page(request: web.Request) -> dict[str, object]:
    study = study_of(request)
    return {"study": study, "money": await work.money(study)}


@aiohttp_jinja2.template("results.html")
async def results_page(request: web.Request) -> dict[str, object]:
    study = study_of(request)
    results = request.app[RESULTS][study.slug]
    return {
        "study": study,
        "report": await results.current("report"),
        "exports": await results.current("exports"),
    }


async def build_results(request: web.Request) -> web.StreamResponse:
    """Make the report or the exports in a worker process (a viewer may: it reads); back
    to the page that asked for it when it is one of the pages that show the report's
    findings, else to the results."""
    study = study_of(request)
    kind = request.match_info["kind"]
    back = str((await request.post()).get("back", ""))
    if back not in ("/", f"/s/{study.slug}/annotation"):
        back = f"/s/{study.slug}/results"
    try:
        made = await request.app[RESULTS][study.slug].build(kind)
    except StudyDataError as error:
        said = f"the {kind} could not be made: {error}"
    else:
        files = len(made.files())
        said = "the report is ready" if kind == "report" else f"{files} export files are ready"
    (await get_session(request))["flash"] = said
    raise web.HTTPSeeOther(back)


async def report_file(request: web.Request) -> web.StreamResponse:
    """The report as analytics wrote it, sandboxed: no script runs, nothing is fetched."""
    study = study_of(request)
    made = await request.app[RESULTS][study.slug].current("report")
    if made is None:
        raise web.HTTPNotFound(text="no report of the present data: make it on the results page")
    response = web.FileResponse(made.folder / "report.html")
    response.headers["Content-Security-Policy"] = safety.REPORT_CSP
    response.headers["X-Frame-Options"] = "SAMEORIGIN"
    response.content_type = "text/html"
    return response


async def export_file(request: web.Request) -> web.StreamResponse:
    study = study_of(request)
    made = await request.app[RESULTS][study.slug].current("exports")
    name = request.match_info["name"]
    found = [p for p in made.files() if p.name == name] if made is not None else []
    if not found:
        raise web.HTTPNotFound(text="no such export of the present data")
    response = web.FileResponse(found[0])
    response.headers["Content-Disposition"] = f'attachment; filename="{found[0].name}"'
    return response


# --- acting ---------------------------------------------------------------------------------


async def session_action(request: web.Request) -> web.StreamResponse:
    """End, pause or resume a session, or write to its participant as the wizard: one
    command row under the experimenter's name, with the desk's checks."""
    study = study_of(request, acting=True)
    session_id, kind = request.match_info["session"], request.match_info["kind"]
    if kind not in SESSION_ACTIONS:
        raise web.HTTPNotFound(text="no such action")
    form = await request.post()
    payload: dict[str, object] = {}
    if kind in ("end", "say"):
        field = "reason" if kind == "end" else "text"
        said = str(form.get(field, "")).strip()
        if not said:
            return await _told(
                request, f"{SESSION_ACTIONS[kind]}: give the {field}", study, session_id
            )
        payload[field] = said
    desk = study.acting_as(who_of(request).name)
    try:
        command_id = await desk.session_command(kind, session_id, **payload)
    except DeskError as error:  # no such session: back to the study's sessions
        return await _told(request, str(error), study)
    words = await _outcome(study, desk, command_id)
    return await _told(
        request, f"#{command_id} {SESSION_ACTIONS[kind]}: {words}", study, session_id
    )


async def gate(request: web.Request) -> web.StreamResponse:
    """Hold (or release) the replies of the whole study or of one system for a wizard."""
    study = study_of(request, acting=True)
    form = await request.post()
    scope, on = str(form.get("scope", "")), form.get("state") == "on"
    desk = study.acting_as(who_of(request).name)
    try:
        command_id = await desk.gate(scope, on)
    except DeskError as error:
        return await _told(request, str(error), study)
    words = await _outcome(study, desk, command_id)
    state = "held for a wizard" if on else "released"
    return await _told(request, f"#{command_id} {scope} {state}: {words}", study)


async def _outcome(study: Study, desk: Desk, command_id: int) -> str:
    """What became of the command, in words: waited for while a bot runs to apply it, said
    at once when none does (nothing would apply it in the meantime)."""
    if not await study.bot_running(fresh=True):
        return NO_BOT_WORDS
    outcome = await desk.wait(command_id, ACTION_WAIT)
    return NOT_YET_WORDS if outcome is None else OUTCOME_WORDS[outcome]


async def _told(
    request: web.Request, text: str, study: Study, session_id: str | None = None
) -> web.StreamResponse:
    """Back to the page the action came from, with what became of it."""
    (await get_session(request))["flash"] = text
    if session_id is None:
        raise web.HTTPSeeOther(f"/s/{study.slug}/")
    raise web.HTTPSeeOther(f"/s/{study.slug}/session/{quote(session_id, safe='')}")
