"""What the speech tests share: real audio made on the spot, and a local OpenAI-compatible
speech server.

:class:`FakeSpeechServer` answers ``POST /v1/audio/transcriptions`` and
``POST /v1/audio/speech`` as OpenAI's API reference describes them: a transcription is a
multipart form whose ``file`` and ``model`` are required (400 with OpenAI's error object
without them), answered ``{"text": …}`` for ``response_format=json``; speech is a JSON body
with ``model``, ``input`` and ``voice``, answered with the audio in ``response_format``
(``opus``: OGG/Opus). A key, when the server has one, is checked (401 otherwise, with the
key shown back as some servers do). It records every request, and can answer with an
error status, hold an answer until the test releases it (a slow server), or answer with
what no client should accept.
"""
# ruff: noqa: ASYNC109 - the waiting helper takes ``timeout=`` like the emulator's

from __future__ import annotations

import asyncio
import io
import json
import subprocess
from dataclasses import dataclass, field
from typing import Any

import av
import numpy as np
from aiohttp import BodyPartReader, web

from tests.fake_servers import serving

SPEECH_RATE = 22_050  # espeak-ng's


def tone(seconds: float, *, container: str = "ogg", codec: str = "libopus") -> bytes:
    """A 440 Hz tone of ``seconds`` as a file in ``container`` (made with PyAV directly)."""
    rate = 48_000
    samples = (8000 * np.sin(2 * np.pi * 440 * np.arange(int(seconds * rate)) / rate)).astype(
        np.int16
    )
    out = io.BytesIO()
    with av.open(out, mode="w", format=container) as file:
        stream = file.add_stream(codec, rate=rate, layout="mono")
        frame = av.AudioFrame.from_ndarray(samples.reshape(1, -1), format="s16", layout="mono")
        frame.sample_rate = rate
        frame.pts = 0
        for packet in [*stream.encode(frame), *stream.encode(None)]:
            file.mux(packet)
    return out.getvalue()


def spoken_wav(text: str, voice: str = "en-us") -> bytes:
    """``text`` spoken by espeak-ng, as the WAV it writes (test material, not ozlab's)."""
    return subprocess.run(
        ["espeak-ng", "-v", voice, "--stdout", text], capture_output=True, check=True
    ).stdout


@dataclass
class Request:
    path: str
    headers: dict[str, str]
    fields: dict[str, str] = field(default_factory=dict)
    file: bytes | None = None
    filename: str | None = None
    file_type: str | None = None
    json: Any = None


class FakeSpeechServer:
    """An OpenAI-compatible speech server on 127.0.0.1 (see the module's docstring)."""

    def __init__(
        self,
        *,
        transcript: str = "what is the weather like in london",
        speech: bytes | None = None,
        key: str | None = None,
    ) -> None:
        self.transcript = transcript
        self.speech = speech
        self.key = key
        self.requests: list[Request] = []
        self.status: int | None = None
        self.body: bytes | None = None
        self.content_type = "application/json"
        self.held = False
        self._release = asyncio.Event()
        self._arrived = asyncio.Condition()
        self._serving: Any = None
        self.url = ""

    def answer_with(
        self, status: int, body: bytes | str, content_type: str = "application/json"
    ) -> None:
        """Every answer from now: ``status`` with ``body``."""
        self.status = status
        self.body = body.encode() if isinstance(body, str) else body
        self.content_type = content_type

    def hold(self) -> None:
        """Answers wait until :meth:`release`: a server too slow for the client's limit."""
        self.held = True
        self._release.clear()

    def release(self) -> None:
        self._release.set()

    async def wait_for_requests(self, count: int, timeout: float = 10.0) -> None:
        async with asyncio.timeout(timeout), self._arrived:
            await self._arrived.wait_for(lambda: len(self.requests) >= count)

    async def __aenter__(self) -> FakeSpeechServer:
        app = web.Application(client_max_size=30 * 1024 * 1024)
        app.router.add_post("/v1/audio/transcriptions", self._transcriptions)
        app.router.add_post("/v1/audio/speech", self._speech)
        self._serving = serving(app)
        self.url = await self._serving.__aenter__()
        return self

    async def __aexit__(self, *exc: object) -> None:
        self.release()
        await self._serving.__aexit__(*exc)

    async def _record(self, request: Request) -> web.Response | None:
        async with self._arrived:
            self.requests.append(request)
            self._arrived.notify_all()
        if self.held:
            await self._release.wait()
        if self.key is not None and request.headers.get("Authorization") != f"Bearer {self.key}":
            shown = request.headers.get("Authorization", "").removeprefix("Bearer ")
            return _error(401, f"Incorrect API key provided: {shown}.", "invalid_api_key")
        if self.status is not None:
            return web.Response(status=self.status, body=self.body, content_type=self.content_type)
        return None

    async def _transcriptions(self, http: web.Request) -> web.Response:
        request = Request(http.path, dict(http.headers))
        async for part in await http.multipart():
            if not isinstance(part, BodyPartReader):
                continue
            if part.name == "file":
                request.file = bytes(await part.read())
                request.filename = part.filename
                request.file_type = part.headers.get("Content-Type")
            elif part.name:
                request.fields[part.name] = await part.text()
        refused = await self._record(request)
        if refused is not None:
            return refused
        if request.file is None:
            return _error(400, "you must provide a file parameter", param="file")
        if not request.fields.get("model"):
            return _error(400, "you must provide a model parameter", param="model")
        if request.fields.get("response_format", "json") != "json":
            return web.Response(text=self.transcript)
        return web.json_response({"text": self.transcript})

    async def _speech(self, http: web.Request) -> web.Response:
        request = Request(http.path, dict(http.headers), json=await http.json())
        refused = await self._record(request)
        if refused is not None:
            return refused
        for required in ("model", "input", "voice"):
            if not request.json.get(required):
                return _error(400, f"you must provide a {required} parameter", param=required)
        audio = self.speech if self.speech is not None else tone(1.0)
        return web.Response(body=audio, content_type="audio/ogg")


def _error(
    status: int, message: str, code: str | None = None, param: str | None = None
) -> web.Response:
    body = {
        "error": {
            "message": message,
            "type": "invalid_request_error",
            "param": param,
            "code": code,
        }
    }
    return web.Response(status=status, text=json.dumps(body), content_type="application/json")
