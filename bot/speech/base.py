"""What a speech engine promises: audio in, text out (:class:`Transcriber`), or text in,
a voice note out (:class:`Speaker`), and how each says it failed.

The failures::

    SpeechFailure           a speech engine could not do its job for this voice note or reply
    ├── UnreadableAudio     the audio itself: not audio, empty, cut off, or beyond the limits
    │   └── AudioTooLarge   ...larger than Telegram lets a bot download (20 MB) or too long
    └── SpeechTimeout       the engine did not answer in time

They sit outside ``bot.core.errors``' tree for the reason ``SystemFailure`` does: they happen
during a session, to one participant's message, and never end a command. Their messages name
what went wrong (an HTTP status, a codec's complaint) and never hold the audio, the text, the
transcript or a secret: a voice is biometric data, a transcript is what a participant said.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Protocol

VOICE_NOTE_MIME = "audio/ogg"
"""What Telegram's sendVoice shows as a voice note: Opus in an OGG container."""


def utc_now() -> datetime:
    """The clock engines stamp their results with, unless a test gives its own."""
    return datetime.now(UTC)


class SpeechFailure(Exception):
    """A speech engine failed for one voice note or one reply."""


class UnreadableAudio(SpeechFailure):
    """The audio cannot be read: not audio, no sound in it, or cut off."""


class AudioTooLarge(UnreadableAudio):
    """The audio is larger or longer than ozlab reads."""


class SpeechTimeout(SpeechFailure):
    """The engine did not answer within its time limit."""


@dataclass(frozen=True, slots=True)
class Transcript:
    """What a participant said, with the engine and model that heard it and when: a
    transcript is evidence, and its maker and time are part of it."""

    text: str
    engine: str
    model: str
    started_at: datetime
    finished_at: datetime
    audio_seconds: float

    @property
    def seconds(self) -> float:
        """How long the engine took (the speech-to-text share of a reply's latency)."""
        return (self.finished_at - self.started_at).total_seconds()

    def __repr__(self) -> str:  # what was said stays out of every log and traceback
        return (
            f"Transcript({len(self.text)} characters, {self.audio_seconds:.1f} s of audio, "
            f"{self.engine}/{self.model})"
        )


@dataclass(frozen=True, slots=True)
class SpokenReply:
    """A system's reply spoken: a voice note ready for sendVoice."""

    audio: bytes
    mime: str
    audio_seconds: float
    engine: str
    model: str
    started_at: datetime
    finished_at: datetime

    @property
    def seconds(self) -> float:
        """How long the engine took (the text-to-speech share of a reply's latency)."""
        return (self.finished_at - self.started_at).total_seconds()

    def __repr__(self) -> str:  # the voice itself stays out of every log and traceback
        return (
            f"SpokenReply({len(self.audio)} bytes, {self.mime}, {self.audio_seconds:.1f} s, "
            f"{self.engine}/{self.model})"
        )


class Transcriber(Protocol):
    """Turns a voice note (any audio Telegram sends) into text. Safe to call concurrently."""

    engine: str
    model: str

    async def transcribe(self, audio: bytes) -> Transcript: ...

    async def close(self) -> None: ...


class Speaker(Protocol):
    """Speaks a reply as a voice note (OGG/Opus). Safe to call concurrently."""

    engine: str
    model: str

    async def speak(self, text: str) -> SpokenReply: ...

    async def close(self) -> None: ...
