"""espeak-ng: text to speech on this machine (Debian's ``espeak-ng`` package, no model to
download). Robotic but clear, in over a hundred languages; a voice is a language
(``en-us``, ``de``) optionally with a variant (``en-us+f3``).

The text goes to espeak-ng on its standard input, never on the command line (where another
user's ``ps`` would see it, and a reply starting with ``-`` would be read as an option); its
WAV comes back on standard output and is encoded as OGG/Opus in a thread. Nothing touches a
file.
"""

from __future__ import annotations

import asyncio
import re
import shutil
from collections.abc import Callable
from datetime import datetime

from bot.core.errors import SystemSetupError
from bot.core.media import Spoken
from bot.speech.base import SpeechFailure, SpeechTimeout, utc_now
from bot.speech.speaking import as_reply, text_to_speak

ENGINE = "espeak-ng"
_VOICE = re.compile(r"[A-Za-z0-9][A-Za-z0-9_+-]*")


class Espeak:
    """Speaks replies with espeak-ng's ``voice`` at ``words_per_minute``."""

    engine = ENGINE

    def __init__(
        self,
        *,
        voice: str = "en",
        words_per_minute: int = 175,
        timeout: float = 30.0,
        program: str = "espeak-ng",
        clock: Callable[[], datetime] = utc_now,
    ) -> None:
        if not _VOICE.fullmatch(voice):
            raise SystemSetupError(
                f"speech engine: {voice!r} is not an espeak-ng voice name (e.g. en-us, de, "
                "en-us+f3)",
                field="voice",
            )
        if not 80 <= words_per_minute <= 450:
            raise SystemSetupError(
                "speech engine: espeak-ng speaks 80 to 450 words a minute", field="speed"
            )
        found = shutil.which(program)
        if found is None:
            raise SystemSetupError(
                f"speech engine: {program} is not installed (Debian: apt install espeak-ng)",
                field="engine",
            )
        self.model = voice
        self.program = found
        self.words_per_minute = words_per_minute
        self.timeout = timeout
        self.clock = clock

    async def speak(self, text: str) -> Spoken:
        text = text_to_speak(text)
        started = self.clock()
        wav = await self._synthesise(text)
        return await as_reply(
            wav,
            made_by="espeak-ng",
            engine=self.engine,
            model=self.model,
            started=started,
            clock=self.clock,
        )

    async def _synthesise(self, text: str) -> bytes:
        process = await asyncio.create_subprocess_exec(
            self.program,
            "-v",
            self.model,
            "-s",
            str(self.words_per_minute),
            "-b",
            "1",  # the text is UTF-8
            "--stdin",
            "--stdout",
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
        )
        try:
            async with asyncio.timeout(self.timeout):
                wav, complaint = await process.communicate(text.encode("utf-8"))
        except TimeoutError:
            process.kill()
            await process.wait()
            raise SpeechTimeout(f"espeak-ng did not finish within {self.timeout:g} s") from None
        if process.returncode != 0 or not wav:
            said = " ".join(complaint.decode("utf-8", errors="replace").split())[:200]
            raise SpeechFailure(
                f"espeak-ng failed (exit status {process.returncode})"
                + (f": {said}" if said else "")
            )
        return wav

    async def close(self) -> None:
        """Nothing stays open between replies."""
