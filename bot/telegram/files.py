"""Files participants send, fetched from Telegram: ``getFile``, then the download path.

A bot may fetch files of up to 20 MB; Telegram refuses a larger one at ``getFile`` ("file
is too big"). A study may take less: a file over its limit is not downloaded at all.
"""

from __future__ import annotations

from telegram import Bot
from telegram.error import BadRequest, TelegramError

__all__ = ["FileTooBig", "FileUnavailable", "TelegramFiles"]


class FileUnavailable(Exception):
    """Telegram would not give the file (gone, refused, or out of reach)."""


class FileTooBig(FileUnavailable):
    """Over the study's limit, or over what Telegram lets a bot download."""


class TelegramFiles:
    """Downloads through python-telegram-bot (``get_file``, ``download_as_bytearray``)."""

    def __init__(self, bot: Bot) -> None:
        self._bot = bot

    async def download(self, file_id: str, largest: int) -> bytes:
        """The file's bytes, at most ``largest`` of them."""
        try:
            file = await self._bot.get_file(file_id)
            if file.file_size is not None and file.file_size > largest:
                raise FileTooBig(f"{file.file_size} bytes")
            data = bytes(await file.download_as_bytearray())
        except BadRequest as error:
            if "too big" in error.message.lower():
                raise FileTooBig(error.message) from None
            raise FileUnavailable(error.message) from None
        except TelegramError as error:  # its words may hold the download URL, and the token
            raise FileUnavailable(type(error).__name__) from None
        if len(data) > largest:
            raise FileTooBig(f"{len(data)} bytes")
        return data
