"""The demo shop as a language model that calls tools (``ozlab serve-demo --openai``).

An OpenAI-compatible ``POST /v1/chat/completions`` with the demo shop as its "model", to try
the ``openai`` adapter and a scenario's tools offline, with nothing to download. It reads
the chat as a model would (the user and assistant turns, the new user message) and answers
as the demo shop does, but does not report success itself: where the shop would add a
game to the wishlist and a tool named ``add_to_wishlist`` is offered, it calls that tool with
``{"game": title}`` first, and answers in words once the tool's result is in the chat.
Without that tool it only talks, as a model without tools would: success is then not seen.

It also plays a model judge (``judges:`` of an annotation job, ``ozlab stress judge
--model``): asked a question that ends "Answer with one of: a, b, c", it answers one of
those values, chosen by a hash of the question: repeatable, but no better than chance, a
judge to try ``ozlab judge run`` and the report's judges section with, never to trust.

Like the shop it keeps no state: every answer is a pure function of the messages.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from typing import Any

from aiohttp import web

from bot.core.conversation import Conversation, Turn
from bot.systems.demo import DemoShop, Variant
from bot.systems.demo.shop import TASK_SUCCESS
from bot.systems.served_demo import serve

ADD_TOOL = "add_to_wishlist"
ASKED = "Answer with one of: "
"""The line a judge's question ends with (``bot.engine.annotating.judging``,
``bot.stress.replay.judges``): the values that may be answered, comma-separated."""
PATH = "/v1/chat/completions"
_SHOP: web.AppKey[DemoShop] = web.AppKey("model_shop", DemoShop)
_MAX_REQUEST = 1_000_000


def model_app(variant: Variant = "v1") -> web.Application:
    """The aiohttp application answering chat completions as the demo shop."""
    app = web.Application(client_max_size=_MAX_REQUEST)
    app[_SHOP] = DemoShop(variant)
    app.router.add_post(PATH, _complete)
    app.router.add_get("/v1/models", _models)
    return app


def _bad(reason: str) -> web.Response:
    return web.json_response({"error": {"message": reason, "type": "invalid_request"}}, status=400)


async def _models(request: web.Request) -> web.Response:
    name = f"ozlab-demo-shop-{request.app[_SHOP].variant}"
    return web.json_response({"object": "list", "data": [{"id": name, "object": "model"}]})


def _chat(messages: list[Any]) -> tuple[tuple[Turn, ...], str, bool] | str:
    """(finished turns, the new user message, whether a tool already answered in this
    turn), or what is wrong with the messages."""
    turns: list[Turn] = []
    user: str | None = None
    answered = False
    for message in messages:
        if not isinstance(message, dict):
            return "each message must be an object"
        role, content = message.get("role"), message.get("content")
        text = content if isinstance(content, str) else ""
        if role == "user":
            user, answered = text, False
        elif role == "assistant" and user is not None and not message.get("tool_calls"):
            turns.append(Turn(user, text))
            user = None
        elif role == "tool":
            answered = True
    if user is None:
        return "the messages end without a user message to answer"
    return tuple(turns), user, answered


def _offers(body: dict[str, Any], name: str) -> bool:
    tools = body.get("tools")
    if not isinstance(tools, list) or body.get("tool_choice") == "none":
        return False
    return any(
        isinstance(t, dict)
        and isinstance(t.get("function"), dict)
        and t["function"].get("name") == name
        for t in tools
    )


def _completion(model: str, message: dict[str, Any]) -> dict[str, Any]:
    return {
        "id": "chatcmpl-ozlab-demo",
        "object": "chat.completion",
        "model": model,
        "choices": [
            {
                "index": 0,
                "message": message,
                "finish_reason": "tool_calls" if message.get("tool_calls") else "stop",
            }
        ],
    }


async def _complete(request: web.Request) -> web.Response:
    try:
        body: Any = json.loads(await request.read())
    except (ValueError, UnicodeDecodeError):
        return _bad("the request body is not JSON")
    if not isinstance(body, dict) or not isinstance(body.get("messages"), list):
        return _bad("the request body must be an object with a list of messages")
    read = _chat(body["messages"])
    if isinstance(read, str):
        return _bad(read)
    model = str(body.get("model", "ozlab-demo-shop"))
    verdict = _verdict(read[1])
    if verdict is not None:
        return web.json_response(_completion(model, {"role": "assistant", "content": verdict}))
    turns, user, answered = read
    shop = request.app[_SHOP]
    reply = await shop.respond(Conversation("", "", "", turns, user))
    game = reply.event_data.get(TASK_SUCCESS, {}).get("title")
    if TASK_SUCCESS in reply.events and not answered and game and _offers(body, ADD_TOOL):
        call = {
            "id": f"call_{len(turns) + 1}",
            "type": "function",
            "function": {"name": ADD_TOOL, "arguments": json.dumps({"game": game})},
        }
        message = {"role": "assistant", "content": None, "tool_calls": [call]}
        return web.json_response(_completion(model, message))
    text = "\n\n".join(reply.texts)
    return web.json_response(_completion(model, {"role": "assistant", "content": text}))


def _verdict(question: str) -> str | None:
    """One of the values a judge's question allows, the same for the same question; None
    for a message that is no judge's question."""
    asked = [line for line in question.splitlines() if line.startswith(ASKED)]
    values = [v.strip() for v in asked[-1].removeprefix(ASKED).split(",")] if asked else []
    values = [v for v in values if v]
    if not values:
        return None
    digest = hashlib.sha256(question.encode()).digest()
    return values[int.from_bytes(digest[:4], "big") % len(values)]


async def serve_model(
    host: str = "127.0.0.1",
    port: int = 8081,
    variant: Variant = "v1",
    *,
    started: Callable[[str], None] | None = None,
) -> None:
    """Serve the shop as a model until cancelled; ``started`` gets the base address once
    listening. An address it cannot listen on is a
    :class:`~bot.core.errors.SystemSetupError`."""
    await serve(model_app(variant), f"demo model {variant}", host, port, started)
