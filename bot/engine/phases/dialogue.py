"""A dialogue task: the participant chats with the system under test until the task ends
(success, the system's end, a limit, the participant's "done", or a wizard's word)."""

from __future__ import annotations

import hashlib
from dataclasses import replace

from bot.core.conversation import Attachment, Conversation, SystemReply, Turn
from bot.core.vocabulary import (
    EndReason,
    EventKind,
    Gate,
    GateLevel,
    GateScope,
    Hint,
    ReplySource,
    effective_gate,
)
from bot.engine import arena, exchange_rating, media, task
from bot.engine import effects as fx
from bot.engine import events as ev
from bot.engine.callbacks import FinishTap, RetypeTap, SurveyTap, SystemButtonTap, encode
from bot.engine.common import (
    Doing,
    Phase,
    Result,
    Transition,
    drop_keyboards,
    scenario_of,
    silence,
    stale_tap,
    texts_of,
    time_is_up,
)
from bot.engine.context import Context
from bot.engine.hints import hinted
from bot.engine.journey import Journey, Waiting
from scenarios.models import StudyBundle, Texts

SUCCESS_EVENT = "task_success"
TOOL_SUCCESS_EVENT = "tool_success"
"""A call of a tool that ``ends_task`` got a result: the task is done by tool calls."""
END_EVENT = "end_dialogue"

WAITING = "waiting"
TRANSITIONS = (
    *arena.TRANSITIONS,
    Transition(
        Phase.DIALOGUE,
        Phase.DIALOGUE,
        "text / RecordUserTurn, CallSystem → SystemReplied / RecordSystemTurn, Send,"
        " exchange rating",
    ),
    Transition(
        Phase.DIALOGUE,
        Phase.DIALOGUE,
        "voice note or photo the task takes / FetchMedia → MediaFetched / its words as text",
    ),
    Transition(
        Phase.DIALOGUE,
        Phase.DIALOGUE,
        "file not taken, too big or unreadable / RecordEvent(media_refused), polite answer",
    ),
    Transition(Phase.DIALOGUE, WAITING, "SystemReplied [gated or wizard system] / reply held"),
    Transition(
        WAITING,
        Phase.DIALOGUE,
        "wizard approves, edits or replaces · auto-send / RecordSystemTurn(source)",
    ),
    Transition(Phase.DIALOGUE, Phase.DIALOGUE, "SystemFailed / RecordSystemTurn(error), retry"),
    Transition(Phase.DIALOGUE, Phase.CLOSING, "silence ≥ abandon_after [closes abandoned]"),
)


def enter(bundle: StudyBundle, journey: Journey, index: int, now: float) -> Result:
    journey, effects = task.open_session(bundle, journey, index, now)
    scenario = scenario_of(bundle, journey)
    if scenario.kind == "side_by_side":
        journey, drawn = arena.begin(bundle, journey)
        effects += drawn
    if scenario.opening_line:
        data = {"text": scenario.opening_line}
        effects.append(fx.RecordEvent(EventKind.OPENING_LINE, journey.session_id, data))
        effects.append(fx.Send(scenario.opening_line))
    return journey, effects


def end(
    bundle: StudyBundle,
    journey: Journey,
    reason: EndReason,
    success: bool,
    now: float,
    correct: bool | None = None,
) -> Result:
    dropped = exchange_rating.drop(bundle, journey)
    return task.end_task(bundle, journey, reason, success, Phase.DIALOGUE, dropped, correct)


def _done_correctly(
    bundle: StudyBundle, journey: Journey, reply: SystemReply, reported_by: str
) -> bool | None:
    """The scenario's ``success_if`` on what the system reported doing (None: undefined):
    its ``tool.argument`` tests on the tool calls that ended the task, its other tests on
    the system's own ``task_success`` data."""
    by_tools = reported_by == TOOL_SUCCESS_EVENT
    checks = {
        name: check
        for name, check in scenario_of(bundle, journey).success_if.items()
        if ("." in name) == by_tools
    }
    if not checks:
        return None
    did = reply.event_data.get(reported_by, {})
    return all(name in did and check.holds(did[name]) for name, check in checks.items())


def _tool_calls(journey: Journey, reply: SystemReply) -> tuple[list[Doing], SystemReply]:
    """Each tool call of the turn recorded as it happened (whether the reply is then sent,
    held or replaced), and the reply as :func:`with_tool_success` makes it."""
    recorded: list[Doing] = [
        fx.RecordEvent(
            EventKind.TOOL_CALLED,
            journey.session_id,
            {
                "turn": journey.turns,
                "tool": call.tool,
                "arguments": dict(call.arguments),
                "result": call.result,
                "error": call.error,
            },
        )
        for call in reply.tool_calls
    ]
    return recorded, with_tool_success(reply)


def with_tool_success(reply: SystemReply) -> SystemReply:
    """The reply with ``tool_success`` where a call of a tool that ends the task got a
    result: its data is every answered call's arguments as ``tool.argument``, the later call
    of a tool winning, and ``tool``, the tool that ended it. A stress replay makes its
    replies so too, to compare them with what the session logged."""
    did: dict[str, object] = {}
    ended: str | None = None
    for call in reply.tool_calls:
        if call.error is None:
            did |= {f"{call.tool}.{name}": value for name, value in call.arguments.items()}
            if call.ends_task:
                ended = call.tool
    if ended is None:
        return reply
    did["tool"] = ended
    return replace(
        reply,
        events=reply.events | {TOOL_SUCCESS_EVENT},
        event_data={**reply.event_data, TOOL_SUCCESS_EVENT: did},
    )


def _is_wizard_only(bundle: StudyBundle, system_id: str) -> bool:
    """A system of type wizard has no program behind it: every reply is a wizard's."""
    return any(s.id == system_id and s.type == "wizard" for s in bundle.study.systems)


def _ask_system(
    bundle: StudyBundle, journey: Journey, now: float, attachments: tuple[Attachment, ...] = ()
) -> Result:
    """Call the system about the pending message (with the file it came with, for a task
    whose systems receive media), or hold the turn for a wizard."""
    if _is_wizard_only(bundle, journey.task.system_id):
        return _hold(journey, SystemReply(texts=()), 0.0, None, now)
    scenario = scenario_of(bundle, journey)
    conversation = Conversation(
        session_id=journey.session_id,
        scenario_id=scenario.id,
        brief=scenario.brief,
        history=journey.history,
        message=journey.pending_message or "",
        system_prompt=scenario.system_prompt,
        attachments=attachments,
    )
    return journey, [fx.ShowTyping(), fx.CallSystem(journey.task.system_id, conversation)]


def _hold(
    journey: Journey, reply: SystemReply, latency_ms: float, auto: float | None, now: float
) -> Result:
    """A wizard decides: send as is, edit, or write instead."""
    waiting = Waiting(
        texts=reply.texts,
        events=tuple(sorted(reply.events)),
        latency_ms=latency_ms,
        since=now,
        auto_send_at=now + auto if auto is not None and reply.texts else None,
        event_data=reply.event_data,
    )
    data = {"turn": journey.turns, "text": "\n\n".join(reply.texts)}
    return replace(journey, waiting=waiting), [
        fx.RecordEvent(EventKind.REPLY_WAITING, journey.session_id, data),
        fx.ShowTyping(),
    ]


def _system_messages(
    bundle: StudyBundle, journey: Journey, reply: SystemReply, voice: bool | None = None
) -> list[Doing]:
    """The reply as it is shown: its texts, spoken where the task speaks replies (or
    ``voice`` says otherwise: a wizard's choice), and its buttons (if any) under the last
    one; then its pictures as photos with their captions, where the task lets systems
    return them (elsewhere they are not shown)."""
    spec = next(s for s in bundle.study.systems if s.id == journey.task.system_id)
    media = scenario_of(bundle, journey).media
    sends: list[fx.Send | fx.SpeakReply] = [
        spoken_or_sent(
            text, media.text_beside, media.speaks if voice is None else voice, spec.format
        )
        for text in reply.texts
        if text.strip()
    ]
    pictures: list[Doing] = []
    if reply.pictures and "photo" in media.system_returns:
        shown = [
            {"sha256": hashlib.sha256(p.data).hexdigest(), "mime": p.mime, "caption": p.caption}
            for p in reply.pictures
        ]
        data = {"turn": journey.turns, "pictures": shown}
        pictures = [
            fx.RecordEvent(EventKind.PICTURES_SHOWN, journey.session_id, data),
            *(fx.SendFile("photo", p.data, p.mime, p.caption) for p in reply.pictures),
        ]
    if reply.buttons and sends:
        rows = tuple(
            ((title, encode(SystemButtonTap(journey.turns, i))),)
            for i, (title, _) in enumerate(reply.buttons)
        )
        sends[-1] = replace(sends[-1], buttons=rows, until=fx.Until.NEXT_TURN)
    return [*sends, *pictures]


def spoken_or_sent(
    text: str, beside: bool, voice: bool, form: str = "plain"
) -> fx.Send | fx.SpeakReply:
    """One text of a reply: a voice note (its text as the caption when ``beside``) or a
    message."""
    return fx.SpeakReply(text, beside) if voice else fx.Send(text, format=form)


def _offered_button(journey: Journey, tap: SystemButtonTap) -> tuple[str, str] | None:
    """The system button behind a tap, if it belongs to the latest reply."""
    if tap.turn == journey.turns and 0 <= tap.index < len(journey.offered):
        return journey.offered[tap.index]
    return None


def _user_turn(
    bundle: StudyBundle,
    journey: Journey,
    shown: str,
    sent: str,
    now: float,
    attachments: tuple[Attachment, ...] = (),
) -> Result:
    """The participant said something to the system: ``shown`` is logged, ``sent`` sent
    (with ``attachments``, the file it came with)."""
    session = journey.session_id
    if time_is_up(bundle, journey, now):
        late = fx.RecordEvent(EventKind.MESSAGE_AFTER_TIME_LIMIT, session, {"text": shown})
        new, effects = end(bundle, journey, EndReason.TIME_LIMIT, False, now)
        return new, [late, *effects]
    turn = journey.turns + 1
    journey, removed = drop_keyboards(journey, fx.Until.NEXT_TURN)  # the last reply's buttons
    files = tuple((a.kind, a.mime, a.digest) for a in attachments)
    journey = journey.evolve(turns=turn, pending_message=sent, pending_files=files, offered=())
    new, effects = _ask_system(bundle, journey, now, attachments)
    return new, [fx.RecordUserTurn(session, turn, shown), *removed, *effects]


def _gate(ctx: Context, journey: Journey) -> Gate | None:
    own = None
    if journey.gated:
        scope = GateScope(GateLevel.SESSION, journey.session_id)
        own = Gate(scope, True, journey.gate_auto_send)
    return effective_gate(own, ctx.bundle.study.id, journey.task.system_id, ctx.gates)


def _health(journey: Journey, event: ev.SystemReplied | ev.SystemFailed) -> list[Doing]:
    """The system started or stopped failing with this call: logged with the turn."""
    system = journey.task.system_id
    if isinstance(event, ev.SystemFailed) and event.unavailable:
        data: dict[str, object] = {"system": system, "failures": event.failures}
        return [fx.RecordEvent(EventKind.SYSTEM_UNAVAILABLE, journey.session_id, data)]
    if isinstance(event, ev.SystemReplied) and event.recovered:
        data = {"system": system, "failures": 0}
        return [fx.RecordEvent(EventKind.SYSTEM_AVAILABLE, journey.session_id, data)]
    return []


def _on_reply(ctx: Context, journey: Journey, event: ev.SystemReplied, now: float) -> Result:
    called, reply = _tool_calls(journey, event.reply)
    gate = _gate(ctx, journey)
    if gate is not None:
        new, effects = _hold(journey, reply, event.latency_ms, gate.auto_send_after, now)
    else:
        new, effects = deliver_reply(ctx.bundle, journey, reply, event.latency_ms, now)
    return new, [*called, *effects]


def deliver_reply(
    bundle: StudyBundle,
    journey: Journey,
    reply: SystemReply,
    latency: float,
    now: float,
    *,
    source: ReplySource = ReplySource.SYSTEM,
    original: str | None = None,
    wizard: str | None = None,
    voice: bool | None = None,
) -> Result:
    """The reply reaches the participant: logged, sent (``voice``: spoken or not, whatever
    the task says; none: as the task says), and the task may end with it."""
    session = journey.session_id
    text = "\n\n".join(reply.texts)
    journey = journey.evolve(
        exchanges=journey.exchanges + 1,
        history=(*journey.history, Turn(journey.pending_message or "", text)),
        pending_message=None,
        pending_files=(),
        offered=reply.buttons,
        waiting=None,
    )
    effects: list[Doing] = [
        fx.RecordSystemTurn(session, journey.turns, text, latency, None, source, original, wizard),
        *_system_messages(bundle, journey, reply, voice),
    ]
    limit = scenario_of(bundle, journey).max_exchanges
    ending: tuple[EndReason, bool] | None = None
    reported_by = next((e for e in (SUCCESS_EVENT, TOOL_SUCCESS_EVENT) if e in reply.events), None)
    if reported_by is not None:
        did = dict(reply.event_data.get(reported_by, {}))
        reported = {"event": reported_by, "data": did}
        effects.append(fx.RecordEvent(EventKind.TASK_REPORTED, session, reported))
        correct = _done_correctly(bundle, journey, reply, reported_by)
        new, more = end(bundle, journey, EndReason.SUCCESS, True, now, correct)
        return new, effects + more
    if END_EVENT in reply.events:
        ending = (EndReason.SYSTEM_ENDED, False)
    elif limit is not None and journey.exchanges >= limit:
        ending = (EndReason.EXCHANGE_LIMIT, False)
    elif time_is_up(bundle, journey, now):
        ending = (EndReason.TIME_LIMIT, False)
    if ending is None:
        new, more = exchange_rating.ask(bundle, journey, now)
    else:
        new, more = end(bundle, journey, *ending, now)
    return new, effects + more


def _on_tap(bundle: StudyBundle, journey: Journey, event: ev.ButtonTapped, now: float) -> Result:
    tap = event.tap
    session = journey.session_id
    match tap:
        case SystemButtonTap():
            chosen = _offered_button(journey, tap)
            if chosen is None:
                return stale_tap(bundle, journey)
            title, payload = chosen
            new, effects = _user_turn(bundle, journey, title, payload, now)
            data = {"title": title, "payload": payload}
            tapped = fx.RecordEvent(EventKind.BUTTON_TAPPED, session, data)
            return new, [fx.Toast(), tapped, *effects]
        case FinishTap():
            new, effects = end(bundle, journey, EndReason.PARTICIPANT_DONE, False, now)
            return new, [fx.Toast(), *effects]
        case SurveyTap():
            return exchange_rating.on_tap(bundle, journey, tap, now)
        case RetypeTap():
            return journey, media.retype(bundle, journey, tap)
    return stale_tap(bundle, journey)


def _not_now(journey: Journey, texts: Texts, data: dict[str, object]) -> list[Doing]:
    """A message while a reply is on its way or the session is paused: not lost (logged),
    and the participant knows why nothing happens yet."""
    kind = EventKind.MESSAGE_WHILE_PAUSED if journey.paused else EventKind.MESSAGE_WHILE_WAITING
    answer = texts.paused if journey.paused else texts.wait_for_reply
    return [fx.RecordEvent(kind, journey.session_id, data), fx.Send(answer)]


def on_event(ctx: Context, journey: Journey, event: ev.Event, now: float) -> Result:
    bundle = ctx.bundle
    if (side_by_side := arena.on_event(bundle, journey, event, now)) is not None:
        return side_by_side
    texts = texts_of(bundle, journey)
    session = journey.session_id
    match event:
        case ev.TextReceived(text=text) if journey.waiting is not None or journey.paused:
            return journey, _not_now(journey, texts, {"text": text})
        case ev.TextReceived(text=text):
            return _user_turn(bundle, journey, text, text, now)
        case ev.MediaReceived(medium=medium) if journey.waiting is not None or journey.paused:
            return journey, _not_now(journey, texts, {"kind": medium.kind})  # never its content
        case ev.MediaReceived(medium=medium):
            return journey, media.admit(bundle, journey, medium)
        case ev.MediaFetched() if event.problem is not None:
            return journey, media.refusal(bundle, journey, event)
        case ev.MediaFetched():
            words = media.said(event)
            shown = media.heard(bundle, journey, event)
            files = media.attached(bundle, journey, event)
            new, effects = _user_turn(bundle, journey, words, words, now, files)
            if new.turns == journey.turns:  # no turn after all (the time was up)
                return new, effects
            return new, [*shown, media.record(bundle, journey, event), *effects]
        case ev.ButtonTapped():
            return _on_tap(bundle, journey, event, now)
        case ev.SystemReplied():
            new, effects = _on_reply(ctx, journey, event, now)
            return new, [*_health(journey, event), *effects]
        case ev.SystemFailed(error=error, latency_ms=latency, slow=slow):
            called, _ = _tool_calls(journey, SystemReply((), tool_calls=event.tool_calls))
            journey = journey.evolve(pending_message=None, pending_files=())
            return journey, [
                *called,
                *_health(journey, event),
                fx.RecordSystemTurn(session, journey.turns, None, latency, error),
                fx.Send(texts.system_slow if slow else texts.system_error),
            ]
        case ev.MessageSent(message_id=message_id, resent=resent) if journey.exchange_survey:
            rating = replace(journey.exchange_survey, message_id=message_id, resent=resent)
            return journey.evolve(exchange_survey=rating), []
        case ev.DoneCommand():
            return end(bundle, journey, EndReason.PARTICIPANT_DONE, False, now)
        case ev.StartCommand():
            return journey, [fx.Send(texts.resumed), task.brief(bundle, journey)]
        case ev.UnsupportedReceived(kind=kind):
            return journey, [*hinted(Hint.TEXT_ONLY, texts.text_only, session, sent=kind)]
        case ev.MessageEdited():
            return journey, [*hinted(Hint.EDIT_IGNORED, texts.edit_ignored, session)]
        case ev.Recovered() if journey.pending_message is not None and journey.waiting is None:
            files = tuple(Attachment(*file) for file in journey.pending_files)
            new, effects = _ask_system(bundle, journey, now, files)
            return new, [fx.RecordEvent(EventKind.SYSTEM_CALL_RETRIED, session), *effects]
        case ev.Tick():
            waiting = journey.waiting
            if waiting is not None and waiting.auto_send_at is not None:
                if now >= waiting.auto_send_at:
                    reply = SystemReply(
                        waiting.texts, frozenset(waiting.events), event_data=waiting.event_data
                    )
                    new, effects = deliver_reply(bundle, journey, reply, waiting.latency_ms, now)
                    return new, [fx.RecordEvent(EventKind.AUTO_SENT, session), *effects]
                return journey, []
            if time_is_up(bundle, journey, now):
                return end(bundle, journey, EndReason.TIME_LIMIT, False, now)
            return silence(bundle, journey, now)
    return journey, []
