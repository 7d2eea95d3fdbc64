"""How a speech engine says it failed, and what every engine shares: the voice note's type
and the clock results are stamped with. What an engine promises (``Transcriber``,
``Speaker``) and what it returns (``Transcript``, ``Spoken``) are the seam in
``bot.core.media``, where the runner and the store meet them.

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

from datetime import UTC, datetime

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
