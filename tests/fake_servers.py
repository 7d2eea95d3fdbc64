"""Local HTTP servers that speak each system protocol, and misbehave on request.

Adapters are tested against real servers on 127.0.0.1 (an ephemeral port), never mocks:

- :class:`FakeOpenAI` - an OpenAI-compatible ``POST /v1/chat/completions``;
- :class:`FakeRasa` - Rasa's REST channel ``POST /webhooks/rest/webhook``;
- :class:`FakeHttp` - a homemade JSON service at any path (default ``/chat``);
- :func:`closed_port_url` - an address where nothing listens (connection refused);
- :func:`serving` - any other aiohttp app (e.g. the served demo shop) on 127.0.0.1.

Use them as async context managers::

    async with FakeOpenAI(reply="Hi!") as server:
        spec = OpenAISystem(type="openai", id="llm", url=server.url, model="m")
        ...
        server.behave(Mode.STATUS, status=500, times=2)   # two 500s, then normal again
        server.behave(Mode.HOLD)                           # park answers until release()
        await server.wait_for_requests(1)
        server.release()
        assert server.requests[-1].json["model"] == "m"

Every request is recorded (:attr:`FakeServer.requests`) before the server misbehaves, so a
test can check what an adapter sent (body mapping, history trimming, headers) and wait for a
request to arrive (:meth:`FakeServer.wait_for_requests`) instead of sleeping.
"""
# ruff: noqa: ASYNC109 - the waiting helper takes ``timeout=`` like the emulator's

from __future__ import annotations

import asyncio
import contextlib
import enum
import json
import socket
from abc import ABC, abstractmethod
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from typing import Any

from aiohttp import web

HUGE_BYTES = 5_000_000


class Mode(enum.Enum):
    """How a fake server answers (see :meth:`FakeServer.behave`)."""

    NORMAL = "normal"
    """The protocol's well-formed answer (see each server's ``reply`` argument)."""
    SLOW = "slow"
    """Sleep ``delay`` seconds inside the handler, then answer normally."""
    HOLD = "hold"
    """Wait until the test calls :meth:`FakeServer.release`, then answer normally."""
    STATUS = "status"
    """Answer HTTP ``status`` (default 500) with a short text ``body``."""
    MALFORMED = "malformed"
    """``application/json`` whose body is not JSON."""
    WRONG_TYPE = "wrong_type"
    """A ``text/html`` page with status 200."""
    NON_UTF8 = "non_utf8"
    """``application/json`` with Latin-1 bytes that are not valid UTF-8."""
    HUGE = "huge"
    """A 5 MB JSON body with a ``Content-Length`` header."""
    HUGE_STREAM = "huge_stream"
    """A 5 MB JSON body streamed in chunks, without ``Content-Length``."""
    EMPTY_BODY = "empty_body"
    """``application/json`` with no bytes at all."""
    EMPTY_TEXT = "empty_text"
    """A well-formed protocol answer whose text is empty (each server says what that is)."""
    RESET = "reset"
    """Close the connection without answering."""


@dataclass(frozen=True)
class Received:
    """One request as the server saw it."""

    method: str
    path: str
    headers: dict[str, str]
    body: bytes

    @property
    def json(self) -> Any:
        return json.loads(self.body) if self.body else None


def closed_port_url() -> str:
    """An http:// address on 127.0.0.1 where nothing listens: connecting is refused."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    return f"http://127.0.0.1:{port}"


@contextlib.asynccontextmanager
async def serving(app: web.Application) -> AsyncIterator[str]:
    """Serve ``app`` on 127.0.0.1 (an ephemeral port); yields ``http://127.0.0.1:<port>``."""
    runner = web.AppRunner(app, access_log=None, shutdown_timeout=0.1)
    await runner.setup()
    try:
        site = web.TCPSite(runner, "127.0.0.1", 0)
        await site.start()
        yield f"http://127.0.0.1:{runner.addresses[0][1]}"
    finally:
        await runner.cleanup()


class FakeServer(ABC):
    """Base of the fake systems: an aiohttp.web app on 127.0.0.1 with switchable behaviour.

    Subclasses set :attr:`path` and implement :meth:`answer` (the normal JSON answer) and
    :meth:`empty_answer` (a well-formed answer with no text).
    """

    path = "/"

    def __init__(self) -> None:
        self.requests: list[Received] = []
        self.mode = Mode.NORMAL
        self.delay = 0.0
        self.status = 500
        self.error_body = "internal error"
        self._times: int | None = None  # the mode holds for this many more requests
        self._gate = asyncio.Event()
        self._arrived = asyncio.Condition()
        self._runner: web.AppRunner | None = None
        self.port = 0
        self.stream_finished = False  # a HUGE_STREAM body was sent to its end

    # --- lifecycle -------------------------------------------------------------------

    async def start(self) -> FakeServer:
        app = web.Application()
        app.router.add_route("*", "/{tail:.*}", self._handle)
        # A short shutdown: handlers still sleeping or held at the end of a test are cut.
        self._runner = web.AppRunner(app, access_log=None, shutdown_timeout=0.1)
        await self._runner.setup()
        site = web.TCPSite(self._runner, "127.0.0.1", 0)
        await site.start()
        self.port = self._runner.addresses[0][1]
        return self

    async def stop(self) -> None:
        self._gate.set()
        if self._runner is not None:
            await self._runner.cleanup()
            self._runner = None

    async def __aenter__(self) -> FakeServer:
        return await self.start()

    async def __aexit__(self, *exc: object) -> None:
        await self.stop()

    @property
    def url(self) -> str:
        """The server's base address (what a study's ``url`` would be)."""
        return f"http://127.0.0.1:{self.port}"

    @property
    def endpoint(self) -> str:
        """The full address the protocol POSTs to."""
        return self.url + self.path

    # --- behaviour -------------------------------------------------------------------

    def behave(
        self,
        mode: Mode,
        *,
        times: int | None = None,
        delay: float = 0.3,
        status: int = 500,
        body: str = "internal error",
    ) -> FakeServer:
        """Answer the next ``times`` requests (``None``: all) in ``mode``, then normally.

        ``delay`` is for SLOW; ``status`` and ``body`` for STATUS. HOLD parks answers until
        :meth:`release`.
        """
        if times is not None and times < 1:
            raise ValueError("times must be at least 1 (or None: every request)")
        self.mode = mode
        self._times = times
        self.delay = delay
        self.status = status
        self.error_body = body
        if mode is Mode.HOLD:
            self._gate.clear()
        return self

    def release(self) -> None:
        """Let every held request (and any later one in HOLD mode) be answered."""
        self._gate.set()

    async def wait_for_requests(self, count: int, timeout: float = 2.0) -> list[Received]:
        """Wait until ``count`` requests have arrived; returns them all."""
        async with asyncio.timeout(timeout), self._arrived:
            await self._arrived.wait_for(lambda: len(self.requests) >= count)
        return list(self.requests)

    @property
    def last(self) -> Received:
        return self.requests[-1]

    # --- protocol (subclasses) ---------------------------------------------------------

    @abstractmethod
    def answer(self, received: Received) -> Any:
        """The normal JSON answer to a request."""

    @abstractmethod
    def empty_answer(self, received: Received) -> Any:
        """A well-formed answer that carries no text."""

    def check(self, received: Received) -> web.Response | None:
        """A protocol-level refusal (wrong path, missing key…) or ``None`` to go on."""
        if received.path != self.path or received.method != "POST":
            return web.Response(status=404, text=f"no route {received.method} {received.path}")
        return None

    # --- the handler -------------------------------------------------------------------

    def _current_mode(self) -> Mode:
        mode = self.mode
        if self._times is not None:
            self._times -= 1
            if self._times <= 0:
                self.mode, self._times = Mode.NORMAL, None
        return mode

    async def _handle(self, request: web.Request) -> web.StreamResponse:
        received = Received(
            request.method, request.path, dict(request.headers), await request.read()
        )
        async with self._arrived:
            self.requests.append(received)
            self._arrived.notify_all()
        mode = self._current_mode()
        match mode:
            case Mode.SLOW:
                await asyncio.sleep(self.delay)
            case Mode.HOLD:
                await self._gate.wait()
            case Mode.STATUS:
                return web.Response(status=self.status, text=self.error_body)
            case Mode.MALFORMED:
                return _json_bytes(b'{"text": "unfinished')
            case Mode.WRONG_TYPE:
                return web.Response(
                    text="<html><body>Bad gateway</body></html>", content_type="text/html"
                )
            case Mode.NON_UTF8:
                return _json_bytes('{"text": "caf\xe9"}'.encode("latin-1"))
            case Mode.HUGE:
                return _json_bytes(b'{"text": "' + b"x" * HUGE_BYTES + b'"}')
            case Mode.HUGE_STREAM:
                return await self._stream_huge(request)
            case Mode.EMPTY_BODY:
                return _json_bytes(b"")
            case Mode.RESET:
                assert request.transport is not None
                request.transport.close()
                return web.Response()
            case Mode.EMPTY_TEXT:
                return self.check(received) or web.json_response(self.empty_answer(received))
        return self.check(received) or web.json_response(self.answer(received))

    async def _stream_huge(self, request: web.Request) -> web.StreamResponse:
        response = web.StreamResponse(headers={"Content-Type": "application/json"})
        await response.prepare(request)
        chunk = b"x" * 65536
        with contextlib.suppress(ConnectionError):  # the client hung up, as it should
            await response.write(b'{"text": "')
            for _ in range(HUGE_BYTES // len(chunk)):
                await response.write(chunk)
            await response.write(b'"}')
            self.stream_finished = True
        return response


def _json_bytes(body: bytes) -> web.Response:
    return web.Response(body=body, headers={"Content-Type": "application/json"})


Reply = str | Callable[[Any], str | dict[str, Any]]


class FakeOpenAI(FakeServer):
    """An OpenAI-compatible chat completions server.

    ``reply`` is the assistant's text, or a function of the request body giving it or the
    whole assistant message (a dict: ``{"role": "assistant", "tool_calls": [...]}``, a
    model calling tools).
    With ``api_key`` set, a request without ``Authorization: Bearer <api_key>`` gets a 401
    whose body echoes the header it received, as some servers do: adapters must redact it.
    ``EMPTY_TEXT`` answers with ``content: ""``.
    """

    path = "/v1/chat/completions"

    def __init__(self, reply: Reply = "Hello from the fake LLM.", api_key: str | None = None):
        super().__init__()
        self.reply = reply
        self.api_key = api_key

    def check(self, received: Received) -> web.Response | None:
        refused = super().check(received)
        if refused is None and self.api_key is not None:
            got = received.headers.get("Authorization", "")
            if got != f"Bearer {self.api_key}":
                body = {"error": {"message": f"Incorrect API key provided: {got!r}"}}
                return web.json_response(body, status=401)
        return refused

    def completion(self, content: str | dict[str, Any] | None) -> dict[str, Any]:
        message = (
            content if isinstance(content, dict) else {"role": "assistant", "content": content}
        )
        return {
            "id": "chatcmpl-fake",
            "object": "chat.completion",
            "model": "fake",
            "choices": [
                {
                    "index": 0,
                    "message": message,
                    "finish_reason": "tool_calls" if "tool_calls" in message else "stop",
                }
            ],
            "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
        }

    def answer(self, received: Received) -> Any:
        text = self.reply(received.json) if callable(self.reply) else self.reply
        return self.completion(text)

    def empty_answer(self, received: Received) -> Any:
        return self.completion("")


class FakeRasa(FakeServer):
    """Rasa's REST channel.

    ``messages`` is the list Rasa answers with (objects with ``text``, ``buttons``,
    ``image``, ``custom``…), or a function of the request body giving it; each object gets
    the ``recipient_id`` of the sender. ``EMPTY_TEXT`` answers with ``[]``.
    """

    path = "/webhooks/rest/webhook"

    def __init__(
        self,
        messages: list[dict[str, Any]] | Callable[[Any], list[dict[str, Any]]] | None = None,
    ) -> None:
        super().__init__()
        self.messages = messages if messages is not None else [{"text": "Hello from Rasa."}]

    def answer(self, received: Received) -> Any:
        body = received.json
        messages = self.messages(body) if callable(self.messages) else self.messages
        sender = body.get("sender") if isinstance(body, dict) else None
        return [{"recipient_id": sender, **m} for m in messages]

    def empty_answer(self, received: Received) -> Any:
        return []


class FakeHttp(FakeServer):
    """A homemade JSON service at ``path``.

    ``reply`` is the JSON answer (any JSON value), or a function of the request body giving
    it. ``EMPTY_TEXT`` answers with ``{"text": ""}``.
    """

    def __init__(self, reply: Any = None, path: str = "/chat") -> None:
        super().__init__()
        self.reply = reply if reply is not None else {"text": "Hello from the service."}
        self.path = path

    def answer(self, received: Received) -> Any:
        return self.reply(received.json) if callable(self.reply) else self.reply

    def empty_answer(self, received: Received) -> Any:
        return {"text": ""}


def calling(*calls: tuple[str, Any]) -> dict[str, Any]:
    """An assistant message that calls tools: ``(name, arguments)`` pairs, the arguments
    sent as JSON text as servers do (a string is sent as it is, to send broken JSON)."""
    return {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {
                "id": f"call_{number}",
                "type": "function",
                "function": {
                    "name": name,
                    "arguments": arguments if isinstance(arguments, str) else json.dumps(arguments),
                },
            }
            for number, (name, arguments) in enumerate(calls)
        ],
    }
