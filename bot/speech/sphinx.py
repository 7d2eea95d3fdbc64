"""PocketSphinx: speech to text on this machine, with the English model its package ships
(``pip install 'ozlab[speech]'``): nothing to download, nothing leaves the machine.

PocketSphinx holds Python's global lock while it decodes (measured: a timer on the event
loop stalled for 1.6 s while a thread transcribed 14 s of speech), so a thread would stop
the bot from answering anyone else. It runs in a worker *process* instead, started with
``spawn`` (the bot has threads of its own, which a fork would copy half-way) and kept for
the bot's lifetime so that the model (about a second to load) loads once. Decoding the
voice note and resampling it to 16 kHz happen in the worker too: the event loop only sends
bytes and receives text.

The worker runs at a lower priority (``niceness``, and Linux's idle priority where there is
one): on a busy machine the participants' text goes first and a transcription waits, never
the reverse.

The decoder's settings were chosen by measurement on espeak-ng's voices (18 sentences at 140
words a minute, ``tests/test_speech_sphinx.py``; CPU time per second of audio): PocketSphinx's
defaults, 0.50 word error rate at 0.25 s; without the second, "flat" pass (``fwdflat``) and
with at most 3000 hidden Markov models searched a frame (``maxhmmpf``), 0.53 at 0.11 s: a
10-second voice note in about a second of one core. A little dither keeps digital silence (a
synthesised voice's, a muted microphone's) from upsetting the features. The features start
afresh for every voice note (``reinit_feat``), so a transcript depends on its audio alone, not
on who spoke before. PocketSphinx logs only fatal errors here: its log would hold the words.
"""

from __future__ import annotations

import asyncio
import contextlib
import importlib.util
import multiprocessing
import os
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from datetime import datetime
from typing import Any, TypeVar

from bot.core.errors import SystemSetupError
from bot.core.media import Transcript
from bot.speech import audio
from bot.speech.base import SpeechFailure, utc_now

ENGINE = "pocketsphinx"
MODEL = "en-us"
"""The one model the package ships: US English, its acoustic model, language model and
dictionary."""
DECODER_SETTINGS: dict[str, Any] = {"fwdflat": False, "maxhmmpf": 3000, "dither": True, "seed": 1}
NICENESS = 10
"""How much lower than the bot the worker runs: when they want the same core, the
participants' text goes first and the transcription waits."""

_Result = TypeVar("_Result")
_decoder: Any = None


def _lower_priority(niceness: int) -> None:
    """In the worker, first: give way to the bot. Niceness alone still lets the worker hold
    a core when a reply wakes the bot (its text rate fell to 71–85 % while a note was heard,
    ``bench/speech.py --bot``); Linux's idle priority runs it only on a core nothing else
    wants, at the cost of slower transcripts on a busy machine."""
    os.nice(niceness)
    with contextlib.suppress(AttributeError, OSError):  # not Linux: niceness alone
        os.sched_setscheduler(0, os.SCHED_IDLE, os.sched_param(0))


def _load() -> None:
    """In the worker: load the model before the first voice note needs it."""
    global _decoder
    if _decoder is None:
        from pocketsphinx import Decoder  # the worker's import: the bot never loads it

        _decoder = Decoder(loglevel="FATAL", **DECODER_SETTINGS)


def _recognise(data: bytes) -> tuple[str, float]:
    """In the worker: the voice note's words and its length in seconds."""
    pcm = audio.decode(data, rate=audio.RECOGNISER_RATE)
    _load()
    _decoder.reinit_feat()  # the cepstral mean and the dither start afresh: no history
    _decoder.start_utt()
    _decoder.process_raw(pcm.samples, full_utt=True)
    _decoder.end_utt()
    hypothesis = _decoder.hyp()
    return (hypothesis.hypstr if hypothesis is not None else ""), pcm.seconds


class PocketSphinx:
    """Transcribes voice notes in ``workers`` processes of their own (one by default: the
    bot and its database need the other core)."""

    engine = ENGINE
    model = MODEL

    def __init__(
        self,
        *,
        workers: int = 1,
        niceness: int = NICENESS,
        clock: Callable[[], datetime] = utc_now,
    ) -> None:
        if importlib.util.find_spec("pocketsphinx") is None:
            raise SystemSetupError(
                "speech to text: the pocketsphinx engine is not installed; "
                "install it with pip install 'ozlab[speech]'",
                field="speech_to_text",
            )
        if workers < 1:
            raise ValueError("workers must be at least 1")
        self.workers = workers
        self.niceness = niceness
        self.clock = clock
        self._pool: ProcessPoolExecutor | None = None
        self._closed = False

    def _executor(self) -> ProcessPoolExecutor:
        if self._closed:
            raise SpeechFailure("the bot is shutting down: no more transcriptions")
        if self._pool is None:
            self._pool = ProcessPoolExecutor(
                max_workers=self.workers,
                mp_context=multiprocessing.get_context("spawn"),
                initializer=_lower_priority,
                initargs=(self.niceness,),
            )
        return self._pool

    async def start(self) -> None:
        """Start the workers and load the model now, so the first voice note does not wait
        for them (about 1 s on an idle core)."""
        await asyncio.gather(*(self._in_worker(_load) for _ in range(self.workers)))

    async def transcribe(self, audio_data: bytes) -> Transcript:
        started = self.clock()
        text, seconds = await self._in_worker(_recognise, audio_data)
        return Transcript(
            text=text,
            engine=self.engine,
            model=self.model,
            started_at=started,
            finished_at=self.clock(),
            audio_seconds=seconds,
        )

    async def _in_worker(self, job: Callable[..., _Result], *args: Any) -> _Result:
        pool = self._executor()
        try:
            return await asyncio.get_running_loop().run_in_executor(pool, job, *args)
        except BrokenProcessPool:
            if self._pool is pool:
                self._pool = None  # the next voice note starts a new worker
            pool.shutdown(wait=False, cancel_futures=True)
            raise SpeechFailure("the speech recogniser's process ended unexpectedly") from None

    async def close(self) -> None:
        """Stop the workers: voice notes still queued are dropped, one being transcribed is
        finished first (seconds, for a voice note). Safe to call twice."""
        self._closed = True
        if self._pool is not None:
            pool, self._pool = self._pool, None
            await asyncio.to_thread(pool.shutdown, wait=True, cancel_futures=True)
