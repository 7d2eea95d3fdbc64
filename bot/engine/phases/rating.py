"""A rating task: rows of material (a meaning representation and an utterance, say) shown
one after another, each rated with the scenario's questionnaires; the last row ends it."""

from __future__ import annotations

from dataclasses import replace

from bot.core.vocabulary import EndReason, Moment
from bot.engine import effects as fx
from bot.engine import events as ev
from bot.engine import questionnaire, task
from bot.engine.common import Phase, Result, Transition, scenario_of
from bot.engine.context import Context
from bot.engine.journey import Journey
from scenarios.models import StudyBundle

TRANSITIONS = (Transition(Phase.RATING, Phase.RATING, "answer about a row / next row"),)


def enter(bundle: StudyBundle, journey: Journey, index: int, now: float) -> Result:
    journey, effects = task.open_session(bundle, journey, index, now)
    new, more = _row(bundle, journey, 0, now)
    return new, effects + more


def _row(bundle: StudyBundle, journey: Journey, index: int, now: float) -> Result:
    """Show row ``index`` and ask its questionnaires; after the last row the task ends."""
    scenario = scenario_of(bundle, journey)
    rows = bundle.stimuli.get(scenario.id, ())
    if index >= len(rows):
        return task.end_task(bundle, journey, EndReason.COMPLETED, True, Phase.RATING)
    row = rows[index]
    template = scenario.stimulus_template or "\n".join(f"{k}: {{{k}}}" for k in row.fields)
    shown = template.format_map(row.fields)
    journey = replace(journey, stimulus_index=index)
    new, effects = questionnaire.begin(
        bundle,
        journey,
        Moment.RATING,
        scenario.rate_with,
        journey.session_id,
        now,
        _next_row(bundle, now),
        stimulus_id=row.id,
    )
    counter = f"({index + 1}/{len(rows)})\n\n"
    return new, [fx.Send(counter + shown), *effects]


def _next_row(bundle: StudyBundle, now: float) -> questionnaire.After:
    """What follows a row's last item: the next row (or the end of the task)."""

    def after(rated: Journey, _ineligible: bool) -> Result:
        return _row(bundle, rated, rated.stimulus_index + 1, now)

    return after


def on_event(ctx: Context, journey: Journey, event: ev.Event, now: float) -> Result:
    return questionnaire.on_event(ctx.bundle, journey, event, now, _next_row(ctx.bundle, now))
