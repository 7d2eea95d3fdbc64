"""Everything the bot says goes out here, with Telegram's rules and failures handled once.

System output is sent as plain text (a stray ``*`` must never make Telegram refuse a
message), split at Telegram's 4096-character limit, and a participant who blocked the bot
is reported instead of retried.
"""

from __future__ import annotations

import asyncio
import logging

from telegram import Bot, InlineKeyboardButton, InlineKeyboardMarkup
from telegram.constants import ChatAction, ParseMode
from telegram.error import BadRequest, Forbidden, RetryAfter, TelegramError, TimedOut

from bot.engine.effects import Buttons

log = logging.getLogger(__name__)

MAX_TEXT = 4096
_RETRIES = 3


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
    def __init__(self, bot: Bot) -> None:
        self._bot = bot

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
                        self._bot.send_message,
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
                    self._bot.send_message,
                    chat_id=chat_id,
                    text=chunk,
                    reply_markup=markup,
                )
            if message is not None:
                message_id = message.message_id
        return message_id

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

    async def _call(self, method: str, function, **kwargs):
        for attempt in range(_RETRIES):
            try:
                return await function(**kwargs)
            except Forbidden as error:
                raise ParticipantUnreachable(str(error)) from error
            except RetryAfter as error:
                wait = error.retry_after
                seconds = wait.total_seconds() if hasattr(wait, "total_seconds") else float(wait)
                log.warning("%s: flood limit, retrying in %.1f s", method, seconds)
                await asyncio.sleep(seconds)
            except BadRequest as error:
                if "not modified" in str(error).lower():
                    return None
                if "parse entities" in str(error).lower():
                    raise _Unparseable(str(error)) from error
                log.error("%s refused by Telegram: %s", method, error)
                return None
            except TimedOut:
                # The message may have been delivered: sending it again could duplicate it.
                log.warning("%s timed out (attempt %d); not repeated", method, attempt + 1)
                return None
            except TelegramError as error:
                log.warning("%s failed: %s (attempt %d)", method, error, attempt + 1)
                await asyncio.sleep(0.5 * 2**attempt)
        log.error("%s failed %d times; giving up", method, _RETRIES)
        return None
