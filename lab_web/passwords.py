"""Passwords as slow hashes (argon2id, argon2-cffi's defaults), and the one-time tokens of
sign-in links, kept as their SHA-256: a token is 256 random bits, which no guessing reaches,
so a fast digest is enough for it; a password is not."""

from __future__ import annotations

import hashlib
import secrets

from argon2 import PasswordHasher
from argon2.exceptions import InvalidHashError, VerificationError

_HASHER = PasswordHasher()
_NOBODY = _HASHER.hash("a password nobody has")
"""Checked when the name is unknown, so that a wrong name takes as long as a wrong password."""

SHORTEST = 10
"""The fewest characters a password may have."""


def hashed(password: str) -> str:
    return _HASHER.hash(password)


def matches(password_hash: str | None, password: str) -> bool:
    """Whether ``password`` is the one ``password_hash`` was made of (None: no such account,
    checked all the same for the time it takes)."""
    try:
        return _HASHER.verify(password_hash or _NOBODY, password) and password_hash is not None
    except (VerificationError, InvalidHashError):
        return False


def weak(password: str) -> str | None:
    """Why a new password is refused, or None."""
    if len(password) < SHORTEST:
        return f"a password has at least {SHORTEST} characters"
    return None


def new_token() -> str:
    return secrets.token_urlsafe(32)


def token_digest(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()
