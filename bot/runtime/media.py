"""A participant's voice note or photo, fetched and (where the task says) transcribed,
for the engine's ``FetchMedia``.

Carried out in the participant's own turn, as a system call is: one chat waits for its
file, every other chat goes on. Nothing of the file or its words is logged: a failure
logs the kind of error only.
"""

from __future__ import annotations

import hashlib
import logging
import time
from collections.abc import Callable
from dataclasses import replace
from typing import Protocol

from bot.core.media import Transcriber, Transcript
from bot.core.storable_text import storable
from bot.core.vocabulary import MediaProblem
from bot.engine import effects as fx
from bot.engine import events as ev
from bot.telegram.files import FileTooBig, FileUnavailable

log = logging.getLogger(__name__)

__all__ = ["FileSource", "MediaIntake"]


class FileSource(Protocol):
    """Where a participant's file is fetched from (Telegram: ``bot.telegram.files``)."""

    async def download(self, file_id: str, largest: int) -> bytes: ...


class MediaIntake:
    """Fetches a participant's file, and transcribes a voice note when asked."""

    def __init__(
        self,
        files: FileSource,
        transcriber: Transcriber | None = None,
        *,
        timer: Callable[[], float] = time.perf_counter,
    ) -> None:
        self._files = files
        self._transcriber = transcriber
        self._timer = timer

    async def fetch(self, effect: fx.FetchMedia) -> tuple[ev.MediaFetched, bytes]:
        """The answer for the engine, and the file's bytes (none when it could not be had).
        Never raises: a file that cannot be had or read comes back with its problem."""
        medium = effect.medium
        started = self._timer()
        try:
            data = await self._files.download(medium.file_id, effect.largest)
        except FileTooBig:
            return ev.MediaFetched(medium, problem=MediaProblem.TOO_BIG), b""
        except FileUnavailable as error:
            log.warning("a participant's %s could not be fetched: %s", medium.kind, error)
            return ev.MediaFetched(medium, problem=MediaProblem.UNAVAILABLE), b""
        fetched = ev.MediaFetched(
            medium,
            digest=hashlib.sha256(data).hexdigest(),
            size=len(data),
            fetch_ms=(self._timer() - started) * 1000,
        )
        if not effect.transcribe:
            return fetched, data
        return await self._transcribed(fetched, data), data

    async def _transcribed(self, fetched: ev.MediaFetched, audio: bytes) -> ev.MediaFetched:
        started = self._timer()
        problem: MediaProblem | None = None
        transcript: Transcript | None = None
        try:
            if self._transcriber is None:
                raise LookupError("no speech-to-text engine")
            heard = await self._transcriber.transcribe(audio)
            transcript = replace(heard, text=storable(heard.text))
            if not transcript.text.strip():
                problem, transcript = MediaProblem.NOT_HEARD, None
        except (
            Exception
        ) as error:  # an engine's failure, whatever it is, is the participant's answer
            log.warning("a voice note could not be transcribed (%s)", type(error).__name__)
            problem = MediaProblem.UNREADABLE
        elapsed = (self._timer() - started) * 1000
        return ev.MediaFetched(
            fetched.medium,
            fetched.digest,
            fetched.size,
            transcript,
            problem,
            fetched.fetch_ms,
            elapsed,
        )
