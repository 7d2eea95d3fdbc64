"""Restarts, crashes and redeliveries: the participant goes on where they were, and nothing is
lost or stored twice.

Clean restarts run the bot in this process (``bot.stop()`` drains the updates in flight, then
``start_bot`` on the same database). Crashes are real: ``ozlab run`` in a subprocess, killed
with SIGKILL. A kill "right after a fetch" races the bot by design (every outcome of that race
must end the same); the kills "after the commit" are exact: :class:`GatedEmulator` parks the
one Bot API call the bot is waiting on when it dies, so the test knows what was committed.

A crash cannot be simulated in-process: cancelling ``run_bot`` leaves PTB's handler tasks and
job queue running against a closed store, which is no state a real process can be in.
"""

from __future__ import annotations

import asyncio
import hashlib
from collections.abc import AsyncIterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import pytest

from bot.core.conversation import Conversation, SystemReply
from bot.engine.phases.dialogue import SUCCESS_EVENT
from bot.pilot.emulator import BotMessage, Participant
from bot.pilot.emulator.participant import default_photo
from bot.systems.demo import DemoShop
from scenarios.models import StudyBundle
from tests.conftest import TOKEN, StartBot, consent
from tests.e2e_support import GatedEmulator, OzlabProcesses, Shopper, only_system, settle
from tests.store_reads import StoredStudy, pick

pytestmark = pytest.mark.slow

V1 = "shop-v1"
LIST = "adventure games for linux"
ASK = "Is the first one on Alex's wishlist?"
ADD = "add the second one to my wishlist"  # the second game of the list is not on Alex's


@pytest.fixture
async def emulator() -> AsyncIterator[GatedEmulator]:
    async with GatedEmulator(TOKEN) as emu:
        yield emu


@pytest.fixture
async def ozlab(
    emulator: GatedEmulator, tmp_path: Path, receiving: str
) -> AsyncIterator[OzlabProcesses]:
    processes = OzlabProcesses(emulator, tmp_path, webhook=receiving == "webhook")
    try:
        yield processes
    finally:
        await processes.close()
        assert emulator.internal_errors == []


def errors(events: Sequence[Mapping[str, Any]]) -> list[str]:
    """The kinds of the events that tell of an error (``internal_error`` and the like)."""
    return [str(e["kind"]) for e in events if "error" in str(e["kind"])]


# --- clean restarts, in process --------------------------------------------------------------


async def test_a_restart_mid_dialogue_keeps_the_history(
    emulator: GatedEmulator, start_bot: StartBot, hmd: StudyBundle
) -> None:
    """After a restart "the second one" still means the second game of the earlier list."""
    study = only_system(hmd, V1)
    bot = await start_bot(study)
    p = emulator.participant(601)
    await consent(p)
    shop = Shopper.of(p, study, V1)
    await shop.say(LIST)
    await bot.stop()
    # The shop needs the history for this one: without it there is nothing to add.
    assert SUCCESS_EVENT in shop.expect(ADD).events
    assert SUCCESS_EVENT not in shop.expect(ADD, history=False).events

    bot = await start_bot(study, db=bot.db)
    await shop.say(ADD)  # its reply is the very next message: the restart sent nothing
    item = await p.wait_for_text("1/5")

    texts = study.study.texts
    assert [m.text for m in p.messages[shop.start :]] == [
        *shop.received,
        texts.task_over,
        f"{texts.questionnaire_intro}\n\n{study.questionnaire('hmd').intro}",
        item.text,
    ]
    stored = bot.tables()
    assert pick(stored["sessions"], "system_id", "state", "end_reason", "success") == [
        (V1, "questionnaire", "success", 1)
    ]
    assert pick(stored["exchanges"], "turn", "user_text", "system_text") == [
        (1, LIST, shop.history[0].system),
        (2, ADD, shop.history[1].system),
    ]
    assert stored["responses"] == []
    assert errors(stored["events"]) == []


async def test_a_restart_mid_questionnaire_records_the_next_tap(
    emulator: GatedEmulator, start_bot: StartBot
) -> None:
    """The item on screen before the restart still takes the answer, on the same message."""
    bot = await start_bot()
    p = emulator.participant(602)
    await consent(p)
    await p.tap(text="Finish task")
    item = await p.wait_for_text("1/5")
    await p.tap(text="4 · Agree")
    await p.wait_for_text("2/5")
    await bot.stop()

    bot = await start_bot(db=bot.db)
    await p.tap(text="3 · Neutral")
    await p.wait_for_text("3/5")
    await p.tap(text="5 · Completely agree")
    await p.wait_for_text("4/5")
    await p.tap(text="2 · Disagree")
    comment = await p.wait_for_text("Additional comments")
    await p.tap(text="Skip")
    await p.wait_for_text("Thank you for taking part")

    assert comment.message_id == item.message_id  # edited in place across the restart
    stored = bot.tables()
    assert pick(stored["responses"], "item_id", "value", "status") == [
        ("hmd.understanding", 4, "answered"),
        ("hmd.management", 3, "answered"),
        ("hmd.generation", 5, "answered"),
        ("hmd.usefulness", 2, "answered"),
        ("hmd.comment", None, "skipped"),
    ]
    assert pick(stored["sessions"], "state", "end_reason", "success") == [
        ("ended", "participant_done", 0)
    ]
    assert stored["exchanges"] == []
    assert len(p.callback_answers) == 7  # consent, finish, four ratings, skip: once each


@pytest.mark.parametrize("restart", [False, True], ids=["running", "after-restart"])
async def test_an_update_delivered_twice_is_handled_once(
    emulator: GatedEmulator, start_bot: StartBot, hmd: StudyBundle, restart: bool
) -> None:
    """Telegram may hand out an update again; the inbox remembers it was handled."""
    study = only_system(hmd, V1)
    bot = await start_bot(study)
    p = emulator.participant(603 + restart)
    await consent(p)
    shop = Shopper.of(p, study, V1)
    listed = await shop.send(LIST)
    await shop.answer(listed)
    if restart:
        await bot.stop()
        bot = await start_bot(study, db=bot.db)
    emulator.redeliver(listed.update_id)
    # The redelivered update is handed out before this later one, so once this one is
    # answered, the redelivery has been consumed; its answer would have come first.
    await shop.say(ADD)
    item = await p.wait_for_text("1/5")
    rated = await p.tap(text="4 · Agree")
    await p.wait_for_text("2/5")
    if restart:
        await bot.stop()
        bot = await start_bot(study, db=bot.db)
    emulator.redeliver(rated)
    await p.tap(text="3 · Neutral")
    await p.wait_for_text("3/5")

    texts = study.study.texts
    assert [m.text for m in p.messages[shop.start :]] == [
        *shop.received,
        texts.task_over,
        f"{texts.questionnaire_intro}\n\n{study.questionnaire('hmd').intro}",
        item.text,  # one item message, edited in place: no second reply, no second item
    ]
    assert pick(bot.exchanges(), "turn", "user_text") == [
        (1, LIST),
        (2, ADD),
    ]
    assert pick(bot.responses(), "item_id", "value") == [
        ("hmd.understanding", 4),
        ("hmd.management", 3),
    ]
    assert len(p.callback_answers) == 3  # consent and two ratings; the redelivery got none
    assert bot.pending_updates() == []


class HeldShop:
    """The demo shop, answering only once the test releases it."""

    def __init__(self, *, released: bool = False) -> None:
        self.shop = DemoShop("v1")
        self.calls: list[Conversation] = []
        self.entered = asyncio.Event()
        self.release = asyncio.Event()
        if released:
            self.release.set()
        self.closed = False

    async def respond(self, conversation: Conversation) -> SystemReply:
        self.calls.append(conversation)
        self.entered.set()
        await self.release.wait()
        return self.shop.reply(conversation)

    async def close(self) -> None:
        self.closed = True


async def test_a_clean_stop_waits_for_the_system_call_in_flight(
    emulator: GatedEmulator, start_bot: StartBot, hmd: StudyBundle
) -> None:
    """Stopping while the system thinks delivers its reply first; the restart redoes nothing."""
    study = only_system(hmd, V1)
    held = HeldShop()
    bot = await start_bot(study, systems={V1: held})
    p = emulator.participant(605)
    await consent(p)
    shop = Shopper.of(p, study, V1)
    listed = await shop.send(LIST)
    await asyncio.wait_for(held.entered.wait(), 10)

    [poller] = [t for t in asyncio.all_tasks() if t.get_name() == "ozlab-poller"]
    bot.stop_event.set()
    await asyncio.wait_for(asyncio.wait({poller}), 10)  # polling is over: the bot is stopping
    assert not bot.task.done()  # ...but not before the reply
    held.release.set()
    await asyncio.wait_for(bot.task, 15)
    await shop.answer(listed, timeout=0)  # already there: sent before the bot stopped
    assert held.closed
    assert pick(bot.exchanges(), "turn", "system_text") == [(1, shop.history[0].system)]

    again = HeldShop(released=True)
    bot = await start_bot(study, systems={V1: again}, db=bot.db)
    await shop.say(ADD)
    await p.wait_for_text("1/5")
    assert len(again.calls) == 1  # only the new message: nothing was retried
    assert [(t.user, t.system) for t in again.calls[0].history] == [(LIST, shop.history[0].system)]
    assert [m.text for m in p.messages[shop.start :]][: len(shop.received)] == shop.received
    assert len(bot.exchanges()) == 2
    assert bot.events("system_call_retried") == []


# --- crashes: ozlab run killed with SIGKILL ---------------------------------------------------


async def at_the_task(ozlab: OzlabProcesses, p_id: int, hmd: StudyBundle) -> Shopper:
    """A participant who agreed and got a list of games from whichever shop they were given,
    with everything the bot did so far durable (so a kill now hits only what follows)."""
    p = ozlab.emulator.participant(p_id)
    await consent(p)
    [(system_id,)] = pick(ozlab.sessions(), "system_id")
    shop = Shopper.of(p, hmd, system_id)
    await shop.say(LIST)
    assert SUCCESS_EVENT in shop.expect(ADD).events
    await settle(p)
    shop.start = len(p.messages)
    return shop


def assert_dialogue_complete(study: StoredStudy, shop: Shopper) -> None:
    """One row per message, each with the answer the participant got, in order."""
    stored = study.tables()
    assert pick(stored["exchanges"], "turn", "user_text", "system_text") == [
        (turn, t.user, t.system) for turn, t in enumerate(shop.history, start=1)
    ]
    assert len(stored["sessions"]) == 1
    assert study.pending_updates() == []
    assert errors(stored["events"]) == []


@pytest.mark.parametrize("receiving", ["polling", "webhook"])
@pytest.mark.parametrize("moment", ["fetched", "confirmed"])
async def test_killed_right_after_taking_a_message(
    emulator: GatedEmulator, ozlab: OzlabProcesses, hmd: StudyBundle, moment: str
) -> None:
    """Killed as soon as the bot fetched a message (before it could store it), or as soon as
    it told Telegram it has it (stored, handling just begun): the next process handles it,
    once. After the confirmation only the inbox still has it: this is what it is for. By
    webhook, "fetched" is Telegram's POST on its way (posted again to the next process) and
    "confirmed" the bot's 200.
    """
    first = await ozlab.start()
    shop = await at_the_task(ozlab, 610 + (moment == "confirmed"), hmd)
    asked = await shop.send(ASK)
    if moment == "fetched":
        await emulator.wait_until(lambda e: asked.update_id in e.delivery_times)
    else:
        await emulator.wait_until(lambda e: e.confirmed_offset > asked.update_id)
    first.kill_now()
    await first.finish()
    # On a loaded machine the kill may land later than the moment waited for: the reply
    # may have gone out already, and it may go again (sent, not yet marked sent).
    replied_before_the_kill = len(shop.p.messages) > asked.before

    await ozlab.start()
    reply = await shop.answer(asked)
    await settle(shop.p)
    got = [m.text for m in shop.p.messages[asked.before :]]
    if moment == "fetched" and not replied_before_the_kill:
        assert got == list(reply.texts)
    else:  # the first process may have sent the reply and died before marking it sent
        assert got in (list(reply.texts), list(reply.texts) * 2)
    await shop.say(ADD)
    await shop.p.wait_for_text("1/5")
    assert_dialogue_complete(ozlab, shop)


def study_with_moody(folder: Path, delay: float) -> Path:
    """The HMD study with a custom system that takes ``delay`` seconds to answer "slow"."""
    text = (
        "id: hmd\ntitle: HMD with a slow system\n"
        "texts: {welcome: Hello, consent: Privacy agreement, declined: Bye}\n"
        "systems:\n  - type: python\n    id: moody\n"
        "    entry: tests.adapter_studies:Moody\n"
        f"    options: {{delay: {delay}}}\n"
        "scenarios: [hmd-gift]\n"
    )
    path = folder / f"study-{delay:g}.yaml"
    path.write_text(text)
    return path


async def test_killed_while_the_system_is_working(
    emulator: GatedEmulator, ozlab: OzlabProcesses, tmp_path: Path
) -> None:
    """The message is stored, the system's answer never came: the next process asks the
    system again, once, and the participant gets the answer without writing again."""
    first = await ozlab.start(study=str(study_with_moody(tmp_path, 30)))
    p = ozlab.emulator.participant(612)
    await consent(p)
    typing = emulator.hold("sendChatAction")  # shown once the system has taken a moment
    await p.send_text("slow")
    await typing.wait_reached()
    assert pick(ozlab.exchanges(), "turn", "user_text", "system_text") == [(1, "slow", None)]
    await first.kill()

    await ozlab.start(study=str(study_with_moody(tmp_path, 0)))
    await p.wait_for_text("Moody heard: slow")
    assert pick(ozlab.exchanges(), "turn", "user_text", "system_text") == [
        (1, "slow", "Moody heard: slow")
    ]
    retried = pick(ozlab.events("system_call_retried"), "kind")
    assert retried == [("system_call_retried",)]


async def test_killed_while_the_system_looks_at_a_kept_photo(
    emulator: GatedEmulator, ozlab: OzlabProcesses, tmp_path: Path
) -> None:
    """The photo is kept with the message: the next process gives the system the same
    bytes again."""

    def study(delay: float) -> str:
        scenario = (
            "id: photo-task\ntitle: A photo\nbrief: Send a photo.\n"
            "media: {participant_sends: [photo], system_receives: both}\n"
        )
        (tmp_path / "scenarios").mkdir(exist_ok=True)
        (tmp_path / "scenarios" / "photo-task.yaml").write_text(scenario)
        path = study_with_moody(tmp_path, delay)
        text = path.read_text().replace("Moody", "Looker").replace("hmd-gift", "photo-task")
        path.write_text(text)
        return str(path)

    first = await ozlab.start(study=study(30))
    p = ozlab.emulator.participant(613)
    await consent(p)
    typing = emulator.hold("sendChatAction")  # shown once the system has taken a moment
    update_id = await p.send_photo(default_photo(300, 200), caption="slow")
    await typing.wait_reached()
    await first.kill()

    await ozlab.start(study=study(0))
    sent = emulator.files.by_id(emulator.update(update_id)["message"]["photo"][-1]["file_id"])
    assert sent is not None
    seen = f"{len(sent.data)} bytes {hashlib.sha256(sent.data).hexdigest()[:12]}"
    await p.wait_for_text(f"Looker saw: {seen}")
    assert pick(ozlab.events("system_call_retried"), "kind") == [("system_call_retried",)]


@pytest.mark.parametrize("reaches_telegram", [False, True], ids=["lost", "delivered"])
async def test_killed_while_sending_a_recorded_reply(
    emulator: GatedEmulator, ozlab: OzlabProcesses, hmd: StudyBundle, reaches_telegram: bool
) -> None:
    """The reply is in the log, the process dies sending it: the next one sends it again.

    At least once: if Telegram had already delivered it, the participant sees it twice (the
    bot cannot know); it is never lost, and the log holds it once.
    """
    first = await ozlab.start()
    shop = await at_the_task(ozlab, 613 + reaches_telegram, hmd)
    sending = emulator.hold("sendMessage", reaches_telegram=reaches_telegram)
    asked = await shop.send(ASK)
    await sending.wait_reached()
    reply = shop.expect(ASK)
    assert [x["system_text"] for x in ozlab.exchanges() if x["turn"] == 2] == [
        "\n\n".join(reply.texts)
    ]
    await first.kill()

    await ozlab.start()
    await shop.answer(asked)
    await settle(shop.p)  # anything re-sent at start-up has been sent by now
    copies = 2 if reaches_telegram else 1
    assert [m.text for m in shop.p.messages[asked.before :]] == list(reply.texts) * copies
    await shop.say(ADD)
    await shop.p.wait_for_text("1/5")
    assert_dialogue_complete(ozlab, shop)


async def test_killed_right_after_fetching_a_tap(
    emulator: GatedEmulator, ozlab: OzlabProcesses
) -> None:
    """A rating fetched by a process that died is recorded once, by the next one."""
    first = await ozlab.start()
    p = emulator.participant(615)
    await consent(p)
    await p.tap(text="Finish task")
    item = await p.wait_for_text("1/5")
    await settle(p)  # the item's message id is committed after it was sent
    tap = await p.tap(text="4 · Agree")
    await emulator.wait_until(lambda e: tap in e.delivery_times)
    first.kill_now()
    await first.finish()

    await ozlab.start()
    await p.wait_for_text("2/5")
    await p.tap(text="3 · Neutral")
    await p.wait_for_text("3/5")
    items = [m for m in p.messages if m.text.startswith("HMD evaluation form")]
    assert items == [item]  # still the one message, edited in place
    assert pick(ozlab.responses(), "item_id", "value") == [
        ("hmd.understanding", 4),
        ("hmd.management", 3),
    ]
    assert len(p.callback_answers) == 5  # consent, finish, settle, two ratings: once each
    assert ozlab.pending_updates() == []


async def test_killed_after_recording_a_tap_before_showing_the_next_item(
    emulator: GatedEmulator, ozlab: OzlabProcesses
) -> None:
    """The rating is committed, the process dies before editing the message to the next item:
    the next process shows item 2/5, and the participant goes on."""
    first = await ozlab.start()
    p = emulator.participant(616)
    await consent(p)
    await p.tap(text="Finish task")
    item = await p.wait_for_text("1/5")
    await settle(p)
    toast = emulator.hold("answerCallbackQuery")  # the first thing done after the commit
    await p.tap(text="4 · Agree")
    await toast.wait_reached()
    assert pick(ozlab.responses(), "item_id", "value") == [("hmd.understanding", 4)]
    await first.kill()

    await ozlab.start()
    await p.wait_for_text("2/5")
    await p.tap(text="3 · Neutral")
    await p.wait_for_text("3/5")
    items = [m for m in p.messages if m.text.startswith("HMD evaluation form")]
    assert items == [item]
    assert pick(ozlab.responses(), "item_id", "value") == [
        ("hmd.understanding", 4),
        ("hmd.management", 3),
    ]


async def test_a_tap_on_the_first_copy_of_a_message_sent_again_after_a_kill_counts(
    emulator: GatedEmulator, ozlab: OzlabProcesses
) -> None:
    """The agreement reached the participant, the process died before hearing so: the next one
    sends it again (at least once). The bot never learned the first copy's id, yet its "I agree"
    means what the second's does: it counts, once."""
    first = await ozlab.start()
    p = emulator.participant(617)
    shown = emulator.hold("sendMessage", reaches_telegram=True, passing=1)  # the welcome passes
    await p.send_text("/start")
    await shown.wait_reached()
    await first.kill()

    await ozlab.start()
    await p.wait_for(lambda q: len(agreements(q)) == 2, 20)
    earlier, _again = agreements(p)
    await p.tap(text="I agree", message_id=earlier.message_id)
    await p.wait_for_text("Your task")
    assert p.toasts == []  # taken, not "already recorded"
    assert len([m for m in p.messages if m.text.startswith("Your task")]) == 1


def agreements(p: Participant) -> list[BotMessage]:
    return [m for m in p.messages if m.text.startswith("Privacy agreement")]


async def test_killed_while_answering_a_first_start(
    emulator: GatedEmulator, ozlab: OzlabProcesses
) -> None:
    """A crash after the welcome: the /start is handled and its welcome committed, the process dies
    before sending it. Before consent no chat id was kept, so it was never answered: now the
    sealed chat id stays until the messages are out, and is dropped then (no consent yet)."""
    first = await ozlab.start()
    p = ozlab.emulator.participant(615)
    sending = emulator.hold("sendMessage")
    await p.send_text("/start")
    await sending.wait_reached()
    await first.kill()

    await ozlab.start()
    await p.wait_for_text("Privacy agreement")
    await settle(p)
    kept = [(r.chat_key is None, r.undelivered is None) for r in ozlab.resumed("hmd")]
    assert kept == [(True, True)]  # delivered, and no chat id kept before consent
    await p.tap(text="I agree")
    await p.wait_for_text("Your task")
