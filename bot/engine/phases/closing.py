"""Closing: thanks at the end, the release of a screened-out participant, and the answer to
anyone who writes after the study is over for them (finished, closed or ineligible)."""

from __future__ import annotations

from dataclasses import replace

from bot.engine import effects as fx
from bot.engine import events as ev
from bot.engine.common import Phase, Result, Transition, stale_tap, texts_of
from bot.engine.context import Context
from bot.engine.journey import Journey, Stage
from bot.vocabulary import EventKind
from scenarios.models import StudyBundle

TRANSITIONS = (
    Transition(Phase.CLOSING, Phase.CLOSING, "any message / finished, closed or not eligible"),
)


def finish(bundle: StudyBundle, journey: Journey) -> Result:
    thanks = fx.Send(texts_of(bundle, journey).thanks)
    return replace(journey, stage=Stage.FINISHED), [
        fx.RecordEvent(EventKind.STUDY_COMPLETED),
        thanks,
    ]


def release(bundle: StudyBundle, journey: Journey) -> Result:
    """Screened out: thanked and released."""
    sorry = fx.Send(texts_of(bundle, journey).not_eligible)
    return replace(journey, stage=Stage.INELIGIBLE), [
        fx.RecordEvent(EventKind.NOT_ELIGIBLE),
        sorry,
    ]


def on_event(ctx: Context, journey: Journey, event: ev.Event, now: float) -> Result:
    """Nothing changes, but every message gets an answer."""
    texts = texts_of(ctx.bundle, journey)
    if isinstance(event, ev.ButtonTapped):
        return stale_tap(ctx.bundle, journey)
    if isinstance(event, ev.PARTICIPANT_EVENTS):
        answer = {
            Stage.CLOSED: texts.abandoned_closed,
            Stage.INELIGIBLE: texts.not_eligible,
        }.get(journey.stage, texts.finished)
        return journey, [fx.Send(answer)]
    return journey, []
