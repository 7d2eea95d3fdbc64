"""An aiohttp-backed ``telegram.request.BaseRequest`` for python-telegram-bot.

PTB's default ``HTTPXRequest`` spends most of its CPU in httpx's connection pool under load
(TELEGRAM-NOTES.md: ~145 updates/s at 256 requests in flight against ~2,000/s with aiohttp).
This class keeps PTB's wire format (form-urlencoded parameters, strings raw and every other
value JSON-encoded; multipart only when files are uploaded) and its error contract (timeouts
raise ``TimedOut``, other transport failures ``NetworkError``).

PTB needs two request objects, one for ``getUpdates`` (a long poll that holds a connection)
and one for everything else; :func:`request_pair` and :func:`use_aiohttp` build both.
"""

from __future__ import annotations

import asyncio
import json
from typing import TYPE_CHECKING, Any
from urllib.parse import urlencode

import aiohttp
from telegram._utils.defaultvalue import DefaultValue
from telegram.error import NetworkError, TelegramError, TimedOut
from telegram.request import BaseRequest, RequestData

if TYPE_CHECKING:
    from telegram._utils.types import JSONDict, ODVInput
    from telegram.ext import ApplicationBuilder

__all__ = ["AiohttpRequest", "request_pair", "use_aiohttp"]

_FORM = {"Content-Type": "application/x-www-form-urlencoded"}
_POOL_TIMEOUT_MESSAGE = (
    "Pool timeout: All connections in the connection pool are occupied. Request was *not* sent "
    "to Telegram. Consider adjusting the connection pool size or the pool timeout."
)


class AiohttpRequest(BaseRequest):
    """``BaseRequest`` on one ``aiohttp.ClientSession`` (created in :meth:`initialize`).

    Arguments mirror ``HTTPXRequest``. ``connection_pool_size`` bounds requests in flight:
    a request that cannot get a slot within ``pool_timeout`` raises ``TimedOut`` without being
    sent. aiohttp has no socket write timeout, so ``write_timeout`` and
    ``media_write_timeout`` bound the whole request (upload plus answer) when they are longer
    than the read timeout; the read timeout bounds each wait for response bytes.
    """

    __slots__ = (
        "_connect_timeout",
        "_media_write_timeout",
        "_pool_size",
        "_pool_timeout",
        "_read_timeout",
        "_session",
        "_slots",
        "_trust_env",
        "_write_timeout",
    )

    def __init__(
        self,
        connection_pool_size: int = 256,
        read_timeout: float | None = 5.0,
        write_timeout: float | None = 5.0,
        connect_timeout: float | None = 5.0,
        pool_timeout: float | None = 1.0,
        media_write_timeout: float | None = 20.0,
        *,
        trust_env: bool = False,
    ) -> None:
        if connection_pool_size < 1:
            raise ValueError("connection_pool_size must be at least 1")
        self._pool_size = connection_pool_size
        self._read_timeout = read_timeout
        self._write_timeout = write_timeout
        self._connect_timeout = connect_timeout
        self._pool_timeout = pool_timeout
        self._media_write_timeout = media_write_timeout
        self._trust_env = trust_env
        self._session: aiohttp.ClientSession | None = None
        self._slots: asyncio.Semaphore | None = None

    @property
    def read_timeout(self) -> float | None:
        """Default read timeout; PTB adds the long-poll ``timeout`` to it for ``getUpdates``."""
        return self._read_timeout

    @property
    def connection_pool_size(self) -> int:
        """Most requests in flight at once."""
        return self._pool_size

    async def initialize(self) -> None:
        """Open the session inside the running loop (aiohttp binds it to that loop)."""
        if self._session is not None and not self._session.closed:
            return
        connector = aiohttp.TCPConnector(limit=self._pool_size, limit_per_host=0)
        self._session = aiohttp.ClientSession(
            connector=connector,
            headers={"User-Agent": self.USER_AGENT},
            trust_env=self._trust_env,
            timeout=aiohttp.ClientTimeout(total=None),
        )
        self._slots = asyncio.Semaphore(self._pool_size)

    @staticmethod
    def parse_json_payload(payload: bytes) -> JSONDict:
        """As PTB's, but quiet: PTB logs a body that is not JSON as an ERROR with a traceback
        and the whole body (a gateway's 502 page, at every try while Telegram is down); the
        error raised says it once, to whoever tries again (``bot.telegram.outage``)."""
        try:
            parsed = json.loads(payload.decode("utf-8", "replace"))
        except ValueError as exc:
            raise TelegramError("Invalid server response") from exc
        if not isinstance(parsed, dict):
            raise TelegramError("Invalid server response")
        return parsed

    async def shutdown(self) -> None:
        """Close the session; safe to call twice or before :meth:`initialize`."""
        session, self._session = self._session, None
        if session is not None and not session.closed:
            await session.close()

    def _timeouts(
        self,
        read_timeout: ODVInput[float],
        write_timeout: ODVInput[float],
        connect_timeout: ODVInput[float],
        pool_timeout: ODVInput[float],
        has_files: bool,
    ) -> tuple[aiohttp.ClientTimeout, float | None]:
        """The aiohttp timeouts of one request and the pool timeout, resolving defaults."""
        read = self._read_timeout if isinstance(read_timeout, DefaultValue) else read_timeout
        connect = (
            self._connect_timeout if isinstance(connect_timeout, DefaultValue) else connect_timeout
        )
        pool = self._pool_timeout if isinstance(pool_timeout, DefaultValue) else pool_timeout
        if isinstance(write_timeout, DefaultValue):
            write = self._media_write_timeout if has_files else self._write_timeout
        else:
            write = write_timeout
        total = write if write is not None and (read is None or write > read) else None
        timeout = aiohttp.ClientTimeout(
            total=total, connect=connect, sock_connect=connect, sock_read=read
        )
        return timeout, pool

    @staticmethod
    def _body(request_data: RequestData | None) -> tuple[Any, dict[str, str] | None]:
        """Encode parameters as PTB's HTTPXRequest does: form-urlencoded, multipart for files."""
        if request_data is None:
            return None, None
        parameters = request_data.json_parameters
        if not request_data.contains_files:
            if not parameters:
                return None, None  # getMe, deleteWebhook: an empty body, as httpx sends it
            return urlencode(parameters).encode(), _FORM
        form = aiohttp.FormData(quote_fields=False)
        for name, value in parameters.items():
            form.add_field(name, value)
        for name, (filename, content, mime_type) in request_data.multipart_data.items():
            form.add_field(name, content, filename=filename or name, content_type=mime_type)
        return form, None

    async def do_request(
        self,
        url: str,
        method: str,
        request_data: RequestData | None = None,
        read_timeout: ODVInput[float] = BaseRequest.DEFAULT_NONE,
        write_timeout: ODVInput[float] = BaseRequest.DEFAULT_NONE,
        connect_timeout: ODVInput[float] = BaseRequest.DEFAULT_NONE,
        pool_timeout: ODVInput[float] = BaseRequest.DEFAULT_NONE,
    ) -> tuple[int, bytes]:
        """Send one request; map aiohttp failures to ``TimedOut`` and ``NetworkError``."""
        session, slots = self._session, self._slots
        if session is None or session.closed or slots is None:
            raise RuntimeError("This AiohttpRequest is not initialized!")
        has_files = request_data is not None and request_data.contains_files
        timeout, pool = self._timeouts(
            read_timeout, write_timeout, connect_timeout, pool_timeout, has_files
        )
        data, headers = self._body(request_data)
        try:
            async with asyncio.timeout(pool):
                await slots.acquire()
        except TimeoutError as exc:
            raise TimedOut(_POOL_TIMEOUT_MESSAGE) from exc
        try:
            async with session.request(
                method, url, data=data, headers=headers, timeout=timeout
            ) as response:
                return response.status, await response.read()
        except TimeoutError as exc:  # aiohttp's timeout errors subclass TimeoutError
            raise TimedOut(f"Timed out: {type(exc).__name__}") from exc
        except aiohttp.ClientError as exc:
            raise NetworkError(f"aiohttp.{type(exc).__name__}: {exc}") from exc
        finally:
            slots.release()


def request_pair(
    connection_pool_size: int = 256,
    *,
    read_timeout: float | None = 5.0,
    write_timeout: float | None = 5.0,
    connect_timeout: float | None = 5.0,
    pool_timeout: float | None = 1.0,
) -> tuple[AiohttpRequest, AiohttpRequest]:
    """``(request, get_updates_request)``, as ``telegram.Bot`` and ``ApplicationBuilder`` take.

    The ``getUpdates`` one gets two connections: the long poll holds one, and PTB's final
    confirming poll at shutdown may start before the old one is released.
    """
    timeouts = (read_timeout, write_timeout, connect_timeout, pool_timeout)
    return AiohttpRequest(connection_pool_size, *timeouts), AiohttpRequest(2, *timeouts)


def use_aiohttp(
    builder: ApplicationBuilder[Any, Any, Any, Any, Any, Any],
    connection_pool_size: int = 256,
    **timeouts: float | None,
) -> ApplicationBuilder[Any, Any, Any, Any, Any, Any]:
    """Configure an ``ApplicationBuilder`` with aiohttp requests for both call kinds."""
    request, get_updates_request = request_pair(connection_pool_size, **timeouts)
    return builder.request(request).get_updates_request(get_updates_request)
