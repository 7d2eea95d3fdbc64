"""Chats as the emulator sees them: what the bot sent, and waiting for it.

Waiting is event-driven: every change to a chat wakes its waiters, which re-check their
condition, so a test never sleeps and never polls.

Reading cursor of :meth:`ChatLog.wait_for_text`: every message the bot sends, and every edit
that changes a message's text, is appended to the chat's *transcript*. ``wait_for_text``
scans the transcript after the cursor for the first entry whose text contains the substring
(for an edit: contains it now but did not before), returns that message and moves the cursor
past the entry. Unmatched entries before it are skipped for good, like reading a chat from top
to bottom. So ``send -> wait_for_text(a) -> send -> wait_for_text(b)`` never matches a message
that ``wait_for_text(a)`` already passed. :meth:`ChatLog.mark_read` moves the cursor to the end.
"""
# ruff: noqa: ASYNC109 - the wait_for_* helpers take ``timeout=`` by design

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Self

from bot.pilot.emulator.keyboards import Keyboard
from bot.pilot.emulator.waiting import Waiters

__all__ = ["BotMessage", "CallbackAnswer", "ChatLog", "SentMedia"]


@dataclass(frozen=True, slots=True)
class SentMedia:
    """A voice note or a photo the bot sent: the bytes as uploaded, for tests to read."""

    kind: str
    """``voice`` or ``photo``: the field of the Bot API ``Message`` that holds it."""
    data: bytes
    content_type: str | None
    """What the upload's part said it was (``None`` for a file sent again by its id)."""
    api: Any
    """The ``Voice`` object or the ``PhotoSize`` list, as the ``Message`` carries it."""


@dataclass(eq=False, slots=True)
class BotMessage:
    """A message the bot sent, kept current: edits and deletions update it in place."""

    message_id: int
    chat_id: int
    text: str
    keyboard: Keyboard
    sent_at: float
    """``time.monotonic()`` when the ``sendMessage`` request reached the emulator."""
    date: int
    entities: list[dict[str, Any]] = field(default_factory=list)
    reply_markup: dict[str, Any] | None = None
    """The inline keyboard as sent (``None`` when there is none)."""
    parse_mode: str | None = None
    reply_to_message_id: int | None = None
    edit_count: int = 0
    """Successful ``editMessageText`` and ``editMessageReplyMarkup`` calls."""
    edited_at: float | None = None
    edit_date: int | None = None
    deleted: bool = False
    chat: dict[str, Any] = field(default_factory=dict, repr=False)
    sender: dict[str, Any] = field(default_factory=dict, repr=False)
    media: SentMedia | None = None
    """A voice note or photo (``sendVoice``, ``sendPhoto``): ``text`` is then its caption."""

    @property
    def buttons(self) -> list[str]:
        """Texts of all inline buttons, row by row."""
        return [text for row in self.keyboard for text, _ in row]

    def to_api(self) -> dict[str, Any]:
        """The Bot API ``Message`` object for this message as it is now."""
        doc: dict[str, Any] = {
            "message_id": self.message_id,
            "from": self.sender,
            "chat": self.chat,
            "date": self.date,
        }
        if self.media is None:
            doc["text"] = self.text
        else:
            doc[self.media.kind] = self.media.api
            if self.text:
                doc["caption"] = self.text
        if self.entities:
            doc["caption_entities" if self.media is not None else "entities"] = self.entities
        if self.edit_date is not None:
            doc["edit_date"] = self.edit_date
        if self.reply_markup is not None:
            doc["reply_markup"] = self.reply_markup
        if self.reply_to_message_id is not None:
            doc["reply_to_message"] = {
                "message_id": self.reply_to_message_id,
                "chat": self.chat,
                "date": self.date,
            }
        return doc


@dataclass(frozen=True, slots=True)
class CallbackAnswer:
    """One ``answerCallbackQuery`` call."""

    query_id: str
    text: str | None
    show_alert: bool
    url: str | None
    answered_at: float


@dataclass(frozen=True, slots=True)
class _Entry:
    message: BotMessage
    text: str
    previous_text: str | None  # None for a new message


def _describe(message: BotMessage) -> str:
    text = message.text if len(message.text) <= 160 else message.text[:157] + "..."
    extra = f" buttons={message.buttons}" if message.keyboard else ""
    flags = " (deleted)" if message.deleted else ""
    kind = f" [{message.media.kind}]" if message.media is not None else ""
    return f"#{message.message_id}{flags}{kind}: {text!r}{extra}"


class ChatLog:
    """One chat as the emulator sees it: its bot messages, actions and waiters."""

    def __init__(self, chat: dict[str, Any]) -> None:
        self.chat = chat
        self.chat_id: int = chat["id"]
        self.known = False
        """Whether anyone has written here; until then the bot gets "chat not found"."""
        self.blocked = False
        self.messages: list[BotMessage] = []
        """The bot's messages in this chat, in the order they were sent."""
        self.chat_actions: list[str] = []
        self.user_messages: dict[int, dict[str, Any]] = {}
        self.reply_keyboard: list[list[str]] | None = None
        """Custom reply keyboard the bot has shown (``None`` after ``remove_keyboard``)."""
        self._by_id: dict[int, BotMessage] = {}
        self._next_message_id = 1
        self._transcript: list[_Entry] = []
        self._cursor = 0
        self._waiters = Waiters()

    # -- bookkeeping used by the server ---------------------------------------------------

    def next_message_id(self) -> int:
        message_id = self._next_message_id
        self._next_message_id += 1
        return message_id

    def bot_message(self, message_id: int) -> BotMessage | None:
        return self._by_id.get(message_id)

    def add_bot_message(self, message: BotMessage) -> None:
        self.messages.append(message)
        self._by_id[message.message_id] = message
        self._transcript.append(_Entry(message, message.text, None))
        self.changed()

    def record_edit(self, message: BotMessage, previous_text: str) -> None:
        if message.text != previous_text:
            self._transcript.append(_Entry(message, message.text, previous_text))
        self.changed()

    def changed(self) -> None:
        """Wake every waiter of this chat so it re-checks its condition."""
        self._waiters.wake()

    # -- reading ----------------------------------------------------------------------------

    @property
    def last_message(self) -> BotMessage | None:
        """The newest bot message, or ``None``."""
        return self.messages[-1] if self.messages else None

    def describe(self, last: int = 5) -> str:
        """The last few bot messages, for failure messages."""
        if not self.messages:
            return "no bot messages yet"
        return "; ".join(_describe(message) for message in self.messages[-last:])

    def mark_read(self) -> None:
        """Move the ``wait_for_text`` cursor past everything the bot has sent so far."""
        self._cursor = len(self._transcript)

    async def _wait(self, check: Callable[[], bool], seconds: float, what: str) -> None:
        def why() -> str:
            return (
                f"chat {self.chat_id}: no {what} within {seconds:g} s; "
                f"last bot messages: {self.describe()}"
            )

        await self._waiters.until(check, seconds, why)

    async def wait_for(self, predicate: Callable[[Self], bool], timeout: float = 10.0) -> None:
        """Wait until ``predicate(self)`` holds; ``TimeoutError`` shows the last bot messages."""
        name = getattr(predicate, "__name__", "condition")
        await self._wait(lambda: predicate(self), timeout, f"{name} satisfied")

    async def wait_for_text(self, substring: str, timeout: float = 10.0) -> BotMessage:
        """Wait for a bot message containing ``substring`` past the cursor (see module doc)."""
        found: list[BotMessage] = []

        def check() -> bool:
            for index in range(self._cursor, len(self._transcript)):
                entry = self._transcript[index]
                if substring in entry.text and (
                    entry.previous_text is None or substring not in entry.previous_text
                ):
                    self._cursor = index + 1
                    found.append(entry.message)
                    return True
            return False

        await self._wait(check, timeout, f"unread bot message containing {substring!r}")
        return found[0]

    async def wait_for_message_count(self, count: int, timeout: float = 10.0) -> BotMessage:
        """Wait until the bot has sent at least ``count`` messages here; return the newest."""
        await self._wait(lambda: len(self.messages) >= count, timeout, f"{count} bot messages")
        return self.messages[-1]
