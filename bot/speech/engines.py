"""A speech engine from plain settings: what a study file says, mapped by whoever reads it.

The study file's models (pydantic, in ``scenarios``) are not repeated here; the runner turns
them into :class:`SpeechToText` and :class:`TextToSpeech` and asks for the engine::

    transcriber_for(SpeechToText(engine="pocketsphinx"), os.environ)
    speaker_for(TextToSpeech(engine="openai", base_url="http://127.0.0.1:8000",
                             model="tts-1", voice="alloy", api_key_env="TTS_KEY"), os.environ)
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Literal

from bot.core.errors import SystemSetupError
from bot.speech.base import Speaker, Transcriber
from bot.speech.espeak import Espeak
from bot.speech.openai import OpenAISpeaker, OpenAITranscriber
from bot.speech.sphinx import PocketSphinx


@dataclass(frozen=True, slots=True)
class SpeechToText:
    """``engine``: ``pocketsphinx`` (on this machine, English only) or ``openai`` (a server
    at ``base_url`` serving ``model``, e.g. ``Systran/faster-whisper-small``, within
    ``timeout`` seconds; ``language``, ISO 639-1, spares it a guess)."""

    engine: Literal["pocketsphinx", "openai"]
    base_url: str | None = None
    model: str | None = None
    api_key_env: str | None = None
    language: str | None = None
    timeout: float = 60.0


@dataclass(frozen=True, slots=True)
class TextToSpeech:
    """``engine``: ``espeak-ng`` (on this machine; ``voice`` is its voice, ``en-us`` by
    default, at ``words_per_minute``) or ``openai`` (a server at ``base_url``: ``model`` and
    ``voice``, e.g. ``tts-1`` and ``alloy``)."""

    engine: Literal["espeak-ng", "openai"]
    base_url: str | None = None
    model: str | None = None
    voice: str | None = None
    api_key_env: str | None = None
    timeout: float = 60.0
    words_per_minute: int = 175


def _required(value: str | None, name: str, engine: str) -> str:
    if not value:
        raise SystemSetupError(f"speech engine {engine!r} needs {name}", field=name)
    return value


def transcriber_for(settings: SpeechToText, env: Mapping[str, str]) -> Transcriber:
    """The engine ``settings`` name; a missing setting or key is a SystemSetupError."""
    if settings.engine == "pocketsphinx":
        if settings.language not in (None, "en"):
            raise SystemSetupError(
                f"speech engine 'pocketsphinx' knows English only, not {settings.language!r}: "
                "for other languages use an openai engine (a Whisper server)",
                field="language",
            )
        return PocketSphinx()
    return OpenAITranscriber(
        base_url=_required(settings.base_url, "base_url", settings.engine),
        model=_required(settings.model, "model", settings.engine),
        env=env,
        api_key_env=settings.api_key_env,
        language=settings.language,
        timeout=settings.timeout,
    )


def speaker_for(settings: TextToSpeech, env: Mapping[str, str]) -> Speaker:
    """The engine ``settings`` name; a missing setting or key is a SystemSetupError."""
    if settings.engine == "espeak-ng":
        return Espeak(
            voice=settings.voice or "en-us",
            words_per_minute=settings.words_per_minute,
            timeout=settings.timeout,
        )
    return OpenAISpeaker(
        base_url=_required(settings.base_url, "base_url", settings.engine),
        model=_required(settings.model, "model", settings.engine),
        voice=_required(settings.voice, "voice", settings.engine),
        env=env,
        api_key_env=settings.api_key_env,
        timeout=settings.timeout,
    )
