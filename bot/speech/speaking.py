"""What every speaker does around its engine: the text it may speak, and the audio it made
turned into a reply ready for sendVoice."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from datetime import datetime

from bot.core.media import Spoken
from bot.speech import audio
from bot.speech.base import VOICE_NOTE_MIME, SpeechFailure, UnreadableAudio

MAX_REPLY_CHARS = 4096
"""The longest reply spoken: what OpenAI's speech endpoint takes in one call, and minutes of
speech, far beyond a chat's reply."""


def text_to_speak(text: str) -> str:
    """The reply without the spaces around it; nothing to say, or too much, is a failure."""
    text = text.strip()
    if not text:
        raise SpeechFailure("there is no text to speak")
    if len(text) > MAX_REPLY_CHARS:
        raise SpeechFailure(
            f"the reply has {len(text)} characters, more than the {MAX_REPLY_CHARS} ozlab "
            "speaks at once"
        )
    return text


async def as_reply(
    data: bytes,
    *,
    made_by: str,
    engine: str,
    model: str,
    started: datetime,
    clock: Callable[[], datetime],
) -> Spoken:
    """The engine's audio as a voice note (encoded in a thread); audio that does not decode
    is the engine's failure, said with ``made_by`` (who made it)."""
    try:
        note, seconds = await asyncio.to_thread(audio.as_voice_note, data)
    except UnreadableAudio as error:
        raise SpeechFailure(f"{made_by} answered with {error}") from None
    return Spoken(
        audio=note,
        mime=VOICE_NOTE_MIME,
        audio_seconds=seconds,
        engine=engine,
        model=model,
        started_at=started,
        finished_at=clock(),
    )
