"""Speech engines from plain settings, as the runner will build them from a study file."""

from __future__ import annotations

import sys

import pytest

from bot.core.errors import SystemSetupError
from bot.speech.engines import SpeechToText, TextToSpeech, speaker_for, transcriber_for
from bot.speech.espeak import Espeak
from bot.speech.openai import OpenAISpeaker, OpenAITranscriber
from bot.speech.sphinx import PocketSphinx


def test_the_engines_come_from_plain_settings() -> None:
    env = {"KEY": "sk-0123456789"}
    assert isinstance(transcriber_for(SpeechToText(engine="pocketsphinx"), env), PocketSphinx)
    served = transcriber_for(
        SpeechToText(engine="openai", base_url="http://127.0.0.1:8000", model="whisper-1"), env
    )
    assert isinstance(served, OpenAITranscriber) and served.model == "whisper-1"
    spoken = speaker_for(TextToSpeech(engine="espeak-ng", voice="de", words_per_minute=140), env)
    assert isinstance(spoken, Espeak) and (spoken.model, spoken.words_per_minute) == ("de", 140)
    assert isinstance(
        speaker_for(
            TextToSpeech(
                engine="openai",
                base_url="http://127.0.0.1:8000",
                model="tts-1",
                voice="alloy",
                api_key_env="KEY",
            ),
            env,
        ),
        OpenAISpeaker,
    )
    with pytest.raises(SystemSetupError, match="speech engine 'openai' needs model"):
        transcriber_for(SpeechToText(engine="openai", base_url="http://127.0.0.1:8000"), env)
    with pytest.raises(SystemSetupError, match="'pocketsphinx' knows English only, not 'de'"):
        transcriber_for(SpeechToText(engine="pocketsphinx", language="de"), env)
    with pytest.raises(SystemSetupError, match="speech engine 'openai' needs voice"):
        speaker_for(
            TextToSpeech(engine="openai", base_url="http://127.0.0.1:8000", model="tts-1"), env
        )


def test_pocketsphinx_not_installed_stops_the_start_with_the_command_that_installs_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setitem(sys.modules, "pocketsphinx", None)  # as without the extra
    with pytest.raises(SystemSetupError, match=r"pip install 'ozlab\[speech\]'"):
        transcriber_for(SpeechToText(engine="pocketsphinx"), {})
