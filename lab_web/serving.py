"""``ozlab web``: serve the page until stopped, printing the first user's one-time link
when no study has an account yet; ``ozlab web users``: add, list and remove accounts."""

from __future__ import annotations

import asyncio
import ipaddress
import signal
import sys
from collections.abc import Callable
from urllib.parse import urlencode

from aiohttp import web

from bot.core.errors import StudyDataError
from bot.core.visible_text import visible
from bot.core.vocabulary import ExperimenterRole
from bot.store.opening import Database
from bot.systems.listening import listen
from lab_web.accounts import LINK_LIFETIME, Accounts, valid_name
from lab_web.app import make_app
from lab_web.cookie_key import cookie_key
from lab_web.held import ACCOUNTS, Settings
from lab_web.lab import Lab

DEFAULT_PORT = 8765


def loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


async def serve(
    db: Database,
    *,
    study: str | None = None,
    host: str = "127.0.0.1",
    port: int = DEFAULT_PORT,
    behind_tls: bool = False,
    say: Callable[[str], None] = print,
) -> None:
    """Serve the page until SIGTERM or cancelled (Ctrl-C); ``say`` gets the address (and
    the first user's link) once it listens."""
    if not loopback(host) and not behind_tls:
        print(
            f"ozlab web: warning: listening on {host} without --behind-tls: passwords and"
            " cookies would cross the network in clear; put it behind a TLS proxy"
            " (docs/deploying.md) and pass --behind-tls",
            file=sys.stderr,
        )
    lab = await Lab.open(db, study)
    try:
        key = cookie_key(str(db))
        app = make_app(lab, key, Settings(secure=behind_tls))
        runner = web.AppRunner(app, access_log=None)
        await runner.setup()
        try:
            try:
                url = await listen(runner, host, port)
            except OSError as error:
                raise StudyDataError(
                    f"ozlab web cannot listen on {host}:{port}: {error.strerror or error}"
                ) from None
            say(f"ozlab web: {lab.shown} ({', '.join(lab.studies)}) at {url}/")
            accounts = app[ACCOUNTS]
            if not await accounts.anyone():
                token = await accounts.invite(None, ExperimenterRole.EXPERIMENTER)
                hours = int(LINK_LIFETIME // 3600)
                link = f"{url}/welcome?token={token}"
                say(f"the first user signs in once, within {hours} h, at {link}")
            stopped = asyncio.Event()
            loop = asyncio.get_running_loop()
            loop.add_signal_handler(signal.SIGTERM, stopped.set)  # a supervisor's stop
            try:
                await stopped.wait()
            finally:
                loop.remove_signal_handler(signal.SIGTERM)
        finally:
            await runner.cleanup()  # the report and exports made are removed with it
    finally:
        await lab.close()


async def add_user(
    db: Database, name: str, role: ExperimenterRole, studies: list[str], url: str
) -> str:
    """A one-time link for ``name`` with ``role`` on ``studies`` (every one if empty)."""
    lab = await Lab.open(db)
    try:
        unknown = sorted(set(studies) - set(lab.studies))
        if unknown:
            raise StudyDataError(
                f"no study {unknown[0]!r} here; the studies: {', '.join(lab.studies)}"
            )
        token = await Accounts(lab).invite(valid_name(name), role, studies or None)
    finally:
        await lab.close()
    return f"{url.rstrip('/')}/welcome?{urlencode({'token': token, 'name': name})}"


async def users(db: Database) -> list[str]:
    """One line per account and study: name, study, role, and whether it is locked."""
    lab = await Lab.open(db)
    lines = []
    try:
        for slug, study in lab.studies.items():
            for account in await study.store.experimenters():
                locked = " (locked)" if account.locked_until else ""
                lines.append(f"{visible(account.name)}\t{slug}\t{account.role}{locked}")
    finally:
        await lab.close()
    return lines


async def remove_user(db: Database, name: str) -> int:
    """The account removed from every study; how many studies had it."""
    lab = await Lab.open(db)
    try:
        return sum([await s.store.remove_experimenter(name) for s in lab.studies.values()])
    finally:
        await lab.close()
