"""Audio in and out, with PyAV (FFmpeg's libraries in the wheel, no system ffmpeg).

Telegram sends a voice note as Opus in an OGG container, and other audio (a forwarded MP3,
an M4A) as whatever the sender had; a speech recogniser wants 16 kHz mono 16-bit PCM; a
voice note sent back must be OGG/Opus for Telegram to show it as one. Everything here is
CPU work on bytes in memory (no file holds a voice): call it off the event loop.

Limits, so that one participant's upload cannot fill the memory or the CPU of the bot:
at most :data:`MAX_AUDIO_BYTES` (what Telegram lets a bot download) and
:data:`MAX_AUDIO_SECONDS` of sound. Anything that is not audio, holds no sound, or breaks
off is :class:`~bot.speech.base.UnreadableAudio`, never a codec's traceback.
"""

from __future__ import annotations

import io
import wave
from dataclasses import dataclass
from fractions import Fraction

import av
import av.error
import numpy as np

from bot.speech.base import AudioTooLarge, UnreadableAudio

MAX_AUDIO_BYTES = 20 * 1024 * 1024
"""Telegram's getFile serves a bot files of up to 20 MB: nothing larger reaches ozlab."""
MAX_AUDIO_SECONDS = 600.0
"""Ten minutes: far beyond a voice note in a conversation, and the recogniser's bound."""
RECOGNISER_RATE = 16_000
"""The rate of the PCM speech recognisers read (PocketSphinx's models, Whisper)."""
VOICE_NOTE_RATE = 48_000
"""Opus's own rate: what it encodes, whatever the input's."""
_OPUS_BITRATE = 32_000  # mono speech: Telegram's own voice notes are 16-32 kb/s


@dataclass(frozen=True, slots=True)
class Pcm:
    """16-bit signed little-endian mono samples at ``rate`` per second."""

    samples: bytes
    rate: int

    @property
    def seconds(self) -> float:
        return len(self.samples) / 2 / self.rate

    def __repr__(self) -> str:  # a voice stays out of logs and tracebacks
        return f"Pcm({self.seconds:.2f} s at {self.rate} Hz)"


def _checked_size(data: bytes) -> None:
    if len(data) > MAX_AUDIO_BYTES:
        raise AudioTooLarge(
            f"the audio is {len(data) / 1024 / 1024:.1f} MB, more than the "
            f"{MAX_AUDIO_BYTES // 1024 // 1024} MB a bot can download from Telegram"
        )
    if not data:
        raise UnreadableAudio("the audio is empty (0 bytes)")


def _failure(error: Exception) -> UnreadableAudio:
    """A codec's complaint as one line (it never holds the audio: PyAV reads from memory)."""
    said = getattr(error, "strerror", None) or str(error).strip() or type(error).__name__
    return UnreadableAudio(f"the audio cannot be read: {said}")


def decode(
    data: bytes, rate: int = RECOGNISER_RATE, *, max_seconds: float = MAX_AUDIO_SECONDS
) -> Pcm:
    """Any audio FFmpeg reads (OGG/Opus, MP3, M4A, WAV…) as mono PCM at ``rate``; longer
    than ``max_seconds``: :class:`AudioTooLarge`, found before the rest is decoded."""
    _checked_size(data)
    limit = int(max_seconds * rate) * 2
    chunks: list[bytes] = []
    size = 0
    try:
        with av.open(io.BytesIO(data), mode="r") as container:
            if not container.streams.audio:
                raise UnreadableAudio("the file holds no audio stream")
            resampler = av.AudioResampler(format="s16", layout="mono", rate=rate)
            for frame in container.decode(audio=0):
                for out in resampler.resample(frame):
                    chunks.append(out.to_ndarray().tobytes())
                    size += len(chunks[-1])
                if size > limit:
                    raise AudioTooLarge(
                        f"the audio is longer than {max_seconds:g} s, the most ozlab transcribes"
                    )
            for out in resampler.resample(None):
                chunks.append(out.to_ndarray().tobytes())
    except UnreadableAudio:
        raise
    except (av.error.FFmpegError, ValueError, EOFError, IndexError) as error:
        raise _failure(error) from None
    samples = b"".join(chunks)
    if not samples:
        raise UnreadableAudio("the audio holds no sound (no samples decoded)")
    return Pcm(samples, rate)


def duration(data: bytes) -> float:
    """How long the audio lasts, in seconds, as its container says or, failing that, as
    decoding it finds."""
    _checked_size(data)
    try:
        with av.open(io.BytesIO(data), mode="r") as container:
            if not container.streams.audio:
                raise UnreadableAudio("the file holds no audio stream")
            if container.duration is not None and container.duration > 0:
                return float(container.duration / av.time_base)
    except UnreadableAudio:
        raise
    except (av.error.FFmpegError, ValueError, EOFError, IndexError) as error:
        raise _failure(error) from None
    return decode(data).seconds


def is_voice_note(data: bytes) -> bool:
    """Whether the audio is already what sendVoice wants: Opus in an OGG container."""
    _checked_size(data)
    try:
        with av.open(io.BytesIO(data), mode="r") as container:
            audio = container.streams.audio
            return container.format.name == "ogg" and bool(audio) and audio[0].codec.name == "opus"
    except (av.error.FFmpegError, ValueError, EOFError, IndexError) as error:
        raise _failure(error) from None


def wav(pcm: Pcm) -> bytes:
    """The PCM in a WAV file: what every transcription server reads, whisper.cpp's without
    an ffmpeg of its own included."""
    out = io.BytesIO()
    with wave.open(out, "wb") as file:
        file.setnchannels(1)
        file.setsampwidth(2)
        file.setframerate(pcm.rate)
        file.writeframes(pcm.samples)
    return out.getvalue()


def encode_voice_note(pcm: Pcm) -> bytes:
    """Mono PCM as a voice note: Opus in an OGG container, as Telegram's own."""
    if not pcm.samples:
        raise UnreadableAudio("there is no sound to encode (0 samples)")
    out = io.BytesIO()
    with av.open(out, mode="w", format="ogg") as container:
        stream = container.add_stream("libopus", rate=VOICE_NOTE_RATE, layout="mono")
        stream.bit_rate = _OPUS_BITRATE
        samples = np.frombuffer(pcm.samples, dtype="<i2", count=len(pcm.samples) // 2)
        frame = av.AudioFrame.from_ndarray(samples.reshape(1, -1), format="s16", layout="mono")
        frame.sample_rate = pcm.rate
        frame.time_base = Fraction(1, pcm.rate)
        frame.pts = 0
        resampler = av.AudioResampler(format="s16", layout="mono", rate=VOICE_NOTE_RATE)
        for resampled in [*resampler.resample(frame), *resampler.resample(None)]:
            resampled.pts = None
            for packet in stream.encode(resampled):
                container.mux(packet)
        for packet in stream.encode(None):
            container.mux(packet)
    return out.getvalue()


def as_voice_note(data: bytes) -> tuple[bytes, float]:
    """Any audio as a voice note, with its duration: kept as it is when it already is one
    (an OpenAI-compatible server's ``opus``), else decoded and encoded again (espeak-ng's
    WAV, a server that answered in MP3)."""
    if is_voice_note(data):
        return data, duration(data)
    pcm = decode(data, rate=VOICE_NOTE_RATE)
    return encode_voice_note(pcm), pcm.seconds
