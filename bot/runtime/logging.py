"""Logging that cannot leak the bot token, and that a participant cannot write into.

httpx logs request URLs, which contain the token, at INFO; python-telegram-bot logs request
parameters at DEBUG. The filter sits on the handler, so it sees every record of every
library, and the chatty loggers are raised to WARNING as well.

Log messages quote what participants and systems wrote (a failing system's error, a text
that could not be sent): the formatter shows their control characters as escapes, so a
record is one line on the terminal and in the log file, and a traceback keeps its lines.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Iterable
from pathlib import Path
from typing import TextIO

from bot.core.researcher_files import FILE_MODE
from bot.core.visible_text import visible

# python-telegram-bot logs every request's parameters and every response at DEBUG: chat ids,
# names, usernames and message texts. ozlab's own loggers say what matters without them.
_CHATTY = ("httpx", "httpcore", "aiohttp.access", "aiosqlite", "apscheduler", "telegram")


class RedactSecrets(logging.Filter):
    def __init__(self, secrets: Iterable[str]) -> None:
        super().__init__()
        self._secrets = [s for s in secrets if s]

    def filter(self, record: logging.LogRecord) -> bool:
        message = record.getMessage()
        if any(secret in message for secret in self._secrets):
            for secret in self._secrets:
                message = message.replace(secret, "<redacted>")
            record.msg, record.args = message, None
        if record.exc_info and not record.exc_text:
            record.exc_text = logging.Formatter().formatException(record.exc_info)
        if record.exc_text:
            for secret in self._secrets:
                record.exc_text = record.exc_text.replace(secret, "<redacted>")
        return True


class VisibleFormatter(logging.Formatter):
    """A record as one line with every control character shown as its escape; its
    traceback, if any, follows on lines of its own, escaped the same way."""

    def format(self, record: logging.LogRecord) -> str:
        record.message = visible(record.getMessage())
        if self.usesTime():
            record.asctime = self.formatTime(record, self.datefmt)
        text = self.formatMessage(record)
        if record.exc_info and not record.exc_text:
            record.exc_text = self.formatException(record.exc_info)
        for more in (record.exc_text, record.stack_info and self.formatStack(record.stack_info)):
            if more:
                text += "\n" + visible(more, lines=True)
        return text


def setup_logging(level: int, secrets: Iterable[str], log_file: Path | None = None) -> None:
    """Records to standard error, or appended to ``log_file`` (owner-only) where the
    terminal belongs to someone else: the participant ``ozlab chat`` plays."""
    handler = logging.StreamHandler(_appended(log_file) if log_file else None)
    handler.setFormatter(VisibleFormatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    handler.addFilter(RedactSecrets(secrets))
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(level)
    for name in _CHATTY:
        logging.getLogger(name).setLevel(max(level, logging.WARNING))


def _appended(path: Path) -> TextIO:
    descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND | os.O_CLOEXEC, FILE_MODE)
    os.fchmod(descriptor, FILE_MODE)  # an older log may have been readable by others
    return os.fdopen(descriptor, "a", encoding="utf-8")


def report_crash(error: BaseException) -> None:
    """Through the logging handler, so that its filter redacts secrets from the traceback."""
    logging.getLogger("ozlab").critical("ozlab stopped: %s", error, exc_info=error)
