"""Reply markup as Telegram validates it: inline keyboards, reply keyboards.

``callback_data`` over 64 bytes is the classic production-only failure (the client libraries
do not check it), so it is rejected here with Telegram's ``BUTTON_DATA_INVALID``.
"""

from __future__ import annotations

from typing import Any

from bot.pilot.emulator.wire import ApiError, bad_request

__all__ = ["Keyboard", "inline_rows", "reply_keyboard_rows", "validate_reply_markup"]

Keyboard = list[list[tuple[str, str | None]]]
"""Rows of ``(button text, callback_data)``; ``None`` for buttons without callback data."""

_INLINE_ACTIONS = frozenset(
    {
        "callback_data",
        "url",
        "login_url",
        "switch_inline_query",
        "switch_inline_query_current_chat",
        "switch_inline_query_chosen_chat",
        "callback_game",
        "pay",
        "web_app",
        "copy_text",
    }
)


def _button_error(detail: str) -> ApiError:
    return bad_request(f"can't parse inline keyboard button: {detail}")


def _validate_inline(rows: Any) -> None:
    if not isinstance(rows, list) or not all(isinstance(row, list) for row in rows):
        raise bad_request(
            'field "inline_keyboard" of the InlineKeyboardMarkup should be an Array of Arrays'
        )
    for row in rows:
        for button in row:
            if not isinstance(button, dict):
                raise _button_error("InlineKeyboardButton should be an Object")
            if not isinstance(button.get("text"), str):
                raise _button_error('Field "text" must be of type String')
            if not _INLINE_ACTIONS.intersection(button):
                raise _button_error("Text buttons are unallowed in the inline keyboard")
            if "callback_data" in button:
                data = button["callback_data"]
                if not isinstance(data, str) or not 1 <= len(data.encode()) <= 64:
                    raise bad_request("BUTTON_DATA_INVALID")
            if "url" in button and (not isinstance(button["url"], str) or not button["url"]):
                raise bad_request("BUTTON_URL_INVALID")


def validate_reply_markup(markup: Any) -> dict[str, Any] | None:
    """Check a ``reply_markup`` object; an inline keyboard without buttons counts as none."""
    if markup is None:
        return None
    if not isinstance(markup, dict):
        raise bad_request("can't parse reply keyboard markup JSON object")
    if "inline_keyboard" in markup:
        _validate_inline(markup["inline_keyboard"])
        if not any(markup["inline_keyboard"]):
            return None
        return markup
    if "keyboard" in markup:
        rows = markup["keyboard"]
        if not isinstance(rows, list) or not all(isinstance(row, list) for row in rows):
            raise bad_request(
                'field "keyboard" of the ReplyKeyboardMarkup should be an Array of Arrays'
            )
        for row in rows:
            for button in row:
                if not isinstance(button, str) and not (
                    isinstance(button, dict) and isinstance(button.get("text"), str)
                ):
                    raise bad_request(
                        'can\'t parse keyboard button: Field "text" must be of type String'
                    )
        return markup
    if "remove_keyboard" in markup or "force_reply" in markup:
        return markup
    raise bad_request("can't parse reply keyboard markup JSON object")


def inline_rows(markup: dict[str, Any] | None) -> Keyboard:
    """``[[(text, callback_data), ...], ...]`` of an inline keyboard (URL buttons: ``None``)."""
    if not markup or "inline_keyboard" not in markup:
        return []
    return [
        [(button["text"], button.get("callback_data")) for button in row]
        for row in markup["inline_keyboard"]
    ]


def reply_keyboard_rows(markup: dict[str, Any]) -> list[list[str]]:
    """Button texts of a custom reply keyboard."""
    return [
        [button if isinstance(button, str) else button["text"] for button in row]
        for row in markup.get("keyboard", [])
    ]
