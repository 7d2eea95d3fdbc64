"""Simulated participants: a user in a private chat with the bot.

Tests drive a bot the way a person would (type, tap a button, edit, block) and then wait for
the bot's answer with the helpers of :class:`~bot.pilot.emulator.chat.ChatLog` (see there for the
reading cursor of ``wait_for_text``).
"""
# ruff: noqa: ASYNC109 - the wait_for_* helpers take ``timeout=`` by design

from __future__ import annotations

import io
import time
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from PIL import Image

from bot.pilot.emulator.chat import BotMessage, CallbackAnswer, ChatLog
from bot.pilot.emulator.files import photo_sizes

if TYPE_CHECKING:
    from bot.pilot.emulator.server import BotApiEmulator

__all__ = ["NO_AUDIO", "Participant", "default_photo"]

NO_AUDIO = b"OggS\x00 no audio here "
"""What a voice note holds when a test gives none: it starts as an Ogg file does and holds
no audio, as a corrupt recording would."""


def default_photo(width: int = 1280, height: int = 960) -> bytes:
    """A plain picture (a JPEG of ``width`` × ``height``) for tests that need any photo."""
    buffer = io.BytesIO()
    Image.new("RGB", (width, height), (70, 130, 180)).save(buffer, "JPEG")
    return buffer.getvalue()


class Participant(ChatLog):
    """A simulated user in a private chat with the bot."""

    def __init__(
        self,
        emulator: BotApiEmulator,
        user_id: int,
        *,
        first_name: str = "Test",
        username: str | None = None,
        language_code: str | None = "en",
        last_name: str | None = None,
    ) -> None:
        user: dict[str, Any] = {"id": user_id, "is_bot": False, "first_name": first_name}
        chat: dict[str, Any] = {"id": user_id, "first_name": first_name}
        if last_name is not None:
            user["last_name"] = chat["last_name"] = last_name
        if username is not None:
            user["username"] = chat["username"] = username
        if language_code is not None:
            user["language_code"] = language_code
        chat["type"] = "private"
        super().__init__(chat)
        self._emulator = emulator
        self.user_id = user_id
        self.user = user
        self.toasts: list[str] = []
        """Non-empty ``answerCallbackQuery`` texts for this participant's taps, in order."""
        self.callback_answers: list[CallbackAnswer] = []
        """Every ``answerCallbackQuery`` for this participant's taps (with or without text)."""
        self.update_ids: list[int] = []
        """Update ids this participant produced, in order."""
        self.last_query_id: str | None = None
        self._toast_cursor = 0

    # -- acting -------------------------------------------------------------------------------

    def _message(self, content: dict[str, Any], reply_to: int | None = None) -> dict[str, Any]:
        message: dict[str, Any] = {
            "message_id": self.next_message_id(),
            "from": self.user,
            "chat": self.chat,
            "date": int(time.time()),
            **content,
        }
        if reply_to is not None:
            replied = self.user_messages.get(reply_to) or self._reply_target(reply_to)
            message["reply_to_message"] = replied
        self.user_messages[message["message_id"]] = message
        self.known = True
        return message

    def _reply_target(self, message_id: int) -> dict[str, Any]:
        bot_message = self.bot_message(message_id)
        if bot_message is None:
            raise LookupError(f"no message {message_id} in chat {self.chat_id}")
        return bot_message.to_api()

    def _emit(self, kind: str, payload: dict[str, Any]) -> int:
        update_id = self._emulator.inject_update(kind, payload)
        self.update_ids.append(update_id)
        return update_id

    async def send_text(self, text: str, *, reply_to: int | None = None) -> int:
        """Type a message; a leading ``/command`` carries a ``bot_command`` entity."""
        return self._emit("message", self._message(self._emulator.text_content(text), reply_to))

    def _send_file(
        self,
        kind: str,
        data: bytes,
        where: tuple[str, str],
        caption: str | None = None,
        **described: object,
    ) -> int:
        """A message carrying ``data`` as a new file (kept in ``where``: folder, extension),
        described as Telegram describes a ``kind`` of file."""
        folder, extension = where
        stored = self._emulator.files.add(folder, data, extension)
        file = {
            "file_id": stored.file_id,
            "file_unique_id": stored.file_unique_id,
            **described,
            "file_size": len(data),
        }
        content: dict[str, Any] = {kind: file}
        if caption is not None:
            content["caption"] = caption
        return self._emit("message", self._message(content))

    async def send_sticker(self, emoji: str = "👍") -> int:
        """Send a sticker (a message without text)."""
        return self._send_file(
            "sticker",
            f"sticker {emoji}".encode(),
            ("stickers", "webp"),
            type="regular",
            width=512,
            height=512,
            is_animated=False,
            is_video=False,
            emoji=emoji,
        )

    async def send_photo(self, image: bytes | None = None, *, caption: str | None = None) -> int:
        """Send a photo (any image Pillow reads; a 1280×960 picture by default), as
        Telegram delivers it: JPEG sizes up to 1280 px, the largest last."""
        data = image if image is not None else default_photo()
        content: dict[str, Any] = {"photo": photo_sizes(self._emulator.files, data)}
        if caption is not None:
            content["caption"] = caption
        return self._emit("message", self._message(content))

    async def send_voice(
        self,
        audio: bytes | None = None,
        *,
        duration: int = 2,
        mime_type: str = "audio/ogg",
        caption: str | None = None,
    ) -> int:
        """Send a voice note of ``audio`` (by default bytes that hold no audio at all, as
        an unreadable recording would)."""
        data = audio if audio is not None else NO_AUDIO * (1 + 4000 * duration // len(NO_AUDIO))
        where = ("voice", "oga")
        return self._send_file(
            "voice", data, where, caption, duration=duration, mime_type=mime_type
        )

    async def send_video_note(
        self, video: bytes = b"\x00\x00\x00\x18ftypmp42", *, duration: int = 3
    ) -> int:
        """Send a round video message."""
        where = ("video_notes", "mp4")
        return self._send_file("video_note", video, where, length=384, duration=duration)

    async def send_document(
        self,
        data: bytes,
        *,
        file_name: str = "file.bin",
        mime_type: str = "application/octet-stream",
        caption: str | None = None,
    ) -> int:
        """Send any file as a document (``file_name`` is the participant's: outside text)."""
        where = ("documents", "bin")
        return self._send_file(
            "document", data, where, caption, file_name=file_name, mime_type=mime_type
        )

    async def edit_text(self, message_id: int, new_text: str) -> int:
        """Edit one of this participant's own texts: an ``edited_message`` update."""
        original = self.user_messages.get(message_id)
        if original is None or "text" not in original:
            raise LookupError(f"participant {self.user_id} sent no text message {message_id}")
        content = self._emulator.text_content(new_text)
        edited = {**original, **content}
        if "entities" not in content:
            edited.pop("entities", None)
        edited["edit_date"] = int(time.time())
        self.user_messages[message_id] = edited
        return self._emit("edited_message", edited)

    def _find_button(
        self, text: str | None, data: str | None, message_id: int | None
    ) -> tuple[BotMessage, str]:
        if message_id is not None:
            message = self.bot_message(message_id)
            if message is None:
                raise LookupError(f"the bot sent no message {message_id} to {self.user_id}")
            candidates: Iterable[BotMessage] = (message,)
        else:
            candidates = reversed(self.messages)
        for message in candidates:
            if message.deleted:
                continue
            for row in message.keyboard:
                for label, callback_data in row:
                    if callback_data is None:
                        continue
                    if (text is None or label == text) and (data is None or callback_data == data):
                        return message, callback_data
        raise LookupError(
            f"no inline button with text={text!r} data={data!r}; last bot messages: "
            f"{self.describe()}"
        )

    async def tap(
        self,
        *,
        text: str | None = None,
        data: str | None = None,
        message_id: int | None = None,
    ) -> int:
        """Press an inline button (exact text and/or data) on the newest message offering it."""
        if text is None and data is None:
            raise ValueError("tap() needs text= or data=")
        message, callback_data = self._find_button(text, data, message_id)
        return await self.send_callback(callback_data, message_id=message.message_id)

    async def send_callback(self, data: str, *, message_id: int | None = None) -> int:
        """A ``callback_query`` with arbitrary data, as from a stale or tampered client."""
        target = self.bot_message(message_id) if message_id is not None else self.last_message
        if target is None:
            raise LookupError(f"no bot message to attach a callback to in chat {self.chat_id}")
        query_id = self._emulator.new_callback_query(self)
        self.last_query_id = query_id
        query = {
            "id": query_id,
            "from": self.user,
            "message": target.to_api(),
            "chat_instance": str(4_000_000_000_000_000_000 + self.chat_id),
            "data": data,
        }
        return self._emit("callback_query", query)

    def block(self) -> None:
        """Block the bot: later sends fail with 403; the bot gets a ``my_chat_member`` update."""
        if not self.blocked:
            self.blocked = True
            self._emit("my_chat_member", self._emulator.membership_change(self, "member", "kicked"))

    def unblock(self) -> None:
        """Unblock the bot (the user restarted it)."""
        if self.blocked:
            self.blocked = False
            self._emit("my_chat_member", self._emulator.membership_change(self, "kicked", "member"))

    # -- reading ------------------------------------------------------------------------------

    def record_answer(self, answer: CallbackAnswer) -> None:
        self.callback_answers.append(answer)
        if answer.text:
            self.toasts.append(answer.text)
        self.changed()

    async def wait_for_toast(self, substring: str = "", timeout: float = 10.0) -> str:
        """Wait for a not yet consumed toast containing ``substring``; consume it."""
        found: list[str] = []

        def check() -> bool:
            for index in range(self._toast_cursor, len(self.toasts)):
                if substring in self.toasts[index]:
                    self._toast_cursor = index + 1
                    found.append(self.toasts[index])
                    return True
            return False

        await self._wait(check, timeout, f"toast containing {substring!r}")
        return found[0]

    async def wait_for_answer(self, query_id: str | None = None, timeout: float = 10.0) -> None:
        """Wait until the bot answered ``query_id`` (default: this participant's last tap)."""
        wanted = query_id or self.last_query_id
        await self._wait(
            lambda: any(a.query_id == wanted for a in self.callback_answers),
            timeout,
            f"answer to callback query {wanted}",
        )
