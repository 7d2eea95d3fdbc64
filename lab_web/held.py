"""What the application holds, by key, and who is signed in: shared by its modules."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field

from aiohttp import web

from lab_web.accounts import Accounts, Who
from lab_web.lab import Lab, Study
from lab_web.passwords import Passwords
from lab_web.results import Results


@dataclass(frozen=True)
class Settings:
    """How the page is served: ``secure`` behind a TLS proxy (cookies marked Secure); the
    ``clock`` and the ``passwords``' hashing are a test's to change."""

    secure: bool = False
    clock: Callable[[], float] = time.time
    passwords: Passwords = field(default_factory=Passwords)


LAB: web.AppKey[Lab] = web.AppKey("lab", Lab)
ACCOUNTS: web.AppKey[Accounts] = web.AppKey("accounts", Accounts)
RESULTS: web.AppKey[dict[str, Results]] = web.AppKey("results", dict)


WHO: web.RequestKey[Who] = web.RequestKey("who", Who)
"""The signed-in experimenter, on a request that needed one."""


def who_of(request: web.Request) -> Who:
    return request[WHO]


def study_of(request: web.Request, *, acting: bool = False) -> Study:
    """The study the address names, if the signed-in experimenter may see it (and act on
    it, when ``acting``); 404 and 403 otherwise."""
    slug = request.match_info["study"]
    who = who_of(request)
    study = request.app[LAB].studies.get(slug)
    if study is None or not who.sees(slug):
        raise web.HTTPNotFound(text="no such study")
    if acting and not who.acts(slug):
        raise web.HTTPForbidden(text="your role on this study is viewer: it reads, it does not act")
    return study
