"""Annotators' bad input gets a clear answer and loses nothing: a code used twice, an old
target's buttons, text where a button is expected, a restart mid-target, a participant's
code in an annotator's chat and the other way round, ``/back`` where the job forbids it,
``/pause`` and any message resuming."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bot.pilot.emulator import BotApiEmulator, Participant
from scenarios.loading import load_study
from tests.annotating_support import (
    asks,
    current_item,
    data_of,
    first_point,
    invite,
    play,
    point,
    stored,
)
from tests.conftest import StartBot

pytestmark = pytest.mark.slow


def _menu(emulator: BotApiEmulator, scope: dict[str, object]) -> list[str]:
    """The commands the bot set for a scope (``setMyCommands``), in the default language."""
    listed = emulator.commands.get((json.dumps(scope, sort_keys=True), ""), [])
    return [command["command"] for command in listed]


async def _ratings(db: Path, annotator: str) -> list[tuple[str, str, str]]:
    rows = await stored(db, lambda s: s.annotation_ratings())
    return sorted((r.target, r.item_id, r.value) for r in rows if r.annotator == annotator)


async def test_codes_old_buttons_typing_and_mix_ups_on_hri_cues(
    emulator: BotApiEmulator, start_bot: StartBot, tmp_path: Path
) -> None:
    bundle = load_study("hri-cues")
    db = tmp_path / "cues.sqlite"
    await start_bot(bundle, db=db)
    await play(emulator, bundle, participants=1)
    [(pseudonym, code)] = await invite(db, "hri-cues", 1)
    ann = emulator.participant(7200, first_name="Ann")
    await ann.send_text(f"/start {code}")
    await ann.wait_for_text("Exchange 1 of")

    # Their own menu (HRI CUES: no /back) and /help; the participants' menu stays theirs.
    assert _menu(emulator, {"type": "chat", "chat_id": 7200}) == [
        "help",
        "pause",
        "brief",
        "withdraw",
    ]
    assert _menu(emulator, {"type": "default"}) == ["help", "done", "withdraw"]
    await ann.send_text("/help")
    await ann.wait_for_text('You are rating for "HRI CUES')
    assert "Exchange 1 of" in ann.messages[-1].text and "/pause" in ann.messages[-1].text

    # The same code from another account: refused; a made-up code: not known.
    other = emulator.participant(7201, first_name="Other")
    await other.send_text(f"/start {code}")
    await other.wait_for_text("already in use from another Telegram account")
    await other.send_text("/start ann-NOSUCHCODE1")
    await other.wait_for_text("That annotator code is not known")

    # A participant (the one who played) cannot annotate from the same account.
    participant = emulator.participants[0]
    await participant.send_text(f"/start {code}")
    await participant.wait_for_text("takes part in the study as a participant")

    # Text where a button is expected: a hint, nothing recorded; a typed number counts.
    await ann.send_text("great")
    await ann.wait_for_text("tap one of the buttons")
    assert await _ratings(db, pseudonym) == []
    first = current_item(ann)
    assert first is not None
    stale = next(d for row in first.keyboard for t, d in row if t == "1" and d)
    await ann.tap(text="4", message_id=first.message_id)
    await ann.wait_for_text("Exchange 2 of")
    kept = await _ratings(db, pseudonym)
    assert [value for *_, value in kept] == ["4"]

    # The first exchange's button again (as a client holding the old keyboard would send
    # it): "done", nothing changes.
    await ann.send_callback(stale, message_id=first.message_id)
    await ann.wait_for_toast("That one is done")
    assert await _ratings(db, pseudonym) == kept

    # /back: HRI CUES sees each exchange once; a participant's code here: refused.
    await ann.send_text("/back")
    await ann.wait_for_text("/back is not available")
    await ann.send_text("/start SOMEPARTICIPANTCODE")
    await ann.wait_for_text("participant codes do not work here")

    # The same code from the same chat: resumes at the same item.
    before = len(ann.messages)
    await ann.send_text(f"/start {code}")
    await ann.wait_for_text("Welcome back")
    await ann.wait_for(lambda q, n=before: any(asks(m) for m in q.messages[n:]))
    resumed = current_item(ann)
    assert resumed is not None and "Exchange 2 of" in resumed.text
    assert await _ratings(db, pseudonym) == kept


async def test_restart_mid_target_pause_and_back_on_xrec(
    emulator: BotApiEmulator, start_bot: StartBot, tmp_path: Path
) -> None:
    bundle = load_study("xrec")
    db = tmp_path / "xrec.sqlite"
    bot = await start_bot(bundle, db=db)
    await play(emulator, bundle, participants=1)
    pairs = await invite(db, "xrec", 2)
    ann = emulator.participant(7300, first_name="Ann")
    pseudonym, code = pairs[0]
    await ann.send_text(f"/start {code}")
    await ann.wait_for_text("Exchange 1 of")
    item = current_item(ann)
    assert item is not None
    for _ in range(2):  # Q1 and Q2: yes
        message = current_item(ann)
        assert message is not None
        before = tuple(data_of(message))
        await ann.tap(text="Yes", message_id=message.message_id)
        await ann.wait_for(lambda q, m=message, b=before: tuple(data_of(m)) != b)
    at = current_item(ann)
    assert at is not None
    asked_before = at.text
    kept = await _ratings(db, pseudonym)
    assert len(kept) == 2

    # Restart mid-target: any message brings back the same item; nothing lost.
    await bot.stop()
    await start_bot(bundle, db=db)
    count = len(ann.messages)
    await ann.send_text("hello?")
    await ann.wait_for_text("Welcome back")
    await ann.wait_for(lambda q, n=count: any(asks(m) for m in q.messages[n:]))
    again = current_item(ann)
    assert again is not None and again.message_id != at.message_id
    assert again.text == asked_before
    assert await _ratings(db, pseudonym) == kept

    # /pause, then any message resumes at the same item.
    await ann.send_text("/pause")
    await ann.wait_for_text("Paused")
    progress = await stored(db, lambda s: s.annotation_progress())
    assert [p.paused for p in progress if p.annotator == pseudonym] == [True]
    count = len(ann.messages)
    await ann.send_text("back again")
    await ann.wait_for(lambda q, n=count: any(asks(m) for m in q.messages[n:]))
    resumed = current_item(ann)
    assert resumed is not None and resumed.text == asked_before

    # Finish this exchange, then /back (XRec allows it): the same exchange, to answer again.
    await _finish_target(ann)
    await ann.send_text("/back")
    await ann.wait_for_text("Back to your previous rating")
    back = current_item(ann)
    assert back is not None and "Exchange 1 of" in back.text


async def _finish_target(ann: Participant) -> None:
    choose = point(1)
    while True:
        message = current_item(ann)
        assert message is not None
        if "Exchange 2 of" in message.text:
            return
        before, count = tuple(data_of(message)), len(ann.messages)
        label = choose(message)
        assert label is not None
        await ann.tap(text=label, message_id=message.message_id)
        await ann.wait_for(
            lambda q, m=message, b=before, n=count: tuple(data_of(m)) != b or len(q.messages) > n
        )


async def test_a_dropped_annotator_is_told_so_after_a_restart_too(
    emulator: BotApiEmulator, start_bot: StartBot, tmp_path: Path
) -> None:
    bundle = load_study("xrec")
    db = tmp_path / "xrec.sqlite"
    bot = await start_bot(bundle, db=db)
    await play(emulator, bundle, participants=1)
    [(pseudonym, code)] = await invite(db, "xrec", 1)
    ann = emulator.participant(7310, first_name="Ann")
    await ann.send_text(f"/start {code}")
    await ann.wait_for_text("Exchange 1 of")
    item = current_item(ann)
    assert item is not None
    await bot.stop()
    assert await stored(db, lambda s: s.drop_annotator(pseudonym))

    await start_bot(bundle, db=db)  # the bot holds nothing of them in memory now
    await ann.send_text("hello?")
    await ann.wait_for_text("no longer active. Please contact the researcher")
    await ann.send_text("/start")
    await ann.wait_for_text("no longer active")
    await ann.tap(text="Yes", message_id=item.message_id)
    await ann.wait_for_text("no longer active")
    assert not any("Privacy" in m.text for m in ann.messages)  # never taken for a newcomer
    participants = await stored(db, lambda s: s.load_participants("xrec"))
    assert len(participants) == 1  # the one who played, not the annotator
    assert await _ratings(db, pseudonym) == []


async def test_a_dropped_annotator_with_a_new_code_from_the_researcher_is_back_as_themselves(
    emulator: BotApiEmulator, start_bot: StartBot, tmp_path: Path
) -> None:
    """Told "no longer active, contact the researcher", they get a new code and use it from
    the same account: they annotate again under their old pseudonym, what they rated before
    stays theirs; the same code from another account is still refused as taken."""
    bundle = load_study("xrec")
    db = tmp_path / "xrec.sqlite"
    bot = await start_bot(bundle, db=db)
    await play(emulator, bundle, participants=1)
    [(pseudonym, code)] = await invite(db, "xrec", 1)
    ann = emulator.participant(7320, first_name="Ann")
    await ann.send_text(f"/start {code}")
    await ann.wait_for_text("Exchange 1 of")
    item = current_item(ann)
    assert item is not None
    shown = tuple(data_of(item))
    await ann.tap(text="Yes", message_id=item.message_id)
    await ann.wait_for(lambda _: tuple(data_of(item)) != shown, timeout=15)  # the next item
    rated = await _ratings(db, pseudonym)
    assert len(rated) == 1
    await bot.stop()
    assert await stored(db, lambda s: s.drop_annotator(pseudonym))
    await start_bot(bundle, db=db)
    await ann.send_text("hello?")
    await ann.wait_for_text("no longer active. Please contact the researcher")

    [(fresh, new_code)] = await invite(db, "xrec", 1)  # what the researcher does
    said = len(ann.messages)
    await ann.send_text(f"/start {new_code}")
    await ann.wait_for(lambda p: current_item(p) is not None and len(p.messages) > said + 1, 15)
    assert not any("already in use" in m.text for m in ann.messages)
    annotators = await stored(db, lambda s: s.annotators("xrec"))
    assert [(a.annotator_id, a.dropped) for a in annotators] == [(pseudonym, False)]
    assert fresh != pseudonym
    assert await _ratings(db, pseudonym) == rated  # kept, and theirs

    other = emulator.participant(7321, first_name="Other")
    await other.send_text(f"/start {new_code}")
    await other.wait_for_text("already in use from another Telegram account")


async def test_no_longer_active_is_said_in_the_annotators_language(
    emulator: BotApiEmulator, start_bot: StartBot, tmp_path: Path
) -> None:
    """An annotator whose Telegram is in Italian, dropped, hears it in Italian: when their
    rating is refused while the bot runs, and after a restart when they ``/start`` again."""
    xrec = load_study("xrec")
    study = xrec.study.model_copy(update={"languages": ("it",)})  # offered in Italian too
    bundle = xrec.model_copy(update={"study": study})
    db = tmp_path / "xrec.sqlite"
    bot = await start_bot(bundle, db=db)
    await play(emulator, bundle, participants=1)
    [(pseudonym, code), _] = await invite(db, "xrec", 2)
    ann = emulator.participant(7330, first_name="Ann", language_code="it")
    await ann.send_text(f"/start {code}")
    await ann.wait_for(lambda p: current_item(p) is not None, timeout=15)
    item = current_item(ann)
    assert item is not None
    assert await stored(db, lambda s: s.drop_annotator(pseudonym))
    await invite(db, "xrec", 1)  # planned again: their open targets go to the others
    await ann.tap(text=first_point(item), message_id=item.message_id)
    await ann.wait_for_text("non è più attivo", timeout=15)
    await ann.send_text("ciao?")
    await ann.wait_for_text("non è più attivo", timeout=15)

    await bot.stop()
    await start_bot(bundle, db=db)
    await ann.send_text("/start")
    await ann.wait_for_text("non è più attivo", timeout=15)
    assert not any("no longer active" in m.text for m in ann.messages)


async def test_a_tap_after_being_dropped_while_the_bot_runs_is_refused_and_not_kept(
    emulator: BotApiEmulator, start_bot: StartBot, tmp_path: Path
) -> None:
    """Dropped by the researcher while the bot runs, before any planning released their
    targets: their tap on the item in front of them is refused politely, nothing kept."""
    bundle = load_study("xrec")
    db = tmp_path / "xrec.sqlite"
    await start_bot(bundle, db=db)
    await play(emulator, bundle, participants=1)
    [(pseudonym, code)] = await invite(db, "xrec", 1)
    ann = emulator.participant(7340, first_name="Ann")
    await ann.send_text(f"/start {code}")
    await ann.wait_for(lambda p: current_item(p) is not None, timeout=15)
    item = current_item(ann)
    assert item is not None
    assert await stored(db, lambda s: s.drop_annotator(pseudonym))
    await ann.tap(text="Yes", message_id=item.message_id)
    await ann.wait_for_text("no longer active. Please contact the researcher", timeout=15)
    assert await _ratings(db, pseudonym) == []
    await ann.send_text("hello?")
    await ann.wait_for_text("no longer active", timeout=15)
    assert await _ratings(db, pseudonym) == []


async def test_a_second_code_of_the_same_job_from_an_annotators_chat(
    emulator: BotApiEmulator, start_bot: StartBot, tmp_path: Path
) -> None:
    """An annotator opens another code of their own job: told they annotate it already
    (not "in use from another account"), resumed at their item; the code stays free for
    someone else. In Italian too."""
    xrec = load_study("xrec")
    study = xrec.study.model_copy(update={"languages": ("it",)})
    bundle = xrec.model_copy(update={"study": study})
    db = tmp_path / "xrec.sqlite"
    await start_bot(bundle, db=db)
    await play(emulator, bundle, participants=1)
    [(pseudonym, code)] = await invite(db, "xrec", 1)
    ann = emulator.participant(7350, first_name="Ann")
    await ann.send_text(f"/start {code}")
    await ann.wait_for(lambda p: current_item(p) is not None, timeout=15)
    [(_, second), (_, third), (_, fourth)] = await invite(db, "xrec", 3)
    item = current_item(ann)
    assert item is not None
    shown = item.text.split("\n", 1)[0]
    said = len(ann.messages)
    await ann.send_text(f"/start {second}")
    await ann.wait_for_text("already an annotator of this job", timeout=15)
    await ann.wait_for(lambda p, n=said: any(asks(m) for m in p.messages[n:]), timeout=15)
    resumed = current_item(ann)
    assert resumed is not None and resumed.text.split("\n", 1)[0] == shown
    assert not any("already in use" in m.text for m in ann.messages)
    annotators = await stored(db, lambda s: s.annotators("xrec"))
    assert [a.annotator_id for a in annotators if a.joined_at is not None] == [pseudonym]
    assert [a.joined_at for a in annotators if a.code == second] == [None]

    other = emulator.participant(7351, first_name="Other")
    await other.send_text(f"/start {second}")
    await other.wait_for_text("Welcome! You are annotator", timeout=15)

    italian = emulator.participant(7352, first_name="Ita", language_code="it")
    await italian.send_text(f"/start {third}")
    await italian.wait_for_text("Sei l'annotatore", timeout=15)
    await italian.send_text(f"/start {code}")  # someone else's: in use from another account
    await italian.wait_for_text("già in uso da un altro account", timeout=15)
    await italian.send_text(f"/start {fourth}")
    await italian.wait_for_text("Annoti già questo lavoro", timeout=15)
    annotators = await stored(db, lambda s: s.annotators("xrec"))
    assert [a.joined_at for a in annotators if a.code == fourth] == [None]  # still unused
