"""What ``ozlab chat`` prints and what a typed line means (the pure part)."""

from __future__ import annotations

from bot.pilot.chat_screen import (
    Nothing,
    Quit,
    Restart,
    Say,
    Seen,
    Tap,
    Voice,
    news,
    refusals,
    understand,
)
from scenarios.models import Texts

AGREE = Seen(10, "Do you agree?", ((("I agree", "c:y"), ("I do not agree", "c:n")),))
BRIEF = Seen(11, "Your task\nFind a game.", ((("Finish task", "t:done"),),))
REPLY = Seen(13, "1. Moss Hollow\n\n2. Skyward Caravan")


def test_a_new_message_shows_its_place_and_numbers_only_the_newest_buttons() -> None:
    assert news({}, [AGREE]) == [
        "bot #1: Do you agree?",
        "    [1] I agree   [2] I do not agree",
    ]
    assert news({10: AGREE}, [AGREE, BRIEF, REPLY]) == [
        "bot #2: Your task",
        "    Find a game.",
        "    · Finish task",
        "bot #3: 1. Moss Hollow",
        "",
        "    2. Skyward Caravan",
    ]


def test_edits_in_place_are_shown_as_such() -> None:
    item = Seen(20, "1/5 Understanding", ((("1", "a:1"), ("2", "a:2")),))
    edited = Seen(20, "2/5 Management", item.rows)
    assert news({20: item}, [edited]) == ["bot #1 (edited): 2/5 Management", "    [1] 1   [2] 2"]
    bare = Seen(20, "2/5 Management")
    assert news({20: edited}, [bare]) == ["bot #1 (buttons removed)"]
    assert news({20: bare}, [edited]) == ["bot #1 (buttons changed):", "    [1] 1   [2] 2"]
    assert news({20: edited}, [Seen(20, "gone", deleted=True)]) == ["bot #1 (deleted)"]
    assert news({20: edited}, [edited]) == []


def test_a_link_button_is_shown_and_never_numbered() -> None:
    done = Seen(30, "Thanks", ((("Return to Prolific", None), ("Again", "x")),))
    assert news({}, [done]) == ["bot #1: Thanks", "    (link) Return to Prolific   [1] Again"]
    assert understand("1", [done]) == Tap(30, "x", "Again")
    assert understand("2", [done]) == Say("2")


def test_a_number_taps_the_newest_messages_buttons_only() -> None:
    assert understand(" 2 ", [AGREE]) == Tap(10, "c:n", "I do not agree")
    assert understand("3", [AGREE]) == Say("3")
    # In the dialogue the newest message is the system's: "2" answers it.
    assert understand("2", [AGREE, BRIEF, REPLY]) == Say("2")
    assert understand("1", [AGREE, BRIEF]) == Tap(11, "t:done", "Finish task")


def test_a_label_taps_the_newest_button_so_labelled() -> None:
    assert understand("finish TASK", [AGREE, BRIEF, REPLY]) == Tap(11, "t:done", "Finish task")
    gone = Seen(11, "Your task", BRIEF.rows, deleted=True)
    assert understand("Finish task", [AGREE, gone, REPLY]) == Say("Finish task")


def test_commands_of_the_chat_itself() -> None:
    assert understand("/restart", [AGREE]) == Restart()
    assert understand("/QUIT", []) == Quit()
    assert understand("   ", [AGREE]) == Nothing()
    assert understand("/start CODE7", [AGREE]) == Say("/start CODE7")
    assert understand("/voice  ~/my note.ogg ", [AGREE]) == Voice("~/my note.ogg")
    assert understand("/Voice", [AGREE]) == Voice("")


def test_the_bots_refusals_are_known_in_any_words_their_sentence_leaves_open() -> None:
    refused = refusals(Texts(welcome="Hi", consent="Agree?", declined="Bye"))
    assert refused("Please tap one of the buttons above, or type a number from 1 to 7.")
    assert refused("Please answer the question above first.")
    assert not refused("Please answer the question above first. And more")
    assert not refused("1. Moss Hollow")


def test_after_a_refusal_a_number_taps_the_question_above_but_not_after_a_reply() -> None:
    item = Seen(20, "1/5 Understanding", ((("1", "a:1"), ("2", "a:2")),))
    hint = Seen(21, "Please tap one of the buttons above.", refusal=True)
    assert understand("2", [item, hint]) == Tap(20, "a:2", "2")
    assert news({20: item}, [item, hint]) == ["bot #2: Please tap one of the buttons above."]
    assert understand("1", [BRIEF, REPLY]) == Say("1")
    assert understand("1", [BRIEF, REPLY, hint]) == Say("1")
