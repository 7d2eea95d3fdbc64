"""A tap counts only on a message the bot sent to that chat with that button, still live:
the pure engine, fed taps on the messages the runner says it sent (and on others)."""

from __future__ import annotations

import json
from dataclasses import replace

from bot.core.conversation import SystemReply
from bot.core.vocabulary import Consent
from bot.engine import effects as fx
from bot.engine import events as ev
from bot.engine.annotating.flow import step as annotator_step
from bot.engine.annotating.model import Annotating, RecordRating, Reloaded
from bot.engine.callbacks import Channel, SurveyTap, TapAction, encode
from bot.engine.flow import Step
from bot.engine.journey import Journey, Keyboard, Stage
from scenarios.models import StudyBundle
from tests.test_engine import BUNDLE, answer_data, of, run
from tests.test_engine_annotating import CUES, joined, sent, tap, task

STALE = fx.Toast(BUNDLE.study.texts.already_recorded)
FORGED = 999_999  # a message id the bot never sent


class Chat:
    """The runner's part, by hand: every message the engine sends gets the next id, the
    answers the runner gives to it (``MessageSent``, ``KeyboardShown``) go back in, and a
    tap lands on the newest message showing its button unless told which."""

    def __init__(self, bundle: StudyBundle = BUNDLE) -> None:
        self.bundle = bundle
        self.journey: Journey | None = None
        self.last_id = 100
        self.showing: dict[str, int] = {}  # button data -> the newest message with it

    def do(self, event: ev.Event, now: float = 1.0) -> Step:
        result = run(self.bundle, self.journey, event, now)
        self.journey = result.journey
        for effect in result.effects:
            if not isinstance(effect, fx.Send):
                continue
            self.last_id += 1
            for data in fx.callback_data(effect.buttons):
                self.showing[data] = self.last_id
            answer: ev.Event | None = None
            if effect.remember:
                answer = ev.MessageSent(self.last_id)
            elif effect.until is not None:
                data = fx.callback_data(effect.buttons)
                answer = ev.KeyboardShown(self.last_id, effect.until, data)
            if answer is not None:
                self.journey = run(self.bundle, self.journey, answer, now).journey
        return result

    def tap(self, data: str, message_id: int | None = None, now: float = 1.0) -> Step:
        on = self.showing[data] if message_id is None else message_id
        return self.do(ev.ButtonTapped(data, on), now)

    def in_dialogue(self) -> Journey:
        self.do(ev.StartCommand())
        self.tap("c:y")
        assert self.journey is not None and self.journey.stage is Stage.DIALOGUE
        return self.journey


def test_an_old_yes_after_no_erases_nothing() -> None:
    chat = Chat()
    chat.in_dialogue()
    chat.do(ev.WithdrawCommand())
    prompt = chat.showing["w:y"]
    no = chat.tap("w:n")
    assert fx.RemoveButtons(prompt) in no.effects  # answered: its buttons go
    assert not of(no.effects, fx.Erase)
    chat.do(ev.TextReceived("still here"))
    before = chat.journey

    old_yes = chat.tap("w:y", prompt)
    assert not of(old_yes.effects, fx.Erase)
    assert old_yes.effects == (STALE,)
    assert old_yes.journey == before


def test_a_yes_on_a_message_the_bot_never_sent_erases_nothing() -> None:
    chat = Chat()
    journey = chat.in_dialogue()
    brief = chat.showing["done"]  # a message with buttons, but not these
    for message_id in (FORGED, brief, None):
        forged = chat.tap("w:y", message_id) if message_id else chat.do(ev.ButtonTapped("w:y"))
        assert forged.effects == (STALE,), message_id
        assert forged.journey == journey


def test_a_consent_tap_on_a_message_the_bot_never_sent_is_not_taken() -> None:
    chat = Chat()
    chat.do(ev.StartCommand())
    journey = chat.journey
    forged = chat.tap("c:y", FORGED)
    assert forged.effects == (STALE,) and forged.journey == journey
    assert not of(forged.effects, fx.RecordConsent)
    agreed = chat.tap("c:y")  # on the agreement itself
    assert fx.RecordConsent(Consent.ACCEPTED) in agreed.effects


def test_a_tap_on_the_unrecorded_first_copy_of_a_re_sent_message_counts() -> None:
    """A crash between sending and recording the message id: the agreement goes out again and
    only the second copy's id is known. The first copy (an older id) shows the same buttons
    and means the same; a newer id than any sent is still forged, and without a re-send an
    unknown older id is too."""
    chat = Chat()
    started = run(BUNDLE, None, ev.StartCommand(), 1.0)  # its answers lost in the crash
    [agreement] = [e for e in started.effects if isinstance(e, fx.Send) and e.until]
    data = fx.callback_data(agreement.buttons)
    lost_copy, again = 102, 104
    shown = ev.KeyboardShown(again, agreement.until, data, resent=True)
    chat.journey = run(BUNDLE, started.journey, shown, 1.0).journey
    before = chat.journey
    assert chat.tap("c:y", again + 1).effects == (STALE,) and chat.journey == before
    agreed = chat.tap("c:y", lost_copy)
    assert fx.RecordConsent(Consent.ACCEPTED) in agreed.effects
    assert fx.RemoveButtons(again) in agreed.effects  # the copy it knows loses its buttons
    assert chat.tap("c:y", lost_copy).effects == (STALE,)  # once

    plain = ev.KeyboardShown(again, agreement.until, data)
    never_resent = run(BUNDLE, started.journey, plain, 1.0).journey
    older = run(BUNDLE, never_resent, ev.ButtonTapped("c:y", lost_copy), 1.0)
    assert older.effects == (STALE,)


def test_an_answer_on_the_first_copy_of_a_re_sent_questionnaire_item_counts() -> None:
    chat = Chat()
    chat.in_dialogue()
    chat.do(ev.DoneCommand())
    journey = chat.journey
    assert journey is not None and journey.survey is not None
    again = journey.survey.message_id
    assert again is not None
    chat.journey = run(BUNDLE, journey, ev.MessageSent(again, resent=True), 1.0).journey
    data = answer_data(journey.survey.asked, 4)
    assert chat.tap(data, again + 1).effects == (STALE,)
    [answer] = of(chat.tap(data, again - 1).effects, fx.RecordResponse)
    assert answer.value == 4
    assert chat.tap(data, again - 1).effects == (STALE,)  # that item is answered


def test_only_the_newest_withdraw_prompt_asks_and_yes_takes_its_buttons_too() -> None:
    chat = Chat()
    chat.in_dialogue()
    chat.do(ev.WithdrawCommand())
    first = chat.showing["w:y"]
    again = chat.do(ev.WithdrawCommand())
    assert fx.RemoveButtons(first) in again.effects  # one question open at a time
    assert chat.tap("w:y", first).effects == (STALE,)
    second = chat.showing["w:y"]
    yes = chat.tap("w:y", second)
    assert yes.journey is None
    assert of(yes.effects, fx.Erase) and fx.RemoveButtons(second) in yes.effects
    assert yes.effects.index(fx.RemoveButtons(second)) < yes.effects.index(fx.Erase())


def test_the_withdraw_prompt_outlives_the_phase_it_was_asked_in() -> None:
    chat = Chat()
    chat.in_dialogue()
    chat.do(ev.WithdrawCommand())
    prompt = chat.showing["w:y"]
    ended = chat.do(ev.DoneCommand())  # the task ends: its buttons go, not the question
    assert fx.RemoveButtons(prompt) not in ended.effects
    assert chat.journey is not None and chat.journey.stage is Stage.QUESTIONNAIRE
    assert of(chat.tap("w:n", prompt).effects, fx.Send)[0].text.startswith("You are still")


def test_a_button_counts_only_on_the_message_that_shows_it() -> None:
    chat = Chat()
    chat.in_dialogue()
    brief = chat.showing["done"]
    chat.do(ev.TextReceived("hi"))
    rasa = SystemReply(("Pick one",), buttons=(("Red", "/red"),))
    chat.do(ev.SystemReplied(rasa, 5.0))
    offered = chat.showing["sb:1:0"]
    before = chat.journey
    # "Finish task" forged onto the system's buttons, the system's button onto the brief
    for data, message_id in (("done", offered), ("sb:1:0", brief)):
        assert chat.tap(data, message_id).effects == (STALE,)
        assert chat.journey == before
    assert of(chat.tap("sb:1:0").effects, fx.RecordUserTurn)[0].text == "Red"


def test_a_questionnaire_answer_counts_only_on_its_message() -> None:
    chat = Chat()
    chat.in_dialogue()
    chat.do(ev.DoneCommand())
    journey = chat.journey
    assert journey is not None and journey.survey is not None
    data = answer_data(journey.survey.asked, 4)
    assert chat.tap(data, FORGED).effects == (STALE,)
    assert chat.journey == journey
    [answer] = of(chat.tap(data).effects, fx.RecordResponse)
    assert answer.value == 4


def test_start_shows_the_question_again_and_the_old_one_loses_its_buttons() -> None:
    chat = Chat()
    chat.in_dialogue()
    chat.do(ev.DoneCommand())
    journey = chat.journey
    assert journey is not None and journey.survey is not None
    old = journey.survey.message_id
    data = answer_data(journey.survey.asked, 4)
    again = chat.do(ev.StartCommand())
    assert old is not None and fx.RemoveButtons(old) in again.effects
    assert chat.tap(data, old).effects == (STALE,)
    assert of(chat.tap(data).effects, fx.RecordResponse)


def test_a_journey_stored_before_taps_were_tied_to_messages_keeps_its_place() -> None:
    """An upgrade mid-study: keyboards stored without their data still take their own
    buttons (judged by the phase as before), never a withdrawal; taps from the inbox
    without a message count as before, except a withdrawal."""
    chat = Chat()
    chat.do(ev.StartCommand())
    assert chat.journey is not None
    assert Journey.from_json(chat.journey.to_json()) == chat.journey  # with the buttons' data
    stored = json.loads(chat.journey.to_json())
    stored["keyboards"] = [[k[0], k[1]] for k in stored["keyboards"]]
    old = Journey.from_json(json.dumps(stored))
    [agreement] = old.keyboards
    assert agreement == Keyboard(agreement.until, chat.showing["c:y"], None)
    assert run(BUNDLE, old, ev.ButtonTapped("w:y", agreement.message_id)).effects == (STALE,)
    assert run(BUNDLE, old, ev.ButtonTapped("w:y")).effects == (STALE,)
    for tapped in (ev.ButtonTapped("c:y", agreement.message_id), ev.ButtonTapped("c:y")):
        assert fx.RecordConsent(Consent.ACCEPTED) in run(BUNDLE, old, tapped).effects


# --- annotators ---------------------------------------------------------------------------


def on(event: ev.ButtonTapped, message_id: int | None) -> ev.ButtonTapped:
    return replace(event, message_id=message_id)


def test_an_annotators_tap_counts_only_on_the_item_message() -> None:
    state = sent(joined(CUES, "hri-cues", task("hri-cues", 1))[0], message_id=50)
    after, effects = annotator_step(CUES, state, on(tap(state, 3), FORGED), 1.0)
    assert after == state
    assert effects == [fx.Toast("That one is done: your rating is recorded.")]
    _, effects = annotator_step(CUES, state, on(tap(state, 3), 50), 1.0)
    assert [r.value for r in effects if isinstance(r, RecordRating)] == [4]


def test_after_a_restart_the_annotators_tap_names_the_item_message() -> None:
    """The store keeps no message ids: the item on screen before a restart is answered by
    its buttons (numbered by target and item) and edited in place from then on."""
    state, _ = annotator_step(
        CUES, None, Reloaded("A-1", "hri-cues", False, task("hri-cues", 2, position=1)), 0.0
    )
    assert isinstance(state, Annotating) and state.survey is not None
    assert state.survey.message_id is None
    earlier_target = SurveyTap(Channel.ANNOTATION, TapAction.ANSWER, 1, 2)
    old = ev.ButtonTapped(encode(earlier_target), 40)
    assert annotator_step(CUES, state, old, 1.0)[1] == [
        fx.Toast("That one is done: your rating is recorded.")
    ]
    after, effects = annotator_step(CUES, state, on(tap(state, 3), 41), 1.0)
    assert [r.value for r in effects if isinstance(r, RecordRating)] == [4]
    assert any(isinstance(e, fx.Edit) and e.message_id == 41 for e in effects)
    assert after is not None
