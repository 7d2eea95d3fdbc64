"""The session flow: ``step(bundle, participant, journey, event, now) -> Step``.

A pure function: the same state and event give the same new state and effects. Telegram,
SQL, systems and the clock live outside and talk to it only through events and effects
(see ``flow.mmd`` for the diagram). This module dispatches on the participant's stage and
handles consent; ``dialogue`` and ``questioning`` handle the rest.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from bot.engine import dialogue, questioning, wizard
from bot.engine import effects as fx
from bot.engine import events as ev
from bot.engine.common import (
    CONSENT_NO,
    CONSENT_YES,
    PARTICIPANT_EVENTS,
    Result,
    current_session,
    stale_tap,
    texts_of,
)
from bot.engine.journey import Journey, Stage, Task
from scenarios.models import StudyBundle


@dataclass(frozen=True)
class Step:
    journey: Journey | None
    effects: tuple[fx.Effect, ...] = ()


def step(
    bundle: StudyBundle, participant: str, journey: Journey | None, event: ev.Event, now: float
) -> Step:
    if journey is None:
        if isinstance(event, ev.WizardCommand):  # nobody there any more
            return Step(None, (fx.RecordCommand(event.command_id, "expired"),))
        return _first_contact(bundle, participant, event, now)
    if isinstance(event, ev.WizardCommand):
        new, done = wizard.on_command(bundle, journey, event, now)
        return Step(new, tuple(done))
    effects: list[fx.Effect] = []
    if isinstance(event, PARTICIPANT_EVENTS):
        if journey.abandoned and journey.stage in (Stage.DIALOGUE, Stage.QUESTIONNAIRE):
            effects.append(fx.RecordEvent("resumed", current_session(journey)))
            effects.append(fx.SetSessionState(journey.session_id, journey.stage.value))
        journey = journey.touched(now)
    handler = _HANDLERS[journey.stage]
    new, more = handler(bundle, journey, event, now)
    return Step(new, (*effects, *more))


def next_deadline(bundle: StudyBundle, journey: Journey) -> float | None:
    """When the clock next matters to this participant, so the driver knows when to tick."""
    if journey.waiting is not None:
        return journey.waiting.auto_send_at
    if journey.stage not in (Stage.DIALOGUE, Stage.QUESTIONNAIRE) or journey.pending_message:
        return None
    timing = bundle.study.timing
    times = []
    if not journey.reminded:
        times.append(journey.last_activity_at + timing.reminder_after)
    if not journey.abandoned:
        times.append(journey.last_activity_at + timing.abandon_after)
    if journey.stage is Stage.DIALOGUE:
        limit = bundle.scenario(journey.task.scenario_id).time_limit
        if limit is not None:
            times.append(journey.session_started_at + limit)
    return min(times) if times else None


def _consent_messages(bundle: StudyBundle, journey: Journey) -> list[fx.Effect]:
    texts = texts_of(bundle, journey)
    buttons = (((texts.consent_accept, CONSENT_YES),), ((texts.consent_decline, CONSENT_NO),))
    return [fx.Send(texts.welcome), fx.Send(texts.consent, buttons)]


def _first_contact(bundle: StudyBundle, participant: str, event: ev.Event, now: float) -> Step:
    texts = texts_of(bundle, None)
    if isinstance(event, ev.ButtonTapped):
        return Step(None, (fx.Toast(), fx.Send(texts.invite_required)))
    if not isinstance(event, PARTICIPANT_EVENTS):
        return Step(None)
    start = event if isinstance(event, ev.StartCommand) else ev.StartCommand()
    journey = Journey(
        participant, Stage.CONSENT, started_at=now, last_activity_at=now, language=start.language
    )
    texts = texts_of(bundle, journey)
    codes = bundle.study.invite_codes
    if codes and start.code not in codes:
        return Step(None, (fx.Send(texts.invite_invalid if start.code else texts.invite_required),))
    return Step(journey, tuple(_consent_messages(bundle, journey)))


def _on_consent(bundle: StudyBundle, journey: Journey, event: ev.Event, now: float) -> Result:
    texts = texts_of(bundle, journey)
    if isinstance(event, ev.ButtonTapped):
        if event.data == CONSENT_YES:
            accepted: list[fx.Effect] = [fx.Toast(), fx.RecordConsent("accepted")]
            if bundle.study.screening:
                new, more = questioning.begin(
                    bundle, journey, "screening", bundle.study.screening, None, now
                )
                return new, accepted + more
            return replace(journey, stage=Stage.ASSIGNING), [*accepted, fx.AssignTasks()]
        if event.data == CONSENT_NO:
            return replace(journey, stage=Stage.DECLINED), [
                fx.Toast(),
                fx.RecordConsent("declined"),
                fx.Send(texts.declined),
            ]
        return stale_tap(bundle, journey)
    if isinstance(event, ev.StartCommand):
        return journey, _consent_messages(bundle, journey)
    if isinstance(event, PARTICIPANT_EVENTS):
        return journey, [fx.Send(texts.consent_pending)]
    return journey, []


def _on_declined(bundle: StudyBundle, journey: Journey, event: ev.Event, now: float) -> Result:
    if isinstance(event, ev.StartCommand):
        return replace(journey, stage=Stage.CONSENT), _consent_messages(bundle, journey)
    if isinstance(event, ev.ButtonTapped):
        return stale_tap(bundle, journey)
    if isinstance(event, PARTICIPANT_EVENTS):
        return journey, [fx.Send(texts_of(bundle, journey).declined_before)]
    return journey, []


def _on_assigning(bundle: StudyBundle, journey: Journey, event: ev.Event, now: float) -> Result:
    if isinstance(event, ev.TasksAssigned):
        tasks = tuple(Task(scenario, system) for scenario, system in event.tasks)
        assigned = replace(journey, tasks=tasks, design=event.design, seed=event.seed)
        if bundle.study.hold_after_consent:
            # Lab studies: the experimenter starts the session when the room is ready.
            held = replace(assigned, stage=Stage.HELD)
            return held, [fx.RecordEvent("held"), fx.Send(texts_of(bundle, held).held)]
        return dialogue.start_task(bundle, assigned, 0, now)
    if isinstance(event, ev.Recovered):
        return journey, [fx.AssignTasks()]
    if isinstance(event, ev.ButtonTapped):
        return stale_tap(bundle, journey)
    return journey, []


def _on_held(bundle: StudyBundle, journey: Journey, event: ev.Event, now: float) -> Result:
    if isinstance(event, ev.ButtonTapped):
        return stale_tap(bundle, journey)
    if isinstance(event, PARTICIPANT_EVENTS):
        return journey, [fx.Send(texts_of(bundle, journey).held)]
    return journey, []


def _on_over(bundle: StudyBundle, journey: Journey, event: ev.Event, now: float) -> Result:
    """Finished, closed or screened out: nothing changes, but every message gets an answer."""
    texts = texts_of(bundle, journey)
    if isinstance(event, ev.ButtonTapped):
        return stale_tap(bundle, journey)
    if isinstance(event, PARTICIPANT_EVENTS):
        answer = {
            Stage.CLOSED: texts.abandoned_closed,
            Stage.INELIGIBLE: texts.not_eligible,
        }.get(journey.stage, texts.finished)
        return journey, [fx.Send(answer)]
    return journey, []


_HANDLERS = {
    Stage.CONSENT: _on_consent,
    Stage.DECLINED: _on_declined,
    Stage.ASSIGNING: _on_assigning,
    Stage.DIALOGUE: dialogue.on_dialogue,
    Stage.QUESTIONNAIRE: questioning.on_questionnaire,
    Stage.FINISHED: _on_over,
    Stage.CLOSED: _on_over,
    Stage.INELIGIBLE: _on_over,
    Stage.HELD: _on_held,
}
