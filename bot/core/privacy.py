"""Pseudonyms and sealed chat ids: no raw Telegram id or name is ever stored.

A participant is known by a keyed hash of their Telegram id. The bot still has to message
them after a restart (reminders, the wizard's messages), so the chat id is kept encrypted
with a key derived from the same secret; without the secret the database links to nobody.
"""

from __future__ import annotations

import base64
import hashlib
import hmac

from cryptography.fernet import Fernet, InvalidToken

from bot.core.errors import StoreError, StudyDataError

SECRET_ENV = "OZLAB_SECRET"


class Privacy:
    """Pseudonyms and sealed chat ids under one secret, kept for the whole study."""

    def __init__(self, secret: str, *, foreign_chats: bool = False) -> None:
        """``foreign_chats``: chat ids sealed under another secret belong to nobody this
        process can reach (the emulator's users of ``ozlab chat`` on a demo's or a study's
        database) and are left alone; otherwise they are refused, as the study's own bot
        must never run under the wrong secret."""
        self._foreign_chats = foreign_chats
        if len(secret) < 16:
            raise StudyDataError(f"{SECRET_ENV} must be at least 16 characters long")
        key = secret.encode()
        self._pseudonym_key = hmac.digest(key, b"ozlab pseudonym", "sha256")
        self._annotator_key = hmac.digest(key, b"ozlab annotator chat", "sha256")
        self._platform_key = hmac.digest(key, b"ozlab platform id", "sha256")
        fernet_key = hmac.digest(key, b"ozlab chat id", "sha256")
        self._fernet = Fernet(base64.urlsafe_b64encode(fernet_key))

    def pseudonym(self, telegram_id: int) -> str:
        digest = hmac.new(self._pseudonym_key, str(telegram_id).encode(), hashlib.sha256)
        return "p" + digest.hexdigest()[:15]

    def annotator_chat(self, telegram_id: int) -> str:
        """The keyed hash an annotator's chat is known by: under a key of its own, so that
        an annotator who also took part as a participant cannot be linked to their answers."""
        digest = hmac.new(self._annotator_key, str(telegram_id).encode(), hashlib.sha256)
        return "c" + digest.hexdigest()[:31]

    def platform_tag(self, platform_id: str) -> str:
        """The keyed hash a recruitment platform's id is compared by (is this the id the
        participant came with?) without the journey holding the id itself."""
        digest = hmac.new(self._platform_key, platform_id.encode(), hashlib.sha256)
        return "t" + digest.hexdigest()[:31]

    def seal(self, data: str) -> str:
        return self._fernet.encrypt(data.encode()).decode()

    def reachable(self, token: str) -> str | None:
        """The sealed text, or None for one sealed under another secret where such chats
        are left alone (``foreign_chats``); refused as :meth:`unseal` does otherwise."""
        try:
            return self.unseal(token)
        except StoreError:
            if self._foreign_chats:
                return None
            raise

    def unseal(self, token: str) -> str:
        """The sealed text; a :class:`~bot.core.errors.StoreError` when the database was written
        under another secret (the pseudonyms would not match either)."""
        try:
            return self._fernet.decrypt(token.encode()).decode()
        except InvalidToken as error:
            raise StoreError(
                f"this database's chat ids were sealed with another {SECRET_ENV}: run with the"
                " secret the study started with"
            ) from error
