"""Bot API method handlers of the emulator (everything except ``getUpdates``).

Each handler gets the emulator, the decoded parameters and the ``time.monotonic()`` at which
the request arrived, and returns the ``result`` or raises :class:`ApiError` with Telegram's
error description, so bots meet the failures they will meet in production.
"""

from __future__ import annotations

import ipaddress
import json
import re
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from bot.pilot.emulator.chat import BotMessage, CallbackAnswer, ChatLog, SentMedia
from bot.pilot.emulator.files import MAX_UPLOAD, StoredFile, check_photo, photo_sizes
from bot.pilot.emulator.formatting import ParsedText, parse_text
from bot.pilot.emulator.keyboards import inline_rows, reply_keyboard_rows, validate_reply_markup
from bot.pilot.emulator.updates import DEFAULT_ALLOWED_UPDATES
from bot.pilot.emulator.wire import ApiError, UploadedFile, bad_request

if TYPE_CHECKING:
    from bot.pilot.emulator.server import BotApiEmulator

__all__ = ["METHODS", "NOT_MODIFIED"]

Handler = Callable[["BotApiEmulator", dict[str, Any], float], Any]
METHODS: dict[str, Handler] = {}

NOT_MODIFIED = (
    "message is not modified: specified new message content and reply markup are exactly "
    "the same as a current content and reply markup of the message"
)
_QUERY_TOO_OLD = "query is too old and response timeout expired or query ID is invalid"
_CHAT_ACTIONS = frozenset(
    {
        "typing",
        "upload_photo",
        "record_video",
        "upload_video",
        "record_voice",
        "upload_voice",
        "upload_document",
        "choose_sticker",
        "find_location",
        "record_video_note",
        "upload_video_note",
    }
)
_COMMAND = re.compile(r"[a-z0-9_]{1,32}")
_SECRET = re.compile(r"[A-Za-z0-9_-]{1,256}")
_MAX_CAPTION = 1024
_WRONG_FILE = "wrong file identifier/HTTP URL specified"
_UNRESOLVED = "bad webhook: Failed to resolve host: Name or service not known"
_WRONG_PORT = "bad webhook: Webhook can be set up only on ports 80, 88, 443 or 8443"


def _method(name: str) -> Callable[[Handler], Handler]:
    def register(handler: Handler) -> Handler:
        METHODS[name] = handler
        return handler

    return register


def _target_chat(emu: BotApiEmulator, params: dict[str, Any]) -> ChatLog:
    chat_id = params.get("chat_id")
    if chat_id is None or chat_id == "":
        raise bad_request("chat_id is empty")
    chat = emu.find_chat(chat_id)
    if chat is None:
        raise bad_request("chat not found")
    if chat.blocked:
        raise ApiError(403, "Forbidden: bot was blocked by the user")
    return chat


def _reply_to(chat: ChatLog, params: dict[str, Any]) -> int | None:
    reply = params.get("reply_parameters")
    if isinstance(reply, dict):
        message_id, lenient = reply.get("message_id"), reply.get("allow_sending_without_reply")
    else:
        message_id = params.get("reply_to_message_id")
        lenient = params.get("allow_sending_without_reply")
    if message_id is None:
        return None
    message = chat.bot_message(message_id)
    if message_id in chat.user_messages or (message is not None and not message.deleted):
        return int(message_id)
    if lenient:
        return None
    raise bad_request("message to be replied not found")


def _inline_markup(params: dict[str, Any]) -> dict[str, Any] | None:
    markup = validate_reply_markup(params.get("reply_markup"))
    if markup is not None and "inline_keyboard" not in markup:
        raise bad_request("inline keyboard expected")
    return markup


def _message_to_edit(emu: BotApiEmulator, params: dict[str, Any]) -> tuple[ChatLog, BotMessage]:
    if "inline_message_id" in params:
        raise bad_request("MESSAGE_ID_INVALID")  # inline mode is not emulated
    chat = _target_chat(emu, params)
    message_id = params.get("message_id")
    if message_id is None:
        raise bad_request("message identifier is not specified")
    message = chat.bot_message(message_id)
    if message is None or message.deleted:
        if message_id in chat.user_messages:
            raise bad_request("message can't be edited")
        raise bad_request("message to edit not found")
    return chat, message


def _touch(message: BotMessage, arrived: float) -> None:
    message.edit_count += 1
    message.edited_at = arrived
    message.edit_date = int(time.time())


@_method("getMe")
def _get_me(emu: BotApiEmulator, params: dict[str, Any], arrived: float) -> Any:
    return {
        **emu.bot_user,
        "can_join_groups": True,
        "can_read_all_group_messages": False,
        "supports_inline_queries": False,
        "can_connect_to_business": False,
        "has_main_web_app": False,
    }


@_method("deleteWebhook")
def _delete_webhook(emu: BotApiEmulator, params: dict[str, Any], arrived: float) -> Any:
    emu.unset_webhook()
    if params.get("drop_pending_updates"):
        emu.drop_pending()
    return True


@_method("getWebhookInfo")
def _get_webhook_info(emu: BotApiEmulator, params: dict[str, Any], arrived: float) -> Any:
    pusher = emu.webhook
    info: dict[str, Any] = {
        "url": pusher.url if pusher is not None else "",
        "has_custom_certificate": False,
        "pending_update_count": emu.pending_updates,
    }
    if pusher is not None and pusher.last_error is not None:
        info |= {"last_error_date": int(time.time()), "last_error_message": pusher.last_error}
    return info


@_method("setWebhook")
def _set_webhook(emu: BotApiEmulator, params: dict[str, Any], arrived: float) -> Any:
    url = params.get("url")
    if not isinstance(url, str):
        raise bad_request(_UNRESOLVED)
    secret = params.get("secret_token")
    if secret is not None and not _SECRET.fullmatch(str(secret)):
        raise bad_request("secret token contains unallowed characters")
    if url:
        _check_webhook_url(url)
    allowed = params.get("allowed_updates")
    if isinstance(allowed, list):
        emu.queue.allowed = frozenset(allowed) if allowed else DEFAULT_ALLOWED_UPDATES
    if params.get("drop_pending_updates"):
        emu.drop_pending()
    if not url:  # an empty URL removes the webhook, as deleteWebhook does
        emu.unset_webhook()
    else:
        emu.set_webhook(url, str(secret) if secret else None)
    return True


def _check_webhook_url(url: str) -> None:
    """Telegram posts over https to its four ports; the emulator posts only to this machine
    (the bot under test listens on loopback), over http or https, to any port."""
    parts = urlsplit(url)
    try:
        port = parts.port
    except ValueError:
        raise bad_request("bad webhook: Wrong port number specified in the URL") from None
    host = parts.hostname or ""
    try:
        local = host == "localhost" or ipaddress.ip_address(host).is_loopback
    except ValueError:
        local = False
    if parts.scheme not in ("http", "https"):
        raise bad_request("bad webhook: An HTTPS URL must be provided for webhook")
    if not local:
        raise bad_request(_UNRESOLVED)
    if parts.scheme == "https" and port not in (None, 443, 80, 88, 8443):
        raise bad_request(_WRONG_PORT)


def _new_message(
    emu: BotApiEmulator,
    params: dict[str, Any],
    arrived: float,
    parsed: ParsedText,
    media: SentMedia | None = None,
) -> Any:
    """Send a text, or a voice note or photo with ``parsed`` as its caption."""
    chat = _target_chat(emu, params)
    markup = validate_reply_markup(params.get("reply_markup"))
    reply_to = _reply_to(chat, params)
    inline = markup if markup is not None and "inline_keyboard" in markup else None
    if markup is not None and "keyboard" in markup:
        chat.reply_keyboard = reply_keyboard_rows(markup)
    elif markup is not None and "remove_keyboard" in markup:
        chat.reply_keyboard = None
    message = BotMessage(
        message_id=chat.next_message_id(),
        chat_id=chat.chat_id,
        text=parsed.text,
        keyboard=inline_rows(inline),
        sent_at=arrived,
        date=int(time.time()),
        entities=parsed.entities,
        reply_markup=inline,
        parse_mode=params.get("parse_mode"),
        reply_to_message_id=reply_to,
        chat=chat.chat,
        sender=emu.bot_user,
        media=media,
    )
    chat.add_bot_message(message)
    return message.to_api()


@_method("sendMessage")
def _send_message(emu: BotApiEmulator, params: dict[str, Any], arrived: float) -> Any:
    parsed = parse_text(params.get("text"), params.get("parse_mode"), params.get("entities"))
    return _new_message(emu, params, arrived, parsed)


def _caption(params: dict[str, Any]) -> ParsedText:
    caption = params.get("caption")
    if caption is None or caption == "":
        return ParsedText("", [])
    try:
        return parse_text(
            caption, params.get("parse_mode"), params.get("caption_entities"), limit=_MAX_CAPTION
        )
    except ApiError as error:
        if error.description.endswith("message is too long"):
            raise bad_request("message caption is too long") from None
        raise


def _upload(emu: BotApiEmulator, value: object) -> tuple[bytes, str | None, StoredFile | None]:
    """A file a bot sends: a multipart upload, or a ``file_id`` it had (a URL cannot be
    fetched: the emulator reaches nothing but loopback). (data, content type, known file)."""
    if isinstance(value, UploadedFile):
        if not value.data:
            raise bad_request("file must be non-empty")
        if len(value.data) > MAX_UPLOAD:
            raise ApiError(413, "Request Entity Too Large")
        return value.data, value.content_type, None
    known = emu.files.by_id(value)
    if known is None:
        raise bad_request(_WRONG_FILE)
    return known.data, None, known


@_method("sendVoice")
def _send_voice(emu: BotApiEmulator, params: dict[str, Any], arrived: float) -> Any:
    _target_chat(emu, params)
    caption = _caption(params)
    data, content_type, known = _upload(emu, params.get("voice"))
    stored = known or emu.files.add("voice", data, "oga")
    voice: dict[str, Any] = {
        "file_id": stored.file_id,
        "file_unique_id": stored.file_unique_id,
        "duration": int(params.get("duration") or 0),
        "mime_type": content_type or "audio/ogg",
        "file_size": len(data),
    }
    media = SentMedia("voice", data, content_type, voice)
    return _new_message(emu, params, arrived, caption, media)


@_method("sendPhoto")
def _send_photo(emu: BotApiEmulator, params: dict[str, Any], arrived: float) -> Any:
    _target_chat(emu, params)
    caption = _caption(params)
    data, content_type, _ = _upload(emu, params.get("photo"))
    check_photo(data)
    media = SentMedia("photo", data, content_type, photo_sizes(emu.files, data))
    return _new_message(emu, params, arrived, caption, media)


@_method("getFile")
def _get_file(emu: BotApiEmulator, params: dict[str, Any], arrived: float) -> Any:
    return emu.files.get_file(params.get("file_id")).to_api()


@_method("editMessageText")
def _edit_message_text(emu: BotApiEmulator, params: dict[str, Any], arrived: float) -> Any:
    chat, message = _message_to_edit(emu, params)
    parsed = parse_text(params.get("text"), params.get("parse_mode"), params.get("entities"))
    markup = _inline_markup(params)  # no reply_markup removes the keyboard, as in Telegram
    if (
        parsed.text == message.text
        and parsed.entities == message.entities
        and markup == message.reply_markup
    ):
        raise bad_request(NOT_MODIFIED)
    previous = message.text
    message.text = parsed.text
    message.entities = parsed.entities
    message.parse_mode = params.get("parse_mode")
    message.reply_markup = markup
    message.keyboard = inline_rows(markup)
    _touch(message, arrived)
    chat.record_edit(message, previous)
    return message.to_api()


@_method("editMessageReplyMarkup")
def _edit_message_reply_markup(emu: BotApiEmulator, params: dict[str, Any], arrived: float) -> Any:
    chat, message = _message_to_edit(emu, params)
    markup = _inline_markup(params)
    if markup == message.reply_markup:
        raise bad_request(NOT_MODIFIED)
    message.reply_markup = markup
    message.keyboard = inline_rows(markup)
    _touch(message, arrived)
    chat.changed()
    return message.to_api()


@_method("deleteMessage")
def _delete_message(emu: BotApiEmulator, params: dict[str, Any], arrived: float) -> Any:
    chat = _target_chat(emu, params)
    message_id = params.get("message_id")
    message = chat.bot_message(message_id) if isinstance(message_id, int) else None
    if message is not None and not message.deleted:
        message.deleted = True
        chat.changed()
        return True
    if message_id in chat.user_messages:
        del chat.user_messages[message_id]
        return True
    raise bad_request("message to delete not found")


@_method("answerCallbackQuery")
def _answer_callback_query(emu: BotApiEmulator, params: dict[str, Any], arrived: float) -> Any:
    query_id = str(params.get("callback_query_id", ""))
    participant = emu.take_query(query_id)
    if participant is None:
        raise bad_request(_QUERY_TOO_OLD)
    text = params.get("text")
    answer = CallbackAnswer(
        query_id=query_id,
        text=text if isinstance(text, str) and text else None,
        show_alert=bool(params.get("show_alert", False)),
        url=params.get("url"),
        answered_at=arrived,
    )
    participant.record_answer(answer)
    return True


@_method("sendChatAction")
def _send_chat_action(emu: BotApiEmulator, params: dict[str, Any], arrived: float) -> Any:
    chat = _target_chat(emu, params)
    action = params.get("action")
    if action not in _CHAT_ACTIONS:
        raise bad_request("wrong parameter action in request")
    chat.chat_actions.append(action)
    chat.changed()
    return True


def _commands_key(params: dict[str, Any]) -> tuple[str, str]:
    scope = params.get("scope") or {"type": "default"}
    return json.dumps(scope, sort_keys=True), str(params.get("language_code", ""))


@_method("setMyCommands")
def _set_my_commands(emu: BotApiEmulator, params: dict[str, Any], arrived: float) -> Any:
    commands = params.get("commands")
    if not isinstance(commands, list):
        raise bad_request("can't parse commands JSON object")
    if len(commands) > 100:
        raise bad_request("too many commands")
    cleaned: list[dict[str, str]] = []
    for command in commands:
        if not isinstance(command, dict):
            raise bad_request("can't parse BotCommand")
        name, description = command.get("command"), command.get("description")
        if not isinstance(name, str) or not _COMMAND.fullmatch(name):
            raise bad_request("BOT_COMMAND_INVALID")
        if not isinstance(description, str) or not 1 <= len(description) <= 256:
            raise bad_request("BOT_COMMAND_DESCRIPTION_INVALID")
        cleaned.append({"command": name, "description": description})
    key = _commands_key(params)
    if cleaned:
        emu.commands[key] = cleaned
    else:
        emu.commands.pop(key, None)
    return True


@_method("getMyCommands")
def _get_my_commands(emu: BotApiEmulator, params: dict[str, Any], arrived: float) -> Any:
    return emu.commands.get(_commands_key(params), [])


@_method("deleteMyCommands")
def _delete_my_commands(emu: BotApiEmulator, params: dict[str, Any], arrived: float) -> Any:
    emu.commands.pop(_commands_key(params), None)
    return True


@_method("close")
def _close(emu: BotApiEmulator, params: dict[str, Any], arrived: float) -> Any:
    return True


@_method("logOut")
def _log_out(emu: BotApiEmulator, params: dict[str, Any], arrived: float) -> Any:
    return True
