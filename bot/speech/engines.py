"""The speech engines a study file names (its ``speech`` block, ``scenarios.media``), built
for the process that runs the study: one place reads the settings, so a study means the same
engine in ``ozlab run``, ``ozlab demo``, ``ozlab pilot`` and ``ozlab chat``.

Addresses may come from the environment (``url_env``), API keys only from it
(``api_key_env``); the defaults are the study file's, none here. An engine that cannot be
built (pocketsphinx not installed, no espeak-ng, a key's variable unset) is a
``SystemSetupError`` that names what is missing.
"""

from __future__ import annotations

from collections.abc import Mapping

from bot.core.errors import SystemSetupError
from bot.core.media import Speaker, Transcriber
from bot.speech.espeak import Espeak
from bot.speech.openai import OpenAISpeaker, OpenAITranscriber
from bot.speech.sphinx import PocketSphinx
from scenarios.media import (
    EspeakTextToSpeech,
    OpenAISpeechToText,
    OpenAITextToSpeech,
    PocketSphinxSpeechToText,
    Speech,
)


def _address(settings: OpenAISpeechToText | OpenAITextToSpeech, env: Mapping[str, str]) -> str:
    """``url``, or the address the variable ``url_env`` holds when it is set."""
    if settings.url_env is not None and env.get(settings.url_env):
        return env[settings.url_env]
    return settings.url


def transcriber_for(
    settings: OpenAISpeechToText | PocketSphinxSpeechToText, env: Mapping[str, str]
) -> Transcriber:
    """The speech-to-text engine ``settings`` name."""
    if isinstance(settings, PocketSphinxSpeechToText):
        return PocketSphinx()
    return OpenAITranscriber(
        base_url=_address(settings, env),
        model=settings.model,
        env=env,
        api_key_env=settings.api_key_env,
        language=settings.language,
        timeout=settings.timeout,
    )


def speaker_for(
    settings: OpenAITextToSpeech | EspeakTextToSpeech, env: Mapping[str, str]
) -> Speaker:
    """The text-to-speech engine ``settings`` name."""
    if not isinstance(settings, OpenAITextToSpeech):
        return Espeak(voice=settings.voice, words_per_minute=settings.words_per_minute)
    return OpenAISpeaker(
        base_url=_address(settings, env),
        model=settings.model,
        voice=settings.voice,
        env=env,
        api_key_env=settings.api_key_env,
        timeout=settings.timeout,
    )


def study_engines(
    speech: Speech, *, transcribes: bool, speaks: bool, env: Mapping[str, str]
) -> tuple[Transcriber | None, Speaker | None]:
    """The engines a study's tasks need: a transcriber when a task ``transcribes`` voice
    notes, a speaker when one ``speaks`` its replies; an engine needed and not named
    stops the start."""
    transcriber: Transcriber | None = None
    if transcribes:
        if speech.speech_to_text is None:
            raise SystemSetupError(
                "a task transcribes voice notes and the study names no speech.speech_to_text",
                field="speech_to_text",
            )
        transcriber = transcriber_for(speech.speech_to_text, env)
    if not speaks:
        return transcriber, None
    if speech.text_to_speech is None:
        raise SystemSetupError(
            "a task speaks the replies and the study names no speech.text_to_speech",
            field="text_to_speech",
        )
    return transcriber, speaker_for(speech.text_to_speech, env)  # nothing opens until used
