"""Voice notes and photos in a dialogue task: which are taken, and what becomes of them.

Pure, as the rest of the engine: a file the task takes is fetched (and a voice note
transcribed) by the runner on ``FetchMedia``; anything else, or a file that cannot be had
or read, gets a polite sentence and the participant keeps their place. What a refusal
records is the kind of file and why, never its content.
"""

from __future__ import annotations

from bot.core.conversation import Attachment
from bot.core.media import Medium
from bot.core.vocabulary import EventKind, Hint, MediaProblem
from bot.engine import effects as fx
from bot.engine import events as ev
from bot.engine.callbacks import RetypeTap, encode
from bot.engine.common import Doing, scenario_of, texts_of
from bot.engine.hints import hinted
from bot.engine.journey import Journey
from scenarios.models import StudyBundle, Texts

MEGABYTE = 1024 * 1024
"""Telegram's megabyte (its 20 MB download limit is 20 × 2**20 bytes)."""


def _refused(
    texts: Texts, session: str, medium: Medium, problem: MediaProblem, limit_mb: float
) -> list[Doing]:
    sentence = {
        MediaProblem.TOO_BIG: texts.file_too_big.format(limit=f"{limit_mb:g}"),
        MediaProblem.UNAVAILABLE: texts.media_unavailable,
        MediaProblem.UNREADABLE: texts.media_unreadable,
        MediaProblem.NOT_HEARD: texts.not_heard,
        MediaProblem.NOT_TAKEN: texts.media_not_taken,
    }[problem]
    data = {"kind": medium.kind, "problem": problem.value, "size": medium.size}
    return [fx.RecordEvent(EventKind.MEDIA_REFUSED, session, data), fx.Send(sentence)]


def admit(bundle: StudyBundle, journey: Journey, medium: Medium) -> list[Doing]:
    """A file sent in a dialogue: fetched when the task takes its kind and size."""
    media = scenario_of(bundle, journey).media
    texts = texts_of(bundle, journey)
    session = journey.session_id
    if not media.participant_sends:  # a text-only task, as every task was before media
        return [*hinted(Hint.TEXT_ONLY, texts.text_only, session, sent=medium.kind)]
    if medium.kind not in media.participant_sends:
        return _refused(texts, session, medium, MediaProblem.NOT_TAKEN, media.largest_file_mb)
    largest = int(media.largest_file_mb * MEGABYTE)
    if medium.size is not None and medium.size > largest:
        return _refused(texts, session, medium, MediaProblem.TOO_BIG, media.largest_file_mb)
    transcribe = medium.kind == "voice" and media.transcribes
    return [fx.FetchMedia(medium, transcribe, largest)]


def refusal(bundle: StudyBundle, journey: Journey, event: ev.MediaFetched) -> list[Doing]:
    """What the participant is told when the file could not be had or read (nothing when
    it could)."""
    if event.problem is None:
        return []
    media = scenario_of(bundle, journey).media
    texts = texts_of(bundle, journey)
    return _refused(texts, journey.session_id, event.medium, event.problem, media.largest_file_mb)


def attached(
    bundle: StudyBundle, journey: Journey, event: ev.MediaFetched
) -> tuple[Attachment, ...]:
    """The file itself, for a task whose systems receive media (with its words or not)."""
    if scenario_of(bundle, journey).media.system_receives == "transcript":
        return ()
    medium = event.medium
    mime = medium.mime or ("image/jpeg" if medium.kind == "photo" else "audio/ogg")
    return (Attachment(medium.kind, mime, event.digest),)


def said(event: ev.MediaFetched) -> str:
    """What the participant said with the file, as the transcript of the exchange keeps
    it: the words heard in a voice note, a photo's caption."""
    if event.transcript is not None:
        return event.transcript.text
    return event.medium.caption


def record(bundle: StudyBundle, journey: Journey, event: ev.MediaFetched) -> fx.RecordMedia:
    """The file as the participant's line of the turn it began (``journey`` is as it was
    before that turn): a photo is kept, a voice note only where the study keeps audio."""
    medium = event.medium
    kept = medium.kind != "voice" or bundle.study.speech.keep_audio
    return fx.RecordMedia(
        journey.session_id,
        journey.turns + 1,
        medium,
        event.size,
        event.digest,
        kept,
        event.transcript,
        event.fetch_ms,
        event.transcribe_ms,
    )


def heard(bundle: StudyBundle, journey: Journey, event: ev.MediaFetched) -> list[Doing]:
    """ "I heard: …" with a button for a transcript that is not what was said, where the
    task shows transcripts; the button lasts until the next turn."""
    media = scenario_of(bundle, journey).media
    if not media.show_transcript or event.transcript is None:
        return []
    texts = texts_of(bundle, journey)
    turn = journey.turns + 1
    button = ((texts.retype_button, encode(RetypeTap(turn))),)
    shown = texts.heard.format(transcript=event.transcript.text)
    return [fx.Send(shown, (button,), until=fx.Until.NEXT_TURN)]


def retype(bundle: StudyBundle, journey: Journey, tap: RetypeTap) -> list[Doing]:
    """The transcript was not what they said: recorded with its turn, and they are asked
    to type it."""
    texts = texts_of(bundle, journey)
    data = {"turn": tap.turn}
    return [
        fx.Toast(),
        fx.RecordEvent(EventKind.TRANSCRIPT_DOUBTED, journey.session_id, data),
        fx.Send(texts.retype_prompt),
    ]
