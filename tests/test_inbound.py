"""Updates read as Telegram sends them: what a study needs, nothing that names a person, and
the same reading python-telegram-bot gives wherever the library can read the update."""

from __future__ import annotations

import json
from typing import Any

import pytest
from telegram import Bot, Update

from bot.core.media import Medium
from bot.engine import events as ev
from bot.telegram.inbound import Inbound, InboundKind, UnreadableUpdate, read_update

ADA = {"id": 42, "is_bot": False, "first_name": "Ada", "username": "ada", "language_code": "it"}
EVE = {"id": 43, "is_bot": False, "first_name": "Eve"}
BOT = {"id": 7, "is_bot": True, "first_name": "Other bot"}
PRIVATE = {"id": 42, "type": "private", "first_name": "Ada"}
GROUP = {"id": -100, "type": "supergroup", "title": "A group"}


def message(**content: Any) -> dict[str, Any]:
    return {"message_id": 5, "date": 0, "chat": PRIVATE, "from": ADA, **content}


CASES: list[tuple[str, dict[str, Any], Inbound | None]] = [
    (
        "text",
        {"message": message(text="hello")},
        Inbound(42, InboundKind.TEXT, "hello", 1, language="it"),
    ),
    (
        "command",
        {
            "message": message(
                text="/start K1", entities=[{"type": "bot_command", "offset": 0, "length": 6}]
            )
        },
        Inbound(42, InboundKind.COMMAND, "/start K1", 1, language="it"),
    ),
    (
        "a command later in the text is text",
        {
            "message": message(
                text="see /start", entities=[{"type": "bot_command", "offset": 4, "length": 6}]
            )
        },
        Inbound(42, InboundKind.TEXT, "see /start", 1, language="it"),
    ),
    (
        "tap",
        {
            "callback_query": {
                "id": "q1",
                "from": ADA,
                "chat_instance": "c",
                "data": "c:y",
                "message": message(text="Agree?"),
            }
        },
        Inbound(42, InboundKind.CALLBACK, "c:y", 1, "q1", message_id=5),
    ),
    (
        "edited",
        {"edited_message": message(text="hullo", edit_date=1)},
        Inbound(42, InboundKind.EDITED, "", 1),
    ),
    (
        "sticker",
        {
            "message": message(
                sticker={
                    "file_id": "f",
                    "file_unique_id": "u",
                    "type": "regular",
                    "width": 1,
                    "height": 1,
                    "is_animated": False,
                    "is_video": False,
                }
            )
        },
        Inbound(
            42, InboundKind.MEDIA, "sticker", 1, medium=Medium("sticker", "f", width=1, height=1)
        ),
    ),
    ("a group", {"message": {**message(text="hi"), "chat": GROUP}}, None),
    ("another bot", {"message": {**message(text="hi"), "from": BOT}}, None),
    (
        "a channel post",
        {
            "channel_post": {
                "message_id": 1,
                "date": 0,
                "chat": {"id": -5, "type": "channel"},
                "text": "x",
            }
        },
        None,
    ),
    (
        "a tap on an inline message (no chat)",
        {
            "callback_query": {
                "id": "q2",
                "from": ADA,
                "chat_instance": "c",
                "inline_message_id": "i",
                "data": "x",
            }
        },
        None,
    ),
]


@pytest.mark.parametrize(("name", "body", "expected"), CASES, ids=[c[0] for c in CASES])
def test_updates_read_for_what_a_study_needs(
    name: str, body: dict[str, Any], expected: Inbound | None
) -> None:
    raw = {"update_id": 1, **body}
    assert read_update(raw) == expected
    # python-telegram-bot reads the same update the same way.
    update = Update.de_json(raw, Bot("1:x"))
    chat, user = update.effective_chat, update.effective_user
    taken = chat is not None and chat.type == "private" and user is not None and not user.is_bot
    taken = taken and (update.message or update.edited_message or update.callback_query) is not None
    assert taken == (expected is not None)
    if expected is not None:
        assert chat is not None and chat.id == expected.chat_id


def test_nothing_that_names_a_person_is_kept() -> None:
    read = read_update({"update_id": 1, "message": message(text="hello")})
    assert read is not None
    assert "Ada" not in read.to_json() and '"ada"' not in read.to_json()


@pytest.mark.parametrize(
    "raw",
    [
        [],
        {"message": message(text="x")},  # no update id
        {"update_id": "1", "message": message(text="x")},
        {"update_id": 1, "message": "text"},
        {"update_id": 1, "message": {**message(text="x"), "chat": "private"}},
        {"update_id": 1, "message": {**message(text="x"), "chat": {"type": "private", "id": "42"}}},
        {"update_id": 1, "callback_query": {"from": ADA, "message": message(text="x")}},  # no id
        {
            "update_id": 1,
            "callback_query": {"id": "q", "from": ADA, "message": {**message(), "message_id": "5"}},
        },
        # forged: in a private chat the sender is the chat's person, never another
        {"update_id": 1, "callback_query": {"id": "q", "from": EVE, "message": message(text="x")}},
        {"update_id": 1, "message": {**message(text="x"), "from": EVE}},
        {"update_id": 1, "edited_message": {**message(text="x"), "from": EVE}},
        {"update_id": 1, "message": {**message(text="x"), "from": {**ADA, "id": "42"}}},
    ],
)
def test_what_is_not_an_update_is_refused(raw: object) -> None:
    with pytest.raises(UnreadableUpdate):
        read_update(raw)


def test_the_inbox_form_round_trips() -> None:
    read = read_update({"update_id": 3, "message": message(text="/done")})
    assert read is not None and Inbound.from_json(read.to_json()) == read


def test_a_tap_reaches_the_engine_with_the_message_it_was_on() -> None:
    """A button counts only on the message that offered it: the engine must know which."""
    raw = {"id": "q1", "from": ADA, "data": "w:y", "message": message(text="Withdraw?")}
    read = read_update({"update_id": 4, "callback_query": raw})
    assert read is not None and Inbound.from_json(read.to_json()) == read
    assert read.to_event() == ev.ButtonTapped("w:y", 5)
    # A tap kept in the inbox by an ozlab from before taps carried their message.
    old = '{"chat_id":42,"kind":"callback","text":"w:y","update_id":4,"callback_id":"q1"}'
    assert Inbound.from_json(old).to_event() == ev.ButtonTapped("w:y", None)


def test_withdraw_and_help_are_commands_of_their_own() -> None:
    """/withdraw and /help reach the engine as themselves, in any case and with @bot."""
    assert Inbound(1, InboundKind.COMMAND, "/withdraw").to_event() == ev.WithdrawCommand()
    assert Inbound(1, InboundKind.COMMAND, "/HELP@study_bot").to_event() == ev.HelpCommand()


def test_a_file_is_described_and_nothing_names_who_sent_it() -> None:
    """A voice note, the largest size of a photo, a video note's side; a document's file
    name (the participant's words) is never read; a caption is outside text."""
    voice = {"file_id": "v1", "file_unique_id": "u", "duration": 7, "mime_type": "audio/ogg"}
    sizes = [
        {"file_id": f"p{w}", "file_unique_id": "u", "width": w, "height": w * 3 // 4}
        for w in (90, 1280)
    ]
    note = {"file_id": "n1", "file_unique_id": "u", "length": 384, "duration": 3}
    document = {"file_id": "d1", "file_unique_id": "u", "file_name": "<b>me</b>.pdf"}
    read = [
        read_update({"update_id": i, "message": message(**content)})
        for i, content in enumerate(
            [
                {"voice": voice | {"file_size": 4096}},
                {"photo": sizes, "caption": "look\x00"},
                {"video_note": note},
                {"document": document, "caption": "my cv"},
            ]
        )
    ]
    assert [r.medium if r else None for r in read] == [
        Medium("voice", "v1", 4096, "audio/ogg", 7),
        Medium("photo", "p1280", width=1280, height=960, caption="look\ufffd"),
        Medium("video_note", "n1", duration=3, width=384, height=384),
        Medium("document", "d1", caption="my cv"),
    ]
    for inbound in read:
        assert inbound is not None and Inbound.from_json(inbound.to_json()) == inbound
        assert "me</b>" not in inbound.to_json() and "Ada" not in inbound.to_json()
        assert inbound.to_event() == ev.MediaReceived(inbound.medium)  # type: ignore[arg-type]
    with pytest.raises(UnreadableUpdate):
        read_update({"update_id": 9, "message": message(voice={"file_id": 5})})


@pytest.mark.parametrize(
    "inbound",
    [
        Inbound(5, InboundKind.TEXT, 'héllo " \\ \u2028 \x01 \ufffd 🙂', 7, None, "en", None),
        Inbound(-1, InboundKind.CALLBACK, "a:1:0", 9, "q-1", None, 4),
    ],
)
def test_the_inbox_keeps_every_field_as_json_in_order(inbound: Inbound) -> None:
    """What the inbox seals: every field, by name and in order, the kind by its value."""
    expected = {
        "chat_id": inbound.chat_id,
        "kind": inbound.kind.value,
        "text": inbound.text,
        "update_id": inbound.update_id,
        "callback_id": inbound.callback_id,
        "language": inbound.language,
        "message_id": inbound.message_id,
    }
    assert inbound.to_json() == json.dumps(expected, separators=(",", ":"))
    assert Inbound.from_json(inbound.to_json()) == inbound


def test_outside_text_is_made_storable_as_it_is_read() -> None:
    """The door of the inbox: a NUL or a lone surrogate (JSON escapes Telegram's servers, or
    a forged update, may send) in a message, a button's data or a language code becomes
    U+FFFD before anything keeps it."""
    said = json.loads('{"text": "a\\u0000b \\ud83d", "language": "i\\u0000t"}')
    user = {**ADA, "language_code": said["language"]}
    read = read_update({"update_id": 8, "message": message(text=said["text"], **{"from": user})})
    assert read == Inbound(42, InboundKind.TEXT, "a\ufffdb \ufffd", 8, language="i\ufffdt")
    tap = {"id": "q1", "from": ADA, "data": said["text"], "message": message(text="Agree?")}
    tapped = read_update({"update_id": 9, "callback_query": tap})
    assert tapped is not None and tapped.text == "a\ufffdb \ufffd"


def test_an_update_kept_before_the_door_is_made_storable_when_it_is_read_back() -> None:
    """An inbox row sealed by an ozlab that kept a NUL as it came is handled after the
    upgrade with U+FFFD in its place, as a new update would be."""
    kept = '{"chat_id":42,"kind":"text","text":"a\\u0000b","update_id":4,"callback_id":null}'
    assert Inbound.from_json(kept).text == "a\ufffdb"
