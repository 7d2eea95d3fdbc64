"""An experimenter's commands: speak as the system, decide a held reply, end the task or
judge it, gate, pause, hold and start, annotate; and the gates of a system or the study.

Every command ends with a ``RecordCommand``: applied, expired when it no longer makes sense
(the task is over, another wizard already answered the reply), or rejected when it never
could (a gate on a scope the study does not have).
"""

from __future__ import annotations

from dataclasses import replace

from bot.core.conversation import SystemReply
from bot.core.errors import StudyDataError
from bot.core.vocabulary import (
    CommandKind,
    CommandOutcome,
    EndReason,
    EventKind,
    GateLevel,
    GateScope,
    ReplyAction,
    ReplySource,
)
from bot.engine import effects as fx
from bot.engine import events as ev
from bot.engine.common import Doing, Result, scenario_of, texts_of
from bot.engine.context import Context
from bot.engine.journey import Journey, Stage
from bot.engine.phases import assignment, dialogue
from scenarios.models import StudyBundle


def on_command(ctx: Context, journey: Journey, command: ev.WizardCommand, now: float) -> Result:
    new, effects, applied = _apply(ctx.bundle, journey, command, now)
    outcome = CommandOutcome.APPLIED if applied else CommandOutcome.EXPIRED
    # First: what the command does may end a phase, and PhaseOver comes last.
    return new, [fx.RecordCommand(command.command_id, outcome), *effects]


def on_study_command(ctx: Context, command: ev.WizardCommand) -> list[fx.Record]:
    """A command about no session: a gate on a system or on the whole study."""
    study = ctx.bundle.study
    known = {GateScope(GateLevel.STUDY, study.id)}
    known |= {GateScope(GateLevel.SYSTEM, s.id) for s in study.systems}
    try:
        scope = GateScope.parse(str(command.payload.get("scope") or f"study:{study.id}"))
    except StudyDataError:
        scope = None
    if command.kind is not CommandKind.GATE or scope not in known or scope is None:
        return [fx.RecordCommand(command.command_id, CommandOutcome.REJECTED)]
    on = bool(command.payload.get("on", True))
    seconds = _seconds(command.payload.get("auto_send_after"))
    return [
        fx.RecordGate(scope, on, seconds, command.wizard),
        fx.RecordCommand(command.command_id, CommandOutcome.APPLIED),
    ]


def _text(command: ev.WizardCommand) -> str:
    return str(command.payload.get("text") or "").strip()


def _voice(command: ev.WizardCommand) -> bool | None:
    """How the wizard's words go: ``as: voice``, a voice note spoken by the study's
    text-to-speech (the text, should it fail); ``as: text``, a message; neither, as the
    task sends the system's replies."""
    return {"voice": True, "text": False}.get(str(command.payload.get("as") or ""))


def _apply(
    bundle: StudyBundle, journey: Journey, command: ev.WizardCommand, now: float
) -> tuple[Journey, list[Doing], bool]:
    texts = texts_of(bundle, journey)
    session = journey.session_id
    talking = journey.stage is Stage.DIALOGUE
    who: dict[str, object] = {"wizard": command.wizard}
    match command.kind:
        case CommandKind.SAY if talking and _text(command):
            media = scenario_of(bundle, journey).media
            voice = _voice(command)
            voice = media.speaks if voice is None else voice
            data = {**who, "text": _text(command), **({"as": "voice"} if voice else {})}
            said: list[Doing] = [
                fx.RecordEvent(EventKind.WIZARD_MESSAGE, session, data),
                dialogue.spoken_or_sent(_text(command), media.text_beside, voice),
            ]
            return journey, said, True
        case CommandKind.REPLY if talking and journey.waiting is not None:
            return _decide(bundle, journey, command, now)
        case CommandKind.END if talking:
            reason = str(command.payload.get("reason") or "ended by the experimenter")
            new, effects = dialogue.end(bundle, journey, EndReason.WIZARD, False, now)
            ended = fx.RecordEvent(EventKind.ENDED_BY_WIZARD, session, {**who, "reason": reason})
            return new, [ended, *effects], True
        case CommandKind.SUCCESS | CommandKind.FAIL if (
            journey.tasks and journey.stage is not Stage.HELD
        ):
            succeeded = command.kind is CommandKind.SUCCESS
            data = {**who, "success": succeeded}
            judged: list[Doing] = [
                fx.SetSuccess(session, succeeded),
                fx.RecordEvent(EventKind.JUDGED, session, data),
            ]
            return journey, judged, True
        case CommandKind.GATE if journey.tasks:
            on = bool(command.payload.get("on", True))
            seconds = _seconds(command.payload.get("auto_send_after"))
            scope = GateScope(GateLevel.SESSION, session)
            gate = fx.RecordGate(scope, on, seconds, command.wizard)
            return replace(journey, gated=on, gate_auto_send=seconds if on else None), [gate], True
        case CommandKind.PAUSE if talking and not journey.paused:
            paused: list[Doing] = [
                fx.RecordEvent(EventKind.PAUSED, session, who),
                fx.Send(texts.paused),
            ]
            return replace(journey, paused=True), paused, True
        case CommandKind.RESUME if talking and journey.paused:
            back = fx.RecordEvent(EventKind.RESUMED_BY_WIZARD, session, who)
            return replace(journey, paused=False), [back, fx.Send(texts.pause_over)], True
        case CommandKind.NOTE if journey.tasks and _text(command):
            data = {**who, "text": _text(command), "turn": command.payload.get("turn")}
            return journey, [fx.RecordEvent(EventKind.WIZARD_NOTE, session, data)], True
        case CommandKind.START if journey.stage is Stage.HELD:
            new, effects = assignment.start(journey)
            started = fx.RecordEvent(EventKind.STARTED_BY_WIZARD, session, who)
            return new, [started, *effects], True
    return journey, [], False


def _seconds(value: object) -> float | None:
    if not isinstance(value, int | float | str) or isinstance(value, bool):
        return None
    try:
        seconds = float(value)
    except ValueError:
        return None
    return seconds if seconds > 0 else None


def _decide(
    bundle: StudyBundle, journey: Journey, command: ev.WizardCommand, now: float
) -> tuple[Journey, list[Doing], bool]:
    """Send the held reply as is, edited, or replaced by the wizard's own words."""
    waiting = journey.waiting
    assert waiting is not None
    try:
        action = ReplyAction(str(command.payload.get("action") or ReplyAction.APPROVE))
    except ValueError:
        return journey, [], False
    original = "\n\n".join(waiting.texts) or None
    if action is ReplyAction.APPROVE and waiting.texts:
        texts, source, kept = waiting.texts, ReplySource.SYSTEM, None
    elif action in (ReplyAction.EDIT, ReplyAction.REPLACE) and _text(command):
        texts = (_text(command),)
        replaced = action is ReplyAction.REPLACE or original is None
        source = ReplySource.WIZARD if replaced else ReplySource.EDITED
        kept = original
    else:
        return journey, [], False
    kept_events = source is not ReplySource.WIZARD
    events = frozenset(waiting.events) if kept_events else frozenset()
    new, effects = dialogue.deliver_reply(
        bundle,
        journey,
        SystemReply(texts, events, event_data=waiting.event_data if kept_events else {}),
        waiting.latency_ms,
        now,
        source=source,
        original=kept,
        wizard=command.wizard,
        voice=_voice(command),
    )
    return new, effects, True
