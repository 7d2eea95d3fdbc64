"""Screening: questionnaires before the study whose ``eligible_if`` decides who takes part."""

from __future__ import annotations

from bot.core.vocabulary import Moment
from bot.engine import events as ev
from bot.engine import questionnaire
from bot.engine.common import Phase, Result, Transition, over
from bot.engine.context import Context
from bot.engine.journey import Journey
from scenarios.models import StudyBundle

TRANSITIONS = (Transition(Phase.SCREENING, Phase.SCREENING, "answer / RecordResponse"),)


def _after(journey: Journey, ineligible: bool) -> Result:
    return journey, over(Phase.SCREENING, ineligible=ineligible)


def enter(bundle: StudyBundle, journey: Journey, now: float) -> Result:
    instruments = bundle.study.screening
    return questionnaire.begin(bundle, journey, Moment.SCREENING, instruments, None, now, _after)


def on_event(ctx: Context, journey: Journey, event: ev.Event, now: float) -> Result:
    return questionnaire.on_event(ctx.bundle, journey, event, now, _after)
