"""Voice notes and pictures as ozlab passes them on: what Telegram said of a file a
participant sent, the words a voice note held, and the seam to whatever finds those words.

A file's description travels (the engine decides on it); its bytes never enter the engine
or the store's rows: the runner fetches them, keeps them only as long as the study says,
and names them by their content hash. Nothing here names a person.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Protocol

FILE_KINDS = (
    "voice",
    "photo",
    "video_note",
    "sticker",
    "document",
    "audio",
    "video",
    "animation",
)
"""The kinds of message that carry a file, in the order a message is read for them."""


@dataclass(frozen=True)
class Medium:
    """A file a participant sent, as Telegram described it (``file_id`` fetches it; it is
    the bot's handle on the file, not the person's)."""

    kind: str
    """One of :data:`FILE_KINDS`."""
    file_id: str
    size: int | None = None
    """Bytes, as Telegram reported them (it may not)."""
    mime: str | None = None
    duration: int | None = None
    """Seconds (a voice note, a video, an audio file)."""
    width: int | None = None
    height: int | None = None
    caption: str = ""
    """What the participant wrote with it (outside text, made storable at the door)."""


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
    """How long the voice note was, as the engine measured it."""

    @property
    def seconds(self) -> float:
        """How long the engine took (the speech-to-text share of a reply's latency)."""
        return (self.finished_at - self.started_at).total_seconds()

    def __repr__(self) -> str:  # what was said stays out of every log and traceback
        return (
            f"Transcript({len(self.text)} characters, {self.audio_seconds:.1f} s of audio, "
            f"{self.engine}/{self.model})"
        )


class Transcriber(Protocol):
    """What turns a voice note (any audio Telegram sends) into words: an engine of
    ``bot.speech``, built from the study's ``speech.speech_to_text``. Raises when the audio
    cannot be read or the engine fails: the runner tells the participant and keeps their
    place. Safe to call concurrently."""

    async def transcribe(self, audio: bytes) -> Transcript: ...

    async def close(self) -> None: ...


@dataclass(frozen=True, slots=True)
class Spoken:
    """Words turned into speech: a voice note ready for sendVoice (OGG/Opus), its length,
    and the engine and model that spoke it, and when."""

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
            f"Spoken({len(self.audio)} bytes, {self.mime}, {self.audio_seconds:.1f} s, "
            f"{self.engine}/{self.model})"
        )


class Speaker(Protocol):
    """What speaks a system's reply as a voice note: an engine of ``bot.speech``, built
    from the study's ``speech.text_to_speech``. Raises when it cannot: the runner sends the
    text instead. Safe to call concurrently."""

    async def speak(self, text: str) -> Spoken: ...

    async def close(self) -> None: ...


@dataclass(frozen=True)
class FileShown:
    """What a transcript tells of a participant's file: its kind, length and size."""

    kind: str
    duration: int | None = None
    width: int | None = None
    height: int | None = None

    def label(self) -> str:
        """``[voice 0:07]``, ``[photo 1280×960]``: the file as a transcript line shows it."""
        if self.kind == "voice":
            total = max(self.duration or 0, 0)
            return f"[voice {total // 60}:{total % 60:02d}]"
        if self.width is not None and self.height is not None:
            return f"[{self.kind} {self.width}×{self.height}]"
        return f"[{self.kind}]"
