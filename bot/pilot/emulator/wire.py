"""Bot API wire format for the emulator: decoding request bodies, encoding replies.

Clients disagree on how they send parameters: python-telegram-bot posts
``application/x-www-form-urlencoded`` with strings raw and every other value JSON-encoded per
field, aiogram posts the same through aiohttp's ``FormData`` (multipart when files are
attached), and hand-written clients post ``application/json``. Everything is normalised here
into one ``dict`` with Python types, so method handlers never look at the transport.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any
from urllib.parse import parse_qsl

from aiohttp import BodyPartReader, web

__all__ = [
    "ApiError",
    "UploadedFile",
    "bad_request",
    "decode_params",
    "error_response",
    "ok_response",
]

# Parameters whose value is a JSON document (objects or arrays) in the Bot API.
_JSON_FIELDS = frozenset(
    {
        "reply_markup",
        "entities",
        "caption_entities",
        "allowed_updates",
        "commands",
        "scope",
        "link_preview_options",
        "reply_parameters",
        "media",
        "message_ids",
        "results",
        "options",
    }
)
# Integer parameters; ``chat_id`` may also be an ``@username`` string.
_INT_FIELDS = frozenset(
    {
        "chat_id",
        "message_id",
        "offset",
        "limit",
        "from_chat_id",
        "message_thread_id",
        "reply_to_message_id",
        "user_id",
        "cache_time",
        "duration",
    }
)
_FLOAT_FIELDS = frozenset({"timeout"})
_BOOL_FIELDS = frozenset(
    {
        "show_alert",
        "disable_notification",
        "protect_content",
        "drop_pending_updates",
        "disable_web_page_preview",
        "allow_sending_without_reply",
        "allow_paid_broadcast",
    }
)
_JSON_FIELD_NAMES = {"reply_markup": "reply keyboard markup"}


class ApiError(Exception):
    """A Bot API error reply; raised by method handlers, turned into ``{"ok": false, ...}``.

    ``retry_after`` (a 429's seconds) is answered in ``parameters``, where bots read it."""

    def __init__(self, code: int, description: str, *, retry_after: int | None = None) -> None:
        super().__init__(description)
        self.code = code
        self.description = description
        self.retry_after = retry_after


def bad_request(detail: str) -> ApiError:
    """A 400 with Telegram's ``Bad Request: `` prefix (PTB strips it in exception messages)."""
    return ApiError(400, f"Bad Request: {detail}")


@dataclass(frozen=True, slots=True)
class UploadedFile:
    """A file part of a multipart request, kept so tests can inspect what a bot uploaded."""

    filename: str | None
    content_type: str | None
    data: bytes


def _coerce(name: str, value: Any) -> Any:
    """Turn one raw parameter into the Python type the Bot API documents for it."""
    if isinstance(value, UploadedFile):
        return value
    if name in _JSON_FIELDS:
        if isinstance(value, str | bytes):
            try:
                return json.loads(value)
            except ValueError:
                label = _JSON_FIELD_NAMES.get(name, name)
                raise bad_request(f"can't parse {label} JSON object") from None
        return value
    if name in _BOOL_FIELDS:
        if isinstance(value, str):
            return value.strip().lower() in ("true", "1")
        return bool(value)
    if name in _INT_FIELDS:
        if isinstance(value, bool):
            raise bad_request(f"invalid {name} specified")
        if isinstance(value, int):
            return value
        if isinstance(value, float) and value.is_integer():
            return int(value)
        text = str(value).strip()
        try:
            return int(text)
        except ValueError:
            if name == "chat_id" and text:
                return text  # "@channelusername"
            raise bad_request(f"invalid {name} specified") from None
    if name in _FLOAT_FIELDS:
        try:
            return float(value)
        except (TypeError, ValueError):
            raise bad_request(f"invalid {name} specified") from None
    if isinstance(value, int | float) and not isinstance(value, bool):
        return str(value)  # Telegram accepts numbers where it documents strings
    return value


async def _multipart(request: web.Request) -> dict[str, Any]:
    """Read a multipart body: plain fields as text, file parts as :class:`UploadedFile`."""
    raw: dict[str, Any] = {}
    reader = await request.multipart()
    async for part in reader:
        if not isinstance(part, BodyPartReader) or part.name is None:
            continue
        data = await part.read(decode=True)
        if part.filename is not None:
            raw[part.name] = UploadedFile(part.filename, part.headers.get("Content-Type"), data)
        else:
            raw[part.name] = data.decode(part.get_charset("utf-8"), "replace")
    return raw


async def decode_params(request: web.Request) -> dict[str, Any]:
    """Collect query-string and body parameters of any supported encoding, typed."""
    raw: dict[str, Any] = dict(request.query) if request.query_string else {}
    if request.can_read_body:
        ctype = request.content_type
        if ctype.startswith("multipart/"):
            raw.update(await _multipart(request))
        else:
            body = await request.read()
            if body.strip():
                if ctype == "application/json":
                    try:
                        doc = json.loads(body)
                    except ValueError:
                        raise bad_request("can't parse JSON body") from None
                    if not isinstance(doc, dict):
                        raise bad_request("JSON body must be an object")
                    raw.update(doc)
                else:
                    charset = request.charset or "utf-8"
                    text = body.decode(charset, "replace")
                    raw.update(parse_qsl(text, keep_blank_values=True))
    return {name: _coerce(name, value) for name, value in raw.items() if value is not None}


def _dump(doc: dict[str, Any]) -> bytes:
    return json.dumps(doc, ensure_ascii=False, separators=(",", ":")).encode()


def ok_response(result: Any) -> web.Response:
    """A successful Bot API reply."""
    return web.Response(body=_dump({"ok": True, "result": result}), content_type="application/json")


def error_response(error: ApiError) -> web.Response:
    """A failed Bot API reply with the HTTP status equal to ``error_code``, as Telegram does."""
    doc: dict[str, Any] = {
        "ok": False,
        "error_code": error.code,
        "description": error.description,
    }
    if error.retry_after is not None:
        doc["parameters"] = {"retry_after": error.retry_after}
    return web.Response(status=error.code, body=_dump(doc), content_type="application/json")
