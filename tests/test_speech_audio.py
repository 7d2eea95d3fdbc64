"""Audio in and out with PyAV: voice notes decoded for a recogniser, replies encoded as
voice notes, and audio that cannot be read refused with one clear line."""

from __future__ import annotations

import io
import wave

import pytest

from bot.speech import audio
from bot.speech.base import AudioTooLarge, UnreadableAudio
from tests.speech_support import spoken_wav, tone

SILENT_WAV = (  # a WAV header announcing 0 samples
    b"RIFF$\x00\x00\x00WAVEfmt \x10\x00\x00\x00\x01\x00\x01\x00\x80>\x00\x00"
    b"\x00}\x00\x00\x02\x00\x10\x00data\x00\x00\x00\x00"
)


def test_a_voice_note_decodes_to_16_khz_mono_pcm() -> None:
    note = tone(3.0)
    pcm = audio.decode(note)
    assert pcm.rate == 16_000
    assert pcm.seconds == pytest.approx(3.0, abs=0.05)
    assert len(pcm.samples) % 2 == 0
    assert (
        max(
            abs(int.from_bytes(pcm.samples[i : i + 2], "little", signed=True))
            for i in range(0, 32_000, 2)
        )
        > 4000
    )  # the tone, not silence
    assert repr(pcm) == f"Pcm({pcm.seconds:.2f} s at 16000 Hz)"


@pytest.mark.parametrize(
    ("container", "codec"),
    [
        ("wav", "pcm_s16le"),
        ("mp3", "libmp3lame"),
        ("mp4", "aac"),
        ("flac", "flac"),
        ("webm", "libopus"),
    ],
)
def test_other_audio_a_participant_sends_decodes_too(container: str, codec: str) -> None:
    data = tone(1.0, container=container, codec=codec)
    assert audio.decode(data).seconds == pytest.approx(1.0, abs=0.06)
    assert audio.duration(data) == pytest.approx(1.0, abs=0.06)
    assert not audio.is_voice_note(data)


def test_espeak_ngs_wav_becomes_a_voice_note_of_the_same_length() -> None:
    wav = spoken_wav("the museum opens at nine on sundays")
    note, seconds = audio.as_voice_note(wav)
    assert audio.is_voice_note(note)
    assert seconds == pytest.approx(audio.duration(wav), abs=0.03)
    assert audio.duration(note) == pytest.approx(seconds, abs=0.03)
    assert len(note) < len(wav) / 4  # Opus at 32 kb/s, not PCM in a different box


def test_a_voice_note_is_kept_as_it_is() -> None:
    note = tone(1.0)
    assert audio.as_voice_note(note) == (note, audio.duration(note))


@pytest.mark.parametrize(
    ("data", "said"),
    [
        (b"", "the audio is empty (0 bytes)"),
        (b"\x13\x37 not a voice" * 9, "the audio cannot be read: Invalid data found"),
        (b"GIF89a\x01\x00\x01\x00\x00\x00\x00;", "the file holds no audio stream"),
        (tone(2.0)[:100], "the audio cannot be read: "),  # cut off in its first page
        (SILENT_WAV, "the audio holds no sound (no samples decoded)"),
    ],
    ids=["empty", "noise", "a picture", "cut off", "no samples"],  # OGG's serial is random
)
@pytest.mark.parametrize(
    "read", [audio.decode, audio.duration, audio.as_voice_note], ids=lambda f: f.__name__
)
def test_what_is_not_audio_is_one_clear_line(data: bytes, said: str, read: object) -> None:
    with pytest.raises(UnreadableAudio) as raised:
        read(data)  # type: ignore[operator]
    assert str(raised.value).startswith(said)
    assert "\n" not in str(raised.value)
    assert raised.value.__cause__ is None  # no codec's traceback rides along
    assert raised.value.__context__ is None or raised.value.__suppress_context__


def test_more_than_telegram_lets_a_bot_download_is_refused_unread() -> None:
    """20 MB is getFile's limit for bots: a larger file never reaches ozlab, and a larger
    buffer is refused before a codec reads a byte of it. 20 MB of 16 kHz WAV is 655 s of
    sound: read, but too long to decode."""
    at_the_limit = io.BytesIO()
    with wave.open(at_the_limit, "wb") as file:
        file.setnchannels(1)
        file.setsampwidth(2)
        file.setframerate(16_000)
        file.writeframes(b"\0" * (audio.MAX_AUDIO_BYTES - 44))
    data = at_the_limit.getvalue()
    assert len(data) == audio.MAX_AUDIO_BYTES
    assert audio.duration(data) == pytest.approx(655.36, abs=0.01)
    with pytest.raises(AudioTooLarge, match=r"^the audio is longer than 600 s"):
        audio.decode(data)
    for read in (audio.decode, audio.duration, audio.is_voice_note):
        with pytest.raises(AudioTooLarge, match=r"^the audio is 20\.0 MB, more than the 20 MB"):
            read(data + b"\0")


def test_sound_longer_than_the_limit_is_refused_while_decoding() -> None:
    with pytest.raises(AudioTooLarge, match="longer than 2 s"):
        audio.decode(tone(3.0), max_seconds=2.0)
    assert audio.decode(tone(1.9), max_seconds=2.0).seconds == pytest.approx(1.9, abs=0.05)


def test_no_samples_cannot_be_encoded() -> None:
    with pytest.raises(UnreadableAudio, match="no sound to encode"):
        audio.encode_voice_note(audio.Pcm(b"", 16_000))
