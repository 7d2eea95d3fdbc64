"""Every system adapter, end to end: the bot, the Bot API emulator and a real local server.

Each test starts the real bot with a study whose ``systems`` point at a fake protocol server
on 127.0.0.1 (see ``tests/fake_servers.py``) and *no* ``systems=``, so the registry builds
the adapters from the study file as ``ozlab run`` does. The servers answer normally, slowly,
with errors or with garbage; the tests check what the participant saw in the emulator and
what the database holds. Nothing sleeps: every wait is on a condition, with a timeout.
"""

from __future__ import annotations

import contextlib
import json
import logging
import math
import re
from dataclasses import dataclass
from typing import Any

import pytest

from bot.core.privacy import Privacy
from bot.engine.assignment import assign_scenarios
from bot.pilot.emulator import BotApiEmulator, Participant
from bot.systems.demo import ALEX_WISHLIST, DemoShop
from bot.systems.served_demo import demo_app
from scenarios.models import StudyBundle
from tests.adapter_studies import (
    EMPTY_TEXT_ERROR,
    KINDS,
    Kind,
    fake,
    spec,
    with_systems,
)
from tests.conftest import SECRET, RunningBot, StartBot, consent, say
from tests.e2e_support import Shopper, database_bytes
from tests.fake_servers import FakeHttp, FakeOpenAI, FakeRasa, Mode, closed_port_url, serving
from tests.store_reads import pick

pytestmark = pytest.mark.slow

POLITE = "Sorry, the assistant could not answer. Please send your message again."
SLOW = "Sorry, the assistant is taking long. Please send your message again."


@dataclass(frozen=True)
class Exchange:
    session_id: str
    turn: int
    user_text: str
    system_text: str | None
    latency_ms: float | None
    error: str | None


def exchanges(bot: RunningBot) -> list[Exchange]:
    """Every exchange row, in the order they were stored."""
    rows = sorted(bot.exchanges(), key=lambda row: row["exchange_id"])
    columns = ("session_id", "turn", "user_text", "system_text", "latency_ms", "error")
    return [Exchange(*row) for row in pick(rows, *columns)]


def events(bot: RunningBot, kind: str) -> list[dict[str, Any]]:
    """The data of every event of ``kind``, in order."""
    return [json.loads(event["data"]) for event in bot.events(kind)]


def the_session(bot: RunningBot) -> str:
    """The id of the one session stored."""
    [(session_id,)] = pick(bot.sessions(), "session_id")
    return str(session_id)


def new_sessions(bot: RunningBot, before: set[str]) -> list[dict[str, Any]]:
    """The sessions stored since the ids in ``before`` were."""
    return [s for s in bot.sessions() if s["session_id"] not in before]


def echo(message: str) -> str:
    return f"Reply to {message}"


def echo_llm(body: dict[str, Any]) -> str:
    """``echo`` for an OpenAI request body: the reply to its last message."""
    return echo(body["messages"][-1]["content"])


async def send(p: Participant, text: str, count: int = 1) -> list[str]:
    """Send ``text`` and return the texts of the bot's next ``count`` messages."""
    before = len(p.messages)
    await p.send_text(text)
    await p.wait_for_message_count(before + count)
    return [m.text for m in p.messages[before : before + count]]


async def refused(p: Participant, text: str, polite: str = POLITE) -> None:
    """Send ``text`` and wait for the polite answer to a failed system call."""
    await p.send_text(text)
    await p.wait_for_text(polite)


def http_url(kind: Kind, base: str) -> str:
    """Where a study would point ``kind`` on a server at ``base`` (http has no fixed path)."""
    return base + "/chat" if kind == "http" else base


# --- normal behaviour, one protocol at a time ------------------------------------------------


async def test_openai_gets_the_filled_prompt_and_the_trimmed_history(
    emulator: BotApiEmulator, start_bot: StartBot, hmd: StudyBundle
) -> None:
    """The LLM must see the scenario's brief in its prompt and only ``history_turns``
    exchanges of history, and its answer must reach the participant and the record."""
    async with FakeOpenAI(reply=echo_llm) as server:
        llm = spec(
            "openai",
            server,
            system_prompt="You help a shopper. Task: {brief} ({scenario})",
            history_turns=1,
            temperature=0.2,
            max_tokens=64,
        )
        bot = await start_bot(with_systems(hmd, llm))
        p = emulator.participant(1001)
        await consent(p)
        assert [await say(p, text) for text in ("first", "second", "third")] == [
            "Reply to first",
            "Reply to second",
            "Reply to third",
        ]

    assert [r.path for r in server.requests] == ["/v1/chat/completions"] * 3
    brief = hmd.scenario("hmd-gift").brief
    prompt = {"role": "system", "content": f"You help a shopper. Task: {brief} (hmd-gift)"}
    first, _, third = (r.json for r in server.requests)
    assert first == {
        "model": "test-model",
        "messages": [prompt, {"role": "user", "content": "first"}],
        "temperature": 0.2,
        "max_tokens": 64,
    }
    assert third["messages"] == [
        prompt,
        {"role": "user", "content": "second"},
        {"role": "assistant", "content": "Reply to second"},
        {"role": "user", "content": "third"},
    ]
    rows = exchanges(bot)
    assert [(r.turn, r.user_text, r.system_text, r.error) for r in rows] == [
        (1, "first", "Reply to first", None),
        (2, "second", "Reply to second", None),
        (3, "third", "Reply to third", None),
    ]
    assert all(r.latency_ms is not None and r.latency_ms > 0 for r in rows)


def rasa_answers(body: dict[str, Any]) -> list[dict[str, Any]]:
    """A small Rasa assistant: three messages with buttons, then answers to the payloads."""
    match body["message"]:
        case "/affirm":
            return [{"text": "Here are adventure games for Linux."}]
        case "buy it":
            return [{"text": "Added to your wishlist!"}, {"custom": {"event": "task_success"}}]
        case _:
            buttons = [
                {"title": "Yes please", "payload": "/affirm"},
                {"title": "No thanks", "payload": "/deny"},
            ]
            return [
                {"text": "Hello!"},
                {"text": "I can look for games."},
                {"text": "Games for Linux?", "buttons": buttons},
            ]


async def test_rasa_messages_arrive_in_order_and_buttons_send_their_payload(
    emulator: BotApiEmulator, start_bot: StartBot, hmd: StudyBundle
) -> None:
    """Rasa answers with several messages and buttons: all must arrive in order, a tap must
    reach Rasa as its payload while the record keeps the title the participant chose, and a
    custom ``task_success`` event must end the task."""
    async with FakeRasa(rasa_answers) as server:
        bot = await start_bot(with_systems(hmd, spec("rasa", server)))
        p = emulator.participant(1002)
        await consent(p)
        session_id = the_session(bot)

        assert await send(p, "hi", count=3) == [
            "Hello!",
            "I can look for games.",
            "Games for Linux?",
        ]
        offer = p.messages[-1]
        assert offer.keyboard == [[("Yes please", "sb:1:0")], [("No thanks", "sb:1:1")]]

        await p.tap(text="Yes please")
        await p.wait_for_text("Here are adventure games for Linux.")
        await p.wait_for_answer()  # the tap itself was answered (no spinning button)
        assert server.last.json == {"sender": session_id, "message": "/affirm"}

        requests = len(server.requests)
        await p.wait_for(lambda q: not offer.buttons)  # answered: the offer's buttons went
        await p.send_callback("sb:1:1", message_id=offer.message_id)  # tapped before they went
        await p.wait_for_toast("already recorded")
        assert len(server.requests) == requests  # never sent to Rasa

        await p.send_text("buy it")
        await p.wait_for_text("Added to your wishlist!")
        await p.wait_for_text("1/5")

    assert [r.json["sender"] for r in server.requests] == [session_id] * 3
    assert [r.json["message"] for r in server.requests] == ["hi", "/affirm", "buy it"]
    rows = exchanges(bot)
    assert [(r.turn, r.user_text, r.system_text, r.error) for r in rows] == [
        (1, "hi", "Hello!\n\nI can look for games.\n\nGames for Linux?", None),
        (2, "Yes please", "Here are adventure games for Linux.", None),
        (3, "buy it", "Added to your wishlist!", None),
    ]
    assert all(r.latency_ms is not None and r.latency_ms > 0 for r in rows)
    assert events(bot, "button_tapped") == [{"title": "Yes please", "payload": "/affirm"}]
    assert pick(bot.sessions(), "end_reason", "success") == [("success", 1)]


async def test_http_maps_the_request_and_the_response_with_dotted_paths(
    emulator: BotApiEmulator, start_bot: StartBot, hmd: StudyBundle
) -> None:
    """A homemade service must get the body the study maps (nested paths, history, turn) and
    its answer must be read from the mapped paths, each listed message sent on its own."""

    def answer(body: dict[str, Any]) -> dict[str, Any]:
        more = ["(2 games found)", {"text": "(sorted by price)"}, {"image": "cover.png"}]
        return {"reply": {"text": f"Service: {body['input']['text']}", "more": more}}

    async with FakeHttp(answer, path="/api/chat") as server:
        service = spec(
            "http",
            server,
            request={
                "input.text": "message",
                "meta.session": "session_id",
                "meta.turn": "turn",
                "meta.scenario": "scenario_id",
                "context.history": "history",
            },
            response={"text": "reply.text", "messages": "reply.more"},
        )
        bot = await start_bot(with_systems(hmd, service))
        p = emulator.participant(1003)
        await consent(p)
        session_id = the_session(bot)
        first = await send(p, "hello", count=3)
        assert first == ["Service: hello", "(2 games found)", "(sorted by price)"]
        assert await send(p, "more", count=3) == ["Service: more", *first[1:]]

    shown = "Service: hello\n\n(2 games found)\n\n(sorted by price)"
    assert [r.json for r in server.requests] == [
        {
            "input": {"text": "hello"},
            "meta": {"session": session_id, "turn": 1, "scenario": "hmd-gift"},
            "context": {"history": []},
        },
        {
            "input": {"text": "more"},
            "meta": {"session": session_id, "turn": 2, "scenario": "hmd-gift"},
            "context": {"history": [{"user": "hello", "system": shown}]},
        },
    ]
    rows = exchanges(bot)
    assert [(r.user_text, r.system_text, r.error) for r in rows] == [
        ("hello", shown, None),
        ("more", shown.replace("hello", "more"), None),
    ]
    assert all(r.latency_ms is not None and r.latency_ms > 0 for r in rows)


async def test_http_against_the_served_demo_reaches_task_success(
    emulator: BotApiEmulator, start_bot: StartBot, hmd: StudyBundle
) -> None:
    """``ozlab serve-demo`` behind the http adapter must behave like the in-process demo: the
    same replies word for word, and its ``task_success`` event must end the task."""
    async with serving(demo_app("v1")) as url:
        shop = spec(
            "http",
            url + "/",
            id="shop",
            timeout=5.0,
            response={"text": None, "messages": "messages", "events": "events"},
        )
        bot = await start_bot(with_systems(hmd, shop))
        p = emulator.participant(1004)
        await consent(p)
        shopper = Shopper(p, DemoShop("v1"), start=len(p.messages))
        found = await shopper.say("Hi! I need adventure games for Linux")
        titles = re.findall(r"^\d+\. (.+?),", "\n\n".join(found.texts), re.MULTILINE)
        assert titles, found
        await shopper.say(f"Is {titles[0]} on Alex's wishlist?")
        gift = next(t for t in titles if t not in ALEX_WISHLIST)
        added = await shopper.say(f"add {gift} to my wishlist")
        assert "task_success" in added.events
        await p.wait_for_text("This task is over.")
        await p.wait_for_text("1/5")

    assert pick(bot.sessions(), "system_id", "end_reason", "success") == [("shop", "success", 1)]
    rows = exchanges(bot)
    assert [r.system_text for r in rows] == [t.system for t in shopper.history]
    assert all(r.error is None and r.latency_ms and r.latency_ms > 0 for r in rows)


async def test_a_custom_python_adapter_answers_and_ends_the_dialogue(
    emulator: BotApiEmulator, start_bot: StartBot, hmd: StudyBundle
) -> None:
    """The documented example (``type: python``, built with the study's options) must work
    as a system: its replies are shown and stored, its ``end_dialogue`` ends the task."""
    system = spec(
        "python", id="echo", entry="bot.systems.examples.echo:Echo", options={"prefix": "Echo: "}
    )
    bot = await start_bot(with_systems(hmd, system))
    p = emulator.participant(1005)
    await consent(p)
    assert await say(p, "hello there") == "Echo: hello there"
    assert await say(p, "bye") == "Goodbye!"
    await p.wait_for_text("1/5")
    assert pick(bot.sessions(), "system_id", "end_reason", "success") == [
        ("echo", "system_ended", 0)
    ]
    rows = exchanges(bot)
    assert [(r.user_text, r.system_text, r.error) for r in rows] == [
        ("hello there", "Echo: hello there", None),
        ("bye", "Goodbye!", None),
    ]
    assert all(r.latency_ms is not None and r.latency_ms > 0 for r in rows)


async def test_a_custom_adapter_that_refuses_crashes_or_hangs_gets_the_polite_path(
    emulator: BotApiEmulator, start_bot: StartBot, hmd: StudyBundle
) -> None:
    """A researcher's own class is trusted least: its failures, its bugs, a blank answer and
    a hang must all become an error row and a polite message, and it must answer again."""
    system = spec(
        "python", id="moody", entry="tests.adapter_studies:Moody", options={}, timeout=0.3
    )
    bot = await start_bot(with_systems(hmd, system))
    p = emulator.participant(1006)
    await consent(p)
    for message in ("refuse", "crash", "blank"):
        await refused(p, message)
    await refused(p, "slow", SLOW)  # a hang is told apart: the system is taking long
    assert await say(p, "hello") == "Moody heard: hello"
    rows = exchanges(bot)
    assert [(r.user_text, r.system_text) for r in rows[:4]] == [
        ("refuse", None),
        ("crash", None),
        ("blank", None),
        ("slow", None),
    ]
    errors = [r.error or "" for r in rows]
    assert "the model is still loading" in errors[0]
    assert "KeyError" in errors[1] and "choices" in errors[1]
    assert "empty reply" in errors[2]
    assert "within 0.3 s" in errors[3]
    assert rows[4].error is None and rows[4].system_text == "Moody heard: hello"


@pytest.mark.parametrize("limit", [0.05, 0.6])
async def test_a_hang_ends_at_the_studys_timeout_shorter_or_longer_than_typing(
    emulator: BotApiEmulator, start_bot: StartBot, hmd: StudyBundle, limit: float
) -> None:
    """The deadline of a call is set once "typing…" shows, or at once when it comes sooner:
    either way a hang ends a moment after the study's timeout, not later."""
    system = spec(
        "python", id="moody", entry="tests.adapter_studies:Moody", options={}, timeout=limit
    )
    bot = await start_bot(with_systems(hmd, system))
    p = emulator.participant(1007)
    await consent(p)
    await refused(p, "slow", SLOW)
    [row] = exchanges(bot)
    assert row.error is not None and f"within {limit:g} s" in row.error
    assert row.latency_ms is not None and limit * 1000 <= row.latency_ms < limit * 1000 + 900


@pytest.mark.parametrize(
    "kind",
    [
        "rasa",
        "http",
        "python",
    ],
)
async def test_a_reply_with_only_a_task_success_event_ends_the_task(
    emulator: BotApiEmulator, start_bot: StartBot, hmd: StudyBundle, kind: str
) -> None:
    """A system may end the task without a word (a Rasa action sending only
    ``{"event": "task_success"}``, a service answering only ``events``): the event must
    still count, as the runner intends, rather than be taken for an empty reply."""
    async with contextlib.AsyncExitStack() as stack:
        if kind == "rasa":
            server = await stack.enter_async_context(
                FakeRasa([{"custom": {"event": "task_success"}}])
            )
            system = spec("rasa", server)
        elif kind == "http":
            server = await stack.enter_async_context(FakeHttp({"events": ["task_success"]}))
            system = spec("http", server, response={"events": "events"})
        else:
            system = spec("python", id="moody", entry="tests.adapter_studies:Moody")
        bot = await start_bot(with_systems(hmd, system))
        p = emulator.participant(1007)
        await consent(p)
        assert await say(p, "done") == "This task is over."
        await p.wait_for_text("1/5")
    assert pick(bot.sessions(), "end_reason", "success") == [("success", 1)]
    assert [(r.user_text, r.error) for r in exchanges(bot)] == [("done", None)]


# --- slow systems --------------------------------------------------------------------------


@pytest.mark.parametrize("kind", KINDS)
async def test_a_slow_system_shows_typing_then_the_polite_message(
    emulator: BotApiEmulator, start_bot: StartBot, hmd: StudyBundle, kind: Kind
) -> None:
    """While the system works the participant sees "typing"; past the study's timeout they
    get the polite message, the exchange keeps their message and the error, and sending it
    again works once the system answers in time."""
    async with fake(kind, echo) as server:
        bot = await start_bot(with_systems(hmd, spec(kind, server, timeout=0.5)))
        p = emulator.participant(1101)
        await consent(p)
        assert "typing" not in p.chat_actions
        before = len(p.messages)
        server.behave(Mode.HOLD, times=1)
        await p.send_text("are you there?")
        await server.wait_for_requests(1)
        await p.wait_for(lambda q: "typing" in q.chat_actions)  # the wait became noticeable
        assert len(p.messages) == before
        await p.wait_for_text(SLOW, timeout=5)

        [row] = exchanges(bot)
        assert (row.turn, row.user_text, row.system_text) == (1, "are you there?", None)
        assert row.error is not None and "no answer from" in row.error, row.error
        assert "within 0.5 s" in row.error  # the adapter kept the study's timeout itself
        assert row.latency_ms is not None and row.latency_ms >= 450

        assert await say(p, "are you there?") == "Reply to are you there?"
        server.release()
    retried = exchanges(bot)[1]
    assert (retried.turn, retried.system_text, retried.error) == (
        2,
        "Reply to are you there?",
        None,
    )


# --- failing systems -----------------------------------------------------------------------


@pytest.mark.parametrize("mode", [Mode.STATUS, Mode.RESET])
@pytest.mark.parametrize("kind", KINDS)
async def test_a_failure_within_the_retries_is_invisible(
    emulator: BotApiEmulator, start_bot: StartBot, hmd: StudyBundle, kind: Kind, mode: Mode
) -> None:
    """One 503 or one dropped connection, then success within ``retries``: the participant
    just gets the reply, and the record holds one clean exchange."""
    async with fake(kind, echo) as server:
        bot = await start_bot(with_systems(hmd, spec(kind, server, retries=1, timeout=3.0)))
        p = emulator.participant(1201)
        await consent(p)
        server.behave(mode, times=1, status=503)
        assert await say(p, "hello") == "Reply to hello"
    assert len(server.requests) == 2 and server.requests[0].body == server.requests[1].body
    [row] = exchanges(bot)
    assert (row.user_text, row.system_text, row.error) == ("hello", "Reply to hello", None)
    assert events(bot, "system_unavailable") == []
    assert POLITE not in [m.text for m in p.messages]


@pytest.mark.parametrize("cause", ["status", "refused"])
@pytest.mark.parametrize("kind", KINDS)
async def test_a_system_that_stays_down_is_marked_unavailable(
    emulator: BotApiEmulator, start_bot: StartBot, hmd: StudyBundle, kind: Kind, cause: str
) -> None:
    """Persistent 500s or a refused connection: bounded retries, then the polite message and
    an error row saying what happened; the third failure in a row is logged as the system
    becoming unavailable, and its first success again as available."""
    async with fake(kind, echo) as server:
        url = server.endpoint if kind == "http" else server.url
        if cause == "refused":
            url = http_url(kind, closed_port_url())
        else:
            server.behave(Mode.STATUS, status=500, body="model crashed")
        bot = await start_bot(with_systems(hmd, spec(kind, url, retries=1, timeout=3.0)))
        p = emulator.participant(1301)
        await consent(p)
        for count, text in enumerate(("one", "two", "three"), start=1):
            await refused(p, text)
            assert len(events(bot, "system_unavailable")) == (count == 3)

        rows = exchanges(bot)
        assert [(r.user_text, r.system_text) for r in rows] == [
            ("one", None),
            ("two", None),
            ("three", None),
        ]
        said = "answered HTTP 500 Internal Server Error: model crashed"
        if cause == "refused":
            said = "connection refused"
        for row in rows:
            assert row.error is not None and said in row.error and "after 2 attempts" in row.error
        assert events(bot, "system_unavailable") == [{"system": kind, "failures": 3}]

        if cause == "status":
            assert len(server.requests) == 6  # one retry per message, no more
            server.behave(Mode.NORMAL)
            assert await say(p, "four") == "Reply to four"
            assert events(bot, "system_available") == [{"system": kind, "failures": 0}]
    assert not bot.task.done()


async def test_new_participants_are_not_assigned_to_a_system_that_is_down(
    emulator: BotApiEmulator, start_bot: StartBot, hmd: StudyBundle
) -> None:
    """With two systems and one down, once it is marked unavailable every new participant
    must get the working one (the random design would have sent some to the broken one)."""
    async with fake("openai", "Up and running.") as server:
        down = spec("openai", closed_port_url(), id="down")
        up = spec("openai", server, id="up")
        study = with_systems(hmd, down, up)
        bot = await start_bot(study)

        unlucky = None
        for user_id in range(2001, 2021):  # the design is random: find someone on "down"
            p = emulator.participant(user_id)
            before = {s["session_id"] for s in bot.sessions()}
            await consent(p)
            [(system_id,)] = pick(new_sessions(bot, before), "system_id")
            if system_id == "down":
                unlucky = p
                break
        assert unlucky is not None
        for text in ("one", "two", "three"):
            await refused(unlucky, text)
        assert events(bot, "system_unavailable") == [{"system": "down", "failures": 3}]

        newcomers = range(3001, 3009)
        privacy = Privacy(SECRET)
        would_get = {
            assign_scenarios(study.study, privacy.pseudonym(user_id)).tasks[0][1]
            for user_id in newcomers
        }
        assert would_get == {"down", "up"}  # so what follows is not luck
        before = {s["session_id"] for s in bot.sessions()}
        for user_id in newcomers:
            await consent(emulator.participant(user_id))
        assigned = pick(new_sessions(bot, before), "system_id", "design")
        assert len(assigned) == len(newcomers)
        assert all(system == "up" and "without down" in design for system, design in assigned)
        assert await say(emulator.participant(3001), "hello") == "Up and running."


# --- garbage -------------------------------------------------------------------------------

GARBAGE: list[tuple[Mode, str | None]] = [
    (Mode.MALFORMED, "sent malformed JSON"),
    (Mode.WRONG_TYPE, "answered with content type text/html, not JSON"),
    (Mode.NON_UTF8, "sent bytes that are not UTF-8"),
    (Mode.HUGE, "more than the limit of 1,000,000"),
    (Mode.HUGE_STREAM, "more than 1,000,000 bytes"),
    (Mode.EMPTY_BODY, "sent an empty answer"),
    (Mode.EMPTY_TEXT, None),  # each protocol words it its own way: EMPTY_TEXT_ERROR
]


@pytest.mark.parametrize("kind", KINDS)
async def test_garbage_is_an_error_row_and_a_polite_message_never_a_crash(
    emulator: BotApiEmulator, start_bot: StartBot, hmd: StudyBundle, kind: Kind
) -> None:
    """Malformed JSON, HTML, non-UTF-8, 5 MB (with and without a length), nothing, no text:
    each exchange stores an error saying which, the participant is asked to try again, and
    the bot goes on serving this participant and others."""
    async with fake(kind, echo) as server:
        bot = await start_bot(with_systems(hmd, spec(kind, server, timeout=5.0)))
        p = emulator.participant(1401)
        await consent(p)
        for number, (mode, _) in enumerate(GARBAGE, start=1):
            server.behave(mode, times=1)
            await refused(p, f"message {number}")

        rows = exchanges(bot)
        assert [(r.user_text, r.system_text) for r in rows] == [
            (f"message {n}", None) for n in range(1, len(GARBAGE) + 1)
        ]
        for row, (mode, said) in zip(rows, GARBAGE, strict=True):
            assert row.error is not None and (said or EMPTY_TEXT_ERROR[kind]) in row.error, (
                mode,
                row.error,
            )
        assert len(server.requests) == len(GARBAGE)  # garbage is not retried

        other = emulator.participant(1402)
        await consent(other)
        assert await say(other, "still there?") == "Reply to still there?"
        assert await say(p, "and now?") == "Reply to and now?"
    assert not bot.task.done()
    assert emulator.internal_errors == []


# --- how replies are shown -----------------------------------------------------------------


@pytest.mark.parametrize("kind", KINDS)
async def test_a_reply_longer_than_telegram_allows_is_split(
    emulator: BotApiEmulator, start_bot: StartBot, hmd: StudyBundle, kind: Kind
) -> None:
    """Over 4096 characters Telegram refuses a message: the reply must arrive in parts that
    put it back together, and the record must keep it whole."""
    long = " ".join(f"word{i}" for i in range(2000))
    async with fake(kind, long) as server:
        bot = await start_bot(with_systems(hmd, spec(kind, server)))
        p = emulator.participant(1501)
        await consent(p)
        before = len(p.messages)
        await p.send_text("tell me everything")
        await p.wait_for_text("word1999")  # the last word: every part has arrived
    parts = [m.text for m in p.messages[before:]]
    assert len(parts) == math.ceil(len(long) / 4096) and all(len(part) <= 4096 for part in parts)
    assert " ".join(parts) == long
    [row] = exchanges(bot)
    assert (row.system_text, row.error) == (long, None)


async def test_a_long_reply_of_emoji_is_split_within_telegram_limit(
    emulator: BotApiEmulator, start_bot: StartBot, hmd: StudyBundle
) -> None:
    """An emoji is one character for Python but two UTF-16 units for Telegram's limit: an
    LLM that answers with many must still be read in full."""
    long = "😀" * 5000 + " END"
    async with fake("openai", long) as server:
        await start_bot(with_systems(hmd, spec("openai", server)))
        p = emulator.participant(1502)
        await consent(p)
        before = len(p.messages)
        await p.send_text("emoji please")
        await p.wait_for_text("END")
    assert "".join(m.text for m in p.messages[before:]).replace(" ", "") == long.replace(" ", "")


STRAY = "Deals: 2*3 games <under 20€> & free_shipping_ on *all [see] `code"


@pytest.mark.parametrize("kind", KINDS)
async def test_stray_markup_is_sent_as_plain_text(
    emulator: BotApiEmulator, start_bot: StartBot, hmd: StudyBundle, kind: Kind
) -> None:
    """By default a system's ``*``, ``_``, ``<`` must reach the participant as written:
    sent without a parse mode, Telegram can neither refuse nor reformat them."""
    async with fake(kind, STRAY) as server:
        bot = await start_bot(with_systems(hmd, spec(kind, server)))
        p = emulator.participant(1601)
        await consent(p)
        await p.send_text("any deals?")
        message = await p.wait_for_text("Deals:")
    assert (message.text, message.parse_mode, message.entities) == (STRAY, None, [])
    assert [r.system_text for r in exchanges(bot)] == [STRAY]


@pytest.mark.parametrize(
    ("form", "valid", "shown", "parse_mode", "invalid"),
    [
        (
            "markdown",
            "*Great* choice, Alex will love it\\!",
            "Great choice, Alex will love it!",
            "MarkdownV2",
            "Great choice! 2*3 = 6.",
        ),
        (
            "html",
            "<b>Great</b> choice &amp; a fair price",
            "Great choice & a fair price",
            "HTML",
            "Great choice: 2 <wow> 3",
        ),
    ],
)
async def test_a_study_can_ask_for_formatted_replies(
    emulator: BotApiEmulator,
    start_bot: StartBot,
    hmd: StudyBundle,
    form: str,
    valid: str,
    shown: str,
    parse_mode: str,
    invalid: str,
) -> None:
    """With ``format`` set, valid markup is rendered by Telegram; markup Telegram refuses is
    sent again as plain text, so the participant still gets the reply."""
    replies = {"valid": valid, "invalid": invalid}
    async with FakeOpenAI(reply=lambda body: replies[body["messages"][-1]["content"]]) as server:
        bot = await start_bot(with_systems(hmd, spec("openai", server, format=form)))
        p = emulator.participant(1701)
        await consent(p)
        await p.send_text("valid")
        rendered = await p.wait_for_text("Great")
        await p.send_text("invalid")
        fallback = await p.wait_for_text("Great")
    assert (rendered.text, rendered.parse_mode) == (shown, parse_mode)
    assert rendered.entities and rendered.entities[0]["type"] == "bold"
    assert (fallback.text, fallback.parse_mode, fallback.entities) == (invalid, None, [])
    assert POLITE not in [m.text for m in p.messages]
    assert [(r.system_text, r.error) for r in exchanges(bot)] == [(valid, None), (invalid, None)]


# --- secrets -------------------------------------------------------------------------------

API_KEY = "sk-ozlab-e2e-7f3a9c1d5b2e8f4a6c0d"


@pytest.mark.parametrize("kind", ["openai", "http"])
async def test_the_api_key_reaches_the_server_and_nowhere_else(
    emulator: BotApiEmulator,
    start_bot: StartBot,
    hmd: StudyBundle,
    kind: Kind,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    """The key named by ``api_key_env`` must be sent as a bearer token, yet never land in the
    database (rows, WAL), the log or the participant's chat, even when the server answers
    401 and echoes the header back; a 401 is not retried."""
    caplog.set_level(logging.DEBUG)
    monkeypatch.setenv("OZLAB_E2E_API_KEY", API_KEY)
    server = FakeOpenAI(reply=echo_llm, api_key=API_KEY) if kind == "openai" else fake(kind, echo)
    async with server:
        system = spec(kind, server, api_key_env="OZLAB_E2E_API_KEY", retries=2)
        bot = await start_bot(with_systems(hmd, system))
        p = emulator.participant(1801)
        await consent(p)
        assert await say(p, "hello") == "Reply to hello"
        assert server.last.headers["Authorization"] == f"Bearer {API_KEY}"

        if isinstance(server, FakeOpenAI):
            server.api_key = "sk-rotated-elsewhere-0000"  # 401 echoing the header it got
        else:
            server.behave(Mode.STATUS, status=401, body=f"bad credentials: 'Bearer {API_KEY}'")
        await refused(p, "hello again")
        assert len(server.requests) == 2  # a wrong key will not get better: no retry
        written = database_bytes(bot.db)
        await bot.stop()

    [_, failed] = exchanges(bot)
    assert failed.error is not None and "HTTP 401" in failed.error and "***" in failed.error
    assert API_KEY not in failed.error
    for data in (written, database_bytes(bot.db)):
        assert data and API_KEY.encode() not in data
    assert API_KEY not in caplog.text and "HTTP 401" in caplog.text
    assert all(API_KEY not in m.text for m in p.messages)
