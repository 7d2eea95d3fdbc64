"""An experimenter's commands, applied to one participant: speak as the system, decide a
held reply, end the task or judge it, gate, pause, hold and start, annotate.

Every command ends with a ``RecordCommand``: applied, or expired when it no longer makes
sense (the task is over, another wizard already answered the reply).
"""

from __future__ import annotations

from dataclasses import replace

from bot.engine import dialogue
from bot.engine import effects as fx
from bot.engine import events as ev
from bot.engine.common import Result, texts_of
from bot.engine.journey import Journey, Stage
from bot.systems.base import SystemReply
from scenarios.models import StudyBundle


def on_command(
    bundle: StudyBundle, journey: Journey, command: ev.WizardCommand, now: float
) -> Result:
    new, effects, applied = _apply(bundle, journey, command, now)
    outcome = fx.RecordCommand(command.command_id, "applied" if applied else "expired")
    return new, [*effects, outcome]


def _text(command: ev.WizardCommand) -> str:
    return str(command.payload.get("text") or "").strip()


def _apply(
    bundle: StudyBundle, journey: Journey, command: ev.WizardCommand, now: float
) -> tuple[Journey, list[fx.Effect], bool]:
    texts = texts_of(bundle, journey)
    session = journey.session_id
    talking = journey.stage is Stage.DIALOGUE
    who = {"wizard": command.wizard}
    match command.kind:
        case "say" if talking and _text(command):
            data = {**who, "text": _text(command)}
            return (
                journey,
                [fx.RecordEvent("wizard_message", session, data), fx.Send(data["text"])],
                True,
            )
        case "reply" if talking and journey.waiting is not None:
            return _decide(bundle, journey, command, now)
        case "end" if talking:
            reason = str(command.payload.get("reason") or "ended by the experimenter")
            new, effects = dialogue.end_scenario(bundle, journey, "wizard", False, now)
            data = {**who, "reason": reason}
            return new, [fx.RecordEvent("ended_by_wizard", session, data), *effects], True
        case "success" | "fail" if journey.tasks and journey.stage is not Stage.HELD:
            succeeded = command.kind == "success"
            data = {**who, "success": succeeded}
            judged = [fx.SetSuccess(session, succeeded), fx.RecordEvent("judged", session, data)]
            return journey, judged, True
        case "gate" if journey.tasks:
            on = bool(command.payload.get("on", True))
            auto = command.payload.get("auto_send_after")
            seconds = _seconds(auto)
            gate = fx.RecordGate(f"session:{session}", on, seconds, command.wizard)
            return replace(journey, gated=on, gate_auto_send=seconds if on else None), [gate], True
        case "pause" if talking and not journey.paused:
            data = who
            return (
                replace(journey, paused=True),
                [
                    fx.RecordEvent("paused", session, data),
                    fx.Send(texts.paused),
                ],
                True,
            )
        case "resume" if talking and journey.paused:
            return (
                replace(journey, paused=False),
                [
                    fx.RecordEvent("resumed_by_wizard", session, who),
                    fx.Send(texts.pause_over),
                ],
                True,
            )
        case "note" if journey.tasks and _text(command):
            data = {**who, "text": _text(command), "turn": command.payload.get("turn")}
            return journey, [fx.RecordEvent("wizard_note", session, data)], True
        case "start" if journey.stage is Stage.HELD:
            new, effects = dialogue.start_task(bundle, journey, journey.task_index, now)
            return new, [fx.RecordEvent("started_by_wizard", session, who), *effects], True
    return journey, [], False


def _seconds(value: object) -> float | None:
    try:
        seconds = float(value)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return None
    return seconds if seconds > 0 else None


def _decide(
    bundle: StudyBundle, journey: Journey, command: ev.WizardCommand, now: float
) -> tuple[Journey, list[fx.Effect], bool]:
    """Send the held reply as is, edited, or replaced by the wizard's own words."""
    waiting = journey.waiting
    assert waiting is not None
    action = str(command.payload.get("action") or "approve")
    original = "\n\n".join(waiting.texts) or None
    if action == "approve" and waiting.texts:
        texts, source, kept = waiting.texts, "system", None
    elif action in ("edit", "replace") and _text(command):
        texts = (_text(command),)
        source = "wizard" if action == "replace" or original is None else "edited"
        kept = original
    else:
        return journey, [], False
    reply = SystemReply(texts, frozenset(waiting.events) if source != "wizard" else frozenset())
    new, effects = dialogue.deliver_reply(
        bundle,
        journey,
        reply,
        waiting.latency_ms,
        now,
        source=source,
        original=kept,
        wizard=command.wizard,
    )
    return new, effects, True
