"""A hint instead of progress: the sentence that tells a participant what to do, and the
event that records that they needed it (where a study confuses people, for the pilot
report). Pure: effects only.

What the event keeps of the participant's message follows the rules of the exchanges: a
participant's words are stored only once they agreed to take part (a message typed at the
agreement keeps its kind of hint and nothing of what it said), under their pseudonym, and
go with everything else of theirs when they withdraw or are erased. A text too long for its
item keeps its length, not the text, as an answer that long would not have been stored
either; a sticker or photo keeps what kind of message it was, never its content.
"""

from __future__ import annotations

from bot.core.vocabulary import EventKind, Hint
from bot.engine import asking
from bot.engine import effects as fx
from bot.engine.journey import Journey
from scenarios.models import StudyBundle


def hinted(
    hint: Hint, sentence: str, session_id: str | None = None, **data: object
) -> list[fx.Effect]:
    """Record the hint (what kind, and what was sent where it says) and send it."""
    given = {key: value for key, value in data.items() if value is not None}
    return [
        fx.RecordEvent(EventKind.HINTED, session_id, {"hint": hint.value, **given}),
        fx.Send(sentence),
    ]


def asked_now(bundle: StudyBundle, journey: Journey) -> dict[str, object]:
    """The question in front of the participant (questionnaire and item), for a hint's
    event; nothing when no question is open."""
    survey = journey.survey
    if survey is None:
        return {}
    return {
        "questionnaire": asking.questionnaire(bundle, survey).id,
        "item": asking.current_item(bundle, survey).id,
    }
