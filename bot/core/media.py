"""Voice notes and pictures as ozlab passes them on: what Telegram said of a file a
participant sent, the words a voice note held, and the seam to whatever finds those words.

A file's description travels (the engine decides on it); its bytes never enter the engine
or the store's rows: the runner fetches them, keeps them only as long as the study says,
and names them by their content hash. Nothing here names a person.
"""

from __future__ import annotations

from dataclasses import dataclass, field
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


@dataclass(frozen=True)
class Transcript:
    """The words an engine heard in a voice note, and which engine and model heard them."""

    text: str
    engine: str
    model: str


class Transcriber(Protocol):
    """What turns a voice note into words (an engine of ``bot.speech``, built from the
    study's ``speech.speech_to_text``). Raises when the audio cannot be read or the
    engine fails: the runner tells the participant and keeps their place."""

    async def transcribe(self, audio: bytes, mime: str) -> Transcript: ...


@dataclass(frozen=True)
class Spoken:
    """A reply turned into speech: the audio (OGG/Opus for a Telegram voice note) and the
    engine and model that spoke it."""

    audio: bytes = field(repr=False)
    mime: str
    engine: str
    model: str


class Speaker(Protocol):
    """What speaks a system's reply (an engine of ``bot.speech``, built from the study's
    ``speech.text_to_speech``). Raises when it cannot: the runner sends the text instead."""

    async def speak(self, text: str) -> Spoken: ...


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
