"""Speech engines: a participant's voice note as text, a system's reply as a voice note.

- :mod:`bot.speech.base`: the contracts (:class:`Transcriber`, :class:`Speaker`), their
  results and failures;
- :mod:`bot.speech.audio`: decoding and encoding with PyAV (OGG/Opus, 16 kHz PCM);
- :mod:`bot.speech.sphinx`: PocketSphinx on this machine, in a process of its own;
- :mod:`bot.speech.espeak`: espeak-ng on this machine;
- :mod:`bot.speech.openai`: OpenAI-compatible servers (``/v1/audio/transcriptions``,
  ``/v1/audio/speech``);
- :mod:`bot.speech.speaking`: what every speaker does (the text it may speak, its reply);
- :mod:`bot.speech.engines`: an engine from plain settings (what a study file names).

Nothing here logs audio, text or transcripts: a voice is biometric data.
"""

from bot.speech.base import (
    AudioTooLarge,
    Speaker,
    SpeechFailure,
    SpeechTimeout,
    SpokenReply,
    Transcriber,
    Transcript,
    UnreadableAudio,
)

__all__ = [
    "AudioTooLarge",
    "Speaker",
    "SpeechFailure",
    "SpeechTimeout",
    "SpokenReply",
    "Transcriber",
    "Transcript",
    "UnreadableAudio",
]
