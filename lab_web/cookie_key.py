"""The key that seals the browser's session cookie (Fernet, through aiohttp-session's
encrypted storage): from ``OZLAB_WEB_KEY`` when set, else generated once into a file beside
the SQLite database (``study.sqlite.web-key``, mode 0600), or ``ozlab-web.key`` in the
working folder for a PostgreSQL URL. A new key signs everybody out."""

from __future__ import annotations

import base64
import binascii
import os
from pathlib import Path

from cryptography.fernet import Fernet

from bot.core.errors import StudyDataError
from bot.store.opening import locate

KEY_ENV = "OZLAB_WEB_KEY"


def key_file(db: str) -> Path:
    place = locate(db)
    if place.server is None:
        return Path(f"{place.path}.web-key")
    return Path("ozlab-web.key")


def cookie_key(db: str) -> bytes:
    """32 bytes: the environment's, else the key file's (made now if missing)."""
    given = os.environ.get(KEY_ENV)
    if given:
        return _decoded(given, KEY_ENV)
    path = key_file(db)
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:
        if path.stat().st_mode & 0o077:
            raise StudyDataError(f"{path} may be read by others: chmod 600 {path}") from None
        return _decoded(path.read_text().strip(), str(path))
    except OSError as error:
        raise StudyDataError(f"{path}: {error.strerror}") from error
    key = Fernet.generate_key()
    with os.fdopen(fd, "wb") as out:
        out.write(key + b"\n")
    return base64.urlsafe_b64decode(key)


def _decoded(text: str, where: str) -> bytes:
    try:
        key = base64.urlsafe_b64decode(text.encode())
    except (binascii.Error, ValueError):
        key = b""
    if len(key) != 32:
        raise StudyDataError(
            f"{where}: the web key is 32 bytes in URL-safe base64, as Fernet.generate_key()"
            " makes it (cryptography.fernet)"
        )
    return key
