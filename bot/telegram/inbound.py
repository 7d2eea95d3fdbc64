"""Telegram updates reduced to what a study needs, and nothing that names a person.

The bot keeps these (encrypted) in its inbox until they are handled; names, usernames
and the rest of the update are dropped at the door.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass

from telegram import Chat, Update

from bot.delivery import Delivery
from bot.engine import events as ev

_CONTENT_KINDS = (
    "sticker",
    "photo",
    "voice",
    "video",
    "video_note",
    "audio",
    "document",
    "animation",
    "location",
    "contact",
    "poll",
    "dice",
    "venue",
)


@dataclass(frozen=True)
class Inbound:
    """One Telegram update from a private chat, reduced to what a study needs (this is what
    the inbox keeps, encrypted, until it is handled).

    ``kind`` is text, command, callback, edited or unsupported.
    """

    chat_id: int
    kind: str
    text: str = ""
    update_id: int | None = None
    callback_id: str | None = None
    language: str | None = None  # Telegram's language code of the participant's app

    def to_json(self) -> str:
        return json.dumps(asdict(self), separators=(",", ":"))

    @classmethod
    def from_json(cls, raw: str) -> Inbound:
        return cls(**json.loads(raw))

    def to_delivery(self) -> Delivery:
        return Delivery(self.chat_id, self.to_event(), self.update_id, self.callback_id)

    def to_event(self) -> ev.Event:
        match self.kind:
            case "command":
                command, _, argument = self.text.partition(" ")
                name = command[1:].split("@", 1)[0].lower()
                if name == "start":
                    return ev.StartCommand(argument.strip() or None, self.language)
                if name == "done":
                    return ev.DoneCommand()
                return ev.UnknownCommand(self.text)
            case "text":
                return ev.TextReceived(self.text)
            case "callback":
                return ev.ButtonTapped(self.text)
            case "edited":
                return ev.MessageEdited()
        return ev.UnsupportedReceived(self.text)


def from_update(update: Update) -> Inbound | None:
    """``None`` for what a study ignores: groups, channels, other bots, service updates."""
    chat = update.effective_chat
    user = update.effective_user
    if chat is None or chat.type != Chat.PRIVATE or user is None or user.is_bot:
        return None
    if update.callback_query is not None:
        query = update.callback_query
        return Inbound(chat.id, "callback", query.data or "", update.update_id, query.id)
    if update.edited_message is not None:
        return Inbound(chat.id, "edited", "", update.update_id)
    message = update.message
    if message is None:
        return None
    if message.text is not None:
        entities = message.entities or ()
        is_command = any(e.type == "bot_command" and e.offset == 0 for e in entities)
        kind = "command" if is_command else "text"
        return Inbound(chat.id, kind, message.text, update.update_id, language=user.language_code)
    kind = next((k for k in _CONTENT_KINDS if getattr(message, k, None)), "other")
    return Inbound(chat.id, "unsupported", kind, update.update_id)
