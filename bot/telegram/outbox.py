"""Everything the bot says goes out here, with Telegram's rules and failures handled once.

System output is sent as plain text (a stray ``*`` must never make Telegram refuse a
message), split at Telegram's 4096-character limit, and a participant who blocked the bot
is reported instead of retried. Every message put in a chat waits for its slot under
Telegram's flood limits (:mod:`bot.telegram.flood`) when a pacer is given, and a message
Telegram still refuses with "retry after N" waits N seconds and goes again, as often as
Telegram asks: delayed, never lost (unless a study sets a finite ``flood_wait_limit``).
"""

from __future__ import annotations

import asyncio
import datetime as dt
import logging
import math
import warnings
from collections.abc import Awaitable, Callable, Sequence
from typing import Any

from telegram import (
    Bot,
    BotCommand,
    BotCommandScopeChat,
    InlineKeyboardButton,
    InlineKeyboardMarkup,
    InputFile,
)
from telegram.constants import ChatAction, ParseMode
from telegram.error import BadRequest, Forbidden, RetryAfter, TelegramError, TimedOut
from telegram.warnings import PTBDeprecationWarning

from bot.engine.effects import Buttons
from bot.telegram.flood import FloodPacer

log = logging.getLogger(__name__)

MAX_TEXT = 4096
_RETRIES = 3
FLOOD_WAIT_LIMIT = math.inf
"""Seconds one message may spend waiting out Telegram's "retry after" before it is given up:
none by default, since a message given up is lost. A clean stop waits for the messages in
hand; a bot killed meanwhile (a supervisor's stop timeout) loses nothing either: the message
stays undelivered in the store and goes out after the restart."""
_PACED = frozenset(
    {"sendMessage", "sendPhoto", "sendVoice", "editMessageText", "editMessageReplyMarkup"}
)
MAX_CAPTION = 1024
"""Telegram's limit on a photo's or voice note's caption, in UTF-16 units."""
_EXTENSIONS = {"image/png": "png", "image/jpeg": "jpg", "audio/ogg": "ogg", "audio/mpeg": "mp3"}
"""The methods that put a message in a chat and count against the flood limits."""


_PARSE_MODES = {"markdown": ParseMode.MARKDOWN_V2, "html": ParseMode.HTML}


class ParticipantUnreachable(Exception):
    """The participant blocked the bot or deleted the chat: stop writing to them."""


class _Unparseable(Exception):
    """Telegram could not parse the Markdown or HTML of a message."""


def _units(text: str) -> int:
    """Telegram's length: UTF-16 code units (an emoji outside the BMP counts twice)."""
    return len(text.encode("utf-16-le")) // 2


def _fitting(text: str, limit: int) -> int:
    """How many characters of ``text`` fit in ``limit`` UTF-16 units."""
    if _units(text) <= limit:
        return len(text)
    used = 0
    for index, char in enumerate(text):
        used += 2 if ord(char) > 0xFFFF else 1
        if used > limit:
            return index
    return len(text)


def split_text(text: str, limit: int = MAX_TEXT) -> list[str]:
    """Cut at paragraph, line or word boundaries where possible, never above ``limit``."""
    chunks: list[str] = []
    rest = text
    while _units(rest) > limit:
        size = _fitting(rest, limit)
        window = rest[:size]
        cut = max(window.rfind("\n\n"), window.rfind("\n"), window.rfind(" "))
        if cut < size // 2:
            cut = size
        chunks.append(rest[:cut].rstrip())
        rest = rest[cut:].lstrip()
    if rest or not chunks:
        chunks.append(rest)
    return chunks


def keyboard(buttons: Buttons) -> InlineKeyboardMarkup | None:
    if not buttons:
        return None
    return InlineKeyboardMarkup(
        [
            [InlineKeyboardButton(label, callback_data=data) for label, data in row]
            for row in buttons
        ]
    )


class TelegramOutbox:
    def __init__(
        self,
        bot: Bot,
        *,
        pacer: FloodPacer | None = None,
        flood_wait_limit: float = FLOOD_WAIT_LIMIT,
        sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
    ) -> None:
        """``pacer`` None sends at once (a local emulator, never Telegram itself)."""
        self._bot = bot
        self._pacer = pacer
        self._flood_wait_limit = flood_wait_limit
        self._sleep = sleep

    async def send(
        self, chat_id: int, text: str, buttons: Buttons = (), format: str = "plain"
    ) -> int | None:
        """Send ``text`` (split if long; buttons go with the last part); the last message id.

        Markdown or HTML is tried only when a study asks for it, and a part Telegram cannot
        parse is sent again as plain text rather than lost.
        """
        chunks = split_text(text or " ")
        message_id = None
        for index, chunk in enumerate(chunks):
            markup = keyboard(buttons) if index == len(chunks) - 1 else None
            message = None
            if format in _PARSE_MODES:
                try:
                    message = await self._call(
                        "sendMessage",
                        self._raw_send,
                        chat_id=chat_id,
                        text=chunk,
                        reply_markup=markup,
                        parse_mode=_PARSE_MODES[format],
                    )
                except _Unparseable as error:
                    log.warning(
                        "a %s reply was not accepted (%s); sent as plain text", format, error
                    )
                    format = "plain"
            if format not in _PARSE_MODES:
                message = await self._call(
                    "sendMessage",
                    self._raw_send,
                    chat_id=chat_id,
                    text=chunk,
                    reply_markup=markup,
                )
            if isinstance(message, dict) and isinstance(message.get("message_id"), int):
                message_id = message["message_id"]
        return message_id

    async def send_file(
        self,
        chat_id: int,
        kind: str,
        data: bytes,
        mime: str,
        caption: str = "",
        buttons: Buttons = (),
    ) -> int | None:
        """Send a photo or a voice note with its caption, as plain text, and ``buttons``
        under it; a caption over Telegram's 1024 goes after it as a message of its own
        (with the buttons). The id of the message with the buttons."""
        fits = _units(caption) <= MAX_CAPTION
        name = f"{kind}.{_EXTENSIONS.get(mime, 'bin')}"
        upload = InputFile(data, filename=name)
        method, send = (
            ("sendPhoto", self._bot.send_photo)
            if kind == "photo"
            else ("sendVoice", self._bot.send_voice)
        )
        message = await self._call(
            method,
            send,
            chat_id=chat_id,
            caption=caption if fits else None,
            reply_markup=keyboard(buttons) if fits else None,
            **{kind: upload},
        )
        if caption and not fits:
            return await self.send(chat_id, caption, buttons)
        return message.message_id if message is not None else None

    async def _raw_send(self, **data: object) -> Any:
        """``sendMessage`` answered with Telegram's JSON: python-telegram-bot would build a
        ``Message`` (its user and chat too) for each message sent, a tenth of the bot's CPU
        (bench/exchanges.py, cProfile), when only the message id is wanted."""
        return await self._bot._post("sendMessage", data)

    async def edit(self, chat_id: int, message_id: int, text: str, buttons: Buttons = ()) -> None:
        await self._call(
            "editMessageText",
            self._bot.edit_message_text,
            chat_id=chat_id,
            message_id=message_id,
            text=split_text(text)[0],
            reply_markup=keyboard(buttons),
        )

    async def remove_buttons(self, chat_id: int, message_id: int) -> None:
        await self._call(
            "editMessageReplyMarkup",
            self._bot.edit_message_reply_markup,
            chat_id=chat_id,
            message_id=message_id,
            reply_markup=None,
        )

    async def toast(self, callback_id: str, text: str | None = None) -> None:
        await self._call(
            "answerCallbackQuery",
            self._bot.answer_callback_query,
            callback_query_id=callback_id,
            text=text,
        )

    async def typing(self, chat_id: int) -> None:
        await self._call(
            "sendChatAction",
            self._bot.send_chat_action,
            chat_id=chat_id,
            action=ChatAction.TYPING,
        )

    async def chat_commands(self, chat_id: int, commands: Sequence[tuple[str, str]]) -> None:
        """The command menu of one chat (an annotator's), in place of everyone's; best
        effort: a menu Telegram refused leaves the commands working when typed."""
        await self._call(
            "setMyCommands",
            self._bot.set_my_commands,
            commands=[BotCommand(name, description) for name, description in commands],
            scope=BotCommandScopeChat(chat_id),
        )

    async def _call(self, method: str, function, **kwargs):
        pacer = self._pacer if method in _PACED else None
        failures = 0
        flood_waited = 0.0
        while failures < _RETRIES:
            if pacer is not None:
                await pacer.wait(kwargs["chat_id"])
            try:
                return await function(**kwargs)
            except Forbidden as error:
                raise ParticipantUnreachable(str(error)) from error
            except RetryAfter as error:
                # Delayed, never dropped: no count, only a bound on the time spent waiting.
                seconds = _retry_seconds(error)
                if flood_waited + seconds > self._flood_wait_limit:
                    log.error(
                        "%s: Telegram asked to wait %.0f s more after %.0f s of flood waits;"
                        " given up",
                        method,
                        seconds,
                        flood_waited,
                    )
                    return None
                flood_waited += seconds
                log.warning("%s: Telegram's flood limit, sent again in %.0f s", method, seconds)
                await self._sleep(seconds)
            except BadRequest as error:
                if "not modified" in str(error).lower():
                    return None
                if "parse entities" in str(error).lower():
                    raise _Unparseable(str(error)) from error
                log.error("%s refused by Telegram: %s", method, error)
                return None
            except TimedOut:
                # The message may have been delivered: sending it again could duplicate it.
                log.warning("%s timed out (attempt %d); not repeated", method, failures + 1)
                return None
            except TelegramError as error:
                log.warning("%s failed: %s (attempt %d)", method, error, failures + 1)
                await self._sleep(0.5 * 2**failures)
                failures += 1
        log.error("%s failed %d times; giving up", method, _RETRIES)
        return None


def _retry_seconds(error: RetryAfter) -> float:
    """The wait Telegram asked for, in seconds, whichever type this PTB version reports."""
    with warnings.catch_warnings():  # PTB 22 warns that the int will become a timedelta
        warnings.simplefilter("ignore", PTBDeprecationWarning)
        wait = error.retry_after
    return wait.total_seconds() if isinstance(wait, dt.timedelta) else float(wait)
