"""Passwords as slow hashes (argon2id), and the one-time tokens of sign-in links, kept as
their SHA-256: a token is 256 random bits, which no guessing reaches, so a fast digest is
enough for it; a password is not."""

from __future__ import annotations

import functools
import hashlib
import secrets

from argon2 import Parameters, PasswordHasher, profiles
from argon2.exceptions import InvalidHashError, VerificationError

DEPLOYED = profiles.RFC_9106_LOW_MEMORY
"""The parameters new hashes are made with: RFC 9106's second recommended option (argon2id,
64 MiB, 3 passes, 4 lanes), argon2-cffi's defaults."""

SHORTEST = 10
"""The fewest characters a password may have."""


class Passwords:
    """Hashes passwords with ``parameters`` and checks them against hashes made with any:
    an argon2 hash carries the parameters it was made with. The unit tests give argon2-cffi's
    cheapest profile, for speed; everything else keeps the deployed one."""

    def __init__(self, parameters: Parameters = DEPLOYED) -> None:
        self._hasher = PasswordHasher.from_parameters(parameters)

    def hashed(self, password: str) -> str:
        return self._hasher.hash(password)

    def matches(self, password_hash: str | None, password: str) -> bool:
        """Whether ``password`` is the one ``password_hash`` was made of (None: no such
        account, checked all the same for the time it takes)."""
        try:
            checked = password_hash or self._nobody
            return self._hasher.verify(checked, password) and password_hash is not None
        except (VerificationError, InvalidHashError):
            return False

    @functools.cached_property
    def _nobody(self) -> str:
        """Checked when the name is unknown, so that a wrong name takes as long as a wrong
        password; made on first need rather than at import, which then costs nothing."""
        return self.hashed("a password nobody has")


def weak(password: str) -> str | None:
    """Why a new password is refused, or None."""
    if len(password) < SHORTEST:
        return f"a password has at least {SHORTEST} characters"
    return None


def new_token() -> str:
    return secrets.token_urlsafe(32)


def token_digest(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()
