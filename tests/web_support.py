"""A study database with made-up participants and a signed-in test client of ``ozlab web``,
for the page's unit tests (the browser tests run a real bot instead)."""

from __future__ import annotations

import re
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

from aiohttp.test_utils import TestClient, TestServer
from argon2 import profiles

from bot.core.participants import ParticipantStatus
from bot.core.vocabulary import ExperimenterRole, Stage
from bot.engine import effects as fx
from bot.store import open_store
from lab_web.accounts import Accounts
from lab_web.app import make_app
from lab_web.held import ACCOUNTS, Settings
from lab_web.lab import Lab
from lab_web.passwords import Passwords
from tests.store_contract.records import session, step

KEY = bytes(range(32))
PASSWORD = "correct horse battery"
HOSTILE = '<script>alert("x")</script><img src=x onerror=alert(1)> \x1b[2J\x1b]0;owned\x07'
CHEAP = Passwords(profiles.CHEAPEST)
"""argon2-cffi's profile for tests: a hash in microseconds, where the deployed one takes a
tenth of a second (``test_web`` proves the page deploys with the other)."""


async def made_study(db: Path | str, said: str = HOSTILE) -> str:
    """A study with one participant in a dialogue who said ``said``; their session's id."""
    store = await open_store(db)
    try:
        records: list[fx.Record] = [
            *session("p"),
            fx.RecordUserTurn("p-1", 1, said),
            fx.RecordSystemTurn("p-1", 1, "a reply", 5.0),
        ]
        status = ParticipantStatus(Stage.DIALOGUE, 1.0, session_id="p-1", system_id="sys")
        await store.commit_step(step("p", *records, status=status))
    finally:
        await store.close()
    return "p-1"


def csrf_of(html: str) -> str:
    found = re.search(r'name="csrf_token" value="([^"]+)"', html)
    assert found is not None, "no CSRF token in the page"
    return found.group(1)


class Page:
    """A browser's session with the page, through aiohttp's test client."""

    def __init__(self, client: TestClient, lab: Lab) -> None:
        self.client = client
        self.lab = lab
        self.origin = str(client.make_url("/")).rstrip("/")
        self.accounts = client.app[ACCOUNTS]

    async def token(self) -> str:
        """The CSRF token of this browser's session (read from a page, as a form has it)."""
        response = await self.client.get("/signin")
        return csrf_of(await response.text())

    async def post(self, path: str, data: dict[str, str], *, csrf: bool = True) -> tuple[int, str]:
        form = dict(data)
        if csrf:
            form["csrf_token"] = await self.token()
        response = await self.client.post(
            path, data=form, headers={"Origin": self.origin}, allow_redirects=True
        )
        return response.status, await response.text()

    async def sign_in(self, name: str, password: str = PASSWORD) -> tuple[int, str]:
        return await self.post("/signin", {"name": name, "password": password})


@asynccontextmanager
async def page(
    db: Path | str, *, secure: bool = False, deployed: bool = False
) -> AsyncIterator[Page]:
    """The page on ``db``; its passwords hashed with ``CHEAP``, or as ``ozlab web`` hashes
    them when ``deployed``."""
    lab = await Lab.open(db)
    settings = Settings(secure=secure) if deployed else Settings(secure=secure, passwords=CHEAP)
    client = TestClient(TestServer(make_app(lab, KEY, settings)))
    await client.start_server()
    try:
        yield Page(client, lab)
    finally:
        await client.close()
        await lab.close()


@asynccontextmanager
async def as_viewer(db: Path | str) -> AsyncIterator[Page]:
    """The page, signed in as "vi", a viewer of every study: what reading needs."""
    async with page(db) as p:
        await with_account(p.accounts, "vi", ExperimenterRole.VIEWER)
        await p.sign_in("vi")
        yield p


async def with_account(accounts: Accounts, name: str, role: ExperimenterRole) -> None:
    """An account made the way a link makes it."""
    await accounts.welcome(await accounts.invite(name, role), name, PASSWORD)
