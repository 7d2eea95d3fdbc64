"""The session flow: ``step(bundle, participant, journey, event, now, context) -> Step``.

A pure function: the same state, event and context give the same new state and effects.
Telegram, SQL, systems and the clock live outside and talk to it only through events,
effects and the ``Context`` (see ``flow.mmd``, generated from the phase declarations).
This module dispatches an event to the participant's phase and lets the progression move
them on when a phase ends; the phases themselves live in ``phases/``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace

from bot.core.vocabulary import CommandOutcome, EventKind, Hint, Moment, SessionState
from bot.engine import effects as fx
from bot.engine import events as ev
from bot.engine import helping, progression, recruitment, withdrawal, wizard
from bot.engine.common import (
    Doing,
    PhaseOver,
    Result,
    drop_keyboards,
    on_screen,
    stale_tap,
    texts_of,
)
from bot.engine.context import Context
from bot.engine.hints import asked_now, hinted
from bot.engine.journey import Journey, Keyboard, Stage
from bot.engine.phases import (
    assignment,
    closing,
    consent,
    dialogue,
    post_study,
    post_task,
    rating,
    screening,
)
from scenarios.models import StudyBundle

Handler = Callable[[Context, Journey, ev.Event, float], Result]


@dataclass(frozen=True)
class Step:
    journey: Journey | None
    effects: tuple[fx.Effect, ...] = ()


def step(
    bundle: StudyBundle,
    participant: str,
    journey: Journey | None,
    event: ev.Event,
    now: float,
    context: Context | None = None,
) -> Step:
    ctx = context if context is not None else Context(bundle)
    # An old or forged tap (not on a live message with that button): answered, no change.
    if isinstance(event, ev.ButtonTapped) and journey and not on_screen(journey, event):
        return Step(journey, tuple(_effects(stale_tap(bundle, journey)[1])))
    if withdrawal.concerns(event):  # in every phase, before the phase sees it
        after, effects = withdrawal.on_event(bundle, journey, event)
        return Step(after, tuple(effects))
    if isinstance(event, ev.HelpCommand):  # answered alike in every phase, changes nothing
        return Step(journey, (fx.Send(helping.where_they_stand(bundle, journey)),))
    if journey is None:
        if isinstance(event, ev.WizardCommand):  # nobody there any more
            expired = fx.RecordCommand(event.command_id, CommandOutcome.EXPIRED)
            return Step(None, (expired,))
        new, doings = consent.first_contact(ctx, participant, event, now)
        if new is None:
            return Step(None, tuple(_effects(doings)))
        return _settle(ctx, new, doings, now)
    if isinstance(event, ev.WizardCommand):
        return _settle(ctx, *wizard.on_command(ctx, journey, event, now), now)
    if isinstance(event, ev.KeyboardShown):
        keyboard = Keyboard(event.until, event.message_id, event.data, event.resent)
        shown = (*journey.keyboards, keyboard)
        return Step(journey.evolve(keyboards=shown))
    if isinstance(event, ev.ReplySpoken):  # whatever phase the reply led to
        return Step(*_spoken(journey, event))
    if isinstance(event, ev.UnknownCommand):
        if journey.stage is Stage.DIALOGUE and bundle.study.systems_take_commands:
            event = ev.TextReceived(event.text)
        else:
            texts = texts_of(bundle, journey)
            agreed = journey.stage not in (Stage.CONSENT, Stage.DECLINED)
            sentence = texts.unknown_command if agreed else texts.unknown_command_consent
            answer = hinted(
                Hint.UNKNOWN_COMMAND,
                sentence,
                journey.current_session,
                **asked_now(bundle, journey),
                text=event.text if agreed else None,  # kept only under their consent
            )
            return Step(journey.touched(now), tuple(answer))
    if isinstance(event, ev.MediaReceived) and journey.stage is not Stage.DIALOGUE:
        event = ev.UnsupportedReceived(event.medium.kind)  # files go only to a dialogue
    resumed: list[Doing] = []
    if isinstance(event, ev.StartCommand) and event.platform_key is not None:
        journey, bound = recruitment.bind(bundle, texts_of(bundle, journey), journey, event)
        resumed += bound
        event = replace(event, platform_key=None, platform_tag=None)
    if isinstance(event, ev.PARTICIPANT_EVENTS):
        if journey.abandoned and journey.stage in (Stage.DIALOGUE, Stage.QUESTIONNAIRE):
            resumed.append(fx.RecordEvent(EventKind.RESUMED, journey.current_session))
            resumed.append(fx.SetSessionState(journey.session_id, SessionState(journey.stage)))
        journey = journey.touched(now)
    new, doings = _handler(journey)(ctx, journey, event, now)
    return _settle(ctx, new, resumed + doings, now)


def _spoken(journey: Journey, event: ev.ReplySpoken) -> tuple[Journey, tuple[fx.Effect, ...]]:
    """A spoken reply went out: its buttons count from now on, and how it was spoken is
    recorded (or that the text went instead)."""
    if event.message_id is not None and event.until is not None:
        keyboard = Keyboard(event.until, event.message_id, event.data)
        journey = journey.evolve(keyboards=(*journey.keyboards, keyboard))
    data = {
        "turn": journey.turns,
        "speak_ms": round(event.speak_ms, 3),
        "engine": event.engine,
        "model": event.model,
        "failed": event.failed,
    }
    return journey, (fx.RecordEvent(EventKind.REPLY_SPOKEN, journey.current_session, data),)


def _settle(ctx: Context, journey: Journey, doings: list[Doing], now: float) -> Step:
    """Carry the participant through every phase that ends in this step."""
    effects: list[fx.Effect] = []
    while doings:
        ended = doings[-1] if isinstance(doings[-1], PhaseOver) else None
        effects += _effects(doings[:-1] if ended else doings)
        if ended is None:
            break
        journey, removed = drop_keyboards(journey)  # the phase's buttons mean nothing now
        effects += _effects(removed)
        journey, doings = progression.after(ctx, journey, ended, now)
    return Step(journey, tuple(effects))


def _effects(doings: list[Doing]) -> list[fx.Effect]:
    found = [d for d in doings if not isinstance(d, PhaseOver)]
    assert len(found) == len(doings), "PhaseOver is only ever the last of a phase's effects"
    return found


def _handler(journey: Journey) -> Handler:
    if journey.stage is Stage.QUESTIONNAIRE:
        assert journey.survey is not None
        return _QUESTIONNAIRES[journey.survey.moment]
    return _STAGES[journey.stage]


_STAGES: dict[Stage, Handler] = {
    Stage.CONSENT: consent.on_event,
    Stage.DECLINED: consent.on_event,
    Stage.ASSIGNING: assignment.on_event,
    Stage.HELD: assignment.on_event,
    Stage.DIALOGUE: dialogue.on_event,
    Stage.FINISHED: closing.on_event,
    Stage.CLOSED: closing.on_event,
    Stage.INELIGIBLE: closing.on_event,
}

_QUESTIONNAIRES: dict[Moment, Handler] = {
    Moment.SCREENING: screening.on_event,
    Moment.POST_TASK: post_task.on_event,
    Moment.POST_STUDY: post_study.on_event,
    Moment.RATING: rating.on_event,
}


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
