"""The emulator's files as Telegram handles them: what participants send (voice notes, photos
in sizes, video notes, stickers, documents), ``getFile`` and the download path with the
20 MB limit, and ``sendVoice``/``sendPhoto`` uploaded by python-telegram-bot as it does."""

from __future__ import annotations

import io
from collections.abc import AsyncIterator

import aiohttp
import pytest
from PIL import Image
from telegram import Bot
from telegram.error import BadRequest

from bot.pilot.emulator import BotApiEmulator
from bot.pilot.emulator.files import MAX_DOWNLOAD
from bot.pilot.emulator.participant import default_photo
from bot.telegram.request import request_pair

TOKEN = "123456:TEST-token"
OGG = b"OggS\x00\x02" + bytes(range(256)) * 8


@pytest.fixture
async def emu() -> AsyncIterator[BotApiEmulator]:
    async with BotApiEmulator(TOKEN) as emulator:
        yield emulator


@pytest.fixture
async def bot(emu: BotApiEmulator) -> AsyncIterator[Bot]:
    request, get_updates_request = request_pair()
    async with Bot(
        TOKEN,
        base_url=emu.base_url,
        base_file_url=emu.base_file_url,
        request=request,
        get_updates_request=get_updates_request,
    ) as ptb_bot:
        yield ptb_bot


def png(width: int, height: int) -> bytes:
    buffer = io.BytesIO()
    Image.new("RGB", (width, height), (200, 30, 30)).save(buffer, "PNG")
    return buffer.getvalue()


async def test_a_voice_note_is_downloaded_through_get_file(emu: BotApiEmulator, bot: Bot) -> None:
    alice = emu.participant(42)
    await alice.send_voice(OGG, duration=7)
    (update,) = await bot.get_updates()
    voice = update.message.voice
    assert voice.to_dict()["duration"] == 7
    assert voice.mime_type == "audio/ogg" and voice.file_size == len(OGG)
    file = await bot.get_file(voice.file_id)
    assert file.file_path is not None and file.file_path.startswith(emu.base_file_url)
    assert file.file_path.endswith(".oga") and file.file_size == len(OGG)
    assert bytes(await file.download_as_bytearray()) == OGG
    assert sum(emu.downloads.values()) == 1


async def test_a_photo_comes_in_sizes_the_largest_last(emu: BotApiEmulator, bot: Bot) -> None:
    alice = emu.participant(42)
    await alice.send_photo(png(2000, 1500), caption="my kitchen")
    (update,) = await bot.get_updates()
    sizes = update.message.photo
    assert update.message.caption == "my kitchen"
    assert [(s.width, s.height) for s in sizes] == [
        (90, 68),
        (320, 240),
        (800, 600),
        (1280, 960),
    ]
    largest = await (await bot.get_file(sizes[-1].file_id)).download_as_bytearray()
    with Image.open(io.BytesIO(bytes(largest))) as image:
        assert image.format == "JPEG" and image.size == (1280, 960)
    # a small picture is not enlarged: its own size is the largest
    await alice.send_photo(png(100, 50))
    (_, small) = await bot.get_updates()
    assert [(s.width, s.height) for s in small.message.photo] == [(90, 45), (100, 50)]


async def test_other_kinds_of_message_carry_their_files(emu: BotApiEmulator, bot: Bot) -> None:
    alice = emu.participant(42)
    await alice.send_video_note(duration=4)
    await alice.send_sticker("🙂")
    await alice.send_document(b"%PDF-1.4", file_name="<b>cv</b>.pdf", mime_type="application/pdf")
    note, sticker, document = (u.message for u in await bot.get_updates())
    assert note.video_note.to_dict()["duration"] == 4 and sticker.sticker.emoji == "🙂"
    assert document.document.file_name == "<b>cv</b>.pdf"
    assert bytes(await (await document.document.get_file()).download_as_bytearray()) == b"%PDF-1.4"


async def test_a_file_over_20_mb_cannot_be_fetched(emu: BotApiEmulator, bot: Bot) -> None:
    alice = emu.participant(42)
    await alice.send_document(b"\0" * (MAX_DOWNLOAD + 1), file_name="big.bin")
    await alice.send_document(b"\0" * MAX_DOWNLOAD, file_name="just.bin")
    big, just = (u.message.document for u in await bot.get_updates())
    with pytest.raises(BadRequest, match="File is too big"):
        await bot.get_file(big.file_id)
    assert (await bot.get_file(just.file_id)).file_size == MAX_DOWNLOAD
    with pytest.raises(BadRequest, match="Invalid file_id"):
        await bot.get_file("AgACAgIAAxnothing")


async def test_the_download_path_needs_the_token_and_a_known_path(emu: BotApiEmulator) -> None:
    alice = emu.participant(42)
    await alice.send_voice(OGG)
    stored = emu.files.by_id(emu.update(alice.update_ids[0])["message"]["voice"]["file_id"])
    assert stored is not None
    async with aiohttp.ClientSession() as http:
        url = f"{emu.base_file_url}{TOKEN}/{stored.file_path}"
        async with http.get(url) as response:
            assert response.status == 200 and await response.read() == OGG
        async with http.get(f"{emu.base_file_url}{TOKEN}/voice/file_999.oga") as response:
            assert response.status == 404
        async with http.get(f"{emu.base_file_url}1:wrong/{stored.file_path}") as response:
            assert response.status == 401


async def test_send_voice_and_photo_are_recorded_as_uploaded(emu: BotApiEmulator, bot: Bot) -> None:
    alice = emu.participant(42)
    await alice.send_text("/start")
    voice = await bot.send_voice(42, OGG, duration=3, caption="I heard you", filename="reply.ogg")
    photo = await bot.send_photo(42, png(640, 480), caption="a <b>plot</b>")
    assert voice.voice.to_dict()["duration"] == 3 and voice.caption == "I heard you"
    assert [(s.width, s.height) for s in photo.photo][-1] == (640, 480)
    sent_voice, sent_photo = alice.messages
    assert sent_voice.media is not None and sent_voice.media.kind == "voice"
    assert sent_voice.media.data == OGG and sent_voice.text == "I heard you"
    assert sent_photo.media is not None and sent_photo.media.data == png(640, 480)
    assert sent_photo.text == "a <b>plot</b>"  # no parse mode: the caption as it was
    await alice.wait_for_text("I heard you")
    # a file the bot had is sent again by its id, without uploading it
    again = await bot.send_voice(42, voice.voice.file_id)
    assert again.voice.file_id == voice.voice.file_id and alice.messages[-1].media.data == OGG


async def test_what_telegram_refuses_to_send(emu: BotApiEmulator, bot: Bot) -> None:
    alice = emu.participant(42)
    await alice.send_text("/start")
    with pytest.raises(BadRequest, match="Photo_invalid_dimensions"):
        await bot.send_photo(42, png(9000, 1200))
    with pytest.raises(BadRequest, match="Photo_invalid_dimensions"):
        await bot.send_photo(42, png(2100, 100))
    with pytest.raises(BadRequest, match="Image_process_failed"):
        await bot.send_photo(42, b"not an image")
    with pytest.raises(BadRequest, match="Wrong file identifier"):
        await bot.send_voice(42, "no-such-file")
    with pytest.raises(BadRequest, match="caption is too long"):
        await bot.send_voice(42, OGG, caption="x" * 1025)
    with pytest.raises(BadRequest, match="Chat not found"):
        await bot.send_photo(7, default_photo())
    assert alice.messages == []
    await bot.send_photo(42, png(2000, 100))  # a ratio of 20 is allowed
    assert len(alice.messages) == 1
