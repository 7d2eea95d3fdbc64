"""The experimenter's commands, fed to the pure engine."""

from __future__ import annotations

from bot.core.conversation import SystemReply
from bot.core.vocabulary import CommandKind, Gate, GateLevel, GateScope
from bot.engine import effects as fx
from bot.engine import events as ev
from bot.engine.common import CONSENT_YES
from bot.engine.context import Context
from bot.engine.flow import Step, next_deadline, step
from bot.engine.journey import Journey, Stage
from scenarios.media import TaskMedia
from tests.test_engine import BUNDLE, make_bundle


def run(
    journey: Journey | None,
    event: ev.Event,
    now: float = 1.0,
    bundle=BUNDLE,
    context: Context | None = None,
) -> Step:
    return step(bundle, "p1", journey, event, now, context)


STUDY_GATED = Context(
    BUNDLE, gates={GateScope(GateLevel.STUDY, "s"): Gate(GateScope(GateLevel.STUDY, "s"), True)}
)


def of(result: Step, kind: type) -> list:
    return [e for e in result.effects if isinstance(e, kind)]


def command(kind: str, number: int = 1, **payload: object) -> ev.WizardCommand:
    return ev.WizardCommand(number, CommandKind(kind), "ada", payload)


def outcome(result: Step) -> str:
    [record] = of(result, fx.RecordCommand)
    return record.outcome


def talking(bundle=BUNDLE) -> Journey:
    journey = run(None, ev.StartCommand(), bundle=bundle).journey
    return run(journey, ev.ButtonTapped(CONSENT_YES), bundle=bundle).journey


HELLO = SystemReply(("Hello!",))


def held_reply(gated_reply: SystemReply = HELLO) -> Journey:
    journey = run(talking(), ev.TextReceived("hi")).journey
    result = run(journey, ev.SystemReplied(gated_reply, 7.0), context=STUDY_GATED)
    assert not of(result, fx.Send) and of(result, fx.RecordEvent)[0].kind == "reply_waiting"
    return result.journey


def test_a_held_reply_sent_as_is_edited_or_replaced() -> None:
    journey = held_reply()
    sent = run(journey, command("reply", action="approve"))
    assert [s.text for s in of(sent, fx.Send)] == ["Hello!"] and outcome(sent) == "applied"
    assert of(sent, fx.RecordSystemTurn)[0].source == "system"
    edited = run(journey, command("reply", action="edit", text="Hello there!"))
    turn = of(edited, fx.RecordSystemTurn)[0]
    assert (turn.text, turn.source, turn.original_text, turn.wizard) == (
        "Hello there!",
        "edited",
        "Hello!",
        "ada",
    )
    replaced = run(journey, command("reply", action="replace", text="Hi, I am Ada."))
    assert of(replaced, fx.RecordSystemTurn)[0].source == "wizard"
    late = run(sent.journey, command("reply", 2, action="approve"))  # another wizard, too late
    assert outcome(late) == "expired" and not of(late, fx.Send)


def test_a_wizard_type_system_waits_for_every_reply() -> None:
    journey = held_reply(SystemReply(()))
    assert next_deadline(BUNDLE, journey) is None  # nothing to send by itself
    refused = run(journey, command("reply", action="approve"))  # nothing to approve
    assert outcome(refused) == "expired"
    written = run(journey, command("reply", action="replace", text="I am the system."))
    turn = of(written, fx.RecordSystemTurn)[0]
    assert (turn.text, turn.source, turn.original_text) == ("I am the system.", "wizard", None)
    assert written.journey.exchanges == 1 and written.journey.waiting is None


def test_participants_waiting_are_told_and_their_messages_kept() -> None:
    result = run(held_reply(), ev.TextReceived("hello??"))
    assert "on its way" in of(result, fx.Send)[0].text
    assert of(result, fx.RecordEvent)[0].data == {"text": "hello??"}
    assert not of(result, fx.CallSystem)


def test_a_gate_with_auto_send_sends_the_reply_by_itself() -> None:
    journey = run(talking(), ev.TextReceived("hi")).journey
    scope = GateScope(GateLevel.SYSTEM, "sys")
    auto = Context(BUNDLE, gates={scope: Gate(scope, True, auto_send_after=0.5)})
    waiting = run(journey, ev.SystemReplied(SystemReply(("Auto",)), 1.0), 10.0, context=auto)
    assert next_deadline(BUNDLE, waiting.journey) == 10.5
    assert run(waiting.journey, ev.Tick(), 10.2).effects == ()
    sent = run(waiting.journey, ev.Tick(), 10.6)
    assert [s.text for s in of(sent, fx.Send)] == ["Auto"]
    assert of(sent, fx.RecordEvent)[0].kind == "auto_sent"


def test_gate_say_judge_note_and_end() -> None:
    journey = talking()
    gated = run(journey, command("gate", on=True))
    assert gated.journey.gated and str(of(gated, fx.RecordGate)[0].scope) == "session:p1-1"
    held = run(
        run(gated.journey, ev.TextReceived("hi")).journey,
        ev.SystemReplied(SystemReply(("x",)), 1.0),
    )
    assert held.journey.waiting is not None  # the session's own gate holds it
    said = run(journey, command("say", text="Let me help you."))
    assert [s.text for s in of(said, fx.Send)] == ["Let me help you."]
    assert of(said, fx.RecordEvent)[0].data == {"wizard": "ada", "text": "Let me help you."}
    judged = run(journey, command("success"))
    assert of(judged, fx.SetSuccess) == [fx.SetSuccess("p1-1", True)]
    noted = run(journey, command("note", text="typo in turn 1", turn=1))
    assert of(noted, fx.RecordEvent)[0].kind == "wizard_note"
    ended = run(journey, command("end", reason="participant asked to stop"))
    assert of(ended, fx.CloseSession) == [fx.CloseSession("p1-1", "wizard", False)]
    assert ended.journey.stage is Stage.QUESTIONNAIRE
    assert of(run(ended.journey, command("say", 2, text="hi")), fx.RecordCommand)[0].outcome == (
        "expired"
    )


def test_pause_and_resume() -> None:
    paused = run(talking(), command("pause"))
    assert paused.journey.paused and "paused" in of(paused, fx.Send)[0].text
    waiting = run(paused.journey, ev.TextReceived("hello?"))
    assert "paused" in of(waiting, fx.Send)[0].text and not of(waiting, fx.CallSystem)
    resumed = run(paused.journey, command("resume", 2))
    assert not resumed.journey.paused and "continue" in of(resumed, fx.Send)[0].text


def test_lab_studies_hold_participants_until_the_wizard_starts_them() -> None:
    bundle = make_bundle(hold_after_consent=True)
    journey = talking(bundle)
    assert journey.stage is Stage.HELD
    asking = run(journey, ev.TextReceived("can I start?"), bundle=bundle)
    assert "experimenter will start" in of(asking, fx.Send)[0].text
    started = run(journey, command("start"), bundle=bundle)
    assert started.journey.stage is Stage.DIALOGUE and of(started, fx.OpenSession)
    assert "Do it." in of(started, fx.Send)[0].text


def test_a_command_for_nobody_expires() -> None:
    assert run(None, command("say", text="hi")).effects == (fx.RecordCommand(1, "expired"),)
    assert Journey.from_json(held_reply().to_json()) == held_reply()


def speaking(bundle=BUNDLE):
    """The study with its task's replies spoken."""
    scenarios = {
        sid: s.model_copy(update={"media": TaskMedia(system_returns=("voice",), text_beside=True)})
        for sid, s in bundle.scenarios.items()
    }
    return bundle.model_copy(update={"scenarios": scenarios})


def test_a_wizard_answers_by_voice_note_or_by_text() -> None:
    journey = held_reply()
    # a voice note of the wizard's typed words, in a task that otherwise replies in text
    spoken = run(journey, command("reply", action="replace", text="Try trains.", **{"as": "voice"}))
    assert [(s.text, s.beside) for s in of(spoken, fx.SpeakReply)] == [("Try trains.", False)]
    assert not of(spoken, fx.Send) and outcome(spoken) == "applied"
    assert of(spoken, fx.RecordSystemTurn)[0].text == "Try trains."
    said = run(spoken.journey, command("say", 2, text="Anything else?", **{"as": "voice"}))
    assert [s.text for s in of(said, fx.SpeakReply)] == ["Anything else?"]
    assert of(said, fx.RecordEvent)[0].data == {
        "wizard": "ada",
        "text": "Anything else?",
        "as": "voice",
    }
    typed = run(journey, command("reply", action="approve"))  # as the task: text
    assert [s.text for s in of(typed, fx.Send)] == ["Hello!"] and not of(typed, fx.SpeakReply)
    # a task whose replies are spoken: spoken unless the wizard says text
    bundle = speaking()
    start = run(talking(bundle), ev.TextReceived("hi"), bundle=bundle).journey
    gated = Context(bundle, gates=STUDY_GATED.gates)
    held = run(start, ev.SystemReplied(HELLO, 7.0), bundle=bundle, context=gated).journey
    as_task = run(held, command("reply", action="approve"), bundle=bundle)
    assert [(s.text, s.beside) for s in of(as_task, fx.SpeakReply)] == [("Hello!", True)]
    as_text = run(held, command("reply", action="approve", **{"as": "text"}), bundle=bundle)
    assert [s.text for s in of(as_text, fx.Send)] == ["Hello!"] and not of(as_text, fx.SpeakReply)
    said = run(held, command("say", text="One moment."), bundle=bundle)
    assert [s.text for s in of(said, fx.SpeakReply)] == ["One moment."]
