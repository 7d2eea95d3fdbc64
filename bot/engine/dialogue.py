"""A task: the dialogue with the system under test (or a rating task's rows), its end, and
the ratings of single replies that are asked beside the chat without blocking it."""

from __future__ import annotations

from dataclasses import replace

from bot.engine import asking, questioning
from bot.engine import effects as fx
from bot.engine import events as ev
from bot.engine.common import (
    FINISH,
    SYSTEM_BUTTON,
    Result,
    scenario_of,
    silence,
    stale_tap,
    texts_of,
    time_is_up,
)
from bot.engine.journey import Journey, Stage, Waiting
from bot.systems.base import Conversation, SystemReply, Turn
from scenarios.models import StudyBundle

SUCCESS_EVENT = "task_success"
END_EVENT = "end_dialogue"


def brief(bundle: StudyBundle, journey: Journey) -> fx.Send:
    texts = texts_of(bundle, journey)
    scenario = scenario_of(bundle, journey)
    if scenario.kind == "rating":
        return fx.Send(f"{texts.brief_heading}: {scenario.title}\n\n{scenario.brief}")
    body = f"{texts.brief_heading}: {scenario.title}\n\n{scenario.brief}\n\n{texts.brief_footer}"
    return fx.Send(body, (((texts.finish_button, FINISH),),))


def start_task(bundle: StudyBundle, journey: Journey, index: int, now: float) -> Result:
    journey = replace(
        journey,
        stage=Stage.DIALOGUE,
        task_index=index,
        session_started_at=now,
        exchanges=0,
        turns=0,
        history=(),
        pending_message=None,
        offered=(),
        survey=None,
        exchange_survey=None,
        stimulus_index=0,
        gated=False,  # a gate belongs to a session: the next task starts ungated
        gate_auto_send=None,
    )
    task = journey.task
    opened = fx.OpenSession(
        journey.session_id, task.scenario_id, task.system_id, index, journey.design, journey.seed
    )
    effects: list[fx.Effect] = [opened, brief(bundle, journey)]
    scenario = scenario_of(bundle, journey)
    if scenario.kind == "rating":
        new, more = questioning.rate_stimulus(bundle, journey, 0, now)
        return new, effects + more
    if scenario.opening_line:
        effects.append(
            fx.RecordEvent("opening_line", journey.session_id, {"text": scenario.opening_line})
        )
        effects.append(fx.Send(scenario.opening_line))
    return journey, effects


def end_scenario(
    bundle: StudyBundle, journey: Journey, reason: str, success: bool, now: float
) -> Result:
    scenario = scenario_of(bundle, journey)
    effects: list[fx.Effect] = [fx.CloseSession(journey.session_id, reason, success)]
    effects += _drop_exchange_rating(bundle, journey)
    if scenario.closing_line:
        effects.append(
            fx.RecordEvent("closing_line", journey.session_id, {"text": scenario.closing_line})
        )
        effects.append(fx.Send(scenario.closing_line))
    effects.append(fx.Send(texts_of(bundle, journey).task_over))
    journey = replace(
        journey,
        pending_message=None,
        offered=(),
        exchange_survey=None,
        waiting=None,
        paused=False,
    )
    new, more = questioning.begin(
        bundle, journey, "post_task", scenario.post_task, journey.session_id, now
    )
    return new, effects + more


def _call_system(bundle: StudyBundle, journey: Journey) -> fx.CallSystem:
    scenario = scenario_of(bundle, journey)
    conversation = Conversation(
        session_id=journey.session_id,
        scenario_id=scenario.id,
        brief=scenario.brief,
        history=journey.history,
        message=journey.pending_message or "",
        system_prompt=scenario.system_prompt,
    )
    return fx.CallSystem(journey.task.system_id, conversation)


def _system_messages(bundle: StudyBundle, journey: Journey, reply: SystemReply) -> list[fx.Send]:
    """The reply as it is shown: its texts, and its buttons (if any) under the last one."""
    spec = next(s for s in bundle.study.systems if s.id == journey.task.system_id)
    sends = [fx.Send(text, format=spec.format) for text in reply.texts if text.strip()]
    if reply.buttons and sends:
        rows = tuple(
            ((title, f"{SYSTEM_BUTTON}:{journey.turns}:{i}"),)
            for i, (title, _) in enumerate(reply.buttons)
        )
        sends[-1] = replace(sends[-1], buttons=rows)
    return sends


def _offered_button(journey: Journey, data: str) -> tuple[str, str] | None:
    """The system button behind ``sb:<turn>:<index>``, if it belongs to the latest reply."""
    try:
        _, turn, index = data.split(":")
        if int(turn) == journey.turns and 0 <= int(index) < len(journey.offered):
            return journey.offered[int(index)]
    except ValueError:
        return None
    return None


def _user_turn(bundle: StudyBundle, journey: Journey, shown: str, sent: str, now: float) -> Result:
    """The participant said something to the system: ``shown`` is logged, ``sent`` sent."""
    session = journey.session_id
    if time_is_up(bundle, journey, now):
        late = fx.RecordEvent("message_after_time_limit", session, {"text": shown})
        new, effects = end_scenario(bundle, journey, "time_limit", False, now)
        return new, [late, *effects]
    turn = journey.turns + 1
    journey = replace(journey, turns=turn, pending_message=sent, offered=())
    return journey, [
        fx.RecordUserTurn(session, turn, shown),
        fx.ShowTyping(),
        _call_system(bundle, journey),
    ]


def _on_reply(bundle: StudyBundle, journey: Journey, event: ev.SystemReplied, now: float) -> Result:
    reply = event.reply
    if journey.gated or event.gated:
        # A wizard decides: send as is, edit, or write instead (a wizard-type system has
        # no program, so its "reply" is always empty and always waits).
        auto = event.auto_send_after if event.gated else journey.gate_auto_send
        waiting = Waiting(
            texts=reply.texts,
            events=tuple(sorted(reply.events)),
            latency_ms=event.latency_ms,
            since=now,
            auto_send_at=now + auto if auto is not None and reply.texts else None,
        )
        data = {"turn": journey.turns, "text": "\n\n".join(reply.texts)}
        return replace(journey, waiting=waiting), [
            fx.RecordEvent("reply_waiting", journey.session_id, data),
            fx.ShowTyping(),
        ]
    return deliver_reply(bundle, journey, reply, event.latency_ms, now)


def deliver_reply(
    bundle: StudyBundle,
    journey: Journey,
    reply: SystemReply,
    latency: float,
    now: float,
    *,
    source: str = "system",
    original: str | None = None,
    wizard: str | None = None,
) -> Result:
    """The reply reaches the participant: logged, sent, and the task may end with it."""
    session = journey.session_id
    text = "\n\n".join(reply.texts)
    journey = replace(
        journey,
        exchanges=journey.exchanges + 1,
        history=(*journey.history, Turn(journey.pending_message or "", text)),
        pending_message=None,
        offered=reply.buttons,
        waiting=None,
    )
    effects: list[fx.Effect] = [
        fx.RecordSystemTurn(session, journey.turns, text, latency, None, source, original, wizard),
        *_system_messages(bundle, journey, reply),
    ]
    limit = scenario_of(bundle, journey).max_exchanges
    if SUCCESS_EVENT in reply.events:
        ending = ("success", True)
    elif END_EVENT in reply.events:
        ending = ("system_ended", False)
    elif limit is not None and journey.exchanges >= limit:
        ending = ("exchange_limit", False)
    elif time_is_up(bundle, journey, now):
        ending = ("time_limit", False)
    else:
        new, more = _rate_reply(bundle, journey, now)
        return new, effects + more
    new, more = end_scenario(bundle, journey, *ending, now)
    return new, effects + more


def on_dialogue(bundle: StudyBundle, journey: Journey, event: ev.Event, now: float) -> Result:
    texts = texts_of(bundle, journey)
    session = journey.session_id
    match event:
        case ev.TextReceived(text=text) if journey.waiting is not None or journey.paused:
            # Not lost: logged, and the participant knows why nothing happens yet.
            data = {"text": text}
            kind = "message_while_paused" if journey.paused else "message_while_waiting"
            answer = texts.paused if journey.paused else texts.wait_for_reply
            return journey, [fx.RecordEvent(kind, session, data), fx.Send(answer)]
        case ev.TextReceived(text=text):
            return _user_turn(bundle, journey, text, text, now)
        case ev.ButtonTapped(data=data) if data.startswith(f"{SYSTEM_BUTTON}:"):
            chosen = _offered_button(journey, data)
            if chosen is None:
                return stale_tap(bundle, journey)
            title, payload = chosen
            new, effects = _user_turn(bundle, journey, title, payload, now)
            tapped = fx.RecordEvent("button_tapped", session, {"title": title, "payload": payload})
            return new, [fx.Toast(), tapped, *effects]
        case ev.ButtonTapped(data=data) if data == FINISH:
            new, effects = end_scenario(bundle, journey, "participant_done", False, now)
            return new, [fx.Toast(), *effects]
        case ev.ButtonTapped(data=data):
            return _on_reply_rating_tap(bundle, journey, data, now)
        case ev.SystemReplied():
            return _on_reply(bundle, journey, event, now)
        case ev.SystemFailed(error=error, latency_ms=latency, slow=slow):
            journey = replace(journey, pending_message=None)
            return journey, [
                fx.RecordSystemTurn(session, journey.turns, None, latency, error),
                fx.Send(texts.system_slow if slow else texts.system_error),
            ]
        case ev.MessageSent(message_id=message_id) if journey.exchange_survey is not None:
            rating = replace(journey.exchange_survey, message_id=message_id)
            return replace(journey, exchange_survey=rating), []
        case ev.DoneCommand():
            return end_scenario(bundle, journey, "participant_done", False, now)
        case ev.StartCommand():
            return journey, [fx.Send(texts.resumed), brief(bundle, journey)]
        case ev.UnsupportedReceived():
            return journey, [fx.Send(texts.text_only)]
        case ev.MessageEdited():
            return journey, [fx.Send(texts.edit_ignored)]
        case ev.Recovered() if journey.pending_message is not None and journey.waiting is None:
            return journey, [
                fx.RecordEvent("system_call_retried", session),
                fx.ShowTyping(),
                _call_system(bundle, journey),
            ]
        case ev.Tick():
            waiting = journey.waiting
            if waiting is not None and waiting.auto_send_at is not None:
                if now >= waiting.auto_send_at:
                    reply = SystemReply(waiting.texts, frozenset(waiting.events))
                    new, effects = deliver_reply(bundle, journey, reply, waiting.latency_ms, now)
                    return new, [fx.RecordEvent("auto_sent", session), *effects]
                return journey, []
            if time_is_up(bundle, journey, now):
                return end_scenario(bundle, journey, "time_limit", False, now)
            return silence(bundle, journey, now)
    return journey, []


# --- rating single replies, beside the chat -------------------------------------------


def _drop_exchange_rating(bundle: StudyBundle, journey: Journey) -> list[fx.Effect]:
    """The previous reply's rating was not (fully) given: recorded as missing, never lost."""
    rating = journey.exchange_survey
    if rating is None:
        return []
    effects: list[fx.Effect] = list(asking.abandon(bundle, rating))
    if rating.message_id is not None:
        title = asking.questionnaire(bundle, rating).title
        effects.append(fx.Edit(rating.message_id, f"{title} (turn {rating.turn}): –"))
    return effects


def _rate_reply(bundle: StudyBundle, journey: Journey, now: float) -> Result:
    """After a system reply: ask the scenario's exchange-level items about it."""
    effects = _drop_exchange_rating(bundle, journey)
    journey = replace(journey, exchange_survey=None)
    scenario = scenario_of(bundle, journey)
    if not scenario.exchange:
        return journey, effects
    started = asking.start(
        bundle,
        purpose="exchange",
        questionnaires=scenario.exchange,
        session_id=journey.session_id,
        seed=f"{journey.seed}:{journey.session_id}",
        asked=journey.asked + 1,
        now=now,
        turn=journey.turns,
    )
    effects += started.records
    if started.survey is None:
        return journey, effects
    journey = replace(journey, exchange_survey=started.survey, asked=started.survey.asked)
    text, buttons = asking.render(bundle, started.survey, texts_of(bundle, journey), "x")
    return journey, [*effects, fx.Send(text, buttons, remember=True)]


def _on_reply_rating_tap(bundle: StudyBundle, journey: Journey, data: str, now: float) -> Result:
    tap = asking.parse_tap(data)
    rating = journey.exchange_survey
    if tap is None or tap.channel != "x" or rating is None or tap.asked != rating.asked:
        return stale_tap(bundle, journey)
    outcome = questioning.apply_tap(bundle, journey, rating, tap, now)
    if outcome.asked is None:  # a toggle or the examples: the same item stays
        journey = replace(journey, exchange_survey=outcome.survey)
        return journey, outcome.effects
    effects = [*outcome.effects, *outcome.asked.records]
    following = outcome.asked.survey
    if following is None:
        title = asking.questionnaire(bundle, rating).title
        done = (
            fx.Edit(rating.message_id, f"{title} (turn {rating.turn}) ✓")
            if rating.message_id
            else None
        )
        return replace(journey, exchange_survey=None), [*effects, *([done] if done else [])]
    following = replace(following, asked=journey.asked + 1, message_id=rating.message_id)
    journey = replace(journey, exchange_survey=following, asked=following.asked)
    text, buttons = asking.render(bundle, following, texts_of(bundle, journey), "x")
    if following.message_id is not None:
        return journey, [*effects, fx.Edit(following.message_id, text, buttons)]
    return journey, [*effects, fx.Send(text, buttons, remember=True)]
