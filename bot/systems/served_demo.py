"""The demo shop over HTTP (``ozlab serve-demo``), to try the ``http`` adapter on something real.

Protocol: ``POST /`` with ``{"session_id": "...", "message": "...", "history": [{"user":
"...", "system": "..."}, ...]}`` (the ``http`` adapter's default request) answers::

    {"text": "all the shop's messages, joined by a blank line",
     "messages": ["each message", "on its own"],
     "events": ["task_success"],
     "event_data": {"task_success": {"title": "...", "genres": [...], "platforms": [...]}}}

The default response mapping reads only ``text``: the replies arrive as one message and
the task's success is never seen. A study should map::

    systems:
      - id: shop
        type: http
        url: http://127.0.0.1:8080/
        response: {text: null, messages: messages, events: events, event_data: event_data}

which gives exactly the replies and events of ``type: demo`` in-process. ``GET /`` answers
with a short description (a health check). The shop keeps no state: every answer is a pure
function of the history and the message, so the server can be restarted at any time.
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import Callable
from typing import Any

from aiohttp import web

from bot.core.conversation import Conversation, Turn
from bot.core.errors import SystemSetupError
from bot.systems.demo import DemoShop, Variant
from bot.systems.listening import listen

log = logging.getLogger(__name__)

_SHOP: web.AppKey[DemoShop] = web.AppKey("shop", DemoShop)
_MAX_REQUEST = 1_000_000


def demo_app(variant: Variant = "v1") -> web.Application:
    """The aiohttp application serving one variant of the demo shop."""
    app = web.Application(client_max_size=_MAX_REQUEST)
    app[_SHOP] = DemoShop(variant)
    app.router.add_post("/", _respond)
    app.router.add_get("/", _describe)
    return app


async def _describe(request: web.Request) -> web.Response:
    shop = request.app[_SHOP]
    return web.json_response(
        {
            "system": "ozlab demo shop",
            "variant": shop.variant,
            "request": {
                "session_id": "str",
                "message": "str",
                "history": [{"user": "str", "system": "str"}],
            },
            "response": {"text": "str", "messages": ["str"], "events": ["str"]},
        }
    )


def _bad(reason: str) -> web.Response:
    return web.json_response({"error": reason}, status=400)


async def _respond(request: web.Request) -> web.Response:
    try:
        body: Any = json.loads(await request.read())
    except (ValueError, UnicodeDecodeError):
        return _bad("the request body is not JSON")
    if not isinstance(body, dict):
        return _bad("the request body must be a JSON object")
    message = body.get("message")
    if not isinstance(message, str):
        return _bad("'message' must be a string")
    history = body.get("history", [])
    if not isinstance(history, list) or not all(
        isinstance(t, dict)
        and isinstance(t.get("user", ""), str)
        and isinstance(t.get("system", ""), str)
        for t in history
    ):
        return _bad('\'history\' must be a list of {"user": ..., "system": ...} objects')
    turns = tuple(Turn(str(t.get("user", "")), str(t.get("system", ""))) for t in history)
    conversation = Conversation(
        session_id=str(body.get("session_id", "")),
        scenario_id=str(body.get("scenario_id", "")),
        brief=str(body.get("brief", "")),
        history=turns,
        message=message,
    )
    reply = await request.app[_SHOP].respond(conversation)
    return web.json_response(
        {
            "text": "\n\n".join(reply.texts),
            "messages": list(reply.texts),
            "events": sorted(reply.events),
            "event_data": {name: dict(data) for name, data in reply.event_data.items()},
        }
    )


async def serve_demo(
    host: str = "127.0.0.1",
    port: int = 8080,
    variant: Variant = "v1",
    *,
    started: Callable[[str], None] | None = None,
) -> None:
    """Serve the demo shop until cancelled; ``started`` gets the address once listening
    (useful with ``port=0``). An address it cannot listen on is a
    :class:`~bot.core.errors.SystemSetupError`."""
    await serve(demo_app(variant), f"demo shop {variant}", host, port, started, path="/")


async def serve(
    app: web.Application,
    name: str,
    host: str,
    port: int,
    started: Callable[[str], None] | None,
    *,
    path: str = "",
) -> None:
    """``app`` served until cancelled (the demo shop, or the shop as a model); ``started``
    gets its address (``path`` after the port) once it listens."""
    runner = web.AppRunner(app, access_log=None)
    await runner.setup()
    try:
        try:
            url = await listen(runner, host, port) + path
        except OSError as error:
            reason = error.strerror or str(error)
            raise SystemSetupError(
                f"the {name.rsplit(' ', 1)[0]} cannot listen on {host}:{port}: {reason}"
            ) from None
        log.info("%s serving at %s", name, url)
        if started is not None:
            started(url)
        await asyncio.Event().wait()  # until cancelled
    finally:
        await runner.cleanup()
