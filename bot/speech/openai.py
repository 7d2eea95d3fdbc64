"""Speech engines behind an OpenAI-compatible server: ``POST {base}/v1/audio/transcriptions``
(faster-whisper-server, vLLM, whisper.cpp's server, OpenAI) and ``POST {base}/v1/audio/speech``
(OpenAI, and the servers that copy it: Kokoro-FastAPI, openedai-speech, LocalAI).

As OpenAI's API reference describes them: a transcription is a multipart form (``file``,
``model``, ``response_format=json``, optionally ``language``) answered with ``{"text": …}``;
speech is JSON (``model``, ``input``, ``voice``, ``response_format=opus``) answered with the
audio itself. An error is ``{"error": {"message": …}}`` with a 4xx or 5xx status.

Every problem (refused connection, time limit, HTTP status, not JSON, no text, audio that
does not decode) is a :class:`~bot.speech.base.SpeechFailure` whose message names the server
and the problem, never the key, the audio, the transcript or the text to speak. One attempt
per voice note, no retries: a participant waits for the reply, and the time limit is theirs.
Redirects are not followed: the key must not travel to another host.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable, Iterable, Mapping
from datetime import datetime
from typing import Any

import aiohttp
from yarl import URL

from bot.core.api_keys import bearer_header
from bot.core.errors import SystemSetupError
from bot.core.media import Spoken, Transcript
from bot.core.visible_text import visible
from bot.speech import audio
from bot.speech.base import SpeechFailure, SpeechTimeout, utc_now
from bot.speech.speaking import as_reply, text_to_speak
from scenarios.systems import check_url

ENGINE = "openai"
_MAX_JSON_BYTES = 1_000_000
_EXCERPT_CHARS = 200
_MIN_SECRET = 6
_USER_AGENT = "ozlab (human evaluation of dialogue systems)"


def endpoint(base_url: str, path: str) -> str:
    """``{base}/v1/{path}``, without doubling a ``/v1`` (or the whole path) the settings
    already end with."""
    try:
        base = check_url(base_url)
    except ValueError as error:
        raise SystemSetupError(f"speech engine: url: {error}", field="url") from None
    if base.endswith(f"/v1/{path}"):
        return base
    if base.endswith("/v1"):
        base = base[: -len("/v1")]
    return f"{base}/v1/{path}"


def api_key_header(api_key_env: str | None, env: Mapping[str, str]) -> dict[str, str]:
    """``Authorization: Bearer <key>`` for a speech engine (``bot.core.api_keys``)."""
    return bearer_header("speech engine", api_key_env, env, whose="the server's")


def where(url: str) -> str:
    """The address as messages show it: no user:password, no query."""
    parsed = URL(url)
    return str(parsed.with_user(None).with_query(None).with_fragment(None))


class _Server:
    """One aiohttp session to one server, the key kept out of every message."""

    def __init__(self, url: str, headers: Mapping[str, str], timeout: float) -> None:
        if timeout <= 0:
            raise ValueError("timeout must be positive")
        self.url = url
        self.where = where(url)
        self.timeout = timeout
        self._headers = dict(headers)
        self._secrets = [v.partition(" ")[2] for v in headers.values()]
        self._session: aiohttp.ClientSession | None = None
        self._closed = False

    async def post(self, data: Any, *, limit: int, hidden: Iterable[str] = ()) -> bytes:
        """The body of a 2xx answer; ``data``: a form, or a dict sent as JSON; ``hidden``:
        words (the text to speak) an error's excerpt must not show."""
        if self._closed:
            raise SpeechFailure("the bot is shutting down: no more calls to speech engines")
        if self._session is None:
            self._session = aiohttp.ClientSession(
                headers={"User-Agent": _USER_AGENT}, cookie_jar=aiohttp.DummyCookieJar()
            )
        try:
            async with asyncio.timeout(self.timeout):
                async with self._session.post(
                    self.url,
                    headers=self._headers,
                    allow_redirects=False,
                    **({"json": data} if isinstance(data, dict) else {"data": data}),
                ) as response:
                    body = await _read(response, limit, self.where)
                    if response.status >= 300:
                        said = self._excerpt(body, [*self._secrets, *hidden])
                        raise SpeechFailure(
                            f"{self.where} answered HTTP {response.status}"
                            + (f": {said}" if said else "")
                        )
                    return body
        except TimeoutError:
            raise SpeechTimeout(f"no answer from {self.where} within {self.timeout:g} s") from None
        except aiohttp.ClientConnectorError as error:
            reason = error.os_error.strerror if error.os_error else "unreachable"
            raise SpeechFailure(f"cannot connect to {self.where}: {reason}") from None
        except aiohttp.ClientError as error:
            raise SpeechFailure(
                f"{self.where}: the connection failed ({type(error).__name__})"
            ) from None

    @staticmethod
    def _excerpt(body: bytes, secrets: list[str]) -> str:
        """The server's own words about the error, without the key or the spoken text."""
        text = body.decode("utf-8", errors="replace")
        try:
            answer = json.loads(text)
        except ValueError:
            answer = None
        if isinstance(answer, dict) and isinstance(answer.get("error"), dict):
            text = str(answer["error"].get("message", text))
        elif isinstance(answer, dict) and isinstance(answer.get("detail"), str):
            text = answer["detail"]  # FastAPI's servers (faster-whisper-server)
        for secret in sorted(secrets, key=len, reverse=True):
            if len(secret) >= _MIN_SECRET:
                text = text.replace(secret, "***")
        text = visible(" ".join(text.split()))
        return text if len(text) <= _EXCERPT_CHARS else text[:_EXCERPT_CHARS] + "…"

    async def close(self) -> None:
        self._closed = True
        if self._session is not None:
            session, self._session = self._session, None
            await session.close()


async def _read(response: aiohttp.ClientResponse, limit: int, shown: str) -> bytes:
    """The body, read in chunks up to ``limit`` bytes: a huge answer fails fast."""
    chunks: list[bytes] = []
    size = 0
    async for chunk in response.content.iter_chunked(65536):
        size += len(chunk)
        if size > limit:
            raise SpeechFailure(f"{shown} answered with more than {limit // 1024} KB")
        chunks.append(chunk)
    return b"".join(chunks)


class OpenAITranscriber:
    """Speech to text on an OpenAI-compatible server. The voice note is sent as 16 kHz mono
    WAV, the one format every such server reads (whisper.cpp's server reads nothing else
    unless it was started with ``--convert`` and has an ffmpeg); audio that does not decode
    is never sent. ``language`` (ISO 639-1, e.g. ``en``) spares the server a guess."""

    engine = ENGINE

    def __init__(
        self,
        *,
        base_url: str,
        model: str,
        env: Mapping[str, str],
        api_key_env: str | None = None,
        language: str | None = None,
        timeout: float = 30.0,
        clock: Callable[[], datetime] = utc_now,
    ) -> None:
        self.model = model
        self.language = language
        self.clock = clock
        self._server = _Server(
            endpoint(base_url, "audio/transcriptions"), api_key_header(api_key_env, env), timeout
        )

    async def transcribe(self, audio_data: bytes) -> Transcript:
        started = self.clock()
        pcm = await asyncio.to_thread(audio.decode, audio_data)
        form = aiohttp.FormData()
        form.add_field("file", audio.wav(pcm), filename="voice.wav", content_type="audio/wav")
        form.add_field("model", self.model)
        form.add_field("response_format", "json")
        if self.language:
            form.add_field("language", self.language)
        body = await self._server.post(form, limit=_MAX_JSON_BYTES)
        try:
            answer = json.loads(body)
        except ValueError:
            raise SpeechFailure(f"{self._server.where} answered with something not JSON") from None
        text = answer.get("text") if isinstance(answer, dict) else None
        if not isinstance(text, str):
            raise SpeechFailure(f"{self._server.where} answered without a text")
        return Transcript(
            text=text.strip(),
            engine=self.engine,
            model=self.model,
            started_at=started,
            finished_at=self.clock(),
            audio_seconds=pcm.seconds,
        )

    async def close(self) -> None:
        await self._server.close()


class OpenAISpeaker:
    """Text to speech on an OpenAI-compatible server, asked for Opus; an answer in another
    format (a server that ignores ``response_format``) is encoded again as OGG/Opus."""

    engine = ENGINE

    def __init__(
        self,
        *,
        base_url: str,
        model: str,
        voice: str,
        env: Mapping[str, str],
        api_key_env: str | None = None,
        timeout: float = 30.0,
        clock: Callable[[], datetime] = utc_now,
    ) -> None:
        self.model = model
        self.voice = voice
        self.clock = clock
        self._server = _Server(
            endpoint(base_url, "audio/speech"), api_key_header(api_key_env, env), timeout
        )

    async def speak(self, text: str) -> Spoken:
        text = text_to_speak(text)
        started = self.clock()
        request = {"model": self.model, "input": text, "voice": self.voice}
        body = await self._server.post(
            {**request, "response_format": "opus"}, limit=audio.MAX_AUDIO_BYTES, hidden=[text]
        )
        return await as_reply(
            body,
            made_by=self._server.where,
            engine=self.engine,
            model=self.model,
            started=started,
            clock=self.clock,
        )

    async def close(self) -> None:
        await self._server.close()
