"""The demo chat companion: names, topics, reflections, no repeated questions, robustness."""

from __future__ import annotations

import asyncio
import random
import re

import pytest

from bot.core.conversation import Conversation, SystemReply, Turn
from bot.systems.demo import DemoChat
from bot.systems.demo.chat import (
    ASK_NAME,
    BLANK,
    ERROR,
    FIRST_QUESTION,
    GENERAL_QUESTIONS,
    NAME,
    TOPICS,
    _Reply,
)

QUESTIONS = {q for topic in TOPICS for q in topic.questions} | set(GENERAL_QUESTIONS)


def _conversation(history: list[Turn], message: str) -> Conversation:
    return Conversation("session-1", "hri-cues-chat", "Have a chat.", tuple(history), message)


async def chat(*messages: str) -> list[str]:
    """Play messages one after another through a fresh companion, as the bot would."""
    companion = DemoChat()
    history: list[Turn] = []
    replies = []
    for message in messages:
        reply = await companion.respond(_conversation(history, message))
        assert isinstance(reply, SystemReply)
        assert len(reply.texts) == 1 and reply.events == frozenset() and reply.buttons == ()
        replies.append(reply.texts[0])
        history.append(Turn(message, "\n\n".join(reply.texts)))
    await companion.close()
    return replies


async def last(*messages: str) -> str:
    return (await chat(*messages))[-1]


def questions_in(text: str) -> list[str]:
    return [q for q in QUESTIONS if q in text]


# ----------------------------------------------------------------------------- names


@pytest.mark.parametrize(
    "first",
    [
        "Anna",
        "anna",
        "I'm Anna",
        "Hi, I'm Anna",
        "Hello! My name is Anna.",
        "it's Anna",
        "Anna Berg",
    ],
)
async def test_the_name_given_after_the_opening_line_is_used(first: str) -> None:
    reply = await last(first)
    assert reply == f"Nice to meet you, Anna! {FIRST_QUESTION}"


async def test_the_name_is_remembered_from_the_history() -> None:
    replies = await chat("I'm Anna", "good", "Do you remember my name?", "bye")
    assert "You are Anna" in replies[2]
    assert replies[3] == "It was lovely talking with you, Anna. Goodbye, and take care!"


@pytest.mark.parametrize("first", ["I'm fine", "I'm going to the shop later", "yes", "Hi Robin"])
async def test_words_that_are_not_names_are_not_taken_for_one(first: str) -> None:
    reply = await last(first)
    assert "Nice to meet you" not in reply


async def test_a_bare_greeting_is_answered_with_a_question_for_the_name() -> None:
    replies = await chat("Hello!", "Bert")
    assert replies == [ASK_NAME, f"Nice to meet you, Bert! {FIRST_QUESTION}"]


async def test_a_name_is_only_taken_from_a_later_message_when_it_is_explicit() -> None:
    replies = await chat("I'm Anna", "Sweden", "Actually, call me Annie")
    assert "Nice to meet you" not in replies[1]
    assert replies[2].startswith("Nice to meet you, Annie!")


async def test_it_says_who_it_is() -> None:
    assert f"My name is {NAME}" in await last("Anna", "What is your name?")
    assert "computer program" in await last("Anna", "Are you a robot?")


# ----------------------------------------------------------------------------- topics


@pytest.mark.parametrize(
    ("message", "topic"),
    [
        ("I love gardening and reading", "hobbies"),
        ("We watched a great movie on Sunday", "films"),
        ("I cooked pasta for dinner", "food"),
        ("I went to Italy last summer", "travel"),
        ("It has been raining all week", "weather"),
    ],
)
async def test_each_topic_gets_a_remark_and_a_question_on_it(message: str, topic: str) -> None:
    reply = await last("Anna", message)
    (expected,) = [t for t in TOPICS if t.key == topic]
    assert any(reply.startswith(remark) for remark in expected.remarks), reply
    assert any(q in reply for q in expected.questions), reply
    assert reply.endswith("?")


async def test_asking_back_gets_an_answer_about_itself_and_a_question() -> None:
    replies = await chat("Anna", "I love Italian food", "What about you?")
    food = next(t for t in TOPICS if t.key == "food")
    assert replies[2].startswith(food.about_me)
    assert replies[2].endswith("?")


async def test_do_you_like_is_answered_for_the_topic_asked_about() -> None:
    films = next(t for t in TOPICS if t.key == "films")
    assert (await last("Anna", "Do you like films?")).startswith(films.about_me)


async def test_the_topic_changes_when_asked() -> None:
    replies = await chat("Anna", "I like films", "Can we talk about something else?")
    films = next(t for t in TOPICS if t.key == "films")
    assert not any(q in replies[2] for q in films.questions)
    assert replies[2].startswith("Of course")
    assert questions_in(replies[2])


async def test_a_disliked_topic_is_left() -> None:
    reply = await last("Anna", "I don't like films")
    films = next(t for t in TOPICS if t.key == "films")
    assert reply.startswith("Fair enough")
    assert not any(q in reply for q in films.questions)


async def test_a_question_is_never_repeated_in_a_long_conversation() -> None:
    rng = random.Random(7)
    pool = [
        "ok",
        "yes",
        "no",
        "hmm",
        "I like it",
        "I went to the beach",
        "We had soup",
        "It's sunny",
        "I watched a film",
        "I read a lot",
        "and you?",
        "not really",
        "Let's talk about something else",
        "It was nice",
    ]
    messages = ["Anna", *(rng.choice(pool) for _ in range(45))]
    replies = await chat(*messages)
    asked: list[str] = []
    for reply in replies:
        asked.extend(questions_in(reply))
    assert len(asked) == len(set(asked)), [q for q in asked if asked.count(q) > 1]
    assert len(set(asked)) >= 20  # it kept finding something new to ask


async def test_after_every_question_it_moves_on_to_a_last_resort() -> None:
    replies = await chat(*["ok"] * (len(QUESTIONS) + 3))
    assert all(reply.endswith("?") for reply in replies)
    assert replies[-1].endswith("What else would you like to talk about?")


# ----------------------------------------------------------------------------- reflections


@pytest.mark.parametrize(
    ("message", "expected"),
    [
        ("I feel a bit tired today", "What makes you feel a bit tired today?"),
        ("I feel great", "What makes you feel great?"),
        ("I feel strange about my plans", "Why do you feel strange about your plans?"),
        ("I think robots are strange", "What makes you think robots are strange?"),
        ("I think you are clever", "What makes you think I am clever?"),
        ("I'm retired", "How long have you been retired?"),
        ("I am from Sweden", "What is Sweden like?"),
        ("I want a dog", "Why do you want a dog?"),
        ("I want to learn Spanish", "What makes you want to learn Spanish?"),
        ("My grandchildren visited me", "What are your grandchildren like?"),
        ("My husband is ill", "I am sorry to hear about your husband."),
    ],
)
async def test_statements_about_oneself_are_reflected(message: str, expected: str) -> None:
    assert expected in await last("Anna", message)


async def test_long_fragments_are_not_parroted() -> None:
    message = "I think that the new bus timetable in our town is really confusing for everyone"
    reply = await last("Anna", message)
    assert "timetable" not in reply


async def test_moods_are_acknowledged() -> None:
    assert (await last("Anna", "Not bad at all")).startswith(("I am glad", "That sounds lovely"))
    assert (await last("Anna", "Not good, to be honest")).startswith("I am sorry")


async def test_an_unknown_question_is_turned_back() -> None:
    assert (await last("Anna", "What is the meaning of life?")).endswith("What do you think?")


async def test_thanks_alone_is_welcomed_but_polite_thanks_is_not() -> None:
    assert (await last("Anna", "Thank you so much")).startswith("You're welcome!")
    assert not (await last("Anna", "Good, thanks")).startswith("You're welcome")


# ----------------------------------------------------------------------------- the contract


async def test_replies_are_deterministic_and_rebuilt_from_history_alone() -> None:
    messages = ["Anna", "I went to Spain", "It was lovely", "and you?", "I like cooking", "bye"]
    first = await chat(*messages)
    second = await chat(*messages)
    assert first == second
    # A new instance answering the last message only, given the history, says the same.
    history = [Turn(m, r) for m, r in zip(messages[:-1], first[:-1], strict=True)]
    reply = await DemoChat().respond(_conversation(history, messages[-1]))
    assert reply.texts == (first[-1],)


async def test_concurrent_conversations_do_not_mix() -> None:
    companion = DemoChat()

    async def talk(name: str) -> str:
        history: list[Turn] = []
        for message in (name, "I like films", "Do you remember my name?"):
            reply = await companion.respond(_conversation(history, message))
            history.append(Turn(message, reply.texts[0]))
        return history[-1].system

    anna, bert = await asyncio.gather(talk("Anna"), talk("Bert"))
    assert "You are Anna" in anna and "You are Bert" in bert


@pytest.mark.parametrize(
    "message",
    [
        "",
        "   ",
        "😊",
        "?!",
        "x" * 50_000,
        "I " * 5000,
        "\x00\x01",
        "ÅÄÖ åäö",
        "my my my my",
        "*_`[",
    ],
)
async def test_odd_messages_get_a_plain_answer(message: str) -> None:
    reply = await last("Anna", message)
    assert reply and len(reply) < 400
    assert not re.search(r"[*_`\[\]<>]", reply)
    if not message.strip():
        assert reply == BLANK


async def test_odd_histories_do_not_break_it() -> None:
    history = [Turn("", ""), Turn("x" * 20_000, "?" * 20_000), Turn("I'm Anna", "")]
    reply = await DemoChat().respond(_conversation(history, "hello"))
    assert reply.texts and reply.texts[0] != ERROR


async def test_it_never_raises_even_when_its_rules_do(monkeypatch: pytest.MonkeyPatch) -> None:
    def broken(self: _Reply) -> str:
        raise RuntimeError("a bug in a rule")

    monkeypatch.setattr(_Reply, "answer", broken)
    reply = await DemoChat().respond(_conversation([], "hello"))
    assert reply.texts == (ERROR,)


async def test_random_input_never_raises() -> None:
    rng = random.Random(3)
    alphabet = "abcdefghij klmnop?!.,'’ IÅé😊\n\t"
    companion = DemoChat()
    history: list[Turn] = []
    for _ in range(200):
        message = "".join(rng.choice(alphabet) for _ in range(rng.randrange(0, 60)))
        reply = await companion.respond(_conversation(history[-30:], message))
        assert reply.texts and reply.texts[0] != ERROR
        history.append(Turn(message, reply.texts[0]))
