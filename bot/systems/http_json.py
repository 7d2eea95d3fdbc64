"""The one place where ozlab POSTs JSON to a system under test and reads JSON back.

Every HTTP adapter (openai, rasa, http) goes through :class:`JsonClient`, so slow, failing
and strange systems are handled once and the same way:

- one ``timeout`` bounds the whole call, retries and backoff included;
- connection errors and 5xx answers are retried (at most ``retries`` extra attempts) with
  exponential backoff, never 4xx: a wrong key or a wrong request will not get better;
- every problem becomes a :class:`SystemFailure` whose message says what went wrong in words
  an experimenter understands (connection refused, timeout, HTTP status with a short excerpt
  of the body, not JSON, malformed JSON, not UTF-8, too large, empty);
- the answer is read in chunks up to ``max_bytes``: a huge body fails fast, never fills memory;
- header values (API keys) are redacted from every message and log record, and exceptions
  are raised ``from None`` so no aiohttp object holding the request headers rides along.

Redirects are not followed: an ``Authorization`` header must not travel to another host,
and a redirected POST would silently turn into a GET.
"""

from __future__ import annotations

import asyncio
import errno
import json
import logging
import random
import re
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import aiohttp
from yarl import URL

from bot.core.api_keys import bearer_header as api_key_header
from bot.core.conversation import Attachment
from bot.core.visible_text import visible
from bot.systems.base import SystemFailure, SystemTimeout

log = logging.getLogger(__name__)

MAX_BYTES = 1_000_000
"""Default limit on the size of an answer (1 MB): far above any chat reply."""
_EXCERPT_BYTES = 2048  # read at most this much of an error body, for the excerpt
_EXCERPT_CHARS = 200  # show at most this much of it
_CHUNK = 65536
_MIN_SECRET = 6  # shorter header values are not worth redacting (and would over-redact)
_JSON_TYPE = re.compile(r"^application/(?:[\w.+-]+\+)?json$")
_SPACES = re.compile(r"\s+")
_OWN_HEADERS = {"content-type", "accept", "user-agent"}
_USER_AGENT = "ozlab (human evaluation of dialogue systems)"


class _Retryable(Exception):
    """An attempt failed in a way another attempt may fix (connection error, 5xx)."""


def describe_url(url: str) -> str:
    """The address as error messages show it: no user:password, no query (keys hide there)."""
    try:
        parsed = URL(url)
    except (ValueError, TypeError):
        return "the system's address"
    if not parsed.host:
        return "the system's address"
    shown = parsed.with_user(None).with_query(None).with_fragment(None)
    return str(shown)


class Redactor:
    """Removes secrets (the values of the request's headers) from text meant for people."""

    def __init__(self, headers: Mapping[str, str] | None = None) -> None:
        secrets: set[str] = set()
        for name, value in (headers or {}).items():
            if name.lower() in _OWN_HEADERS:
                continue
            value = value.strip()
            if len(value) >= _MIN_SECRET:
                secrets.add(value)
            scheme, _, credential = value.partition(" ")  # "Bearer sk-...": the key alone too
            if credential and scheme.isalpha() and len(credential.strip()) >= _MIN_SECRET:
                secrets.add(credential.strip())
        # Longest first, so a key inside "Bearer <key>" cannot leave a piece behind.
        self._secrets = sorted(secrets, key=len, reverse=True)

    def __call__(self, text: str) -> str:
        for secret in self._secrets:
            text = text.replace(secret, "***")
        return text

    def excerpt(self, data: bytes | str, complete: bool = True) -> str:
        """A short excerpt of a body, redacted *before* it is cut (a cut key would slip
        through). Of a body read only in part, the tail where a key may have been cut
        is dropped too."""
        text = data.decode("utf-8", errors="replace") if isinstance(data, bytes) else data
        if not complete and self._secrets:
            text = text[: max(0, len(text) - len(self._secrets[0]))]
        return excerpt(self(text))


def excerpt(data: bytes | str, limit: int = _EXCERPT_CHARS) -> str:
    """A short, printable, one-line excerpt of a body, for an error message."""
    text = data.decode("utf-8", errors="replace") if isinstance(data, bytes) else data
    text = visible(_SPACES.sub(" ", text).strip())  # a body is outside text, for terminals
    if len(text) > limit:
        text = text[:limit].rstrip() + "…"
    return text


class JsonClient:
    """POSTs JSON and reads JSON back, for every HTTP adapter of a bot.

    It owns one ``aiohttp.ClientSession`` (one connection pool), made lazily inside the
    running event loop on the first call and closed by :meth:`close`. It is safe to share
    between adapters and concurrent calls.

    ``rng`` adds jitter to the backoff (a delay is scaled by a random factor in [0.5, 1)),
    so that many sessions failing at once do not retry in lockstep; ``None``: no jitter.
    """

    def __init__(
        self,
        *,
        max_bytes: int = MAX_BYTES,
        backoff: float = 0.25,
        max_backoff: float = 4.0,
        rng: random.Random | None = None,
        connections: int = 256,
    ) -> None:
        if max_bytes < 1:
            raise ValueError("max_bytes must be positive")
        self.max_bytes = max_bytes
        self.backoff = backoff
        self.max_backoff = max_backoff
        self._rng = rng
        self._connections = connections
        self._session: aiohttp.ClientSession | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._closed = False

    # --- lifecycle -------------------------------------------------------------------

    def _get_session(self) -> aiohttp.ClientSession:
        if self._closed:
            raise SystemFailure("the bot is shutting down: no more calls to systems")
        loop = asyncio.get_running_loop()
        if self._session is None:
            connector = aiohttp.TCPConnector(limit=self._connections, limit_per_host=0)
            self._session = aiohttp.ClientSession(
                connector=connector,
                # The caller's ``timeout`` is the only clock; aiohttp's own stays out of it.
                timeout=aiohttp.ClientTimeout(total=None, sock_connect=None, sock_read=None),
                headers={"User-Agent": _USER_AGENT},
                cookie_jar=aiohttp.DummyCookieJar(),  # sessions must not leak into each other
            )
            self._loop = loop
        elif self._loop is not loop:
            raise RuntimeError("a JsonClient is bound to the event loop it was first used in")
        return self._session

    async def close(self) -> None:
        """Close the connection pool; later calls fail. Safe to call twice."""
        self._closed = True
        if self._session is not None:
            session, self._session = self._session, None
            await session.close()

    @property
    def closed(self) -> bool:
        return self._closed

    # --- the call --------------------------------------------------------------------

    async def post(
        self,
        url: str,
        payload: Any,
        *,
        timeout: float,  # noqa: ASYNC109 - the spec's timeout bounds retries and backoff too
        retries: int = 0,
        headers: Mapping[str, str] | None = None,
        files: Sequence[Attachment] = (),
    ) -> Any:
        """POST ``payload`` as JSON to ``url`` and return the decoded JSON answer; with
        ``files``, as ``multipart/form-data``: the JSON as the part ``request``, then each
        file as a part ``media`` with its type.

        Raises :class:`SystemFailure` for every problem, with a message free of secrets.
        """
        redact = Redactor(headers)
        where = describe_url(url)
        session = self._get_session()
        encoded = json.dumps(payload, ensure_ascii=False).encode("utf-8")
        body: Callable[[], Any] = (
            (lambda: encoded) if not files else (lambda: _form(encoded, files))
        )
        sent_headers = {
            **({} if files else {"Content-Type": "application/json"}),
            "Accept": "application/json",
            **(headers or {}),
        }
        attempts = 0
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        last_problem = "no attempt was made"
        try:
            async with asyncio.timeout_at(deadline):
                while True:
                    attempts += 1
                    try:
                        return await self._attempt(session, url, body, sent_headers, where, redact)
                    except _Retryable as problem:
                        last_problem = redact(str(problem))
                    if attempts > retries:
                        break
                    delay = self._delay(attempts)
                    if loop.time() + delay >= deadline:
                        break  # no time for another attempt: say what went wrong now
                    log.info(
                        "retrying in %.2f s (attempt %d of %d): %s",
                        delay,
                        attempts + 1,
                        retries + 1,
                        last_problem,
                    )
                    await asyncio.sleep(delay)
        except TimeoutError:
            tried = f" ({attempts} attempts; last: {last_problem})" if attempts > 1 else ""
            raise SystemTimeout(f"no answer from {where} within {timeout:g} s{tried}") from None
        except SystemFailure as failure:
            raise SystemFailure(redact(str(failure))) from None
        tried = f" (after {attempts} attempts)" if attempts > 1 else ""
        raise SystemFailure(last_problem + tried) from None

    def _delay(self, attempt: int) -> float:
        """Exponential backoff: backoff, 2·backoff, 4·backoff… capped, with optional jitter."""
        delay = min(self.max_backoff, self.backoff * 2 ** (attempt - 1))
        if self._rng is not None:
            delay *= 0.5 + self._rng.random() / 2
        return delay

    async def _attempt(
        self,
        session: aiohttp.ClientSession,
        url: str,
        body: Callable[[], Any],
        headers: Mapping[str, str],
        where: str,
        redact: Redactor,
    ) -> Any:
        try:
            async with session.post(
                url, data=body(), headers=headers, allow_redirects=False
            ) as response:
                return await self._read(response, where, redact)
        except aiohttp.ClientConnectorError as error:
            raise _Retryable(f"cannot connect to {where}: {_os_reason(error)}") from None
        except aiohttp.ServerDisconnectedError:
            raise _Retryable(f"{where} closed the connection without answering") from None
        except aiohttp.ClientPayloadError:
            raise _Retryable(f"the connection to {where} broke while reading the answer") from None
        except aiohttp.ClientOSError as error:
            raise _Retryable(f"the connection to {where} failed: {_os_reason(error)}") from None
        except aiohttp.InvalidURL:
            raise SystemFailure(f"{where} is not a valid address") from None
        except aiohttp.ClientError as error:
            # Any other client-side protocol problem (a malformed status line or headers…).
            raise SystemFailure(
                f"{where} sent an answer that is not valid HTTP ({type(error).__name__})"
            ) from None

    async def _read(self, response: aiohttp.ClientResponse, where: str, redact: Redactor) -> Any:
        status = response.status
        if status >= 300:
            raw, complete = await _read_limited(response, _EXCERPT_BYTES)
            reason = f" {response.reason}" if response.reason else ""
            said = f": {redact.excerpt(raw, complete)}" if raw.strip() else ""
            if status < 400:
                location = response.headers.get("Location", "")
                try:
                    target = describe_url(str(response.url.join(URL(location))))
                except ValueError:
                    target = "an invalid address"
                raise SystemFailure(
                    f"{where} answered HTTP {status}{reason} (a redirect to {target}); "
                    "put the final address in the study file"
                )
            message = f"{where} answered HTTP {status}{reason}{said}"
            if status >= 500:
                raise _Retryable(message)
            raise SystemFailure(message)
        content_type = response.content_type.lower()
        if not _JSON_TYPE.match(content_type):
            raw, complete = await _read_limited(response, _EXCERPT_BYTES)
            said = f": {redact.excerpt(raw, complete)}" if raw.strip() else ""
            shown = content_type if response.headers.get("Content-Type") else "none"
            raise SystemFailure(
                f"{where} answered with content type {shown}, not JSON (application/json){said}"
            )
        length = response.content_length
        if length is not None and length > self.max_bytes:
            response.close()  # drop the connection rather than read what we will not use
            raise SystemFailure(
                f"{where} sent an answer of {length:,} bytes, "
                f"more than the limit of {self.max_bytes:,}"
            )
        raw, complete = await _read_limited(response, self.max_bytes)
        if not complete:
            response.close()
            raise SystemFailure(
                f"{where} sent an answer of more than {self.max_bytes:,} bytes (the limit)"
            )
        return decode_json(raw, where, redact)


async def _read_limited(response: aiohttp.ClientResponse, limit: int) -> tuple[bytes, bool]:
    """At most ``limit`` bytes of the body, and whether that was all of it."""
    chunks: list[bytes] = []
    size = 0
    async for chunk in response.content.iter_chunked(_CHUNK):
        chunks.append(chunk)
        size += len(chunk)
        if size > limit:
            return b"".join(chunks)[:limit], False
    return b"".join(chunks), True


def decode_json(raw: bytes, where: str, redact: Redactor | None = None) -> Any:
    """UTF-8 JSON bytes → Python; a :class:`SystemFailure` saying what is wrong otherwise."""
    redact = redact or Redactor()
    if not raw.strip():
        raise SystemFailure(f"{where} sent an empty answer")
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as error:
        raise SystemFailure(
            f"{where} sent bytes that are not UTF-8 (at byte {error.start}): {redact.excerpt(raw)}"
        ) from None
    text = text.removeprefix("\ufeff")
    try:
        return json.loads(text)
    except json.JSONDecodeError as error:
        raise SystemFailure(
            f"{where} sent malformed JSON ({error.msg} at line {error.lineno} column "
            f"{error.colno}): {redact.excerpt(text)}"
        ) from None
    except RecursionError:
        raise SystemFailure(f"{where} sent JSON nested too deeply to read") from None


def _os_reason(error: OSError) -> str:
    """'connection refused', 'connection reset'… rather than aiohttp's internal wording."""
    code = error.errno
    if code == errno.ECONNREFUSED:
        return "connection refused (is the system running, on that port?)"
    if code == errno.ECONNRESET:
        return "connection reset"
    if code in (errno.ETIMEDOUT, errno.EHOSTUNREACH, errno.ENETUNREACH):
        return "host unreachable"
    if isinstance(error, aiohttp.ClientConnectorDNSError):
        return "unknown host name"
    if isinstance(error, aiohttp.ClientConnectorCertificateError):
        return "its TLS certificate was not accepted"
    if isinstance(error, aiohttp.ClientSSLError):
        return "the TLS handshake failed"
    reason = error.strerror or type(error).__name__
    return str(reason)


def bearer_header(
    system_id: str, api_key_env: str | None, env: Mapping[str, str]
) -> dict[str, str]:
    """``{"Authorization": "Bearer <key>"}`` for the system (or judge) ``system_id``."""
    return api_key_header(f"system {system_id!r}", api_key_env, env)


def json_kind(value: Any) -> str:
    """'a string', 'a list', 'null'…: how an error message names a JSON value's type."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true/false"
    if isinstance(value, int | float):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list):
        return "a list"
    if isinstance(value, dict):
        return "an object"
    return type(value).__name__


_EXTENSIONS = {"voice": "ogg", "photo": "jpg"}


def _form(request: bytes, files: Sequence[Attachment]) -> aiohttp.FormData:
    """A multipart body made anew for each attempt (aiohttp sends one only once)."""
    form = aiohttp.FormData()
    form.add_field("request", request.decode("utf-8"), content_type="application/json")
    for file in files:
        name = f"{file.kind}.{_EXTENSIONS.get(file.kind, 'bin')}"
        form.add_field("media", file.data, filename=name, content_type=file.mime)
    return form
