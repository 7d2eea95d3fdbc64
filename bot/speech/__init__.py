"""Speech engines: a participant's voice note as text, a system's reply as a voice note.

- :mod:`bot.speech.base`: how an engine fails (the contracts it keeps, ``Transcriber`` and
  ``Speaker``, and their results are the seam in :mod:`bot.core.media`);
- :mod:`bot.speech.audio`: decoding and encoding with PyAV (OGG/Opus, 16 kHz PCM);
- :mod:`bot.speech.sphinx`: PocketSphinx on this machine, in a process of its own;
- :mod:`bot.speech.espeak`: espeak-ng on this machine;
- :mod:`bot.speech.openai`: OpenAI-compatible servers (``/v1/audio/transcriptions``,
  ``/v1/audio/speech``);
- :mod:`bot.speech.speaking`: what every speaker does (the text it may speak, its reply);
- :mod:`bot.speech.engines`: an engine from what the study file says (``speech``).

Nothing here logs audio, text or transcripts: a voice is biometric data.
"""

from bot.speech.base import AudioTooLarge, SpeechFailure, SpeechTimeout, UnreadableAudio

__all__ = ["AudioTooLarge", "SpeechFailure", "SpeechTimeout", "UnreadableAudio"]
