"""A hint instead of progress: the sentence that tells a participant what to do, and the
event that records that they needed it (where a study confuses people, for the pilot
report). Pure: effects only."""

from __future__ import annotations

from bot.engine import effects as fx
from bot.vocabulary import EventKind, Hint


def hinted(
    hint: Hint, sentence: str, session_id: str | None = None, **data: object
) -> list[fx.Effect]:
    """Record the hint (what kind, and what was sent where it says) and send it."""
    given = {key: value for key, value in data.items() if value is not None}
    return [
        fx.RecordEvent(EventKind.HINTED, session_id, {"hint": hint.value, **given}),
        fx.Send(sentence),
    ]
