"""espeak-ng for real: a reply spoken as a voice note, and its ways of failing."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from bot.core.errors import SystemSetupError
from bot.speech import audio
from bot.speech.base import SpeechFailure, SpeechTimeout
from bot.speech.espeak import Espeak


async def test_a_reply_is_spoken_as_a_voice_note() -> None:
    reply = await Espeak(voice="en-us").speak("Your table for two is booked for eight.")
    assert audio.is_voice_note(reply.audio)
    assert reply.mime == "audio/ogg"
    assert (reply.engine, reply.model) == ("espeak-ng", "en-us")
    assert 1.5 < reply.audio_seconds < 5
    assert reply.audio_seconds == pytest.approx(audio.duration(reply.audio), abs=0.03)
    assert reply.started_at <= reply.finished_at


async def test_speed_changes_the_length() -> None:
    text = "the museum opens at nine on sundays and closes at six"
    slow = await Espeak(words_per_minute=100).speak(text)
    fast = await Espeak(words_per_minute=300).speak(text)
    assert slow.audio_seconds > 2 * fast.audio_seconds


async def test_a_reply_that_looks_like_an_option_is_spoken_not_obeyed() -> None:
    """The text goes on standard input: ``-w /tmp/x.wav`` is words, not espeak's option to
    write a file instead of speaking to standard output."""
    reply = await Espeak().speak("-w /tmp/ozlab-speech-test.wav --version")
    assert reply.audio_seconds > 1


@pytest.mark.parametrize("voice", ["-w", "en us", "en;rm", "", "en-us\n"])
def test_a_voice_name_that_is_not_one_stops_the_start(voice: str) -> None:
    with pytest.raises(SystemSetupError, match="is not an espeak-ng voice name"):
        Espeak(voice=voice)


def test_an_impossible_speed_or_a_missing_program_stops_the_start() -> None:
    with pytest.raises(SystemSetupError, match="80 to 450 words a minute"):
        Espeak(words_per_minute=20)
    with pytest.raises(SystemSetupError, match="ozlab-no-such-tts is not installed"):
        Espeak(program="ozlab-no-such-tts")


async def test_an_unknown_voice_is_a_failure_with_espeaks_words() -> None:
    with pytest.raises(SpeechFailure) as raised:
        await Espeak(voice="xx-nowhere").speak("hello")
    assert str(raised.value) == (
        "espeak-ng failed (exit status 1): Error: The specified espeak-ng voice does not exist."
    )


@pytest.mark.parametrize(
    ("text", "said"), [("  ", "no text to speak"), ("a" * 4097, "4097 characters")]
)
async def test_nothing_or_too_much_to_speak_is_a_failure(text: str, said: str) -> None:
    with pytest.raises(SpeechFailure, match=said):
        await Espeak().speak(text)


async def test_a_program_past_its_time_is_stopped() -> None:
    with pytest.raises(SpeechTimeout, match=r"did not finish within 0\.001 s"):
        await Espeak(timeout=0.001).speak("a long reply " * 200)
    assert "espeak-ng" not in children(), "the program was stopped and its exit collected"


def children() -> list[str]:
    """The names of this process's child processes (a zombie's too, until collected)."""
    names = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            name, fields = stat.read_text().rsplit(")", 1)
        except OSError:
            continue
        if int(fields.split()[1]) == os.getpid():
            names.append(name.split("(", 1)[1])
    return names
