"""What every phase of the study shares: the participant's texts in their language, their
scenario, the answer to an old button, what silence leads to, and how a phase says it is
over (``PhaseOver``: the progression, not the phase, decides what comes next)."""

from __future__ import annotations

from dataclasses import dataclass, replace
from enum import StrEnum

from bot.core.vocabulary import EndReason, EventKind, PaymentStatus, SessionState
from bot.engine import effects as fx
from bot.engine import events as ev
from bot.engine import recruitment
from bot.engine.callbacks import Channel, ConsentTap, FinishTap, SurveyTap, WithdrawTap, encode
from bot.engine.journey import Journey, Keyboard, Stage
from scenarios.models import Scenario, StudyBundle, Texts

CONSENT_YES = encode(ConsentTap(accept=True))
CONSENT_NO = encode(ConsentTap(accept=False))
FINISH = encode(FinishTap())


class Phase(StrEnum):
    """The study's progression, in order (tasks and their questionnaires repeat)."""

    CONSENT = "consent"
    SCREENING = "screening"
    ASSIGNMENT = "assignment"
    DIALOGUE = "dialogue"  # a task: chatting with the system under test
    RATING = "rating"  # a task: rating rows of material, one after another
    POST_TASK = "post_task"
    POST_STUDY = "post_study"
    CLOSING = "closing"


@dataclass(frozen=True)
class PhaseOver:
    """Not an effect for the runner: ``phase`` has ended (the flow strips it and asks the
    progression what follows). Always the last of a phase's effects."""

    phase: Phase
    ineligible: bool = False  # screening: the participant does not take part


@dataclass(frozen=True)
class Transition:
    """One arrow of the flow diagram: from a phase (or a state within one) to another, and
    on what. Phases declare theirs beside their code; ``diagram.py`` draws them all."""

    source: str
    target: str
    label: str = ""


Doing = fx.Effect | PhaseOver
Result = tuple[Journey, list[Doing]]


def over(phase: Phase, *, ineligible: bool = False) -> list[Doing]:
    return [PhaseOver(phase, ineligible)]


def drop_keyboards(journey: Journey, until: fx.Until | None = None) -> Result:
    """Take the buttons off messages whose moment has passed: the phase's (``None``: all
    but a question still waiting for its answer), or those ``until``."""

    def passed(keyboard: Keyboard) -> bool:
        if until is None:
            return keyboard.until is not fx.Until.ANSWERED
        return keyboard.until is until

    gone = [k.message_id for k in journey.keyboards if passed(k)]
    if not gone:
        return journey, []
    kept = tuple(k for k in journey.keyboards if not passed(k))
    return journey.evolve(keyboards=kept), [fx.RemoveButtons(m) for m in gone]


def on_screen(journey: Journey, event: ev.ButtonTapped) -> bool:
    """Whether the tap is on a message the bot sent to this chat with that button, and the
    button still means something: the questionnaire's message, or a keyboard the journey
    keeps. A tap whose message is not known (kept in the inbox by an ozlab from before taps
    carried it) is left to the phase, as it was then; never a withdrawal."""
    tap = event.tap
    tapped = event.message_id
    if tapped is None:
        return not isinstance(tap, WithdrawTap)
    if isinstance(tap, SurveyTap):
        survey = {
            Channel.FRONT: journey.survey,
            Channel.EXCHANGE: journey.exchange_survey,
        }.get(tap.channel)
        return (
            survey is not None
            and survey.message_id is not None
            and _copy_of(tapped, survey.message_id, survey.resent)
        )
    return any(
        _copy_of(tapped, k.message_id, k.resent)
        and (event.data in k.data if k.data is not None else not isinstance(tap, WithdrawTap))
        for k in journey.keyboards
    )


def _copy_of(tapped: int, known: int, resent: bool) -> bool:
    """The tapped message is the one the bot knows, or, where that one went out again after a
    restart, an earlier copy: the bot died before learning its id, and message ids only grow
    in a chat. Its buttons are the same and mean the same (their data says which question)."""
    return tapped == known or (resent and tapped < known)


def texts_of(bundle: StudyBundle, journey: Journey | None) -> Texts:
    """The bot's sentences in the participant's language, where the study offers it."""
    return bundle.texts_for(journey.language if journey else None)


def scenario_of(bundle: StudyBundle, journey: Journey) -> Scenario:
    """The current scenario, its words in the participant's language where translated."""
    return bundle.scenario_in(journey.task.scenario_id, journey.language)


def stale_tap(bundle: StudyBundle, journey: Journey) -> Result:
    return journey, [fx.Toast(texts_of(bundle, journey).already_recorded)]


def time_is_up(bundle: StudyBundle, journey: Journey, now: float) -> bool:
    limit = bundle.scenario(journey.task.scenario_id).time_limit
    return limit is not None and now - journey.session_started_at >= limit


def silence(bundle: StudyBundle, journey: Journey, now: float) -> Result:
    """Tick while waiting for the participant: one reminder, then abandonment."""
    timing = bundle.study.timing
    texts = texts_of(bundle, journey)
    silent_for = now - journey.last_activity_at
    session = journey.current_session
    if not journey.abandoned and silent_for >= timing.abandon_after:
        effects: list[Doing] = [fx.RecordEvent(EventKind.ABANDONED, session)]
        if timing.close_abandoned:
            if journey.stage is Stage.DIALOGUE:
                effects.append(fx.CloseSession(journey.session_id, EndReason.ABANDONED, False))
            effects.append(fx.SetSessionState(journey.session_id, SessionState.ABANDONED))
            journey, removed = drop_keyboards(journey)
            timed_out = recruitment.ending(bundle, texts, PaymentStatus.TIMED_OUT)
            effects += [*removed, fx.Send(texts.abandoned_closed), *timed_out]
            return replace(journey, stage=Stage.CLOSED, abandoned=True), effects
        effects.append(fx.SetSessionState(journey.session_id, SessionState.ABANDONED))
        return replace(journey, abandoned=True, reminded=True), effects
    if not journey.reminded and silent_for >= timing.reminder_after:
        return replace(journey, reminded=True), [
            fx.RecordEvent(EventKind.REMINDED, session),
            fx.Send(texts.reminder),
        ]
    return journey, []
