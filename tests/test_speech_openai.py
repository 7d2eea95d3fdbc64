"""The OpenAI-compatible speech engines against a local server that speaks the API."""

from __future__ import annotations

import asyncio
import io
import logging
import wave
from datetime import UTC, datetime, timedelta

import pytest
from aiohttp import web

from bot.core.errors import SystemSetupError
from bot.speech import audio
from bot.speech.base import SpeechFailure, SpeechTimeout, UnreadableAudio
from bot.speech.openai import OpenAISpeaker, OpenAITranscriber, endpoint
from tests.fake_servers import closed_port_url, serving
from tests.speech_support import FakeSpeechServer, tone

KEY = "sk-test-0123456789abcdef"
NOTE = tone(2.0)  # a voice note as Telegram sends one: OGG/Opus


class Ticking:
    """A clock that moves one second a reading: start and finish times are told apart."""

    def __init__(self) -> None:
        self.now = datetime(2026, 11, 29, 9, 0, tzinfo=UTC)

    def __call__(self) -> datetime:
        self.now += timedelta(seconds=1)
        return self.now


def transcriber(server: FakeSpeechServer, **settings: object) -> OpenAITranscriber:
    options: dict[str, object] = {
        "base_url": server.url,
        "model": "Systran/faster-whisper-small",
        "env": {"STT_KEY": KEY},
        "api_key_env": "STT_KEY",
        **settings,
    }
    return OpenAITranscriber(**options)  # type: ignore[arg-type]


def speaker(server: FakeSpeechServer, **settings: object) -> OpenAISpeaker:
    options: dict[str, object] = {
        "base_url": server.url,
        "model": "tts-1",
        "voice": "alloy",
        "env": {"TTS_KEY": KEY},
        "api_key_env": "TTS_KEY",
        **settings,
    }
    return OpenAISpeaker(**options)  # type: ignore[arg-type]


async def test_a_voice_note_is_sent_as_the_reference_says_and_its_text_kept(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.DEBUG)
    async with FakeSpeechServer(key=KEY) as server:
        clock = Ticking()
        engine = transcriber(server, language="en", clock=clock)
        try:
            heard = await engine.transcribe(NOTE)
        finally:
            await engine.close()
    sent = server.requests[-1]
    assert sent.path == "/v1/audio/transcriptions"
    assert (sent.filename, sent.file_type) == ("voice.wav", "audio/wav")
    with wave.open(io.BytesIO(sent.file or b"")) as file:  # what every server reads
        assert (file.getnchannels(), file.getsampwidth(), file.getframerate()) == (1, 2, 16000)
        assert file.getnframes() == pytest.approx(32_000, abs=800)
    assert sent.fields == {
        "model": "Systran/faster-whisper-small",
        "response_format": "json",
        "language": "en",
    }
    assert sent.headers["Authorization"] == f"Bearer {KEY}"
    assert heard.text == "what is the weather like in london"
    assert (heard.engine, heard.model) == ("openai", "Systran/faster-whisper-small")
    assert heard.audio_seconds == pytest.approx(2.0, abs=0.05)
    assert heard.seconds == 1.0  # the clock read once before the call, once after
    assert "london" not in repr(heard)  # what was said stays out of logs
    assert "london" not in caplog.text and KEY not in caplog.text


@pytest.mark.parametrize("base", ["{url}", "{url}/", "{url}/v1", "{url}/v1/"])
def test_the_address_is_the_base_url_with_v1_once(base: str) -> None:
    url = base.format(url="http://127.0.0.1:8000")
    assert endpoint(url, "audio/speech") == "http://127.0.0.1:8000/v1/audio/speech"


def test_a_wrong_address_or_a_missing_key_stops_the_start() -> None:
    with pytest.raises(SystemSetupError, match="speech engine: url: "):
        OpenAITranscriber(base_url="localhost:8000", model="m", env={})
    with pytest.raises(SystemSetupError, match="STT_KEY") as raised:
        OpenAITranscriber(
            base_url="http://127.0.0.1:1", model="m", env={"STT_KEY": " "}, api_key_env="STT_KEY"
        )
    assert "is empty" in str(raised.value)
    with pytest.raises(SystemSetupError, match=r"STT_KEY \(api_key_env\) is not set"):
        OpenAISpeaker(
            base_url="http://127.0.0.1:1", model="m", voice="v", env={}, api_key_env="STT_KEY"
        )


async def failure_of(engine: OpenAITranscriber | OpenAISpeaker) -> SpeechFailure:
    try:
        if isinstance(engine, OpenAITranscriber):
            await engine.transcribe(NOTE)
        else:
            await engine.speak("the museum opens at nine on sundays")
    except SpeechFailure as failure:
        return failure
    finally:
        await engine.close()
    raise AssertionError("the engine did not fail")


@pytest.mark.parametrize("make", [transcriber, speaker])
async def test_a_wrong_key_is_a_failure_that_does_not_show_it(
    make: type, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    async with FakeSpeechServer(key="sk-the-right-one") as server:
        failure = await failure_of(make(server))
    assert "HTTP 401" in str(failure)
    assert "Incorrect API key provided: ***" in str(failure)  # the server showed it back
    assert KEY not in str(failure) and KEY not in caplog.text
    assert failure.__cause__ is None  # no aiohttp object holding the headers rides along
    assert failure.__context__ is None or failure.__suppress_context__


@pytest.mark.parametrize("status", [400, 404, 413, 429, 500, 503])
@pytest.mark.parametrize("make", [transcriber, speaker])
async def test_an_error_status_is_one_failure_and_no_retry(make: type, status: int) -> None:
    async with FakeSpeechServer() as server:
        server.answer_with(status, '{"error": {"message": "model not loaded", "type": "x"}}')
        failure = await failure_of(make(server, api_key_env=None))
    assert type(failure) is SpeechFailure
    assert str(failure) == f"{server.url}{server.requests[0].path} answered HTTP {status}: " + (
        "model not loaded"
    )
    assert len(server.requests) == 1


async def test_an_error_excerpt_never_holds_the_text_to_speak() -> None:
    async with FakeSpeechServer() as server:
        server.answer_with(422, '{"detail": "cannot say: the museum opens at nine on sundays"}')
        failure = await failure_of(speaker(server))
    assert "museum" not in str(failure)
    assert str(failure).endswith("answered HTTP 422: cannot say: ***")


async def test_a_long_error_body_is_cut_and_made_visible() -> None:
    async with FakeSpeechServer() as server:
        server.answer_with(500, "\x1b[2J" + "x" * 5000, content_type="text/plain")
        failure = await failure_of(transcriber(server))
    assert "\x1b" not in str(failure) and "\\x1b" in str(failure)
    assert str(failure).endswith("…") and len(str(failure)) < 300


@pytest.mark.parametrize("make", [transcriber, speaker])
async def test_a_slow_server_is_a_timeout(make: type) -> None:
    async with FakeSpeechServer() as server:
        server.hold()
        started = asyncio.get_running_loop().time()
        failure = await failure_of(make(server, timeout=0.2))
        waited = asyncio.get_running_loop().time() - started
    assert isinstance(failure, SpeechTimeout)
    assert str(failure) == f"no answer from {server.url}{server.requests[0].path} within 0.2 s"
    assert 0.2 <= waited < 5


@pytest.mark.parametrize("make", [transcriber, speaker])
async def test_nobody_listening_is_a_failure(make: type) -> None:
    async with FakeSpeechServer() as server:
        server.url = closed_port_url()
        failure = await failure_of(make(server))
    assert str(failure).startswith(f"cannot connect to {server.url}/v1/audio/")


@pytest.mark.parametrize(
    ("body", "said"),
    [
        (b"<html>busy</html>", "answered with something not JSON"),
        (b'{"transcript": "hello"}', "answered without a text"),
        (b'["hello"]', "answered without a text"),
    ],
)
async def test_an_answer_without_a_text_is_a_failure(body: bytes, said: str) -> None:
    async with FakeSpeechServer() as server:
        server.answer_with(200, body)
        failure = await failure_of(transcriber(server))
    assert str(failure) == f"{server.url}/v1/audio/transcriptions {said}"


@pytest.mark.parametrize(
    ("data", "said"),
    [
        (b"", "the audio is empty (0 bytes)"),
        (b"GIF89a\x01\x00\x01\x00\x00\x00\x00;", "the file holds no audio stream"),
        (b"\x13\x37 not a voice" * 9, "the audio cannot be read: Invalid data found when"),
        (b"\0" * (audio.MAX_AUDIO_BYTES + 1), "the audio is 20.0 MB, more than the 20 MB"),
    ],
)
async def test_unreadable_audio_is_never_sent(data: bytes, said: str) -> None:
    async with FakeSpeechServer() as server:
        engine = transcriber(server)
        with pytest.raises(UnreadableAudio) as raised:
            await engine.transcribe(data)
        await engine.close()
    assert str(raised.value).startswith(said)
    assert server.requests == []


async def test_a_reply_is_asked_for_as_opus_and_kept_as_it_came() -> None:
    spoken = tone(1.5)
    async with FakeSpeechServer(key=KEY, speech=spoken) as server:
        engine = speaker(server, clock=Ticking())
        try:
            reply = await engine.speak("  the museum opens at nine on sundays \n")
        finally:
            await engine.close()
    assert server.requests[-1].json == {
        "model": "tts-1",
        "input": "the museum opens at nine on sundays",
        "voice": "alloy",
        "response_format": "opus",
    }
    assert reply.audio == spoken
    assert (reply.mime, reply.engine, reply.model) == ("audio/ogg", "openai", "tts-1")
    assert reply.audio_seconds == pytest.approx(1.5, abs=0.05)
    assert reply.seconds == 1.0
    assert str(len(spoken)) in repr(reply) and "\\x" not in repr(reply)


@pytest.mark.parametrize(("container", "codec"), [("wav", "pcm_s16le"), ("mp3", "libmp3lame")])
async def test_a_reply_in_another_format_becomes_a_voice_note(container: str, codec: str) -> None:
    async with FakeSpeechServer(speech=tone(1.0, container=container, codec=codec)) as server:
        engine = speaker(server)
        try:
            reply = await engine.speak("hello")
        finally:
            await engine.close()
    assert audio.is_voice_note(reply.audio)
    assert reply.audio_seconds == pytest.approx(1.0, abs=0.05)


async def test_a_reply_that_is_not_audio_is_a_failure() -> None:
    async with FakeSpeechServer(speech=b"this is not audio at all") as server:
        failure = await failure_of(speaker(server))
    assert str(failure).startswith(f"{server.url}/v1/audio/speech answered with the audio cannot")


@pytest.mark.parametrize(
    ("text", "said"),
    [
        (" \n ", "there is no text to speak"),
        ("a" * 4097, "the reply has 4097 characters, more than the 4096 ozlab speaks at once"),
    ],
)
async def test_nothing_or_too_much_to_speak_is_never_sent(text: str, said: str) -> None:
    async with FakeSpeechServer() as server:
        engine = speaker(server)
        with pytest.raises(SpeechFailure, match=said):
            await engine.speak(text)
        await engine.close()
    assert server.requests == []


async def test_a_redirect_is_not_followed_with_the_key() -> None:
    async def elsewhere(request: web.Request) -> web.Response:
        raise web.HTTPTemporaryRedirect("http://127.0.0.1:9/v1/audio/transcriptions")

    app = web.Application()
    app.router.add_post("/v1/audio/transcriptions", elsewhere)
    async with serving(app) as url:
        engine = OpenAITranscriber(base_url=url, model="m", env={})
        with pytest.raises(SpeechFailure, match="answered HTTP 307"):
            await engine.transcribe(NOTE)
        await engine.close()


async def test_calls_after_close_fail_and_close_twice_is_fine() -> None:
    async with FakeSpeechServer() as server:
        engine = transcriber(server)
        await engine.transcribe(NOTE)
        await engine.close()
        await engine.close()
        with pytest.raises(SpeechFailure, match="shutting down"):
            await engine.transcribe(NOTE)
