"""The session flow, fed events by hand: no Telegram, no database, no clock."""

from __future__ import annotations

import subprocess
import sys
from dataclasses import replace

import pytest

from bot.core.conversation import SystemReply
from bot.engine import effects as fx
from bot.engine import events as ev
from bot.engine.common import CONSENT_NO, CONSENT_YES, FINISH
from bot.engine.flow import Step, next_deadline, step
from bot.engine.journey import Journey, Stage
from questionnaires.models import Questionnaire, ScaleItem, TextItem
from scenarios.models import Scenario, Study, StudyBundle, Texts, Timing

LABELS = {1: "Completely disagree", 2: "Disagree", 3: "Neutral", 4: "Agree", 5: "Completely agree"}


def answer_data(asked: int, value: int) -> str:
    """The button for ``value`` on a 1-based scale (buttons carry the option's index)."""
    return f"a:{asked}:{value - 1}"


def make_bundle(**study_changes: object) -> StudyBundle:
    questionnaire = Questionnaire(
        id="q",
        title="Rating",
        items=(
            ScaleItem(type="scale", id="q.a", text="First?", labels=LABELS, help="Examples!"),
            ScaleItem(type="scale", id="q.b", text="Second?", labels=LABELS),
            TextItem(type="text", id="q.comment", text="Comment?", max_length=20),
        ),
    )
    scenario = Scenario(
        id="task", title="A task", brief="Do it.", max_exchanges=3, post_task=("q",)
    )
    study = Study(
        id="s",
        title="S",
        texts=Texts(welcome="Hello", consent="Agree?", declined="Bye"),
        systems=({"type": "demo", "id": "sys"},),
        scenarios=("task",),
        timing=Timing(reminder_after=60, abandon_after=600),
    )
    study = study.model_copy(update=study_changes)
    return StudyBundle(
        study=study, scenarios={"task": scenario}, questionnaires={"q": questionnaire}
    )


BUNDLE = make_bundle()


def run(bundle: StudyBundle, journey: Journey | None, event: ev.Event, now: float = 0.0) -> Step:
    return step(bundle, "p1", journey, event, now)


def of(effects: tuple[fx.Effect, ...], kind: type) -> list:
    return [e for e in effects if isinstance(e, kind)]


def in_dialogue(bundle: StudyBundle = BUNDLE, now: float = 0.0) -> Journey:
    journey = run(bundle, None, ev.StartCommand(), now).journey
    result = run(bundle, journey, ev.ButtonTapped(CONSENT_YES), now)
    assert result.journey is not None and result.journey.stage is Stage.DIALOGUE
    return result.journey


def exchange(journey: Journey, text: str, reply: str, events=frozenset(), now=1.0) -> Step:
    asked = run(BUNDLE, journey, ev.TextReceived(text), now)
    return run(BUNDLE, asked.journey, ev.SystemReplied(SystemReply((reply,), events), 5.0), now)


def test_engine_imports_no_io_library() -> None:
    code = (
        "import sys, bot.engine.flow;"
        "bad = [m for m in ('telegram', 'aiosqlite', 'httpx', 'aiohttp') if m in sys.modules];"
        "print(bad); sys.exit(1 if bad else 0)"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.returncode == 0, done.stdout + done.stderr


def test_start_shows_welcome_and_consent_buttons() -> None:
    result = run(BUNDLE, None, ev.StartCommand())
    sends = of(result.effects, fx.Send)
    withdraw = BUNDLE.study.texts.consent_withdraw_note  # the agreement names the right
    assert [s.text for s in sends] == ["Hello", f"{withdraw}\n\nAgree?"]
    assert [row[0][1] for row in sends[1].buttons] == [CONSENT_YES, CONSENT_NO]
    assert result.journey is not None and result.journey.stage is Stage.CONSENT


def test_the_consent_question_comes_last_right_above_its_buttons() -> None:
    consent = "Privacy agreement\n\nYour answers are kept.\n\nDo you agree to take part?"
    bundle = make_bundle(texts=Texts(welcome="Hello", consent=consent, declined="Bye"))
    [_, agreement] = of(run(bundle, None, ev.StartCommand()).effects, fx.Send)
    withdraw = bundle.study.texts.consent_withdraw_note
    assert agreement.text == (
        f"Privacy agreement\n\nYour answers are kept.\n\n{withdraw}\n\nDo you agree to take part?"
    )


def test_an_agreement_without_a_question_ends_with_the_right_to_withdraw() -> None:
    consent = "Privacy agreement\n\nYour answers are kept."
    bundle = make_bundle(texts=Texts(welcome="Hello", consent=consent, declined="Bye"))
    [_, agreement] = of(run(bundle, None, ev.StartCommand()).effects, fx.Send)
    assert agreement.text == f"{consent}\n\n{bundle.study.texts.consent_withdraw_note}"


def test_before_consent_an_unknown_command_names_every_command_that_works() -> None:
    journey = run(BUNDLE, None, ev.StartCommand()).journey
    [answer] = of(run(BUNDLE, journey, ev.UnknownCommand("/menu")).effects, fx.Send)
    for command in ("/start", "/help", "/withdraw"):
        assert command in answer.text
    assert "/done" not in answer.text and "two commands" not in answer.text


def test_in_a_task_an_unknown_command_names_every_command_that_works() -> None:
    [answer] = of(run(BUNDLE, in_dialogue(), ev.UnknownCommand("/menu")).effects, fx.Send)
    for command in ("/start", "/help", "/done", "/withdraw"):
        assert command in answer.text


def test_invite_code_required_and_checked() -> None:
    bundle = make_bundle(invite_codes=("lab42",))
    missing = run(bundle, None, ev.StartCommand())
    assert missing.journey is None
    assert "invitation code" in of(missing.effects, fx.Send)[0].text
    wrong = run(bundle, None, ev.StartCommand("nope"))
    assert wrong.journey is None and "not valid" in of(wrong.effects, fx.Send)[0].text
    right = run(bundle, None, ev.StartCommand("lab42"))
    assert right.journey is not None and right.journey.stage is Stage.CONSENT


def test_decline_records_only_the_decline() -> None:
    journey = run(BUNDLE, None, ev.StartCommand()).journey
    result = run(BUNDLE, journey, ev.ButtonTapped(CONSENT_NO))
    assert result.journey.stage is Stage.DECLINED
    records = [e for e in result.effects if not isinstance(e, (fx.Send, fx.Toast))]
    assert records == [fx.RecordConsent("declined")]
    again = run(BUNDLE, result.journey, ev.TextReceived("hi"))
    assert "did not agree" in of(again.effects, fx.Send)[0].text


def test_consent_then_assignment_opens_the_session_with_the_brief() -> None:
    journey = run(BUNDLE, None, ev.StartCommand()).journey
    started = run(BUNDLE, journey, ev.ButtonTapped(CONSENT_YES))
    assert fx.RecordConsent("accepted") in started.effects
    opened = of(started.effects, fx.OpenSession)
    # The engine assigns by the study's design, seeded by the design seed and participant.
    assert opened == [fx.OpenSession("p1-1", "task", "sys", 0, "random/between", "0:p1")]
    brief = of(started.effects, fx.Send)[0]
    assert "Do it." in brief.text and brief.buttons[0][0][1] == FINISH


def test_text_in_dialogue_is_logged_before_the_system_is_called() -> None:
    journey = in_dialogue()
    result = run(BUNDLE, journey, ev.TextReceived("find a game"), 2.0)
    kinds = [type(e) for e in result.effects]
    assert kinds == [fx.RecordUserTurn, fx.ShowTyping, fx.CallSystem]
    call = of(result.effects, fx.CallSystem)[0]
    assert call.system_id == "sys" and call.conversation.message == "find a game"
    assert result.journey.pending_message == "find a game"


def test_system_reply_is_recorded_sent_and_kept_in_history() -> None:
    result = exchange(in_dialogue(), "hi", "Hello there")
    assert of(result.effects, fx.RecordSystemTurn)[0].text == "Hello there"
    assert of(result.effects, fx.Send)[0].text == "Hello there"
    assert result.journey.exchanges == 1 and result.journey.history[0].system == "Hello there"
    follow = run(BUNDLE, result.journey, ev.TextReceived("more"))
    assert of(follow.effects, fx.CallSystem)[0].conversation.history == result.journey.history


def test_success_event_ends_the_task_and_starts_the_questionnaire() -> None:
    result = exchange(in_dialogue(), "add it", "Added!", frozenset({"task_success"}))
    assert of(result.effects, fx.CloseSession) == [fx.CloseSession("p1-1", "success", True)]
    assert result.journey.stage is Stage.QUESTIONNAIRE
    item = of(result.effects, fx.Send)[-1]
    assert item.remember and "First?" in item.text and "1/3" in item.text  # the comment counts too
    assert item.buttons[0][0] == ("1 · Completely disagree", answer_data(result.journey.asked, 1))


def test_exchange_limit_ends_the_task() -> None:
    journey = in_dialogue()
    for n in range(3):
        result = exchange(journey, f"m{n}", f"r{n}")
        journey = result.journey
    assert of(result.effects, fx.CloseSession)[0].reason == "exchange_limit"


@pytest.mark.parametrize("event", [ev.DoneCommand(), ev.ButtonTapped(FINISH)])
def test_participant_can_finish_the_task(event: ev.Event) -> None:
    result = run(BUNDLE, in_dialogue(), event)
    assert of(result.effects, fx.CloseSession)[0].reason == "participant_done"
    assert result.journey.stage is Stage.QUESTIONNAIRE


def test_system_failure_is_recorded_and_the_participant_may_retry() -> None:
    journey = run(BUNDLE, in_dialogue(), ev.TextReceived("hi")).journey
    failed = run(BUNDLE, journey, ev.SystemFailed("boom", 3.0))
    assert of(failed.effects, fx.RecordSystemTurn)[0].error == "boom"
    assert failed.journey.exchanges == 0 and failed.journey.pending_message is None
    retry = run(BUNDLE, failed.journey, ev.TextReceived("hi"))
    assert of(retry.effects, fx.RecordUserTurn)[0].turn == 2


def test_restart_mid_task_resumes_with_the_brief() -> None:
    journey = exchange(in_dialogue(), "hi", "hello").journey
    result = run(BUNDLE, journey, ev.StartCommand())
    assert result.journey == journey.touched(0.0)
    texts = [s.text for s in of(result.effects, fx.Send)]
    assert "Welcome back" in texts[0] and "Do it." in texts[1]


def test_stickers_and_edits_get_a_polite_answer_and_change_nothing() -> None:
    journey = in_dialogue()
    for event, words in ((ev.UnsupportedReceived("sticker"), "text"), (ev.MessageEdited(), "Edit")):
        result = run(BUNDLE, journey, event)
        assert result.journey == journey
        assert words in of(result.effects, fx.Send)[0].text
        assert not of(result.effects, fx.RecordUserTurn)


def questionnaire_journey() -> Journey:
    result = run(BUNDLE, in_dialogue(), ev.DoneCommand())
    return run(BUNDLE, result.journey, ev.MessageSent(99)).journey


def test_answers_edit_the_message_in_place_and_old_buttons_are_refused() -> None:
    journey = questionnaire_journey()
    first_tap = ev.ButtonTapped(answer_data(journey.asked, 4))
    result = run(BUNDLE, journey, first_tap, 5.0)
    response = of(result.effects, fx.RecordResponse)[0]
    assert (response.item_id, response.value, response.label) == ("q.a", 4, "Agree")
    assert response.session_id == "p1-1"
    edit = of(result.effects, fx.Edit)[0]
    assert edit.message_id == 99 and "Second?" in edit.text and "2/3" in edit.text
    assert of(result.effects, fx.Toast) == [fx.Toast("Agree")]
    again = run(BUNDLE, result.journey, first_tap, 6.0)
    assert again.journey == result.journey.touched(6.0)
    assert of(again.effects, fx.Toast) == [fx.Toast("Your answer was already recorded.")]
    assert not of(again.effects, fx.RecordResponse)


def test_out_of_range_or_tampered_taps_store_nothing() -> None:
    journey = questionnaire_journey()
    for data in (answer_data(journey.asked, 9), "a:x:1", "zzz"):
        result = run(BUNDLE, journey, ev.ButtonTapped(data))
        assert not of(result.effects, fx.RecordResponse)
        assert of(result.effects, fx.Toast)


def test_typed_number_answers_a_scale_and_other_text_gets_a_hint() -> None:
    journey = questionnaire_journey()
    hint = run(BUNDLE, journey, ev.TextReceived("great"))
    assert "1 to 5" in of(hint.effects, fx.Send)[0].text
    typed = run(BUNDLE, journey, ev.TextReceived(" 2 "))
    assert of(typed.effects, fx.RecordResponse)[0].value == 2
    assert of(typed.effects, fx.Send)[0].remember  # typed: the next item comes as a new message


def test_help_button_shows_examples() -> None:
    journey = questionnaire_journey()
    result = run(BUNDLE, journey, ev.ButtonTapped(f"h:{journey.asked}"))
    assert of(result.effects, fx.Send)[0].text == "Examples!"
    assert result.journey.survey == journey.survey


def answer_scales(journey: Journey) -> Journey:
    for value in (5, 3):
        journey = run(BUNDLE, journey, ev.ButtonTapped(answer_data(journey.asked, value))).journey
    return journey


def test_optional_comment_can_be_skipped_and_the_study_ends() -> None:
    journey = answer_scales(questionnaire_journey())
    result = run(BUNDLE, journey, ev.ButtonTapped(f"s:{journey.asked}"))
    response = of(result.effects, fx.RecordResponse)[0]
    assert (response.item_id, response.status, response.text) == ("q.comment", "skipped", None)
    assert result.journey.stage is Stage.FINISHED
    assert "Thank you" in of(result.effects, fx.Send)[-1].text
    assert fx.SetSessionState("p1-1", "ended") in result.effects


def test_comment_is_stored_and_length_is_checked() -> None:
    journey = answer_scales(questionnaire_journey())
    too_long = run(BUNDLE, journey, ev.TextReceived("x" * 21))
    assert "under 20" in of(too_long.effects, fx.Send)[0].text
    result = run(BUNDLE, journey, ev.TextReceived("Nice bot"))
    assert of(result.effects, fx.RecordResponse)[0].text == "Nice bot"
    finished = run(BUNDLE, result.journey, ev.TextReceived("hello?"))
    assert "already completed" in of(finished.effects, fx.Send)[0].text


def test_silence_gives_one_reminder_then_abandonment_then_resume() -> None:
    journey = in_dialogue(now=0.0)
    assert next_deadline(BUNDLE, journey) == 60.0
    assert run(BUNDLE, journey, ev.Tick(), 30.0).effects == ()
    reminded = run(BUNDLE, journey, ev.Tick(), 61.0)
    assert "still there" in of(reminded.effects, fx.Send)[0].text
    assert run(BUNDLE, reminded.journey, ev.Tick(), 120.0).effects == ()
    assert next_deadline(BUNDLE, reminded.journey) == 600.0
    abandoned = run(BUNDLE, reminded.journey, ev.Tick(), 601.0)
    assert abandoned.journey.abandoned and abandoned.journey.stage is Stage.DIALOGUE
    assert fx.SetSessionState("p1-1", "abandoned") in abandoned.effects
    assert next_deadline(BUNDLE, abandoned.journey) is None
    back = run(BUNDLE, abandoned.journey, ev.TextReceived("sorry"), 5000.0)
    assert fx.SetSessionState("p1-1", "dialogue") in back.effects
    assert of(back.effects, fx.CallSystem) and not back.journey.abandoned


def test_studies_may_close_abandoned_sessions() -> None:
    bundle = make_bundle(timing=Timing(reminder_after=60, abandon_after=600, close_abandoned=True))
    journey = in_dialogue(bundle)
    closed = run(bundle, journey, ev.Tick(), 601.0)
    assert closed.journey.stage is Stage.CLOSED
    assert of(closed.effects, fx.CloseSession)[0].reason == "abandoned"
    later = run(bundle, closed.journey, ev.TextReceived("hi"), 700.0)
    assert "closed" in of(later.effects, fx.Send)[0].text


def test_time_limit_ends_the_task_on_tick_and_after_a_message() -> None:
    limited = BUNDLE.scenarios["task"].model_copy(update={"time_limit": 100.0})
    bundle = BUNDLE.model_copy(update={"scenarios": {"task": limited}})
    journey = in_dialogue(bundle)
    assert next_deadline(bundle, journey) == 60.0
    ticked = run(bundle, replace(journey, reminded=True), ev.Tick(), 100.0)
    assert of(ticked.effects, fx.CloseSession)[0].reason == "time_limit"
    late = run(bundle, journey, ev.TextReceived("still here"), 150.0)
    assert of(late.effects, fx.CloseSession)[0].reason == "time_limit"
    assert of(late.effects, fx.RecordEvent)[0].data == {"text": "still here"}
    assert not of(late.effects, fx.CallSystem)


def test_recovery_calls_the_system_again_for_a_pending_message() -> None:
    journey = run(BUNDLE, in_dialogue(), ev.TextReceived("hi")).journey
    result = run(BUNDLE, journey, ev.Recovered())
    assert of(result.effects, fx.CallSystem)[0].conversation.message == "hi"
    assert run(BUNDLE, in_dialogue(), ev.Recovered()).effects == ()


def test_state_round_trips_through_json() -> None:
    journey = questionnaire_journey()
    assert Journey.from_json(journey.to_json()) == journey
    talking = exchange(in_dialogue(), "a", "b").journey
    assert Journey.from_json(talking.to_json()) == talking
