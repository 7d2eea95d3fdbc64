"""What every part of the session flow shares: the participant's texts in their language,
their scenario, the answer to an old button, and what silence leads to."""

from __future__ import annotations

from dataclasses import replace

from bot.engine import effects as fx
from bot.engine import events as ev
from bot.engine.journey import Journey, Stage
from scenarios.models import Scenario, StudyBundle, Texts

Result = tuple[Journey | None, list[fx.Effect]]

CONSENT_YES = "c:y"
CONSENT_NO = "c:n"
FINISH = "done"
SYSTEM_BUTTON = "sb"

# Events that come from the participant: they end a silence.
PARTICIPANT_EVENTS = (
    ev.StartCommand,
    ev.DoneCommand,
    ev.TextReceived,
    ev.UnsupportedReceived,
    ev.MessageEdited,
    ev.ButtonTapped,
)


def texts_of(bundle: StudyBundle, journey: Journey | None) -> Texts:
    return bundle.study.texts_for(journey.language if journey else None)


def scenario_of(bundle: StudyBundle, journey: Journey) -> Scenario:
    """The current scenario, its words in the participant's language where translated."""
    scenario = bundle.scenario(journey.task.scenario_id)
    code = (journey.language or "").split("-")[0].lower()
    words = scenario.translations.get(code) if code != bundle.study.language else None
    if words is None:
        return scenario
    return scenario.model_copy(update=words.model_dump(exclude_none=True))


def current_session(journey: Journey) -> str | None:
    if journey.stage is Stage.QUESTIONNAIRE and journey.survey is not None:
        return journey.survey.session_id
    return journey.session_id if journey.tasks else None


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
    session = current_session(journey)
    if not journey.abandoned and silent_for >= timing.abandon_after:
        effects: list[fx.Effect] = [fx.RecordEvent("abandoned", session)]
        if timing.close_abandoned:
            if journey.stage is Stage.DIALOGUE:
                effects.append(fx.CloseSession(journey.session_id, "abandoned", False))
            effects.append(fx.SetSessionState(journey.session_id, "abandoned"))
            effects.append(fx.Send(texts.abandoned_closed))
            return replace(journey, stage=Stage.CLOSED, abandoned=True), effects
        effects.append(fx.SetSessionState(journey.session_id, "abandoned"))
        return replace(journey, abandoned=True, reminded=True), effects
    if not journey.reminded and silent_for >= timing.reminder_after:
        return replace(journey, reminded=True), [
            fx.RecordEvent("reminded", session),
            fx.Send(texts.reminder),
        ]
    return journey, []
