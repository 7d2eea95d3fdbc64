"""The session flow: ``step(bundle, participant, journey, event, now) -> Step``.

A pure function: the same state and event give the same new state and effects. Telegram,
SQL, systems and the clock live outside and talk to it only through events and effects
(see ``flow.mmd`` for the diagram).
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from bot.engine import effects as fx
from bot.engine import events as ev
from bot.engine.journey import Journey, Stage, Survey, Task
from bot.engine.survey import CONSENT_NO, CONSENT_YES, FINISH, parse_tap, render_item
from bot.systems.base import Conversation, SystemReply, Turn
from questionnaires.models import ScaleItem
from scenarios.models import Scenario, StudyBundle

SUCCESS_EVENT = "task_success"
SYSTEM_BUTTON = "sb"
END_EVENT = "end_dialogue"

# Events that come from the participant: they end a silence.
_PARTICIPANT_EVENTS = (
    ev.StartCommand,
    ev.DoneCommand,
    ev.TextReceived,
    ev.UnsupportedReceived,
    ev.MessageEdited,
    ev.ButtonTapped,
)


@dataclass(frozen=True)
class Step:
    journey: Journey | None
    effects: tuple[fx.Effect, ...] = ()


def step(
    bundle: StudyBundle, participant: str, journey: Journey | None, event: ev.Event, now: float
) -> Step:
    if journey is None:
        return _first_contact(bundle, participant, event, now)
    effects: list[fx.Effect] = []
    if isinstance(event, _PARTICIPANT_EVENTS):
        if journey.abandoned and journey.stage in (Stage.DIALOGUE, Stage.QUESTIONNAIRE):
            effects.append(fx.RecordEvent("resumed", _current_session(journey)))
            effects.append(fx.SetSessionState(journey.session_id, journey.stage.value))
        journey = journey.touched(now)
    handler = _HANDLERS[journey.stage]
    new, more = handler(bundle, journey, event, now)
    return Step(new, (*effects, *more))


def next_deadline(bundle: StudyBundle, journey: Journey) -> float | None:
    """When the clock next matters to this participant, so the driver knows when to tick."""
    if journey.stage not in (Stage.DIALOGUE, Stage.QUESTIONNAIRE) or journey.pending_message:
        return None
    timing = bundle.study.timing
    times = []
    if not journey.reminded:
        times.append(journey.last_activity_at + timing.reminder_after)
    if not journey.abandoned:
        times.append(journey.last_activity_at + timing.abandon_after)
    limit = _scenario(bundle, journey).time_limit if journey.stage is Stage.DIALOGUE else None
    if limit is not None:
        times.append(journey.session_started_at + limit)
    return min(times) if times else None


# --- helpers -------------------------------------------------------------------------

Result = tuple[Journey | None, list[fx.Effect]]


def _scenario(bundle: StudyBundle, journey: Journey) -> Scenario:
    return bundle.scenario(journey.task.scenario_id)


def _current_session(journey: Journey) -> str | None:
    if journey.stage is Stage.QUESTIONNAIRE and journey.survey is not None:
        return journey.survey.session_id
    return journey.session_id if journey.tasks else None


def _consent_messages(bundle: StudyBundle) -> list[fx.Effect]:
    texts = bundle.study.texts
    buttons = (((texts.consent_accept, CONSENT_YES),), ((texts.consent_decline, CONSENT_NO),))
    return [fx.Send(texts.welcome), fx.Send(texts.consent, buttons)]


def _brief(bundle: StudyBundle, journey: Journey) -> fx.Send:
    texts = bundle.study.texts
    scenario = _scenario(bundle, journey)
    body = f"{texts.brief_heading}: {scenario.title}\n\n{scenario.brief}\n\n{texts.brief_footer}"
    return fx.Send(body, (((texts.finish_button, FINISH),),))


def _stale_tap(bundle: StudyBundle, journey: Journey) -> Result:
    return journey, [fx.Toast(bundle.study.texts.already_recorded)]


def _time_is_up(bundle: StudyBundle, journey: Journey, now: float) -> bool:
    limit = _scenario(bundle, journey).time_limit
    return limit is not None and now - journey.session_started_at >= limit


def _silence(bundle: StudyBundle, journey: Journey, now: float) -> Result:
    """Tick while waiting for the participant: one reminder, then abandonment."""
    timing = bundle.study.timing
    texts = bundle.study.texts
    silent_for = now - journey.last_activity_at
    session = _current_session(journey)
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


# --- first contact and consent ---------------------------------------------------------


def _first_contact(bundle: StudyBundle, participant: str, event: ev.Event, now: float) -> Step:
    texts = bundle.study.texts
    if isinstance(event, ev.ButtonTapped):
        return Step(None, (fx.Toast(), fx.Send(texts.invite_required)))
    if not isinstance(event, _PARTICIPANT_EVENTS):
        return Step(None)
    code = event.code if isinstance(event, ev.StartCommand) else None
    codes = bundle.study.invite_codes
    if codes and code not in codes:
        return Step(None, (fx.Send(texts.invite_invalid if code else texts.invite_required),))
    journey = Journey(participant, Stage.CONSENT, started_at=now, last_activity_at=now)
    return Step(journey, tuple(_consent_messages(bundle)))


def _on_consent(bundle: StudyBundle, journey: Journey, event: ev.Event, now: float) -> Result:
    texts = bundle.study.texts
    if isinstance(event, ev.ButtonTapped):
        if event.data == CONSENT_YES:
            return replace(journey, stage=Stage.ASSIGNING), [
                fx.Toast(),
                fx.RecordConsent("accepted"),
                fx.AssignTasks(),
            ]
        if event.data == CONSENT_NO:
            return replace(journey, stage=Stage.DECLINED), [
                fx.Toast(),
                fx.RecordConsent("declined"),
                fx.Send(texts.declined),
            ]
        return _stale_tap(bundle, journey)
    if isinstance(event, ev.StartCommand):
        return journey, _consent_messages(bundle)
    if isinstance(event, _PARTICIPANT_EVENTS):
        return journey, [fx.Send(texts.consent_pending)]
    return journey, []


def _on_declined(bundle: StudyBundle, journey: Journey, event: ev.Event, now: float) -> Result:
    if isinstance(event, ev.StartCommand):
        return replace(journey, stage=Stage.CONSENT), _consent_messages(bundle)
    if isinstance(event, ev.ButtonTapped):
        return _stale_tap(bundle, journey)
    if isinstance(event, _PARTICIPANT_EVENTS):
        return journey, [fx.Send(bundle.study.texts.declined_before)]
    return journey, []


def _on_assigning(bundle: StudyBundle, journey: Journey, event: ev.Event, now: float) -> Result:
    if isinstance(event, ev.TasksAssigned):
        tasks = tuple(Task(scenario, system) for scenario, system in event.tasks)
        assigned = replace(journey, tasks=tasks, design=event.design, seed=event.seed)
        return _start_task(bundle, assigned, 0, now)
    if isinstance(event, ev.Recovered):
        return journey, [fx.AssignTasks()]
    if isinstance(event, ev.ButtonTapped):
        return _stale_tap(bundle, journey)
    return journey, []


# --- the dialogue --------------------------------------------------------------------------


def _start_task(bundle: StudyBundle, journey: Journey, index: int, now: float) -> Result:
    journey = replace(
        journey,
        stage=Stage.DIALOGUE,
        task_index=index,
        session_started_at=now,
        exchanges=0,
        turns=0,
        history=(),
        pending_message=None,
        survey=None,
    )
    task = journey.task
    effects: list[fx.Effect] = [
        fx.OpenSession(
            journey.session_id,
            task.scenario_id,
            task.system_id,
            index,
            journey.design,
            journey.seed,
        ),
        _brief(bundle, journey),
    ]
    opening = _scenario(bundle, journey).opening_line
    if opening:
        effects.append(fx.RecordEvent("opening_line", journey.session_id, {"text": opening}))
        effects.append(fx.Send(opening))
    return journey, effects


def _call_system(bundle: StudyBundle, journey: Journey) -> fx.CallSystem:
    scenario = _scenario(bundle, journey)
    conversation = Conversation(
        session_id=journey.session_id,
        scenario_id=scenario.id,
        brief=scenario.brief,
        history=journey.history,
        message=journey.pending_message or "",
        system_prompt=scenario.system_prompt,
    )
    return fx.CallSystem(journey.task.system_id, conversation)


def _system_format(bundle: StudyBundle, journey: Journey) -> str:
    spec = next(s for s in bundle.study.systems if s.id == journey.task.system_id)
    return spec.format


def _system_messages(bundle: StudyBundle, journey: Journey, reply: SystemReply) -> list[fx.Send]:
    """The reply as it is shown: its texts, and its buttons (if any) under the last one."""
    form = _system_format(bundle, journey)
    sends = [fx.Send(text, format=form) for text in reply.texts]
    if reply.buttons and sends:
        rows = tuple(
            ((title, f"{SYSTEM_BUTTON}:{journey.turns}:{i}"),)
            for i, (title, _) in enumerate(reply.buttons)
        )
        sends[-1] = replace(sends[-1], buttons=rows)
    return sends


def _user_turn(bundle: StudyBundle, journey: Journey, shown: str, sent: str, now: float) -> Result:
    """The participant said something to the system: ``shown`` is logged, ``sent`` sent."""
    session = journey.session_id
    if _time_is_up(bundle, journey, now):
        late = fx.RecordEvent("message_after_time_limit", session, {"text": shown})
        new, effects = _end_scenario(bundle, journey, "time_limit", False, now)
        return new, [late, *effects]
    turn = journey.turns + 1
    journey = replace(journey, turns=turn, pending_message=sent, offered=())
    return journey, [
        fx.RecordUserTurn(session, turn, shown),
        fx.ShowTyping(),
        _call_system(bundle, journey),
    ]


def _on_dialogue(bundle: StudyBundle, journey: Journey, event: ev.Event, now: float) -> Result:
    texts = bundle.study.texts
    session = journey.session_id
    match event:
        case ev.TextReceived(text=text):
            return _user_turn(bundle, journey, text, text, now)
        case ev.ButtonTapped(data=data) if data.startswith(f"{SYSTEM_BUTTON}:"):
            chosen = _offered_button(journey, data)
            if chosen is None:
                return _stale_tap(bundle, journey)
            title, payload = chosen
            new, effects = _user_turn(bundle, journey, title, payload, now)
            tapped = fx.RecordEvent("button_tapped", session, {"title": title, "payload": payload})
            return new, [fx.Toast(), tapped, *effects]
        case ev.SystemReplied(reply=reply, latency_ms=latency):
            text = "\n\n".join(reply.texts)
            journey = replace(
                journey,
                exchanges=journey.exchanges + 1,
                history=(*journey.history, Turn(journey.pending_message or "", text)),
                pending_message=None,
                offered=reply.buttons,
            )
            effects: list[fx.Effect] = [
                fx.RecordSystemTurn(session, journey.turns, text, latency),
                *_system_messages(bundle, journey, reply),
            ]
            limit = _scenario(bundle, journey).max_exchanges
            if SUCCESS_EVENT in reply.events:
                ending = ("success", True)
            elif END_EVENT in reply.events:
                ending = ("system_ended", False)
            elif limit is not None and journey.exchanges >= limit:
                ending = ("exchange_limit", False)
            elif _time_is_up(bundle, journey, now):
                ending = ("time_limit", False)
            else:
                return journey, effects
            new, more = _end_scenario(bundle, journey, *ending, now)
            return new, effects + more
        case ev.SystemFailed(error=error, latency_ms=latency):
            journey = replace(journey, pending_message=None)
            return journey, [
                fx.RecordSystemTurn(session, journey.turns, None, latency, error),
                fx.Send(texts.system_error),
            ]
        case ev.DoneCommand():
            return _end_scenario(bundle, journey, "participant_done", False, now)
        case ev.ButtonTapped(data=data) if data == FINISH:
            new, effects = _end_scenario(bundle, journey, "participant_done", False, now)
            return new, [fx.Toast(), *effects]
        case ev.ButtonTapped():
            return _stale_tap(bundle, journey)
        case ev.StartCommand():
            return journey, [fx.Send(texts.resumed), _brief(bundle, journey)]
        case ev.UnsupportedReceived():
            return journey, [fx.Send(texts.text_only)]
        case ev.MessageEdited():
            return journey, [fx.Send(texts.edit_ignored)]
        case ev.Recovered() if journey.pending_message is not None:
            return journey, [
                fx.RecordEvent("system_call_retried", session),
                fx.ShowTyping(),
                _call_system(bundle, journey),
            ]
        case ev.Tick():
            if _time_is_up(bundle, journey, now):
                return _end_scenario(bundle, journey, "time_limit", False, now)
            return _silence(bundle, journey, now)
    return journey, []


def _offered_button(journey: Journey, data: str) -> tuple[str, str] | None:
    """The system button behind ``sb:<turn>:<index>``, if it belongs to the latest reply."""
    try:
        _, turn, index = data.split(":")
        if int(turn) == journey.turns and 0 <= int(index) < len(journey.offered):
            return journey.offered[int(index)]
    except ValueError:
        return None
    return None


def _end_scenario(
    bundle: StudyBundle, journey: Journey, reason: str, success: bool, now: float
) -> Result:
    scenario = _scenario(bundle, journey)
    effects: list[fx.Effect] = [fx.CloseSession(journey.session_id, reason, success)]
    if scenario.closing_line:
        effects.append(
            fx.RecordEvent("closing_line", journey.session_id, {"text": scenario.closing_line})
        )
        effects.append(fx.Send(scenario.closing_line))
    effects.append(fx.Send(bundle.study.texts.task_over))
    journey = replace(journey, pending_message=None, offered=())
    new, more = _begin_survey(bundle, journey, journey.session_id, scenario.post_task, now)
    return new, effects + more


# --- questionnaires ----------------------------------------------------------------------


def _begin_survey(
    bundle: StudyBundle,
    journey: Journey,
    session_id: str | None,
    questionnaires: tuple[str, ...],
    now: float,
) -> Result:
    if not questionnaires:
        return _after_survey(bundle, journey, session_id, now)
    survey = Survey(session_id, questionnaires, shown_at=now)
    journey = replace(journey, stage=Stage.QUESTIONNAIRE, survey=survey, asked=journey.asked + 1)
    effects: list[fx.Effect] = []
    if session_id is not None:
        effects.append(fx.SetSessionState(session_id, "questionnaire"))
    effects.append(fx.Send(bundle.study.texts.questionnaire_intro))
    effects.append(_show_item(bundle, journey, in_place=False))
    return journey, effects


def _show_item(bundle: StudyBundle, journey: Journey, *, in_place: bool) -> fx.Send | fx.Edit:
    survey = journey.survey
    assert survey is not None
    questionnaire = bundle.questionnaire(survey.questionnaires[survey.questionnaire_index])
    text, buttons = render_item(questionnaire, survey.item_index, journey.asked, bundle.study.texts)
    if in_place and survey.message_id is not None:
        return fx.Edit(survey.message_id, text, buttons)
    return fx.Send(text, buttons, remember=True)


def _after_survey(
    bundle: StudyBundle, journey: Journey, session_id: str | None, now: float
) -> Result:
    effects: list[fx.Effect] = []
    if session_id is not None:
        effects.append(fx.SetSessionState(session_id, "ended"))
        if journey.task_index + 1 < len(journey.tasks):
            new, more = _start_task(bundle, journey, journey.task_index + 1, now)
            return new, effects + more
        if bundle.study.post_study:
            new, more = _begin_survey(bundle, journey, None, bundle.study.post_study, now)
            return new, effects + more
    journey = replace(journey, stage=Stage.FINISHED, survey=None)
    effects += [fx.RecordEvent("study_completed"), fx.Send(bundle.study.texts.thanks)]
    return journey, effects


def _record_and_advance(
    bundle: StudyBundle,
    journey: Journey,
    now: float,
    *,
    value: int | None = None,
    text: str | None = None,
    in_place: bool,
) -> Result:
    survey = journey.survey
    assert survey is not None
    questionnaire = bundle.questionnaire(survey.questionnaires[survey.questionnaire_index])
    item = questionnaire.items[survey.item_index]
    skipped = value is None and text is None
    record = fx.RecordResponse(
        session_id=survey.session_id,
        questionnaire_id=questionnaire.id,
        item_id=item.id,
        value=value,
        label=item.label(value) if isinstance(item, ScaleItem) and value is not None else None,
        text=text,
        status="skipped" if skipped else "answered",
        shown_at=survey.shown_at,
    )
    item_index, q_index = survey.item_index + 1, survey.questionnaire_index
    if item_index >= len(questionnaire.items):
        item_index, q_index = 0, q_index + 1
    if q_index >= len(survey.questionnaires):
        done = replace(journey, survey=None)
        new, more = _after_survey(bundle, done, survey.session_id, now)
        if in_place and survey.message_id is not None:
            # Leave the last question on screen without buttons that could be tapped again.
            closing = fx.Edit(survey.message_id, f"{questionnaire.title} ✓")
            return new, [record, closing, *more]
        return new, [record, *more]
    journey = replace(
        journey,
        asked=journey.asked + 1,
        survey=replace(survey, questionnaire_index=q_index, item_index=item_index, shown_at=now),
    )
    return journey, [record, _show_item(bundle, journey, in_place=in_place)]


def _on_questionnaire(bundle: StudyBundle, journey: Journey, event: ev.Event, now: float) -> Result:
    texts = bundle.study.texts
    survey = journey.survey
    assert survey is not None
    questionnaire = bundle.questionnaire(survey.questionnaires[survey.questionnaire_index])
    item = questionnaire.items[survey.item_index]
    match event:
        case ev.ButtonTapped(data=data):
            tap = parse_tap(data)
            if tap is None or tap.asked != journey.asked:
                return _stale_tap(bundle, journey)
            if tap.action == "h":
                return journey, [fx.Toast(), fx.Send(item.help or "")]
            if tap.action == "s" and not item.required:
                new, effects = _record_and_advance(bundle, journey, now, in_place=True)
                return new, [fx.Toast(), *effects]
            if (
                tap.action == "a"
                and isinstance(item, ScaleItem)
                and tap.value is not None
                and item.min <= tap.value <= item.max
            ):
                new, effects = _record_and_advance(
                    bundle, journey, now, value=tap.value, in_place=True
                )
                return new, [fx.Toast(item.label(tap.value)), *effects]
            return _stale_tap(bundle, journey)
        case ev.TextReceived(text=text):
            if isinstance(item, ScaleItem):
                typed = text.strip()
                if typed.lstrip("-").isdigit() and item.min <= int(typed) <= item.max:
                    return _record_and_advance(
                        bundle, journey, now, value=int(typed), in_place=False
                    )
                hint = texts.tap_a_button.format(low=item.min, high=item.max)
                return journey, [fx.Send(hint)]
            if len(text) > item.max_length:
                return journey, [fx.Send(texts.text_too_long.format(limit=item.max_length))]
            return _record_and_advance(bundle, journey, now, text=text, in_place=False)
        case ev.MessageSent(message_id=message_id):
            return replace(journey, survey=replace(survey, message_id=message_id)), []
        case ev.StartCommand():
            return journey, [fx.Send(texts.resumed), _show_item(bundle, journey, in_place=False)]
        case ev.DoneCommand():
            return journey, [fx.Send(texts.question_pending)]
        case ev.UnsupportedReceived():
            return journey, [fx.Send(texts.text_only)]
        case ev.MessageEdited():
            return journey, [fx.Send(texts.edit_ignored)]
        case ev.Tick():
            return _silence(bundle, journey, now)
    return journey, []


def _on_over(bundle: StudyBundle, journey: Journey, event: ev.Event, now: float) -> Result:
    """Finished or closed: nothing changes any more, but every message gets an answer."""
    texts = bundle.study.texts
    if isinstance(event, ev.ButtonTapped):
        return _stale_tap(bundle, journey)
    if isinstance(event, _PARTICIPANT_EVENTS):
        closed = journey.stage is Stage.CLOSED
        return journey, [fx.Send(texts.abandoned_closed if closed else texts.finished)]
    return journey, []


_HANDLERS = {
    Stage.CONSENT: _on_consent,
    Stage.DECLINED: _on_declined,
    Stage.ASSIGNING: _on_assigning,
    Stage.DIALOGUE: _on_dialogue,
    Stage.QUESTIONNAIRE: _on_questionnaire,
    Stage.FINISHED: _on_over,
    Stage.CLOSED: _on_over,
}
