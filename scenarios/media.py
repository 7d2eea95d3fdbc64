"""Voice notes and pictures in a study: what a dialogue task lets through, and the speech
engines that turn a voice note into words and a reply into a voice note.

A voice is biometric data: unless ``speech.keep_audio`` says otherwise, a voice note is
transcribed and its audio discarded. Keeping it needs the sentence ``texts.audio_kept_note``,
written by the study and added by ozlab to the consent text. Secrets are never written here:
an engine names the environment variable that holds its key.
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from bot.core.word_error_rate import words
from questionnaires.models import error_at
from scenarios.durations import Seconds
from scenarios.systems import check_env_name, check_url

MediaKind = Literal["voice", "photo"]
"""What besides text a message may carry: a voice note or a photo."""

LARGEST_FILE_MB = 20.0
"""The largest file a bot may download from Telegram (``getFile``), in megabytes."""


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, defer_build=True)


class TaskMedia(_Model):
    """What a dialogue task's messages may carry besides text; by default, text only (a
    voice note or a photo is answered with a request to type)."""

    participant_sends: tuple[MediaKind, ...] = ()
    """What a participant may send: ``voice`` notes, ``photo``s. Anything else (a video
    note, a sticker, a file, a voice note or photo not listed) gets a polite answer and the
    participant keeps their place."""
    system_returns: tuple[MediaKind, ...] = ()
    """What the participant may get back: ``voice``, the system's replies spoken (with the
    study's ``speech.text_to_speech``) and sent as voice notes; ``photo``, pictures the system
    returns, sent as photos with their caption."""
    system_receives: Literal["transcript", "media", "both"] = "transcript"
    """What the system gets of a voice note or photo: ``transcript``, the words of a voice
    note (for text systems; a photo has none, so a task that takes photos sends ``media`` or
    ``both``); ``media``, the audio or the image itself (with a photo's caption); ``both``."""
    show_transcript: bool = False
    """Show the participant what was heard ("I heard: …") with a button to type it again
    instead."""
    text_beside: bool = False
    """With spoken replies: the reply's text goes with its voice note, as the caption."""
    largest_file_mb: float = Field(default=LARGEST_FILE_MB, gt=0, le=LARGEST_FILE_MB)
    """The largest voice note or photo taken, in megabytes (20 at most: what Telegram lets
    a bot download); a larger one gets a polite answer."""
    reference_transcripts: tuple[str, ...] = ()
    """What participants say in this task, in order, where they read a stimulus aloud:
    a session's first voice note is compared with the first sentence, its second with the
    second, for the report's word error rate per system; voice notes beyond the list are
    not compared. Write numbers as the engine writes them (``nine`` is not ``9``)."""

    @model_validator(mode="after")
    def _consistent(self) -> TaskMedia:
        problems: list[tuple[tuple[str | int, ...], str, object]] = []
        for name in ("participant_sends", "system_returns"):
            kinds: tuple[str, ...] = getattr(self, name)
            if len(set(kinds)) < len(kinds):
                problems.append(((name,), "a kind is listed twice", list(kinds)))
        if "photo" in self.participant_sends and self.system_receives == "transcript":
            message = "a photo has no transcript: a task that takes photos sends media or both"
            problems.append((("system_receives",), message, self.system_receives))
        if self.show_transcript and "voice" not in self.participant_sends:
            message = "there is no transcript to show: participants send no voice notes"
            problems.append((("show_transcript",), message, True))
        if self.show_transcript and self.system_receives == "media":
            message = "nothing is transcribed when the system receives only the audio"
            problems.append((("show_transcript",), message, True))
        if self.text_beside and "voice" not in self.system_returns:
            message = "there is no voice note to put the text beside: system_returns lacks voice"
            problems.append((("text_beside",), message, True))
        if self.reference_transcripts and not self.transcribes:
            message = "there is nothing to compare them with: this task transcribes no voice notes"
            problems.append((("reference_transcripts",), message, list(self.reference_transcripts)))
        for index, sentence in enumerate(self.reference_transcripts):
            if not words(sentence):
                problems.append(
                    (("reference_transcripts", index), "a sentence without words", sentence)
                )
        if problems:
            raise error_at("TaskMedia", problems)
        return self

    @property
    def transcribes(self) -> bool:
        """Whether a participant's voice note is turned into words."""
        return "voice" in self.participant_sends and self.system_receives != "media"

    @property
    def speaks(self) -> bool:
        """Whether the system's replies are spoken."""
        return "voice" in self.system_returns


class _Engine(_Model):
    url: str
    """The server's base address; the engine's path (``/v1/audio/…``) is added unless
    already there."""
    url_env: str | None = None
    """An environment variable that, when set, gives the address in place of ``url``."""
    model: str = Field(min_length=1)
    """The model's name as the server knows it."""
    api_key_env: str | None = None
    """The environment variable that holds the API key (never the key itself), sent as
    ``Authorization: Bearer <key>``; none for a local server without a key."""
    timeout: Seconds = 30.0
    """How long one request may take before it counts as failed."""

    _url = field_validator("url")(classmethod(lambda cls, v: check_url(v)))
    _env = field_validator("api_key_env", "url_env")(classmethod(lambda cls, v: check_env_name(v)))


class OpenAISpeechToText(_Engine):
    """A server speaking OpenAI's ``POST /v1/audio/transcriptions`` (whisper.cpp,
    faster-whisper servers, vLLM, hosted APIs)."""

    engine: Literal["openai"]
    """``openai``: an OpenAI-compatible transcription server."""
    language: str | None = Field(default=None, pattern=r"^[a-z]{2,3}$")
    """The language spoken (``en``), sent as a hint; none: the server guesses."""


class PocketSphinxSpeechToText(_Model):
    """PocketSphinx, offline, in the bot's process, with the English model it ships."""

    engine: Literal["pocketsphinx"]
    """``pocketsphinx``: offline recognition, nothing to run beside the bot."""
    language: Literal["en"] = "en"
    """The language spoken: PocketSphinx ships an English model only."""


SpeechToText = Annotated[
    OpenAISpeechToText | PocketSphinxSpeechToText, Field(discriminator="engine")
]
"""How a voice note becomes words."""


class OpenAITextToSpeech(_Engine):
    """A server speaking OpenAI's ``POST /v1/audio/speech``."""

    engine: Literal["openai"]
    """``openai``: an OpenAI-compatible speech server."""
    voice: str = Field(default="alloy", min_length=1)
    """The voice the server speaks with."""


class EspeakTextToSpeech(_Model):
    """espeak-ng, offline, run by the bot (Debian's ``espeak-ng`` package)."""

    engine: Literal["espeak-ng"]
    """``espeak-ng``: offline speech, robotic but always there."""
    voice: str = Field(default="en", min_length=1, pattern=r"^[A-Za-z0-9_+-]+$")
    """espeak-ng's voice (a language such as ``en`` or ``it``, with variants as ``en+f3``)."""
    words_per_minute: int = Field(default=175, ge=80, le=450)
    """How fast it speaks."""


TextToSpeech = Annotated[OpenAITextToSpeech | EspeakTextToSpeech, Field(discriminator="engine")]
"""How a system's reply becomes a voice note."""


class Speech(_Model):
    """The study's speech engines and what it keeps of a voice."""

    speech_to_text: SpeechToText | None = None
    """How participants' voice notes become words, for tasks whose systems receive a
    transcript; none: no task may transcribe."""
    text_to_speech: TextToSpeech | None = None
    """How the systems' replies are spoken, for tasks with spoken replies; none: no task
    may speak."""
    keep_audio: bool = False
    """Keep participants' voice notes as recordings (files readable by the study's owner
    only, erased with the participant's data). By default a voice note is transcribed and
    its audio discarded; keeping it needs ``texts.audio_kept_note``, which ozlab adds to the
    consent text."""
