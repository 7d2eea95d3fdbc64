"""Who may use the page: experimenters' accounts, kept per study in the study's store (a
role on each study of a shared server), passwords as argon2id hashes, a lock-out after
repeated failures, and one-time sign-in links (the first user's is printed at start, as
Jupyter prints its token).

A browser's session holds the name and, per study, a fingerprint of the password hash it
signed in with: a new password, a removed account or a changed role takes effect on the
next request, as every request reads the accounts again."""

from __future__ import annotations

import asyncio
import hashlib
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass

from bot.core.errors import StudyDataError
from bot.core.vocabulary import ExperimenterRole
from bot.store.model import ExperimenterAccount
from lab_web import passwords
from lab_web.lab import Lab
from lab_web.passwords import Passwords

LOCK_AFTER = 5
"""Failed sign-ins in a row that lock an account."""
LOCK_FOR = 15 * 60.0
"""Seconds an account stays locked."""
LINK_LIFETIME = 24 * 3600.0
"""Seconds a sign-in link can be used in."""
NAME_LONGEST = 64


class SignInRefused(StudyDataError):
    """A sign-in or a link that does not go through, said in words the page shows."""


@dataclass(frozen=True)
class Who:
    """The signed-in experimenter: their name and their role on each study they may see."""

    name: str
    roles: Mapping[str, ExperimenterRole]

    def sees(self, slug: str) -> bool:
        return slug in self.roles

    def acts(self, slug: str) -> bool:
        role = self.roles.get(slug)
        return role is not None and role.acts


def fingerprint(account: ExperimenterAccount) -> str:
    """What a session keeps of the hash it signed in with (a new password ends it)."""
    return hashlib.sha256(account.password_hash.encode()).hexdigest()[:32]


def valid_name(name: str) -> str:
    name = name.strip()
    if not name or len(name) > NAME_LONGEST or not name.isprintable():
        raise SignInRefused(f"a name has 1 to {NAME_LONGEST} printable characters")
    return name


class Accounts:
    """The accounts of every study the page serves, their passwords hashed by ``hasher``
    (the deployed parameters unless a test gives cheaper ones)."""

    def __init__(
        self,
        lab: Lab,
        clock: Callable[[], float] = time.time,
        hasher: Passwords | None = None,
    ) -> None:
        self.lab = lab
        self._clock = clock
        self._hasher = hasher or Passwords()

    async def anyone(self) -> bool:
        """Whether any study has an account: none means the first user's link is printed."""
        for study in self.lab.studies.values():
            if await study.store.experimenters():
                return True
        return False

    async def invite(
        self, name: str | None, role: ExperimenterRole, slugs: list[str] | None = None
    ) -> str:
        """A one-time link's token for ``name`` (None: the user names the account) with
        ``role`` on the studies ``slugs`` (every one by default)."""
        token = passwords.new_token()
        digest = passwords.token_digest(token)
        expires = self._clock() + LINK_LIFETIME
        for slug in slugs or list(self.lab.studies):
            await self.lab[slug].store.add_sign_in_link(digest, name, role, expires)
        return token

    async def welcome(self, token: str, name: str, password: str) -> tuple[str, dict[str, str]]:
        """The link used: its account saved with the password on every study it was made
        for (under the link's name, or ``name`` for a link without one); the name and the
        session's fingerprints. A weak password or a wrong name leaves the link unused."""
        why = passwords.weak(password)
        if why is not None:
            raise SignInRefused(why)
        typed = valid_name(name)  # before the link is used: a mistake keeps it
        digest = passwords.token_digest(token)
        granted = {}
        for slug, study in self.lab.studies.items():
            link = await study.store.use_sign_in_link(digest)
            if link is not None:
                granted[slug] = link
        if not granted:
            raise SignInRefused("this link was used already, has expired, or is not one")
        named = {link.name for link in granted.values() if link.name is not None}
        account_name = named.pop() if len(named) == 1 else typed
        made = await asyncio.to_thread(self._hasher.hashed, password)
        kept = {}
        for slug, link in granted.items():
            store = self.lab[slug].store
            await store.save_experimenter(account_name, link.role, made)
            account = await store.experimenter(account_name)
            assert account is not None
            kept[slug] = fingerprint(account)
        return account_name, kept

    async def sign_in(self, name: str, password: str) -> dict[str, str]:
        """The session's fingerprints of every study where ``password`` is the account's;
        refused (and counted towards a lock-out) otherwise."""
        now = self._clock()
        found = {}
        for slug, study in self.lab.studies.items():
            account = await study.store.experimenter(name)
            if account is not None:
                found[slug] = account
        open_ = {s: a for s, a in found.items() if not (a.locked_until or 0) > now}
        if found and not open_:
            until = min(a.locked_until or now for a in found.values())
            minutes = max(1, round((until - now) / 60))
            raise SignInRefused(f"too many failed sign-ins: try again in {minutes} min")
        if not open_:  # nobody of that name: as long as a wrong password takes
            await asyncio.to_thread(self._hasher.matches, None, password)
        kept = {}
        for slug, account in open_.items():
            if await asyncio.to_thread(self._hasher.matches, account.password_hash, password):
                await self.lab[slug].store.good_sign_in(name)
                kept[slug] = fingerprint(account)
            else:
                await self.lab[slug].store.failed_sign_in(name, LOCK_AFTER, LOCK_FOR)
        if not kept:
            raise SignInRefused("wrong name or password")
        return kept

    async def who(self, name: str, kept: Mapping[str, str]) -> Who | None:
        """The signed-in experimenter as the stores say now; None when nothing they signed
        in to is theirs any more."""
        roles = {}
        for slug, print_ in kept.items():
            study = self.lab.studies.get(slug)
            account = None if study is None else await study.store.experimenter(name)
            if account is not None and fingerprint(account) == print_:
                roles[slug] = account.role
        return Who(name, roles) if roles else None
