"""Unattended running's defects in the pure engine, each reproduced first: whatever a participant
sends gets a useful answer and keeps their place."""

from __future__ import annotations

import pytest

from bot.core.conversation import SystemReply
from bot.engine import effects as fx
from bot.engine import events as ev
from bot.engine.journey import Stage
from bot.telegram.inbound import Inbound
from tests.test_engine import BUNDLE, in_dialogue, make_bundle, of, questionnaire_journey, run


@pytest.mark.parametrize("typed", ["²", "①", "Ⅳ", "3²", "--3", "3.0", "", "   "])
def test_a_digit_like_character_gets_the_usual_hint(typed: str) -> None:
    result = run(BUNDLE, questionnaire_journey(), ev.TextReceived(typed), 1.0)
    assert not of(result.effects, fx.RecordResponse)
    [hint] = of(result.effects, fx.Send)
    assert "1" in hint.text and "5" in hint.text  # the usual "tap a button or type 1-5"


@pytest.mark.parametrize("typed", ["４", "٤", "۴", " 4 ", "+4"])
def test_a_number_in_any_script_int_reads_is_an_answer(typed: str) -> None:
    result = run(BUNDLE, questionnaire_journey(), ev.TextReceived(typed), 1.0)
    [answer] = of(result.effects, fx.RecordResponse)
    assert answer.value == 4


def test_a_help_tap_on_an_item_without_help_sends_nothing() -> None:
    journey = questionnaire_journey()
    answered = run(BUNDLE, journey, ev.ButtonTapped(f"a:{journey.survey.asked}:3"), 1.0).journey
    # the second item has no help text: a forged "h" tap for it is refused with a toast
    result = run(BUNDLE, answered, ev.ButtonTapped(f"h:{answered.survey.asked}"), 2.0)
    assert not of(result.effects, fx.Send)
    assert of(result.effects, fx.Toast)
    assert result.journey == answered.touched(2.0)


def test_every_tap_is_checked_against_the_buttons_the_message_offered() -> None:
    journey = questionnaire_journey()
    asked = journey.survey.asked
    for forged in (f"s:{asked}", f"d:{asked}", f"m:{asked}:0", f"a:{asked}:5", f"xa:{asked}:0"):
        result = run(BUNDLE, journey, ev.ButtonTapped(forged), 1.0)
        assert not of(result.effects, fx.RecordResponse), forged
        assert not of(result.effects, fx.Send), forged


def test_a_first_tap_in_a_study_without_invitations_is_welcomed() -> None:
    result = run(BUNDLE, None, ev.ButtonTapped("c:y"))
    assert result.journey is not None and result.journey.stage is Stage.CONSENT
    assert "Hello" in of(result.effects, fx.Send)[0].text
    assert of(result.effects, fx.Toast)


def test_a_first_tap_in_a_study_with_invitations_asks_for_the_code() -> None:
    result = run(make_bundle(invite_codes=("K1",)), None, ev.ButtonTapped("c:y"))
    assert result.journey is None and "invitation" in of(result.effects, fx.Send)[0].text


def command(text: str) -> ev.Event:
    return Inbound(1, "command", text).to_event()


@pytest.mark.parametrize("text", ["/settings", "/stop", "/SETTINGS@study_bot", "/foo bar"])
def test_an_unknown_command_is_answered_by_the_bot_and_is_not_a_turn(text: str) -> None:
    journey = in_dialogue()
    result = run(BUNDLE, journey, command(text), 1.0)
    assert not of(result.effects, fx.RecordUserTurn) and not of(result.effects, fx.CallSystem)
    [answer] = of(result.effects, fx.Send)
    assert "/start" in answer.text and "/done" in answer.text
    assert result.journey.turns == journey.turns


def test_studies_whose_systems_take_commands_pass_them_on() -> None:
    bundle = make_bundle(systems_take_commands=True)
    result = run(bundle, in_dialogue(bundle), command("/restart"), 1.0)
    assert [t.text for t in of(result.effects, fx.RecordUserTurn)] == ["/restart"]
    assert of(result.effects, fx.CallSystem)


def shown(journey, step_result, message_id: int):
    """The runner's answer to a Send(until=...): the keyboard is on screen."""
    [send] = [e for e in step_result.effects if isinstance(e, fx.Send) and e.until]
    shown = ev.KeyboardShown(message_id, send.until, fx.callback_data(send.buttons))
    return run(BUNDLE, journey, shown).journey


def test_buttons_that_no_longer_apply_are_removed_as_the_flow_moves_on() -> None:
    first = run(BUNDLE, None, ev.StartCommand())
    journey = shown(first.journey, first, 10)  # the agreement
    accepted = run(BUNDLE, journey, ev.ButtonTapped("c:y"))
    assert fx.RemoveButtons(10) in accepted.effects  # its buttons are answered
    journey = shown(accepted.journey, accepted, 11)  # the brief's "Finish task"
    asked = run(BUNDLE, journey, ev.TextReceived("hi"), 1.0)
    rasa = SystemReply(("Pick one",), buttons=(("Red", "/red"), ("Blue", "/blue")))
    replied = run(BUNDLE, asked.journey, ev.SystemReplied(rasa, 5.0), 1.0)
    journey = shown(replied.journey, replied, 12)  # the system's buttons
    again = run(BUNDLE, journey, ev.TextReceived("red"), 2.0)
    assert fx.RemoveButtons(12) in again.effects and fx.RemoveButtons(11) not in again.effects
    done = run(BUNDLE, again.journey, ev.DoneCommand(), 3.0)
    assert fx.RemoveButtons(11) in done.effects  # the task is over: "Finish task" goes
    assert done.journey.keyboards == ()


def test_an_answer_typed_instead_of_tapped_takes_the_buttons_off_its_question() -> None:
    journey = questionnaire_journey()
    journey = run(BUNDLE, journey, ev.MessageSent(40), 1.0).journey
    typed = run(BUNDLE, journey, ev.TextReceived("4"), 1.0)
    assert fx.RemoveButtons(40) in typed.effects


def test_declining_takes_the_buttons_off_the_agreement() -> None:
    first = run(BUNDLE, None, ev.StartCommand())
    declined = run(BUNDLE, shown(first.journey, first, 10), ev.ButtonTapped("c:n"))
    assert fx.RemoveButtons(10) in declined.effects
