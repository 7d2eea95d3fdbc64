"""Speech engines from what a study file says (its ``speech`` block), as every command that
runs a study builds them."""

from __future__ import annotations

import sys

import pytest
from pydantic import TypeAdapter

from bot.core.errors import SystemSetupError
from bot.speech.engines import speaker_for, study_engines, transcriber_for
from bot.speech.espeak import Espeak
from bot.speech.openai import OpenAISpeaker, OpenAITranscriber
from bot.speech.sphinx import PocketSphinx
from scenarios.media import Speech, SpeechToText, TextToSpeech

HEARING: TypeAdapter[SpeechToText] = TypeAdapter(SpeechToText)
SPEAKING: TypeAdapter[TextToSpeech] = TypeAdapter(TextToSpeech)


def test_the_engines_come_from_the_study_file_models() -> None:
    env = {"KEY": "sk-0123456789", "WHISPER_URL": "http://127.0.0.1:9100/v1"}
    sphinx = HEARING.validate_python({"engine": "pocketsphinx"})
    assert isinstance(transcriber_for(sphinx, env), PocketSphinx)
    served = transcriber_for(
        HEARING.validate_python(
            {
                "engine": "openai",
                "url": "http://127.0.0.1:8000",
                "url_env": "WHISPER_URL",
                "model": "whisper-1",
                "api_key_env": "KEY",
            }
        ),
        env,
    )
    assert isinstance(served, OpenAITranscriber) and served.model == "whisper-1"
    assert served._server.url == "http://127.0.0.1:9100/v1/audio/transcriptions"  # url_env won
    unset = transcriber_for(
        HEARING.validate_python(
            {
                "engine": "openai",
                "url": "http://127.0.0.1:8000/v1/audio/transcriptions",
                "url_env": "NOT_SET",
                "model": "whisper-1",
            }
        ),
        env,
    )
    assert isinstance(unset, OpenAITranscriber)
    assert unset._server.url == "http://127.0.0.1:8000/v1/audio/transcriptions"
    espeak = speaker_for(SPEAKING.validate_python({"engine": "espeak-ng"}), env)
    assert isinstance(espeak, Espeak) and (espeak.model, espeak.words_per_minute) == ("en", 175)
    tts = {"engine": "openai", "url": "http://127.0.0.1:8000", "model": "tts-1"}
    spoken = speaker_for(SPEAKING.validate_python({**tts, "api_key_env": "KEY"}), env)
    assert isinstance(spoken, OpenAISpeaker) and (spoken.voice, spoken.model) == ("alloy", "tts-1")
    with pytest.raises(SystemSetupError, match="OPENAI_KEY"):  # a key only from the environment
        speaker_for(SPEAKING.validate_python({**tts, "api_key_env": "OPENAI_KEY"}), env)


def test_a_study_gets_the_engines_its_tasks_need_and_no_other() -> None:
    both = Speech.model_validate(
        {"speech_to_text": {"engine": "pocketsphinx"}, "text_to_speech": {"engine": "espeak-ng"}}
    )
    hearing, speaking = study_engines(both, transcribes=True, speaks=False, env={})
    assert isinstance(hearing, PocketSphinx) and speaking is None
    assert study_engines(both, transcribes=False, speaks=False, env={}) == (None, None)
    with pytest.raises(SystemSetupError, match=r"names no speech\.text_to_speech"):
        study_engines(Speech(), transcribes=False, speaks=True, env={})


def test_pocketsphinx_not_installed_stops_the_start_with_the_command_that_installs_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setitem(sys.modules, "pocketsphinx", None)  # as without the extra
    with pytest.raises(SystemSetupError, match=r"pip install 'ozlab\[speech\]'"):
        transcriber_for(HEARING.validate_python({"engine": "pocketsphinx"}), {})


def test_espeak_ng_missing_stops_the_start_saying_how_to_install_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("PATH", "/nonexistent")
    with pytest.raises(SystemSetupError, match="espeak-ng is not installed"):
        speaker_for(SPEAKING.validate_python({"engine": "espeak-ng"}), {})
