"""Voice notes and files through the real bot on the emulator: a voice note the task takes
is fetched as Telegram serves it, transcribed by a speech server on loopback and passed to
the system as words; anything else (a file over the limit, an unreadable recording, a
video note, a sticker, a document) gets a polite answer and the participant keeps their
place."""

from __future__ import annotations

import asyncio
import base64
import csv
import hashlib
import json
from collections.abc import AsyncIterator
from datetime import UTC, datetime
from pathlib import Path

import aiohttp
import pytest
from aiohttp import web
from telegram import Bot

from bot.cli import analytics_main
from bot.core.conversation import Conversation, SystemReply
from bot.core.media import Spoken, Transcript
from bot.desk.desk import Desk
from bot.pilot.emulator import BotApiEmulator
from bot.pilot.emulator.files import MAX_DOWNLOAD
from bot.pilot.emulator.participant import default_photo
from bot.telegram.files import FileTooBig, FileUnavailable, TelegramFiles
from bot.telegram.request import request_pair
from scenarios.media import Speech, TaskMedia
from scenarios.models import StudyBundle
from tests.adapter_studies import spec, with_systems
from tests.conftest import TOKEN, StartBot, consent
from tests.e2e_support import database_bytes
from tests.fake_servers import FakeHttp, FakeOpenAI, serving
from tests.storage_probe import kept_files

pytestmark = pytest.mark.slow

OGG = b"OggS\x00\x02"
"""How the speech server tells a recording: what follows is taken as what was said."""


class SpeechServer:
    """OpenAI's ``POST /v1/audio/transcriptions`` on loopback: answers an Ogg file with the
    words after its first bytes, and anything else with 400, as a server that cannot decode
    it does. Keeps what each request carried, to check the audio arrived intact."""

    def __init__(self) -> None:
        self.received: list[tuple[str, bytes, str]] = []
        self.app = web.Application()
        self.app.router.add_post("/v1/audio/transcriptions", self._transcribe)
        self.url = ""
        self.arrived = asyncio.Event()
        self.held: asyncio.Event | None = None
        """When set by a test: answers wait until it is set."""

    async def _transcribe(self, request: web.Request) -> web.Response:
        form = await request.post()
        upload = form["file"]
        assert isinstance(upload, web.FileField)
        audio = upload.file.read()
        self.received.append((str(form["model"]), audio, upload.content_type))
        self.arrived.set()
        if self.held is not None:
            await self.held.wait()
        if not audio.startswith(OGG):
            return web.json_response({"error": {"message": "Invalid file format."}}, status=400)
        return web.json_response({"text": audio[len(OGG) :].decode()})


class ServerTranscriber:
    """The smallest client of that API: one multipart POST per voice note."""

    def __init__(self, url: str) -> None:
        self._url = f"{url}/v1/audio/transcriptions"

    async def transcribe(self, audio: bytes) -> Transcript:
        started = datetime.now(UTC)
        form = aiohttp.FormData()
        form.add_field("model", "whisper-test")
        form.add_field("file", audio, filename="voice.ogg", content_type="audio/ogg")
        async with aiohttp.ClientSession() as http, http.post(self._url, data=form) as answer:
            answer.raise_for_status()
            said = await answer.json()
        return Transcript(said["text"], "openai", "whisper-test", started, datetime.now(UTC), 1.0)

    async def close(self) -> None:
        pass


class Echo:
    """A system that says back what it was told."""

    async def respond(self, conversation: Conversation) -> SystemReply:
        return SystemReply((f"you said: {conversation.message}",))

    async def close(self) -> None:
        pass


@pytest.fixture
async def speech() -> AsyncIterator[SpeechServer]:
    server = SpeechServer()
    async with serving(server.app) as server.url:
        yield server


def spoken(hmd: StudyBundle, media: TaskMedia) -> StudyBundle:
    scenarios = {sid: s.model_copy(update={"media": media}) for sid, s in hmd.scenarios.items()}
    return hmd.model_copy(update={"scenarios": scenarios})


VOICE = TaskMedia(participant_sends=("voice",), show_transcript=True)


async def test_a_voice_note_reaches_the_system_as_its_words(
    emulator: BotApiEmulator, start_bot: StartBot, hmd: StudyBundle, speech: SpeechServer
) -> None:
    bot = await start_bot(
        spoken(hmd, VOICE),
        systems={s.id: Echo() for s in hmd.study.systems},
        transcriber=ServerTranscriber(speech.url),
    )
    p = emulator.participant(801)
    await consent(p)
    recording = OGG + b"a game about <b>trains</b>"
    await p.send_voice(recording, duration=7)
    heard = await p.wait_for_text("I heard: a game about <b>trains</b>")
    assert heard.buttons == ["Not what I said"]
    await p.wait_for_text("you said: a game about <b>trains</b>")
    assert speech.received == [("whisper-test", recording, "audio/ogg")]
    assert sum(emulator.downloads.values()) == 1
    # the transcript was not what they said: told, recorded, and they type it
    await p.tap(text="Not what I said")
    await p.wait_for_text("Please type what you said")
    await p.send_text("a game about planes")
    await p.wait_for_text("you said: a game about planes")
    await bot.stop()
    stored = bot.tables()
    assert [e["user_text"] for e in stored["exchanges"]] == [
        "a game about <b>trains</b>",
        "a game about planes",
    ]
    doubted = [e for e in stored["events"] if e["kind"] == "transcript_doubted"]
    assert len(doubted) == 1 and '"turn": 1' in doubted[0]["data"]
    [media] = stored["media"]  # transcribed, and the audio discarded
    assert (media["kind"], media["turn"], media["duration"], media["kept"]) == ("voice", 1, 7, 0)
    assert (media["transcript"], media["engine"], media["model"]) == (
        "a game about <b>trains</b>",
        "openai",
        "whisper-test",
    )
    assert media["digest"] == hashlib.sha256(recording).hexdigest()
    assert media["size"] == len(recording) and media["transcribe_ms"] > 0
    assert recording not in database_bytes(Path(bot.db))
    # the console's transcript shows the voice note with what was heard
    async with await Desk.open(bot.db, "ada") as desk:
        said = [line.text for line in await desk.transcript(media["session_id"])]
    assert said[:2] == [
        "[voice 0:07] a game about <b>trains</b>",
        "you said: a game about <b>trains</b>",
    ]


async def test_kept_recordings_are_asked_for_listed_and_erased(
    emulator: BotApiEmulator,
    start_bot: StartBot,
    hmd: StudyBundle,
    speech: SpeechServer,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    note = "We keep your voice notes as recordings for six months, to check the transcripts."
    texts = hmd.study.texts.model_copy(update={"audio_kept_note": note})
    study = hmd.study.model_copy(update={"speech": Speech(keep_audio=True), "texts": texts})
    bot = await start_bot(
        spoken(hmd.model_copy(update={"study": study}), VOICE),
        systems={s.id: Echo() for s in hmd.study.systems},
        transcriber=ServerTranscriber(speech.url),
    )
    p, other = emulator.participant(805), emulator.participant(806)
    await p.send_text("/start")
    assert note in (await p.wait_for_text("Privacy agreement")).text
    await p.tap(text="I agree")
    await p.wait_for_text("Your task")
    recording = OGG + b"a quiet zebra quartz game"
    await p.send_voice(recording, duration=3)
    await p.wait_for_text("you said: a quiet zebra quartz game")
    await consent(other)
    await other.send_voice(OGG + b"a loud game", duration=2)
    await other.wait_for_text("you said: a loud game")
    assert recording in kept_files(Path(bot.db)).values()

    out = tmp_path / "export"
    assert (
        await asyncio.to_thread(analytics_main, ["export", "--db", str(bot.db), "--out", str(out)])
        == 0
    )
    with (out / "media.csv").open(encoding="utf-8") as listed:
        rows = list(csv.DictReader(listed))
    assert sorted((r["kind"], r["kept"], r["transcript"]) for r in rows) == [
        ("voice", "1", "a loud game"),
        ("voice", "1", "a quiet zebra quartz game"),
    ]
    assert {r["sha256"] for r in rows} >= {hashlib.sha256(recording).hexdigest()}
    capsys.readouterr()

    await p.send_text("/withdraw")
    await p.wait_for_text("Do you want to withdraw")
    await p.tap(text="Yes, withdraw and erase")
    await p.wait_for_text("You have withdrawn")
    await bot.stop()
    assert recording not in database_bytes(Path(bot.db))
    assert [m["transcript"] for m in bot.tables()["media"]] == ["a loud game"]


async def test_a_slow_transcription_holds_up_no_one_else(
    emulator: BotApiEmulator, start_bot: StartBot, hmd: StudyBundle, speech: SpeechServer
) -> None:
    bot = await start_bot(
        spoken(hmd, TaskMedia(participant_sends=("voice",))),
        systems={s.id: Echo() for s in hmd.study.systems},
        transcriber=ServerTranscriber(speech.url),
    )
    slow, other = emulator.participant(813), emulator.participant(814)
    await consent(slow)
    await consent(other)
    speech.held = asyncio.Event()
    await slow.send_voice(OGG + b"a long thought")
    await asyncio.wait_for(speech.arrived.wait(), 10)
    await other.send_text("meanwhile")
    await other.wait_for_text("you said: meanwhile")  # while the voice note is transcribed
    assert not any("a long thought" in m.text for m in slow.messages)
    speech.held.set()
    await slow.wait_for_text("you said: a long thought")
    await bot.stop()


async def test_files_that_go_no_further_keep_the_participants_place(
    emulator: BotApiEmulator, start_bot: StartBot, hmd: StudyBundle, speech: SpeechServer
) -> None:
    media = TaskMedia(participant_sends=("voice",), largest_file_mb=1)
    bot = await start_bot(
        spoken(hmd, media),
        systems={s.id: Echo() for s in hmd.study.systems},
        transcriber=ServerTranscriber(speech.url),
    )
    p = emulator.participant(802)
    await consent(p)
    await p.send_voice(OGG + b" " * (1024 * 1024), duration=60)  # over the task's 1 MB
    await p.wait_for_text("too large for me (at most 1 MB)")
    await p.send_voice(duration=3)  # bytes that hold no audio
    await p.wait_for_text("I could not read that recording")
    await p.send_voice(OGG + b"   ", duration=2)  # a recording without words
    await p.wait_for_text("I could not make out any words")
    await p.send_video_note()
    await p.wait_for_text("does not take that kind of message")
    await p.send_sticker()
    await p.wait_for_text("does not take that kind of message")
    await p.send_document(b"%PDF", file_name="<script>x</script>.pdf", caption="my <i>cv</i>")
    await p.wait_for_text("does not take that kind of message")
    await p.send_photo(caption="look")
    await p.wait_for_text("does not take that kind of message")
    await p.send_voice(OGG + b"still here")
    await p.wait_for_text("you said: still here")
    # only the files the task takes were fetched, and not the one over its limit
    assert sum(emulator.downloads.values()) == 3
    await bot.stop()
    stored = bot.tables()
    assert [e["user_text"] for e in stored["exchanges"]] == ["still here"]
    refused = [e for e in stored["events"] if e["kind"] == "media_refused"]
    problems = [(e["data"].split('"problem": "')[1].split('"')[0]) for e in refused]
    assert problems == [
        "too_big",
        "unreadable",
        "not_heard",
        "not_taken",
        "not_taken",
        "not_taken",
        "not_taken",
    ]
    assert not any("cv" in e["data"] or "script" in e["data"] for e in stored["events"])


async def test_a_voice_note_over_20_mb_is_not_fetched(
    emulator: BotApiEmulator, start_bot: StartBot, hmd: StudyBundle, speech: SpeechServer
) -> None:
    bot = await start_bot(
        spoken(hmd, TaskMedia(participant_sends=("voice",))),
        systems={s.id: Echo() for s in hmd.study.systems},
        transcriber=ServerTranscriber(speech.url),
    )
    p = emulator.participant(803)
    await consent(p)
    await p.send_voice(OGG + b"\0" * MAX_DOWNLOAD)
    await p.wait_for_text("too large for me (at most 20 MB)")
    assert emulator.requests["getFile"] == 0 and not emulator.downloads
    await p.send_text("hello")
    await p.wait_for_text("you said: hello")
    await bot.stop()


async def test_telegram_files_refuses_what_telegram_will_not_give(
    emulator: BotApiEmulator,
) -> None:
    """A file whose size the update did not say: ``getFile`` refuses it over 20 MB."""
    request, updates = request_pair()
    async with Bot(
        TOKEN,
        base_url=emulator.base_url,
        base_file_url=emulator.base_file_url,
        request=request,
        get_updates_request=updates,
    ) as bot:
        p = emulator.participant(804)
        await p.send_document(b"\0" * (MAX_DOWNLOAD + 1))
        await p.send_document(b"small")
        big, small = (u.message.document.file_id for u in await bot.get_updates())
        files = TelegramFiles(bot)
        with pytest.raises(FileTooBig):
            await files.download(big, 50 * MAX_DOWNLOAD)
        with pytest.raises(FileTooBig):
            await files.download(small, 4)
        with pytest.raises(FileUnavailable):
            await files.download("no-such-file", 100)
        assert await files.download(small, 5) == b"small"


async def test_a_study_that_transcribes_needs_an_engine(
    start_bot: StartBot, hmd: StudyBundle
) -> None:
    from bot.core.errors import SystemSetupError

    with pytest.raises(SystemSetupError, match="transcribes voice notes"):
        await start_bot(spoken(hmd, TaskMedia(participant_sends=("voice",))))


async def test_a_photo_reaches_an_openai_server_intact(
    emulator: BotApiEmulator, start_bot: StartBot, hmd: StudyBundle
) -> None:
    """The largest size Telegram made of the photo, byte for byte, as an ``image_url`` part
    with a data URI, beside the caption; the exchange keeps the caption."""
    media = TaskMedia(participant_sends=("photo",), system_receives="both")
    async with FakeOpenAI(reply="A red square.") as server:
        bundle = spoken(with_systems(hmd, spec("openai", server)), media)
        bot = await start_bot(bundle)
        p = emulator.participant(807)
        await consent(p)
        update_id = await p.send_photo(default_photo(640, 480), caption="what is <this>?")
        await p.wait_for_text("A red square.")
    largest = emulator.update(update_id)["message"]["photo"][-1]
    sent = emulator.files.by_id(largest["file_id"])
    assert sent is not None and (largest["width"], largest["height"]) == (640, 480)
    [request] = server.requests
    user = request.json["messages"][-1]
    assert user["role"] == "user" and user["content"][0] == {
        "type": "text",
        "text": "what is <this>?",
    }
    image = user["content"][1]
    assert image["type"] == "image_url"
    head, _, data = image["image_url"]["url"].partition(",")
    assert head == "data:image/jpeg;base64" and base64.b64decode(data) == sent.data
    await bot.stop()
    [row] = bot.tables()["media"]
    assert (row["kind"], row["width"], row["height"], row["kept"]) == ("photo", 640, 480, 1)
    assert row["digest"] == hashlib.sha256(sent.data).hexdigest()
    assert kept_files(Path(bot.db)) == {row["digest"]: sent.data}  # a photo is kept
    assert [e["user_text"] for e in bot.tables()["exchanges"]] == ["what is <this>?"]
    async with await Desk.open(bot.db, "ada") as desk:
        said = [line.text for line in await desk.transcript(row["session_id"])]
    assert said[0] == "[photo 640×480] what is <this>?"


class MultipartService:
    """A homemade service that takes the request as JSON and the file as a part."""

    def __init__(self) -> None:
        self.received: list[tuple[dict[str, object], bytes, str]] = []
        self.app = web.Application()
        self.app.router.add_post("/chat", self._chat)

    async def _chat(self, request: web.Request) -> web.Response:
        form = await request.post()
        media = form["media"]
        assert isinstance(media, web.FileField)
        request_part = form["request"]  # a JSON part: aiohttp gives its bytes
        assert isinstance(request_part, bytes | bytearray)
        self.received.append((json.loads(request_part), media.file.read(), media.content_type))
        return web.json_response({"text": "heard it"})


async def test_a_voice_note_reaches_an_http_service_as_a_part(
    emulator: BotApiEmulator, start_bot: StartBot, hmd: StudyBundle, speech: SpeechServer
) -> None:
    media = TaskMedia(participant_sends=("voice",), system_receives="both")
    service = MultipartService()
    async with serving(service.app) as base:
        bundle = spoken(with_systems(hmd, spec("http", f"{base}/chat")), media)
        bot = await start_bot(bundle, transcriber=ServerTranscriber(speech.url))
        p = emulator.participant(808)
        await consent(p)
        recording = OGG + b"two tickets please"
        await p.send_voice(recording, duration=2)
        await p.wait_for_text("heard it")
    [(body, audio, kind)] = service.received
    assert body["message"] == "two tickets please" and audio == recording and kind == "audio/ogg"
    await bot.stop()


async def test_a_python_system_gets_the_bytes_and_their_type(
    emulator: BotApiEmulator, start_bot: StartBot, hmd: StudyBundle
) -> None:
    seen: list[Conversation] = []

    class Looking:
        async def respond(self, conversation: Conversation) -> SystemReply:
            seen.append(conversation)
            return SystemReply(("nice picture",))

        async def close(self) -> None:
            pass

    media = TaskMedia(participant_sends=("photo",), system_receives="media")
    bot = await start_bot(spoken(hmd, media), systems={s.id: Looking() for s in hmd.study.systems})
    p = emulator.participant(809)
    await consent(p)
    update_id = await p.send_photo(default_photo(320, 200))
    await p.wait_for_text("nice picture")
    largest = emulator.update(update_id)["message"]["photo"][-1]
    [conversation] = seen
    [attachment] = conversation.attachments
    assert (attachment.kind, attachment.mime, conversation.message) == ("photo", "image/jpeg", "")
    assert attachment.data == emulator.files.by_id(largest["file_id"]).data  # type: ignore[union-attr]
    await bot.stop()


async def test_a_picture_a_system_returns_is_sent_as_a_photo_with_its_caption(
    emulator: BotApiEmulator, start_bot: StartBot, hmd: StudyBundle
) -> None:
    """Where the task lets systems return photos; elsewhere the picture is not shown."""
    picture = default_photo(400, 300)
    answer = {
        "text": "Here is the map.",
        "pictures": [
            {"data": base64.b64encode(picture).decode(), "caption": "the <b>shop</b> map"}
        ],
    }
    async with FakeHttp(reply=lambda _: answer) as server:
        system = spec("http", server, response={"text": "text", "pictures": "pictures"})
        shown = TaskMedia(system_returns=("photo",))
        bot = await start_bot(spoken(with_systems(hmd, system), shown))
        p = emulator.participant(810)
        await consent(p)
        await p.send_text("where is the shop?")
        await p.wait_for_text("Here is the map.")
        photo = await p.wait_for_text("the <b>shop</b> map")
        assert photo.media is not None and photo.media.kind == "photo"
        assert photo.media.data == picture
        await bot.stop()
        events = [e for e in bot.tables()["events"] if e["kind"] == "pictures_shown"]
        assert len(events) == 1 and hashlib.sha256(picture).hexdigest() in events[0]["data"]

        bot = await start_bot(with_systems(hmd, system))  # a text-only task
        q = emulator.participant(811)
        await consent(q)
        await q.send_text("where is the shop?")
        await q.wait_for_text("Here is the map.")
        await q.send_text("/done")
        await q.wait_for_text("task")
        assert all(m.media is None for m in q.messages)
        await bot.stop()


class VoiceServer:
    """OpenAI's ``POST /v1/audio/speech`` on loopback: answers with an Ogg file of the
    words it was given, or 500 for a text with "fail" in it."""

    def __init__(self) -> None:
        self.app = web.Application()
        self.app.router.add_post("/v1/audio/speech", self._speak)

    async def _speak(self, request: web.Request) -> web.Response:
        asked = await request.json()
        if "fail" in asked["input"]:
            return web.json_response({"error": {"message": "boom"}}, status=500)
        return web.Response(body=OGG + asked["input"].encode(), content_type="audio/ogg")


class ServerSpeaker:
    """The smallest client of that API."""

    def __init__(self, url: str) -> None:
        self._url = f"{url}/v1/audio/speech"

    async def speak(self, text: str) -> Spoken:
        started = datetime.now(UTC)
        asked = {"model": "tts-test", "input": text, "voice": "alloy", "response_format": "opus"}
        async with aiohttp.ClientSession() as http, http.post(self._url, json=asked) as answer:
            answer.raise_for_status()
            audio = await answer.read()
        return Spoken(audio, "audio/ogg", 1.0, "openai", "tts-test", started, datetime.now(UTC))

    async def close(self) -> None:
        pass


async def test_spoken_replies_are_voice_notes_with_the_text_beside(
    emulator: BotApiEmulator, start_bot: StartBot, hmd: StudyBundle
) -> None:
    media = TaskMedia(system_returns=("voice",), text_beside=True)
    async with serving(VoiceServer().app) as url:
        bot = await start_bot(
            spoken(hmd, media),
            systems={s.id: Echo() for s in hmd.study.systems},
            speaker=ServerSpeaker(url),
        )
        p = emulator.participant(812)
        await consent(p)
        await p.send_text("a game with trains")
        note = await p.wait_for_text("you said: a game with trains")
        assert note.media is not None and note.media.kind == "voice"
        assert note.media.data == OGG + b"you said: a game with trains"
        await p.send_text("please fail")  # the engine fails: the words go as text
        plain = await p.wait_for_text("you said: please fail")
        assert plain.media is None
        await bot.stop()
    spoken_events = [e for e in bot.tables()["events"] if e["kind"] == "reply_spoken"]
    assert ['"failed": false' in e["data"] for e in spoken_events] == [True, False]
    assert '"engine": "openai"' in spoken_events[0]["data"]


async def test_a_study_that_speaks_needs_an_engine(start_bot: StartBot, hmd: StudyBundle) -> None:
    from bot.core.errors import SystemSetupError

    with pytest.raises(SystemSetupError, match="speaks the replies"):
        await start_bot(spoken(hmd, TaskMedia(system_returns=("voice",))))
