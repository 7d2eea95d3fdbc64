"""The Bot API emulator: wire format, Telegram's errors, update queue, participants.

Requests are made with a plain aiohttp client that encodes parameters the way
python-telegram-bot does (form-urlencoded, strings raw, other values JSON per field), so these
tests pin the wire contract independently of any bot library.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import AsyncIterator
from typing import Any

import aiohttp
import pytest

from bot.pilot.emulator import BotApiEmulator, Participant
from bot.pilot.emulator.methods import METHODS

TOKEN = "123456:TEST-token"
KEYBOARD = {
    "inline_keyboard": [
        [{"text": "Yes", "callback_data": "y"}],
        [{"text": "No", "callback_data": "n"}],
    ]
}


@pytest.fixture
async def emu() -> AsyncIterator[BotApiEmulator]:
    async with BotApiEmulator(TOKEN) as emulator:
        yield emulator


@pytest.fixture
async def http() -> AsyncIterator[aiohttp.ClientSession]:
    async with aiohttp.ClientSession() as session:
        yield session


def _form(params: dict[str, Any]) -> dict[str, str]:
    """Encode like PTB: strings raw, everything else JSON."""
    return {k: v if isinstance(v, str) else json.dumps(v) for k, v in params.items()}


async def call(
    http: aiohttp.ClientSession, emu: BotApiEmulator, method: str, **params: Any
) -> tuple[int, dict[str, Any]]:
    """POST a method form-urlencoded; return (HTTP status, JSON body)."""
    async with http.post(f"{emu.base_url}{TOKEN}/{method}", data=_form(params)) as response:
        return response.status, await response.json()


async def ok(http: aiohttp.ClientSession, emu: BotApiEmulator, method: str, **params: Any) -> Any:
    status, body = await call(http, emu, method, **params)
    assert status == 200 and body["ok"] is True, body
    return body["result"]


async def fails(
    http: aiohttp.ClientSession, emu: BotApiEmulator, method: str, **params: Any
) -> tuple[int, str]:
    status, body = await call(http, emu, method, **params)
    assert body["ok"] is False and body["error_code"] == status, body
    return status, body["description"]


async def joined(emu: BotApiEmulator, user_id: int = 42, **kwargs: Any) -> Participant:
    """A participant who has written to the bot, so the bot may answer."""
    participant = emu.participant(user_id, **kwargs)
    await participant.send_text("/start")
    return participant


# -- wire format ---------------------------------------------------------------------------------


async def test_get_me_accepts_every_body_encoding(
    emu: BotApiEmulator, http: aiohttp.ClientSession
) -> None:
    url = f"{emu.base_url}{TOKEN}/getMe"
    async with http.post(url) as response:  # empty body, as PTB sends it
        assert (await response.json())["result"]["username"] == "ozlab_test_bot"
    async with http.post(url, json={}) as response:
        assert response.status == 200
    async with http.get(url) as response:
        assert (await response.json())["result"]["is_bot"] is True
    form = aiohttp.FormData(default_to_multipart=True)
    form.add_field("text", "hi")
    async with http.post(url, data=form) as response:
        assert response.status == 200
    assert emu.requests["getMe"] == 4
    assert emu.bot_user["id"] == 123456


async def test_json_and_multipart_bodies_are_decoded(
    emu: BotApiEmulator, http: aiohttp.ClientSession
) -> None:
    await joined(emu)
    url = f"{emu.base_url}{TOKEN}/sendMessage"
    async with http.post(
        url, json={"chat_id": 42, "text": "json", "reply_markup": KEYBOARD}
    ) as response:
        assert (await response.json())["result"]["reply_markup"] == KEYBOARD
    form = aiohttp.FormData()
    form.add_field("chat_id", "42")
    form.add_field("text", "multi")
    form.add_field("reply_markup", json.dumps(KEYBOARD))
    form.add_field("photo", b"\x89PNG", filename="a.png", content_type="image/png")
    async with http.post(url, data=form) as response:
        assert (await response.json())["result"]["text"] == "multi"
    assert emu.calls[-1].params["photo"].data == b"\x89PNG"
    # A JSON-encoded field inside a JSON body (some clients do this) is decoded too.
    async with http.post(
        url, json={"chat_id": "42", "text": "s", "reply_markup": json.dumps(KEYBOARD)}
    ) as response:
        assert (await response.json())["result"]["reply_markup"] == KEYBOARD
    # Digits stay text: only documented JSON fields are decoded.
    assert (await ok(http, emu, "sendMessage", chat_id=42, text="123"))["text"] == "123"
    assert (await fails(http, emu, "sendMessage", chat_id=42, text="x", reply_markup="{oops"))[
        1
    ] == ("Bad Request: can't parse reply keyboard markup JSON object")


async def test_bad_token_unknown_method_and_path(
    emu: BotApiEmulator, http: aiohttp.ClientSession
) -> None:
    async with http.post(f"{emu.base_url}999:wrong/getMe") as response:
        assert response.status == 401
        assert await response.json() == {
            "ok": False,
            "error_code": 401,
            "description": "Unauthorized",
        }
    assert await fails(http, emu, "frobnicate") == (404, "Not Found")
    async with http.get(f"{emu.server_url}/nothing/here") as response:
        assert response.status == 404 and (await response.json())["description"] == "Not Found"
    assert (await ok(http, emu, "GETME"))["id"] == 123456  # method names are case-insensitive


# -- sending ------------------------------------------------------------------------------------


async def test_chat_must_exist_and_blocking_forbids(
    emu: BotApiEmulator, http: aiohttp.ClientSession
) -> None:
    alice = emu.participant(42)
    assert await fails(http, emu, "sendMessage", chat_id=42, text="hi") == (
        400,
        "Bad Request: chat not found",
    )
    await alice.send_text("hello")
    message = await ok(http, emu, "sendMessage", chat_id=42, text="hi")
    assert message["chat"] == {"id": 42, "first_name": "Test", "type": "private"}
    assert message["from"]["is_bot"] is True and message["message_id"] == 2
    alice.block()
    assert await fails(http, emu, "sendMessage", chat_id=42, text="hi") == (
        403,
        "Forbidden: bot was blocked by the user",
    )
    assert (await fails(http, emu, "sendChatAction", chat_id=42, action="typing"))[0] == 403
    updates = await ok(http, emu, "getUpdates")
    assert updates[-1]["my_chat_member"]["new_chat_member"]["status"] == "kicked"
    alice.unblock()
    await ok(http, emu, "sendMessage", chat_id=42, text="back")


async def test_text_length_counts_after_entity_parsing(
    emu: BotApiEmulator, http: aiohttp.ClientSession
) -> None:
    await joined(emu)
    await ok(http, emu, "sendMessage", chat_id=42, text="x" * 4096)
    assert await fails(http, emu, "sendMessage", chat_id=42, text="x" * 4097) == (
        400,
        "Bad Request: message is too long",
    )
    await ok(
        http, emu, "sendMessage", chat_id=42, text="<b>" + "x" * 4096 + "</b>", parse_mode="HTML"
    )
    # Telegram counts UTF-16 code units: an emoji outside the BMP counts twice.
    assert (await fails(http, emu, "sendMessage", chat_id=42, text="😀" * 2049))[1].endswith(
        "too long"
    )
    for empty in ("", "   ", "<b></b>"):
        _, description = await fails(
            http, emu, "sendMessage", chat_id=42, text=empty, parse_mode="HTML"
        )
        assert description == "Bad Request: message text is empty"


@pytest.mark.parametrize(
    ("mode", "text", "error"),
    [
        ("Markdown", "price *5", "Can't find end of the entity starting at byte offset 6"),
        ("Markdown", "user_id", "Can't find end of the entity starting at byte offset 4"),
        ("MarkdownV2", "Done.", "Character '.' is reserved"),
        ("MarkdownV2", "*bold", "Can't find end of Bold entity at byte offset 0"),
        ("HTML", "1 < 2", "Unsupported start tag"),
        ("HTML", "<b>bold", 'Can\'t find end tag corresponding to start tag "b"'),
        ("HTML", "<b>x</i>", "Unmatched end tag"),
        ("HTML", "a <foo>b</foo>", 'Unsupported start tag "foo" at byte offset 2'),
    ],
)
async def test_unparseable_text_is_rejected(
    emu: BotApiEmulator, http: aiohttp.ClientSession, mode: str, text: str, error: str
) -> None:
    await joined(emu)
    status, description = await fails(
        http, emu, "sendMessage", chat_id=42, text=text, parse_mode=mode
    )
    assert status == 400
    assert description.startswith("Bad Request: can't parse entities: ")
    assert error in description


@pytest.mark.parametrize(
    ("mode", "text", "plain", "entity"),
    [
        ("HTML", "a <b>bold</b> &lt;3", "a bold <3", {"type": "bold", "offset": 2, "length": 4}),
        (
            "HTML",
            '<a href="http://x">link</a>',
            "link",
            {"type": "text_link", "offset": 0, "length": 4, "url": "http://x"},
        ),
        ("MarkdownV2", "😀 *b\\.*", "😀 b.", {"type": "bold", "offset": 3, "length": 2}),
        ("MarkdownV2", "`a.b`", "a.b", {"type": "code", "offset": 0, "length": 3}),
        ("Markdown", "_it_ x", "it x", {"type": "italic", "offset": 0, "length": 2}),
        (
            "Markdown",
            "[go](http://y)",
            "go",
            {"type": "text_link", "offset": 0, "length": 2, "url": "http://y"},
        ),
    ],
)
async def test_parse_modes_produce_text_and_entities(
    emu: BotApiEmulator,
    http: aiohttp.ClientSession,
    mode: str,
    text: str,
    plain: str,
    entity: dict[str, Any],
) -> None:
    alice = await joined(emu)
    message = await ok(http, emu, "sendMessage", chat_id=42, text=text, parse_mode=mode)
    assert message["text"] == plain and message["entities"] == [entity]
    assert alice.messages[-1].text == plain


async def test_plain_text_is_never_parsed(emu: BotApiEmulator, http: aiohttp.ClientSession) -> None:
    await joined(emu)
    message = await ok(http, emu, "sendMessage", chat_id=42, text="a *b _c <d")
    assert message["text"] == "a *b _c <d" and "entities" not in message


async def test_callback_data_is_1_to_64_bytes(
    emu: BotApiEmulator, http: aiohttp.ClientSession
) -> None:
    alice = await joined(emu)

    def markup(data: str) -> dict[str, Any]:
        return {"inline_keyboard": [[{"text": "b", "callback_data": data}]]}

    await ok(http, emu, "sendMessage", chat_id=42, text="ok", reply_markup=markup("x" * 64))
    await ok(http, emu, "sendMessage", chat_id=42, text="ok", reply_markup=markup("é" * 32))
    for data in ("x" * 65, "é" * 33, ""):
        assert await fails(
            http, emu, "sendMessage", chat_id=42, text="no", reply_markup=markup(data)
        ) == (
            400,
            "Bad Request: BUTTON_DATA_INVALID",
        )
    bare = {"inline_keyboard": [[{"text": "no action"}]]}
    assert (
        "unallowed"
        in (await fails(http, emu, "sendMessage", chat_id=42, text="t", reply_markup=bare))[1]
    )
    url_button = {"inline_keyboard": [[{"text": "site", "url": "https://example.org"}]]}
    await ok(http, emu, "sendMessage", chat_id=42, text="u", reply_markup=url_button)
    assert alice.messages[-1].keyboard == [[("site", None)]]
    reply_keyboard = {"keyboard": [["1", "2"], [{"text": "3"}]], "one_time_keyboard": True}
    message = await ok(
        http, emu, "sendMessage", chat_id=42, text="rate", reply_markup=reply_keyboard
    )
    assert "reply_markup" not in message and alice.reply_keyboard == [["1", "2"], ["3"]]
    await ok(
        http, emu, "sendMessage", chat_id=42, text="thx", reply_markup={"remove_keyboard": True}
    )
    assert alice.reply_keyboard is None


async def test_reply_to_message(emu: BotApiEmulator, http: aiohttp.ClientSession) -> None:
    alice = await joined(emu)
    message = await ok(
        http, emu, "sendMessage", chat_id=42, text="re", reply_parameters={"message_id": 1}
    )
    assert (
        message["reply_to_message"]["message_id"] == 1
        and alice.messages[-1].reply_to_message_id == 1
    )
    assert (await fails(http, emu, "sendMessage", chat_id=42, text="re", reply_to_message_id=99))[
        1
    ] == ("Bad Request: message to be replied not found")


# -- editing, callbacks, other methods ----------------------------------------------------------


async def test_edits_follow_telegram(emu: BotApiEmulator, http: aiohttp.ClientSession) -> None:
    alice = await joined(emu)
    sent = await ok(http, emu, "sendMessage", chat_id=42, text="Q1", reply_markup=KEYBOARD)
    mid = sent["message_id"]
    assert alice.messages[-1].keyboard == [[("Yes", "y")], [("No", "n")]]
    _, description = await fails(
        http, emu, "editMessageText", chat_id=42, message_id=mid, text="Q1", reply_markup=KEYBOARD
    )
    assert description.startswith(
        "Bad Request: message is not modified: specified new message content"
    )
    edited = await ok(http, emu, "editMessageText", chat_id=42, message_id=mid, text="Q1")
    assert "reply_markup" not in edited and edited["edit_date"] >= sent["date"]
    message = alice.messages[-1]
    assert message.keyboard == [] and message.edit_count == 1 and message.edited_at is not None
    await ok(http, emu, "editMessageReplyMarkup", chat_id=42, message_id=mid, reply_markup=KEYBOARD)
    assert message.keyboard[0] == [("Yes", "y")] and message.edit_count == 2
    assert (
        await fails(
            http, emu, "editMessageReplyMarkup", chat_id=42, message_id=mid, reply_markup=KEYBOARD
        )
    )[1].startswith("Bad Request: message is not modified")
    await ok(http, emu, "editMessageReplyMarkup", chat_id=42, message_id=mid)  # removes it
    assert message.keyboard == []
    assert (await fails(http, emu, "editMessageText", chat_id=42, message_id=999, text="x"))[1] == (
        "Bad Request: message to edit not found"
    )
    assert (await fails(http, emu, "editMessageText", chat_id=42, message_id=1, text="x"))[1] == (
        "Bad Request: message can't be edited"
    )
    assert await ok(http, emu, "deleteMessage", chat_id=42, message_id=mid) is True
    assert message.deleted
    assert (await fails(http, emu, "deleteMessage", chat_id=42, message_id=mid))[1] == (
        "Bad Request: message to delete not found"
    )
    assert (await fails(http, emu, "editMessageText", chat_id=42, message_id=mid, text="y"))[
        1
    ].endswith("message to edit not found")


async def test_tap_and_answer_callback_query(
    emu: BotApiEmulator, http: aiohttp.ClientSession
) -> None:
    alice = await joined(emu, username="alice")
    first = await ok(http, emu, "sendMessage", chat_id=42, text="A", reply_markup=KEYBOARD)
    second = await ok(http, emu, "sendMessage", chat_id=42, text="B", reply_markup=KEYBOARD)
    emu.drop_pending()
    update_id = await alice.tap(text="Yes")
    (update,) = await ok(http, emu, "getUpdates")
    assert update["update_id"] == update_id
    query = update["callback_query"]
    assert query["data"] == "y" and query["message"]["message_id"] == second["message_id"]
    assert query["from"]["username"] == "alice" and query["chat_instance"]
    assert query["message"]["reply_markup"] == KEYBOARD
    await ok(
        http,
        emu,
        "answerCallbackQuery",
        callback_query_id=query["id"],
        text="Saved",
        show_alert=True,
    )
    assert alice.toasts == ["Saved"] and alice.callback_answers[0].show_alert is True
    too_old = "Bad Request: query is too old and response timeout expired or query ID is invalid"
    assert await fails(http, emu, "answerCallbackQuery", callback_query_id=query["id"]) == (
        400,
        too_old,
    )
    assert await fails(http, emu, "answerCallbackQuery", callback_query_id="123") == (400, too_old)
    await alice.tap(data="n", message_id=first["message_id"])
    (update,) = await ok(http, emu, "getUpdates", offset=update_id + 1)
    assert update["callback_query"]["message"]["message_id"] == first["message_id"]
    await ok(http, emu, "answerCallbackQuery", callback_query_id=update["callback_query"]["id"])
    assert alice.toasts == ["Saved"] and len(alice.callback_answers) == 2
    with pytest.raises(LookupError, match="no inline button"):
        await alice.tap(text="Maybe")
    await alice.send_callback("forged")  # a stale or tampered client
    (update,) = await ok(http, emu, "getUpdates", offset=update["update_id"] + 1)
    assert update["callback_query"]["data"] == "forged"


async def test_commands_actions_and_housekeeping(
    emu: BotApiEmulator, http: aiohttp.ClientSession
) -> None:
    alice = await joined(emu)
    commands = [
        {"command": "start", "description": "Begin"},
        {"command": "stop", "description": "Quit"},
    ]
    assert await ok(http, emu, "setMyCommands", commands=commands) is True
    assert await ok(http, emu, "getMyCommands") == commands
    assert await ok(http, emu, "getMyCommands", language_code="it") == []
    assert (
        await fails(http, emu, "setMyCommands", commands=[{"command": "Bad!", "description": "x"}])
    )[1] == ("Bad Request: BOT_COMMAND_INVALID")
    assert await ok(http, emu, "deleteMyCommands") is True
    assert await ok(http, emu, "getMyCommands") == []
    await ok(http, emu, "sendChatAction", chat_id=42, action="typing")
    assert alice.chat_actions == ["typing"]
    assert (await fails(http, emu, "sendChatAction", chat_id=42, action="dancing"))[0] == 400
    for method in ("close", "logOut", "deleteWebhook"):
        assert await ok(http, emu, method) is True
    assert (await ok(http, emu, "getWebhookInfo"))["url"] == ""


# -- update queue ----------------------------------------------------------------------------------


async def test_offsets_confirm_and_unconfirmed_updates_come_again(
    emu: BotApiEmulator, http: aiohttp.ClientSession
) -> None:
    alice = emu.participant(42)
    ids = [await alice.send_text(f"m{i}") for i in range(3)]
    assert ids == sorted(ids) and emu.pending_updates == 3
    first = await ok(http, emu, "getUpdates")
    assert [u["update_id"] for u in first] == ids
    # No offset: a crashed bot polling again gets the same updates.
    assert [u["update_id"] for u in await ok(http, emu, "getUpdates")] == ids
    assert [
        u["update_id"] for u in await ok(http, emu, "getUpdates", offset=ids[1], limit=1)
    ] == ids[1:2]
    assert emu.confirmed_offset == ids[1] and emu.pending_updates == 2
    assert await ok(http, emu, "getUpdates", offset=ids[2] + 1) == []
    assert emu.pending_updates == 0
    # A lower offset later does not bring confirmed updates back.
    assert await ok(http, emu, "getUpdates", offset=0) == []
    assert emu.confirmed_offset == ids[2] + 1


async def test_redeliver_hands_out_a_confirmed_update_again(
    emu: BotApiEmulator, http: aiohttp.ClientSession
) -> None:
    alice = emu.participant(42)
    uid = await alice.send_text("once")
    await ok(http, emu, "getUpdates")
    await ok(http, emu, "getUpdates", offset=uid + 1)
    later = await alice.send_text("later")
    emu.redeliver(uid)
    # The bot still polls with its newer offset: the redelivered one comes anyway, in order.
    batch = await ok(http, emu, "getUpdates", offset=uid + 1)
    assert [u["update_id"] for u in batch] == [uid, later]
    assert batch[0]["message"]["text"] == "once"
    assert await ok(http, emu, "getUpdates", offset=later + 1) == []
    with pytest.raises(KeyError):
        emu.redeliver(10_000)


async def test_negative_offset_allowed_updates_and_drop_pending(
    emu: BotApiEmulator, http: aiohttp.ClientSession
) -> None:
    alice = emu.participant(42)
    ids = [await alice.send_text(str(i)) for i in range(4)]
    assert [u["update_id"] for u in await ok(http, emu, "getUpdates", offset=-1)] == ids[-1:]
    bob = await joined(emu, 43)
    await ok(http, emu, "sendMessage", chat_id=43, text="q", reply_markup=KEYBOARD)
    tap = await bob.tap(text="No")
    batch = await ok(
        http, emu, "getUpdates", offset=ids[-1] + 1, allowed_updates=["callback_query"]
    )
    assert [u["update_id"] for u in batch] == [tap]
    await alice.send_text("ignored")  # not allowed: Telegram never stores it
    assert await ok(http, emu, "getUpdates", offset=tap + 1) == []
    await ok(http, emu, "getUpdates", offset=tap + 1, allowed_updates=[])  # back to the default
    await alice.send_text("pending")
    assert emu.pending_updates == 1
    await ok(http, emu, "deleteWebhook", drop_pending_updates=True)
    assert emu.pending_updates == 0 and await ok(http, emu, "getUpdates") == []


async def test_long_poll_answers_when_an_update_arrives(
    emu: BotApiEmulator, http: aiohttp.ClientSession
) -> None:
    alice = emu.participant(42)
    poll = asyncio.create_task(ok(http, emu, "getUpdates", timeout=10))
    await emu.wait_until(lambda e: e.parked_polls == 1)
    started = time.monotonic()
    uid = await alice.send_text("wake up")
    (update,) = await asyncio.wait_for(poll, 2)
    assert update["update_id"] == uid and time.monotonic() - started < 1
    assert emu.delivery_times[uid] >= emu.created_times[uid]


async def test_long_poll_times_out_empty(emu: BotApiEmulator, http: aiohttp.ClientSession) -> None:
    started = time.monotonic()
    assert await ok(http, emu, "getUpdates", timeout=0.2) == []
    assert 0.15 < time.monotonic() - started < 2


async def test_newer_poll_ends_older_with_conflict(
    emu: BotApiEmulator, http: aiohttp.ClientSession
) -> None:
    older = asyncio.create_task(call(http, emu, "getUpdates", timeout=10))
    await emu.wait_until(lambda e: e.parked_polls == 1)
    assert await ok(http, emu, "getUpdates", timeout=0) == []
    status, body = await asyncio.wait_for(older, 2)
    assert status == 409 and body["description"].startswith(
        "Conflict: terminated by other getUpdates"
    )


async def test_stop_wakes_parked_polls() -> None:
    emulator = BotApiEmulator(TOKEN)
    await emulator.start()
    async with aiohttp.ClientSession() as http:
        poll = asyncio.create_task(ok(http, emulator, "getUpdates", timeout=30))
        await emulator.wait_until(lambda e: e.parked_polls == 1)
        started = time.monotonic()
        await emulator.stop()
        assert await asyncio.wait_for(poll, 3) == []
        assert time.monotonic() - started < 2.5
    with pytest.raises(RuntimeError):
        BotApiEmulator(TOKEN).port  # noqa: B018 - not started


# -- participants ----------------------------------------------------------------------------------


async def test_participant_update_shapes(emu: BotApiEmulator, http: aiohttp.ClientSession) -> None:
    alice = emu.participant(42, first_name="Alice", username="alice", language_code="it")
    await alice.send_text("/start@ozlab_test_bot 😀 payload")
    await alice.send_text("😀 not a command")
    await alice.send_sticker()
    await alice.send_photo(caption="look")
    await alice.send_voice(duration=3)
    edit = await alice.edit_text(2, "edited")
    updates = await ok(http, emu, "getUpdates")
    start = updates[0]["message"]
    assert start["from"] == {
        "id": 42,
        "is_bot": False,
        "first_name": "Alice",
        "username": "alice",
        "language_code": "it",
    }
    assert start["chat"] == {
        "id": 42,
        "first_name": "Alice",
        "username": "alice",
        "type": "private",
    }
    assert start["entities"] == [{"offset": 0, "length": 21, "type": "bot_command"}]
    assert isinstance(start["date"], int) and abs(start["date"] - time.time()) < 5
    assert "entities" not in updates[1]["message"]
    assert updates[2]["message"]["sticker"]["emoji"] == "👍"
    assert updates[3]["message"]["caption"] == "look" and len(updates[3]["message"]["photo"]) == 4
    assert updates[4]["message"]["voice"]["duration"] == 3
    edited = updates[5]["edited_message"]
    assert (
        updates[5]["update_id"] == edit and edited["message_id"] == 2 and edited["text"] == "edited"
    )
    assert "edit_date" in edited
    assert [u["message"]["message_id"] for u in updates[:5]] == [1, 2, 3, 4, 5]
    assert emu.participant(42) is alice and alice.update_ids == [u["update_id"] for u in updates]
    with pytest.raises(LookupError):
        await alice.edit_text(3, "a sticker has no text")


async def test_group_and_bot_senders(emu: BotApiEmulator, http: aiohttp.ClientSession) -> None:
    await emu.group_message(-100, 7, "/help hi", title="Lab")
    await emu.group_message(-1_001_234_567_890, 8, "hey", is_bot=True)
    await emu.bot_message(9, "spam")
    group, supergroup, other_bot = (u["message"] for u in await ok(http, emu, "getUpdates"))
    assert group["chat"] == {"id": -100, "title": "Lab", "type": "group"}
    assert group["entities"][0]["type"] == "bot_command" and group["from"]["is_bot"] is False
    assert supergroup["chat"]["type"] == "supergroup" and supergroup["from"]["is_bot"] is True
    assert other_bot["from"]["is_bot"] is True and other_bot["chat"]["type"] == "private"
    await ok(http, emu, "sendMessage", chat_id=-100, text="group reply")
    assert (await emu.chat(-100).wait_for_text("group reply")).chat_id == -100


async def test_wait_for_text_reads_forward(
    emu: BotApiEmulator, http: aiohttp.ClientSession
) -> None:
    alice = await joined(emu)

    async def bot_says(text: str, **params: Any) -> int:
        return (await ok(http, emu, "sendMessage", chat_id=42, text=text, **params))["message_id"]

    q1 = await bot_says("Question 1", reply_markup=KEYBOARD)
    assert (await alice.wait_for_text("Question")).message_id == q1
    # The bot ticks Q1 off (still contains "Question") and asks Q2: the next wait gets Q2.
    await ok(http, emu, "editMessageText", chat_id=42, message_id=q1, text="Question 1 ✓")
    q2 = await bot_says("Question 2")
    assert (await alice.wait_for_text("Question")).message_id == q2
    # An edit that brings the text in counts.
    await ok(http, emu, "editMessageText", chat_id=42, message_id=q1, text="Thanks!")
    message = await alice.wait_for_text("Thanks")
    assert message.message_id == q1 and message.edit_count == 2
    with pytest.raises(TimeoutError, match=r"Question 2.*Thanks|Thanks.*Question 2"):
        await alice.wait_for_text("Question", timeout=0.05)
    await bot_says("old news")
    alice.mark_read()
    with pytest.raises(TimeoutError):
        await alice.wait_for_text("news", timeout=0.01)
    await bot_says("fresh news")
    assert (await alice.wait_for_text("news")).text == "fresh news"


async def test_wait_for_predicates_and_toasts(
    emu: BotApiEmulator, http: aiohttp.ClientSession
) -> None:
    alice = await joined(emu)

    def two_messages(p: Participant) -> bool:
        return len(p.messages) >= 2

    async def bot() -> None:
        await ok(http, emu, "sendMessage", chat_id=42, text="one", reply_markup=KEYBOARD)
        await ok(http, emu, "sendMessage", chat_id=42, text="two")

    task = asyncio.create_task(bot())
    await alice.wait_for(two_messages, timeout=5)
    await task
    assert [m.text for m in alice.messages] == ["one", "two"]
    assert (await alice.wait_for_message_count(2)).text == "two"
    with pytest.raises(TimeoutError, match="last bot messages: #2: 'one'"):
        await alice.wait_for(lambda p: len(p.messages) >= 3, timeout=0.05)
    await alice.tap(text="Yes")
    query_id = alice.last_query_id
    assert query_id is not None
    await ok(http, emu, "answerCallbackQuery", callback_query_id=query_id, text="Noted")
    await alice.wait_for_answer()
    assert await alice.wait_for_toast("Not") == "Noted"
    with pytest.raises(TimeoutError):
        await alice.wait_for_toast("Noted", timeout=0.05)  # consumed


async def test_timing_supports_latency_measurement(
    emu: BotApiEmulator, http: aiohttp.ClientSession
) -> None:
    alice = emu.participant(42)
    uid = await alice.send_text("ping")
    await ok(http, emu, "getUpdates")
    await ok(http, emu, "sendMessage", chat_id=42, text="pong")
    latency = alice.messages[0].sent_at - emu.delivery_times[uid]
    assert 0 <= latency < 1
    assert emu.update(uid)["message"]["text"] == "ping"
    assert emu.calls[-1].method == "sendMessage" and emu.calls[-1].status == 200


async def test_internal_errors_answer_500_and_are_recorded(
    emu: BotApiEmulator, http: aiohttp.ClientSession, monkeypatch: pytest.MonkeyPatch
) -> None:
    def broken(*args: Any) -> Any:
        raise ZeroDivisionError("bug")

    monkeypatch.setitem(METHODS, "close", broken)
    assert await fails(http, emu, "close") == (500, "Internal Server Error")
    assert isinstance(emu.internal_errors[0], ZeroDivisionError)
    assert emu.participants == []
