"""Telegram updates reduced to what a study needs, and nothing that names a person.

The bot keeps these (encrypted) in its inbox until they are handled; names, usernames
and the rest of the update are dropped at the door.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import asdict, dataclass
from enum import StrEnum
from typing import Any

from bot.core.media import FILE_KINDS, Medium
from bot.core.storable_text import storable
from bot.engine import events as ev
from bot.engine.delivery import Delivery

CONTENT_KINDS = (
    *FILE_KINDS,
    "location",
    "contact",
    "poll",
    "dice",
    "venue",
)


_ENCODER = json.JSONEncoder(separators=(",", ":"))


class UnreadableUpdate(ValueError):
    """Not an update as the Bot API describes it (a missing chat, an id that is no number)."""


class InboundKind(StrEnum):
    TEXT = "text"
    COMMAND = "command"  # a message that starts with a /command
    CALLBACK = "callback"  # a button tap
    EDITED = "edited"
    MEDIA = "media"  # a voice note, photo, sticker, file, …: ``medium`` describes it
    UNSUPPORTED = "unsupported"  # a location, contact, poll, …: ``text`` says which


@dataclass(frozen=True)
class Inbound:
    """One Telegram update from a private chat, reduced to what a study needs (this is what
    the inbox keeps, encrypted, until it is handled)."""

    chat_id: int
    kind: InboundKind
    text: str = ""
    update_id: int | None = None
    callback_id: str | None = None
    language: str | None = None  # Telegram's language code of the participant's app
    message_id: int | None = None  # a tap: the message whose button it was
    medium: Medium | None = None  # a file: what Telegram said of it (never who sent it)

    def to_json(self) -> str:
        # Plain values but the medium: no ``asdict`` of the whole (a deep copy), one encoder.
        # No medium, no key: what the inbox keeps of a text is as it always was.
        data = vars(self)
        if self.medium is None:
            data = {k: v for k, v in data.items() if k != "medium"}
        else:
            data = {**data, "medium": asdict(self.medium)}
        return _ENCODER.encode(data)

    @classmethod
    def from_json(cls, raw: str) -> Inbound:
        """What the inbox kept; its text made storable again (an ozlab from before the door
        kept a NUL as it came, and the update may wait in the inbox across the upgrade)."""
        data = json.loads(raw)
        medium = data.get("medium")
        return cls(
            **{
                **data,
                "kind": InboundKind(data["kind"]),
                "text": storable(data["text"]),
                "medium": Medium(**medium) if medium is not None else None,
            }
        )

    def to_delivery(self) -> Delivery:
        return Delivery(self.chat_id, self.to_event(), self.update_id, self.callback_id)

    def to_event(self) -> ev.Event:
        match self.kind:
            case InboundKind.COMMAND:
                command, _, argument = self.text.partition(" ")
                name = command[1:].split("@", 1)[0].lower()
                if name == "start":
                    return ev.StartCommand(argument.strip() or None, self.language)
                if name == "done":
                    return ev.DoneCommand()
                if name == "withdraw":
                    return ev.WithdrawCommand()
                if name == "help":
                    return ev.HelpCommand()
                return ev.UnknownCommand(self.text)
            case InboundKind.TEXT:
                return ev.TextReceived(self.text)
            case InboundKind.CALLBACK:
                return ev.ButtonTapped(self.text, self.message_id)
            case InboundKind.EDITED:
                return ev.MessageEdited()
            case InboundKind.MEDIA if self.medium is not None:
                return ev.MediaReceived(self.medium)
            case InboundKind.UNSUPPORTED | InboundKind.MEDIA:
                return ev.UnsupportedReceived(self.text)


def read_update(raw: object) -> Inbound | None:
    """The update as Telegram sent it (JSON), read for what a study needs: ``None`` for what
    a study ignores (groups, channels, other bots, other kinds of update); an
    :class:`UnreadableUpdate` when it is not an update at all.

    What a participant or an annotator wrote (a message, a button's data, the app's
    language) is made storable here, at the door (``bot.core.storable_text``).

    Read here rather than through python-telegram-bot's ``Update.de_json``: a Bot API server
    older or newer than the library (a field it requires, missing) cannot stop the bot, names
    are never turned into objects, and building every object cost a fifth of the bot's CPU.
    """
    update = _object(raw, "update")
    update_id = _field(update, "update_id", int)
    if (query := update.get("callback_query")) is not None:
        query = _object(query, "callback_query")
        message = query.get("message")  # absent for inline messages: no chat, nothing to do
        chat = _object(message, "message").get("chat") if message is not None else None
        if not _private(chat, query.get("from")):
            return None
        data = query.get("data")
        return Inbound(
            _chat_id(chat),
            InboundKind.CALLBACK,
            storable(data) if isinstance(data, str) else "",
            update_id,
            _field(query, "id", str),
            message_id=_field(_object(message, "message"), "message_id", int),
        )
    if (edited := update.get("edited_message")) is not None:
        edited = _object(edited, "edited_message")
        if not _private(edited.get("chat"), edited.get("from")):
            return None
        return Inbound(_chat_id(edited["chat"]), InboundKind.EDITED, "", update_id)
    message = update.get("message")
    if message is None:
        return None
    message = _object(message, "message")
    user = message.get("from")
    if not _private(message.get("chat"), user):
        return None
    chat_id = _chat_id(message["chat"])
    text = message.get("text")
    if isinstance(text, str):
        language = _object(user, "from").get("language_code")
        kind = InboundKind.COMMAND if _starts_with_command(message) else InboundKind.TEXT
        lang = storable(language) if isinstance(language, str) else None
        return Inbound(chat_id, kind, storable(text), update_id, language=lang)
    if (medium := _medium(message)) is not None:
        return Inbound(chat_id, InboundKind.MEDIA, medium.kind, update_id, medium=medium)
    content = next((k for k in CONTENT_KINDS if message.get(k)), "other")
    return Inbound(chat_id, InboundKind.UNSUPPORTED, content, update_id)


def _medium(message: Mapping[str, Any]) -> Medium | None:
    """The file a message carries, described: a photo by its largest size (Telegram sends
    the largest last), a video note by its side. Its file name is never read (the
    participant's words, and nothing a study needs)."""
    kind = next((k for k in FILE_KINDS if message.get(k)), None)
    if kind is None:
        return None
    found = message[kind]
    if kind == "photo":
        found = found[-1] if isinstance(found, list) else None
    file = _object(found, kind)
    side = _number(file, "length")
    caption = message.get("caption")
    return Medium(
        kind=kind,
        file_id=storable(_field(file, "file_id", str)),
        size=_number(file, "file_size"),
        mime=storable(mime) if isinstance(mime := file.get("mime_type"), str) else None,
        duration=_number(file, "duration"),
        width=_number(file, "width") or side,
        height=_number(file, "height") or side,
        caption=storable(caption) if isinstance(caption, str) else "",
    )


def _number(obj: Mapping[str, Any], name: str) -> int | None:
    value = obj.get(name)
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _object(value: object, name: str) -> Mapping[str, Any]:
    if not isinstance(value, Mapping):
        raise UnreadableUpdate(f"{name} is not an object")
    return value


def _field(obj: Mapping[str, Any], name: str, kind: type) -> Any:
    value = obj.get(name)
    if not isinstance(value, kind) or isinstance(value, bool):
        raise UnreadableUpdate(f"{name} is not a {kind.__name__}")
    return value


def _chat_id(chat: object) -> int:
    return int(_field(_object(chat, "chat"), "id", int))


def _private(chat: object, user: object) -> bool:
    """A private chat with a person (not a group, a channel or another bot).

    In a private chat the chat is the person: its id is theirs. An update whose sender is
    someone else (a tap on another chat's message, a message in another's chat) comes from
    no Telegram client, only from a forger, and would act in that other chat: refused."""
    if chat is None or user is None:
        return False
    chat, user = _object(chat, "chat"), _object(user, "from")
    if chat.get("type") != "private" or user.get("is_bot") is not False:
        return False
    if _field(chat, "id", int) != _field(user, "id", int):
        raise UnreadableUpdate("the sender is not the person of the private chat")
    return True


def _starts_with_command(message: Mapping[str, Any]) -> bool:
    entities = message.get("entities")
    if not isinstance(entities, list):
        return False
    return any(
        isinstance(e, Mapping) and e.get("type") == "bot_command" and e.get("offset") == 0
        for e in entities
    )
