"""Updates by webhook: Telegram POSTs each update to the bot, behind the institution's reverse
proxy, and the bot answers 200 only once the update is in the durable inbox.

The same door as long polling (``bot.telegram.intake``): an update is read, sealed and
committed before Telegram hears the 200, so a crash before that leaves it with Telegram,
which sends it again (it retries every answer that is not 2xx); a redelivered id is handled
once, and the inbox is replayed at start-up as with polling.

Telegram posts the updates of one chat one at a time, the next only after the 200 for the
one before (other chats' at once, up to ``max_connections``), so each request is handled on
its own and a chat's order holds: its update is in the dispatcher's queue before the 200.

A POST is Telegram's only if it carries the ``secret_token`` given to ``setWebhook`` in the
``X-Telegram-Bot-Api-Secret-Token`` header: anything else is refused with 403 before its body
is read, and nothing of it is stored. A body with the right secret that is no update is
answered 200 all the same and counted as the poller counts an update it cannot read: a 4xx
would only make Telegram send the same unreadable body again and again.

Arrays and objects nested deeper than any update (the JSON reader recurses once a level and
fails far down) are refused with 400 before they are read: Telegram never posts such a
body, so nobody posts it again. A sender that hangs up before its whole body came has
nothing taken and gets one warning line.

python-telegram-bot's own ``run_webhook`` is not used: it needs tornado, and it answers
before the update is stored.
"""

from __future__ import annotations

import asyncio
import hmac
import json
import logging
import os
import re
import secrets
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from urllib.parse import urlsplit

from aiohttp import web
from telegram import Bot
from telegram.error import BadRequest

from bot.core.errors import StudyDataError, TelegramSetupError
from bot.core.privacy import Privacy
from bot.engine.delivery import Delivery
from bot.store.interface import HotPath
from bot.telegram.inbound import UnreadableUpdate
from bot.telegram.intake import ALLOWED_UPDATES, take_in, unreadable, update_id
from bot.telegram.outage import Outage, reach

log = logging.getLogger(__name__)

SECRET_HEADER = "X-Telegram-Bot-Api-Secret-Token"
SECRET_ENV = "OZLAB_WEBHOOK_SECRET"  # ``ozlab run --help`` names it too
_SECRET = re.compile(r"[A-Za-z0-9_-]{1,256}")  # what setWebhook takes as a secret_token
_LARGEST_BODY = 1024 * 1024  # an update is a few kilobytes; a megabyte is no update
_DEEPEST = 64
"""The deepest nesting of arrays and objects read: an update nests about a dozen levels
(a reply to a message with a keyboard), and the JSON reader recurses once a level, so a body
of thousands would fail it, whatever the secret."""
_STRING = re.compile(rb'"(?:[^"\\]|\\.)*"')
_BRACKET = re.compile(rb"[\[\]{}]")


@dataclass(frozen=True)
class Webhook:
    """Where Telegram posts (``url``, as the proxy publishes it), where the bot listens
    (``host``, ``port``, behind the proxy) and the secret Telegram sends with each POST."""

    url: str
    host: str
    port: int
    secret_token: str = field(repr=False)  # never in a log line or a traceback

    @property
    def path(self) -> str:
        """The path the bot serves: the URL's own, which the proxy passes on unchanged."""
        return urlsplit(self.url).path or "/"


def secret_token(env: Mapping[str, str]) -> str:
    """The webhook's secret: ``OZLAB_WEBHOOK_SECRET`` when set (several bots behind one proxy
    may want to know it), otherwise a new random one each start (Telegram is told it anew)."""
    given = env.get(SECRET_ENV)
    if given is None:
        return secrets.token_urlsafe(32)
    if not _SECRET.fullmatch(given):
        raise StudyDataError(
            f"{SECRET_ENV} must be 1 to 256 letters, digits, _ or - (what Telegram takes)"
        )
    return given


class WebhookReceiver:
    """Serves the webhook's path until cancelled; each update committed, then delivered."""

    def __init__(
        self,
        bot: Bot,
        store: HotPath,
        privacy: Privacy,
        deliver: Callable[[Delivery], None],
        webhook: Webhook,
        *,
        outage: Outage | None = None,
    ) -> None:
        self._bot = bot
        self._store = store
        self._privacy = privacy
        self._deliver = deliver
        self._webhook = webhook
        self._secret = webhook.secret_token.encode()
        self._outage = outage or Outage()

    async def run(self, ready: Callable[[], None] = lambda: None) -> None:
        """Listen, tell Telegram where to post (then call ``ready``), and serve until
        cancelled. A port already taken, or a URL Telegram refuses, ends the bot in one
        line."""
        hook = self._webhook
        app = web.Application(client_max_size=_LARGEST_BODY)
        app.router.add_post(hook.path, self._receive)
        # Handlers still committing when the bot stops are waited for, not cut short.
        runner = web.AppRunner(app, access_log=None, handle_signals=False, shutdown_timeout=10)
        await runner.setup()
        try:
            try:
                await web.TCPSite(runner, hook.host, hook.port).start()
            except OSError as error:
                why = os.strerror(error.errno) if error.errno else str(error)
                raise TelegramSetupError(
                    f"cannot listen on {hook.host}:{hook.port} for the webhook ({why}):"
                    " is another bot or server using it?"
                ) from None
            try:
                await reach(self._set_webhook, self._outage)
            except BadRequest as error:
                raise TelegramSetupError(
                    f"Telegram refused the webhook {hook.url}: {error.message}"
                ) from None
            log.info("receiving updates by webhook on %s:%d%s", hook.host, hook.port, hook.path)
            ready()
            await asyncio.Event().wait()  # until cancelled
        finally:
            await runner.cleanup()

    async def _set_webhook(self) -> bool:
        return await self._bot.set_webhook(
            self._webhook.url,
            secret_token=self._webhook.secret_token,
            allowed_updates=ALLOWED_UPDATES,
            drop_pending_updates=False,  # what waited for the bot is handled, not dropped
        )

    async def _receive(self, request: web.Request) -> web.Response:
        given = request.headers.get(SECRET_HEADER, "").encode(errors="replace")
        if not hmac.compare_digest(given, self._secret):
            return web.Response(status=403)  # not Telegram: its body is not even read
        try:
            body = await request.read()
        except ConnectionResetError:  # nothing was taken, and nobody waits for an answer
            log.warning("a webhook post's sender hung up before its whole body came")
            return web.Response(status=400)
        if _nested_beyond(body, _DEEPEST):  # only a forger posts it: no update to take
            log.warning("a webhook post nested deeper than %d levels: refused (400)", _DEEPEST)
            return web.Response(status=400, text=f"JSON nested deeper than {_DEEPEST} levels")
        try:
            raw = json.loads(body)
            if update_id(raw) is None:
                raise UnreadableUpdate("the body is no update with an update_id")
        except ValueError as error:  # not JSON, or no update: UnreadableUpdate is one too
            await self._store.settle([unreadable(None, error)])
            return web.Response()
        await take_in([raw], self._store, self._privacy, self._deliver)
        return web.Response()  # only now may Telegram forget it

    async def confirm(self) -> None:
        """Nothing to tell Telegram on a clean stop: the webhook stays set. While the bot is
        away, Telegram keeps each update (up to 24 hours) and tries again, and the next start
        sets the webhook anew, so nothing is lost either way; deleting it would only make a
        stop differ from a crash, which cannot delete it. ``ozlab run`` without ``--webhook``
        deletes it (``getUpdates`` fails while one is set)."""


def _nested_beyond(body: bytes, deepest: int) -> bool:
    """Whether ``body`` nests arrays and objects deeper than ``deepest``: at once when it
    holds no more brackets than that (every update Telegram posts), else counted outside
    its strings."""
    if body.count(b"[") + body.count(b"{") <= deepest:
        return False
    depth = 0
    for bracket in _BRACKET.finditer(_STRING.sub(b"", body)):
        depth += 1 if bracket.group() in (b"[", b"{") else -1
        if depth > deepest:
            return True
    return False
