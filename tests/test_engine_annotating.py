"""The annotators' flow as a pure function: events in, effects out, no store, no Telegram."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import pytest

from bot.annotation.information import informed
from bot.core.annotation import AnnotationTarget, AnnotationTask, TranscriptExchange
from bot.core.vocabulary import AnnotationLevel, AnnotationRound, AnnotatorClaim
from bot.engine import effects as fx
from bot.engine import events as ev
from bot.engine.annotating.flow import resume_survey, step
from bot.engine.annotating.model import (
    Annotating,
    AnnotatorEffect,
    Claimed,
    FinishTarget,
    RecordRating,
    Reloaded,
    Reopened,
    ReopenLast,
    SetCommands,
    SetPaused,
    TargetGone,
    TargetLoaded,
    WithdrawAnnotator,
)
from bot.engine.annotating.targets import exchange_target
from bot.engine.asking import current_item
from bot.engine.callbacks import MAX_BYTES, Channel, SurveyTap, TapAction, WithdrawTap, encode
from questionnaires.models import TextItem
from scenarios.loading import load_study
from scenarios.models import StudyBundle

CUES = load_study("hri-cues")
XREC = load_study("xrec")
EXCHANGE, SESSION = AnnotationLevel.EXCHANGE, AnnotationLevel.SESSION


def task(
    job: str,
    turn: int | None = 1,
    *,
    position: int = 0,
    turns: int = 3,
    answers: Mapping[str, str] | None = None,
) -> AnnotationTask:
    conversation = tuple(
        TranscriptExchange(i, i, f"user line {i}", 1.0, None, f"Try Moss Hollow, reply {i}", 2.0)
        for i in range(1, turns + 1)
    )
    level = EXCHANGE if turn is not None else SESSION
    name = exchange_target("p1-1", turn) if turn is not None else "p1-1"
    target = AnnotationTarget(job, name, level, position, "p1-1", turn, "shop-v1", "x")
    shown = conversation if turn is None else conversation[:turn]
    loaded = AnnotationTask(
        target,
        AnnotationRound.FIRST,
        shown,
        dict(answers or {}),
        exchange_number=turn or 0,
        exchanges=turns,
        conversation_number=1,
        conversations=2,
        next_message=None if turn is None or turn == turns else f"user line {turn + 1}",
    )
    given = informed(loaded)  # as the runtime gives it: what its reply recommends looked up
    assert given is not None
    return given


def joined(bundle: StudyBundle, job: str, first: AnnotationTask) -> tuple[Annotating, list[str]]:
    claimed = Claimed(AnnotatorClaim.JOINED, "A-1", job, False, first)
    state, effects = step(bundle, None, claimed, 0.0)
    assert state is not None
    return state, texts(effects)


def texts(effects: Sequence[AnnotatorEffect]) -> list[str]:
    return [e.text for e in effects if isinstance(e, fx.Send | fx.Edit)]


def item_of(effects: Sequence[AnnotatorEffect]) -> fx.Send | fx.Edit:
    return next(e for e in reversed(effects) if isinstance(e, fx.Send | fx.Edit) and e.buttons)


def tap(state: Annotating, index: int, action: TapAction = TapAction.ANSWER) -> ev.ButtonTapped:
    assert state.survey is not None
    return ev.ButtonTapped(encode(SurveyTap(Channel.ANNOTATION, action, state.survey.asked, index)))


def sent(state: Annotating, bundle: StudyBundle = CUES, message_id: int = 50) -> Annotating:
    after, _ = step(bundle, state, ev.MessageSent(message_id), 0.0)
    assert after is not None
    return after


def test_joining_shows_the_brief_the_conversation_and_the_first_item() -> None:
    state, said = joined(CUES, "hri-cues", task("hri-cues", 1))
    assert "annotator A-1" in said[0]
    assert said[1].startswith("How to rate") and "HRI CUES" in said[1]
    assert said[2].startswith("Examples")
    assert "no going back" in said[3]
    assert said[4].startswith("Conversation 1 of 2")
    assert "User: user line 1" in said[4] and "User: user line 2" in said[4]  # the next message
    assert said[5].startswith("Exchange 1 of 3 · conversation 1 of 2")
    _, said = joined(XREC, "xrec", task("xrec", 1))
    assert not any("Information about the recommended games" in text for text in said)
    assert state.survey is not None and state.task is not None


def test_a_tap_records_the_rating_and_the_last_item_finishes_the_target() -> None:
    state, _ = joined(CUES, "hri-cues", task("hri-cues", 1))
    state = sent(state)
    after, effects = step(CUES, state, tap(state, 3), 1.0)  # the scale's 4th point: 4
    ratings = [e for e in effects if isinstance(e, RecordRating)]
    assert [(r.item_id, r.value, r.target) for r in ratings] == [("hri-cues.exchange", 4, "p1-1#1")]
    assert any(isinstance(e, FinishTarget) and e.target == "p1-1#1" for e in effects)
    assert any(isinstance(e, fx.Edit) and e.text.endswith("✓") and not e.buttons for e in effects)
    assert after is not None and after.task is None


def test_the_next_exchange_shows_only_what_is_new() -> None:
    state, _ = joined(CUES, "hri-cues", task("hri-cues", 1))
    state = sent(state)
    finished, _ = step(CUES, state, tap(state, 3), 1.0)
    assert finished is not None
    _, effects = step(CUES, finished, TargetLoaded(task("hri-cues", 2, position=1)), 2.0)
    said = texts(effects)
    assert said[0].startswith("Conversation 1 of 2, continued")
    assert "user line 1" not in said[0] and "user line 2" not in said[0]  # shown already
    assert "reply 2" in said[0] and "user line 3" in said[0]
    assert said[1].startswith("Exchange 2 of 3")


def test_old_and_foreign_buttons_change_nothing() -> None:
    state, _ = joined(CUES, "hri-cues", task("hri-cues", 2, position=1))
    old = ev.ButtonTapped(encode(SurveyTap(Channel.ANNOTATION, TapAction.ANSWER, 1, 2)))
    participants = ev.ButtonTapped(encode(SurveyTap(Channel.FRONT, TapAction.ANSWER, 1001, 2)))
    for event in (old, participants, ev.ButtonTapped("garbage")):
        after, effects = step(CUES, state, event, 1.0)
        assert after == state
        assert effects == [fx.Toast("That one is done: your rating is recorded.")]


def test_typing_where_a_button_is_expected_hints_and_a_number_counts() -> None:
    state, _ = joined(CUES, "hri-cues", task("hri-cues", 1))
    after, effects = step(CUES, state, ev.TextReceived("lovely"), 1.0)
    assert after == state and "type a number from 1 to 5" in texts(effects)[0]
    _, effects = step(CUES, state, ev.TextReceived("2"), 1.0)
    assert [r.value for r in effects if isinstance(r, RecordRating)] == [2]


def test_back_is_refused_where_each_exchange_is_seen_once_and_asked_elsewhere() -> None:
    state, _ = joined(CUES, "hri-cues", task("hri-cues", 1))
    after, effects = step(CUES, state, ev.UnknownCommand("/back"), 1.0)
    assert after == state and "/back is not available" in texts(effects)[0]
    state, _ = joined(XREC, "xrec", task("xrec", 1))
    _, effects = step(XREC, state, ev.UnknownCommand("/back"), 1.0)
    assert effects == [ReopenLast("A-1")]


def test_pause_and_any_message_resumes_at_the_same_item() -> None:
    state, _ = joined(CUES, "hri-cues", task("hri-cues", 1))
    paused, effects = step(CUES, state, ev.UnknownCommand("/pause"), 1.0)
    assert paused is not None and paused.paused and SetPaused("A-1", True) in effects
    resumed, effects = step(CUES, paused, ev.TextReceived("I am back"), 2.0)
    assert resumed is not None and not resumed.paused
    assert effects[0] == SetPaused("A-1", False)
    assert "Welcome back" in texts(effects)[0] and texts(effects)[-1].startswith("Exchange 1 of 3")
    assert not any(isinstance(e, RecordRating) for e in effects)  # "I am back" is no answer


def test_a_restart_resumes_at_the_first_item_not_answered() -> None:
    answers = {
        "xrec-exchange.q1_recommendation_rate": "1",
        "xrec-exchange.q2_explanation_rate": "1",
        "xrec-exchange.q3_transparency": "0",
    }
    job = XREC.jobs["xrec"]
    survey = resume_survey(XREC, job, task("xrec", 1, answers=answers), 0.0, None)
    assert survey is not None
    assert [item for item, _ in survey.answers][-1] == "xrec-exchange.q3_transparency"
    state, effects = step(
        XREC, None, Reloaded("A-1", "xrec", False, task("xrec", 1, answers=answers)), 0.0
    )
    assert effects == [] and state is not None and state.survey == survey
    # The item's button, tapped before the restart, still counts after it.
    _, effects = step(XREC, state, tap(state, 0), 1.0)
    assert [r.item_id for r in effects if isinstance(r, RecordRating)] == [
        "xrec-exchange.q4_scrutability"
    ]


def test_questions_11_to_13_come_after_the_recommended_games_information() -> None:
    answers = {
        "xrec-exchange.q1_recommendation_rate": "1",
        "xrec-exchange.q2_explanation_rate": "1",
        "xrec-exchange.q3_transparency": "1",
    }
    for n, name in enumerate(
        ["scrutability", "reasonability", "coherence", "trust", "persuasiveness", "efficiency"],
        start=4,
    ):
        answers[f"xrec-exchange.q{n}_{name}"] = "3"
    state, _ = joined(XREC, "xrec", task("xrec", 1, answers=answers))  # at question 10
    state = sent(state, XREC)
    after, effects = step(XREC, state, tap(state, 0), 1.0)
    said = texts(effects)
    assert said[0].startswith("Information about the recommended games")
    assert "Moss Hollow" in said[0]
    assert "After checking the information about the recommended movie" in said[1]
    assert any(isinstance(e, fx.RemoveButtons) for e in effects)  # question 10 left behind
    assert after is not None and after.survey is not None and after.survey.message_id is None


def test_refused_codes_and_a_participant_code_in_an_annotator_chat() -> None:
    for claim, words in [
        (AnnotatorClaim.TAKEN, "another Telegram account"),
        (AnnotatorClaim.UNKNOWN, "not known"),
        (AnnotatorClaim.DROPPED, "no longer active"),
    ]:
        after, effects = step(CUES, None, Claimed(claim), 0.0)
        assert after is None and words in texts(effects)[0]
    state, _ = joined(CUES, "hri-cues", task("hri-cues", 1))
    after, effects = step(CUES, state, ev.StartCommand("SOMECODE"), 1.0)
    assert after == state and "participant codes do not work here" in texts(effects)[0]


def test_a_second_code_of_their_job_resumes_them_where_they_are() -> None:
    """The chat is already this job's annotator: said so (not "another account"), no
    welcome or brief again, the item in front of them shown again, their answers kept."""
    state, _ = joined(XREC, "xrec", task("xrec", 1))
    state = sent(state, XREC)
    answered, _ = step(XREC, state, tap(state, 0), 1.0)
    assert answered is not None and answered.survey is not None
    stored = task("xrec", 1, answers={"xrec-exchange.q1_recommendation_rate": "1"})
    claimed = Claimed(AnnotatorClaim.ALREADY, "A-1", "xrec", False, stored)
    after, effects = step(XREC, answered, claimed, 2.0)
    said = texts(effects)
    assert "already an annotator of this job" in said[0] and "unused" in said[0]
    assert not any("annotator A-1" in t or "another Telegram account" in t for t in said)
    assert after is not None and after.survey is not None
    assert after.survey.answers == answered.survey.answers  # where they were
    assert said[-1].startswith("Exchange 1 of 3") and "· 2/13" in said[-1]
    assert not any(isinstance(e, RecordRating) for e in effects)


def test_nothing_open_and_new_work_pushed() -> None:
    claimed = Claimed(AnnotatorClaim.JOINED, "A-3", "xrec", False, None)
    state, effects = step(XREC, None, claimed, 0.0)
    assert state is not None and "Nothing to rate yet" in texts(effects)[-1]
    after, effects = step(XREC, state, TargetLoaded(task("xrec", 2), pushed=True), 1.0)
    assert texts(effects)[0] == "There is more to rate:"
    assert after is not None and after.task is not None
    busy, effects = step(XREC, after, TargetLoaded(task("xrec", 3), pushed=True), 2.0)
    assert busy == after and effects == []  # busy: it comes after the one in front of them


@pytest.mark.parametrize("position", [0, 99_999_999])
def test_buttons_fit_telegrams_64_bytes(position: int) -> None:
    state, _ = joined(XREC, "xrec", task("xrec", 1, position=position))
    assert state.survey is not None
    assert all(
        len(data.encode()) <= MAX_BYTES
        for row in item_of(step(XREC, state, ev.StartCommand(), 0.0)[1]).buttons
        for _, data in row
    )


def test_a_target_given_to_someone_else_is_explained_and_the_next_one_shown() -> None:
    state, _ = joined(XREC, "xrec", task("xrec", 1))
    state = sent(state, XREC, message_id=77)
    after, effects = step(XREC, state, TargetGone(task("xrec", 2, position=1)), 1.0)
    said = texts(effects)
    assert said[0].startswith("That one was given to another annotator")
    assert said[-1].startswith("Exchange 2 of 3")
    assert after is not None and after.task is not None and after.task.target.turn == 2
    assert fx.RemoveButtons(77) in effects  # the item no longer theirs keeps no buttons
    idle, effects = step(XREC, state, TargetGone(None), 1.0)
    assert idle is not None and idle.task is None
    assert "rated everything" in texts(effects)[-1]
    assert fx.RemoveButtons(77) in effects


def test_help_says_which_job_where_they_are_and_what_they_can_do() -> None:
    state, _ = joined(XREC, "xrec", task("xrec", 2, position=1))
    [said] = texts(step(XREC, state, ev.HelpCommand(), 1.0)[1])
    assert "Explainable recommendation" in said and "Exchange 2 of 3 · conversation 1 of 2" in said
    assert "/pause" in said and "/brief" in said and "/back" in said
    cues, _ = joined(CUES, "hri-cues", task("hri-cues", 1))
    [said] = texts(step(CUES, cues, ev.HelpCommand(), 1.0)[1])
    assert "HRI CUES" in said and "/back" not in said.replace("no going back", "")
    paused, _ = step(XREC, state, ev.UnknownCommand("/pause"), 1.0)
    assert paused is not None
    after, effects = step(XREC, paused, ev.HelpCommand(), 2.0)
    assert after == paused  # /help does not resume
    assert "paused" in texts(effects)[0] and "Exchange 2 of 3" in texts(effects)[0]
    idle, _ = step(XREC, state, TargetLoaded(None), 1.0)
    assert idle is not None
    [said] = texts(step(XREC, idle, ev.HelpCommand(), 1.0)[1])
    assert "rated everything assigned to you" in said and "/brief" in said


def test_help_and_the_menu_in_the_annotators_language() -> None:
    italian = XREC.model_copy(update={"study": XREC.study.model_copy(update={"language": "it"})})
    claimed = Claimed(AnnotatorClaim.JOINED, "A-1", "xrec", False, task("xrec", 1))
    state, effects = step(italian, None, claimed, 0.0)
    assert state is not None
    [menu] = [e for e in effects if isinstance(e, SetCommands)]
    assert [name for name, _ in menu.commands] == ["help", "pause", "brief", "back", "withdraw"]
    assert menu.commands[0][1] == "Dove sei e cosa puoi fare"
    [said] = texts(step(italian, state, ev.HelpCommand(), 1.0)[1])
    assert "Stai annotando" in said and "Scambio 1 di 3" in said
    _, effects = step(CUES, None, Claimed(AnnotatorClaim.RETURNING, "A-1", "hri-cues"), 0.0)
    [menu] = [e for e in effects if isinstance(e, SetCommands)]
    assert [name for name, _ in menu.commands] == ["help", "pause", "brief", "withdraw"]  # no /back
    _, effects = step(CUES, None, Claimed(AnnotatorClaim.TAKEN), 0.0)
    assert not any(isinstance(e, SetCommands) for e in effects)  # refused: no menu


def test_back_on_a_target_whose_items_were_all_answered_asks_them_again() -> None:
    """/back reopens the last target with every item stored: its items are asked again from
    the first (an answer given again replaces the stored one); only the last finishes it."""
    state, _ = joined(XREC, "xrec", task("xrec", 1))
    stored: dict[str, str] = {}
    while state.survey is not None:
        item = current_item(XREC, state.survey)
        typed = isinstance(item, TextItem)
        event = ev.TextReceived("Fine.") if typed else tap(state, 0)
        after, effects = step(XREC, state, event, 1.0)
        assert after is not None
        stored |= {
            r.item_id: r.text or str(r.value) for r in effects if isinstance(r, RecordRating)
        }
        state = after
    assert state.task is None and len(stored) > 3
    reopened, effects = step(XREC, state, Reopened(task("xrec", 1, answers=stored)), 2.0)
    assert reopened is not None and reopened.task is not None and reopened.survey is not None
    assert not [e for e in effects if isinstance(e, FinishTarget)]
    assert current_item(XREC, reopened.survey).id == next(iter(stored))  # the first again
    assert "Exchange 1 of 3" in texts(effects)[-1]
    _, effects = step(XREC, reopened, tap(reopened, 1), 3.0)  # another answer this time
    [again] = [r for r in effects if isinstance(r, RecordRating)]
    first = next(iter(stored))
    assert again.item_id == first and str(again.value) != stored[first]
    assert not [e for e in effects if isinstance(e, FinishTarget)]


def test_withdraw_asks_and_only_the_prompt_still_waiting_erases() -> None:
    claimed = Claimed(AnnotatorClaim.JOINED, "A-1", "xrec", False, task("xrec", 1))
    state, _ = step(XREC, None, claimed, 0.0)
    state, effects = step(XREC, state, ev.WithdrawCommand(), 1.0)
    [ask] = [e for e in effects if isinstance(e, fx.Send)]
    assert "your ratings" in ask.text.lower() and ask.remember
    assert state is not None
    state, _ = step(XREC, state, ev.MessageSent(41), 1.0)
    yes, no = encode(WithdrawTap(confirm=True)), encode(WithdrawTap(confirm=False))
    # A Yes on another message: already recorded, nothing erased, still asked.
    kept, effects = step(XREC, state, ev.ButtonTapped(yes, message_id=7), 2.0)
    assert kept == state and not any(isinstance(e, WithdrawAnnotator) for e in effects)
    # No carries on, and the same prompt's Yes no longer counts.
    state, effects = step(XREC, state, ev.ButtonTapped(no, message_id=41), 2.0)
    assert state is not None and state.withdrawal is None
    assert "nothing was erased" in texts(effects)[-1]
    _, effects = step(XREC, state, ev.ButtonTapped(yes, message_id=41), 3.0)
    assert not any(isinstance(e, WithdrawAnnotator) for e in effects)
    # Asked again: Yes on the waiting prompt erases, and the chat is nobody's.
    state, _ = step(XREC, state, ev.WithdrawCommand(), 4.0)
    state, _ = step(XREC, state, ev.MessageSent(50), 4.0)
    gone, effects = step(XREC, state, ev.ButtonTapped(yes, message_id=50), 5.0)
    assert gone is None
    assert WithdrawAnnotator("A-1", "xrec") in effects
    assert "Erased: your ratings" in texts(effects)[-1]


def test_a_job_that_keeps_ratings_unlinked_says_so() -> None:
    job = XREC.jobs["xrec"].model_copy(update={"on_withdrawal": "keep_unlinked"})
    bundle = XREC.model_copy(update={"jobs": {**XREC.jobs, "xrec": job}})
    claimed = Claimed(AnnotatorClaim.JOINED, "A-1", "xrec", False, task("xrec", 1))
    state, _ = step(bundle, None, claimed, 0.0)
    state, effects = step(bundle, state, ev.WithdrawCommand(), 1.0)
    assert "kept for the research under a new pseudonym" in texts(effects)[-1]
    state, _ = step(bundle, state, ev.MessageSent(9), 1.0)
    _, effects = step(bundle, state, ev.ButtonTapped(encode(WithdrawTap(True)), 9), 2.0)
    assert "Your ratings are kept" in texts(effects)[-1]
