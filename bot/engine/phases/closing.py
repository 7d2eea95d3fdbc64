"""Closing: thanks at the end, the release of a screened-out participant, and the answer to
anyone who writes after the study is over for them (finished, closed or ineligible)."""

from __future__ import annotations

from dataclasses import replace

from bot.core.vocabulary import EventKind, PaymentStatus
from bot.engine import effects as fx
from bot.engine import events as ev
from bot.engine import recruitment
from bot.engine.common import Phase, Result, Transition, stale_tap, texts_of
from bot.engine.context import Context
from bot.engine.journey import Journey, Stage
from scenarios.models import StudyBundle

TRANSITIONS = (
    Transition(Phase.CLOSING, Phase.CLOSING, "any message / finished, closed or not eligible"),
)


def finish(bundle: StudyBundle, journey: Journey) -> Result:
    """Thanks, and a recruited participant's completion code."""
    texts = texts_of(bundle, journey)
    return replace(journey, stage=Stage.FINISHED), [
        fx.RecordEvent(EventKind.STUDY_COMPLETED),
        fx.Send(texts.thanks),
        *recruitment.ending(bundle, texts, PaymentStatus.COMPLETED),
    ]


def release(bundle: StudyBundle, journey: Journey) -> Result:
    """Screened out: thanked and released (with the platform's code for it, if any)."""
    texts = texts_of(bundle, journey)
    return replace(journey, stage=Stage.INELIGIBLE), [
        fx.RecordEvent(EventKind.NOT_ELIGIBLE),
        fx.Send(texts.not_eligible),
        *recruitment.ending(bundle, texts, PaymentStatus.SCREENED_OUT),
    ]


def on_event(ctx: Context, journey: Journey, event: ev.Event, now: float) -> Result:
    """Nothing changes, but every message gets an answer."""
    texts = texts_of(ctx.bundle, journey)
    if isinstance(event, ev.ButtonTapped):
        return stale_tap(ctx.bundle, journey)
    if isinstance(event, ev.PARTICIPANT_EVENTS):
        answer, status = {
            Stage.CLOSED: (texts.abandoned_closed, PaymentStatus.TIMED_OUT),
            Stage.INELIGIBLE: (texts.not_eligible, PaymentStatus.SCREENED_OUT),
        }.get(journey.stage, (texts.finished, PaymentStatus.COMPLETED))
        return journey, [fx.Send(answer), *recruitment.code_message(ctx.bundle, texts, status)]
    return journey, []
