"""Annotators' rights through the real bot (emulator, SQLite). An annotator withdraws:
``/withdraw`` asks with two buttons, No carries on, only the prompt still waiting erases;
Yes erases their row (the sealed chat id, the code), their ratings and assignments, writes
the erasure ledger, and their targets go to the annotator who waits. A researcher drops
one (``ozlab annotators drop``) while the bot runs: their open targets go to another at
once, their finished ratings stay, and the bot tells them their code is no longer active."""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass
from pathlib import Path

import pytest

from bot.cli import main
from bot.pilot.emulator import BotApiEmulator, Participant
from bot.store.erasure import ledger_digest
from scenarios.loading import load_study
from tests.annotating_support import current_item, data_of, invite, play, point, rate_all, stored
from tests.conftest import StartBot
from tests.e2e_support import database_bytes

pytestmark = pytest.mark.slow

WAITING = ("Nothing to rate yet", "Exchange 1 of")


def _waiting(p: Participant) -> bool:
    return any(t in m.text for m in p.messages for t in WAITING)


@dataclass(frozen=True)
class Team:
    people: dict[str, Participant]
    codes: dict[str, str]
    leaving: str  # the two the work went to first
    staying: str
    third: str  # the one who waits
    theirs: set[str]  # the targets of the one leaving


async def _three_annotators(
    emulator: BotApiEmulator, start_bot: StartBot, db: Path, first_chat: int
) -> Team:
    """XRec rated by two annotators a target, one conversation played, three invited and
    joined: two have work, the third waits."""
    bundle = load_study("xrec")
    await start_bot(bundle, db=db)
    await play(emulator, bundle, participants=1)
    codes = dict(await invite(db, "xrec", 3))
    people = {}
    for i, (pseudonym, code) in enumerate(codes.items()):
        p = people[pseudonym] = emulator.participant(first_chat + i, first_name=f"Ann{i}")
        await p.send_text(f"/start {code}")
        await p.wait_for(_waiting, timeout=15)
    state = await stored(db, lambda s: s.annotation_state("xrec"))
    assert state is not None
    leaving, staying = sorted({a.annotator for a in state.assignments})
    [third] = set(codes) - {leaving, staying}
    theirs = {a.target for a in state.assignments if a.annotator == leaving}
    return Team(people, codes, leaving, staying, third, theirs)


def _prompt(p: Participant) -> int:
    found = next(m for m in reversed(p.messages) if "stop annotating and withdraw?" in m.text)
    return found.message_id


async def test_an_annotator_withdraws_and_their_targets_go_to_the_one_who_waits(
    emulator: BotApiEmulator,
    start_bot: StartBot,
    tmp_path: Path,
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.INFO, logger="bot")
    db = tmp_path / "xrec.sqlite"
    team = await _three_annotators(emulator, start_bot, db, 7500)
    leaving, staying, third, theirs = team.leaving, team.staying, team.third, team.theirs
    people, gone = team.people, team.people[team.leaving]

    # Two answers given, so there is something of theirs to erase.
    for _ in range(2):
        item = current_item(gone)
        assert item is not None
        shown = tuple(data_of(item))
        await gone.tap(text="Yes", message_id=item.message_id)
        await gone.wait_for(lambda q, m=item, was=shown: tuple(data_of(m)) != was)
    before = [
        r for r in await stored(db, lambda s: s.annotation_ratings()) if r.annotator == leaving
    ]
    assert len(before) == 2

    # /withdraw asks; No carries on, nothing erased.
    await gone.send_text("/withdraw")
    await gone.wait_for_text("stop annotating and withdraw?")
    await gone.tap(text="No, continue", message_id=_prompt(gone))
    await gone.wait_for_text("You are still an annotator: nothing was erased.")
    assert (
        len(
            [
                r
                for r in await stored(db, lambda s: s.annotation_ratings())
                if r.annotator == leaving
            ]
        )
        == 2
    )

    # Asked twice: only the newest prompt counts; a Yes on the first erases nothing.
    await gone.send_text("/withdraw")
    await gone.wait_for_text("stop annotating and withdraw?")
    first = _prompt(gone)
    await gone.send_text("/withdraw")
    await gone.wait_for(lambda q: _prompt(q) != first)
    await gone.send_callback("w:y", message_id=first)
    await gone.wait_for_toast("already recorded")
    assert any(a.annotator_id == leaving for a in await stored(db, lambda s: s.annotators()))

    await gone.tap(text="Yes, withdraw and erase", message_id=_prompt(gone))
    await gone.wait_for_text("You have withdrawn. Erased: your ratings")

    # Nothing of theirs is left: no row (sealed chat id, code), ratings or assignments.
    annotators = await stored(db, lambda s: s.annotators())
    assert leaving not in {a.annotator_id for a in annotators}
    ratings = await stored(db, lambda s: s.annotation_ratings())
    assert not any(r.annotator == leaving for r in ratings)
    after = await stored(db, lambda s: s.annotation_state("xrec"))
    assert after is not None
    assert not any(a.annotator == leaving for a in after.assignments)
    ledger = await stored(db, lambda s: s.erasure_ledger())
    assert ledger_digest(leaving) in {e.digest for e in ledger}
    raw = database_bytes(db)  # erased means gone from the file's bytes
    assert leaving.encode() not in raw and team.codes[leaving].encode() not in raw

    # Their targets went to the annotator who was waiting, written to at once.
    await people[third].wait_for_text("There is more to rate", timeout=15)
    await rate_all(people[third], point(1))
    await rate_all(people[staying], point(1))
    final = await stored(db, lambda s: s.annotation_state("xrec"))
    assert final is not None
    assert {a.target for a in final.assignments if a.annotator == third} == theirs

    # The chat is nobody's now: no "no longer active", no annotator's answer.
    count = len(gone.messages)
    await gone.send_text("/help")
    await gone.wait_for(lambda q: len(q.messages) > count)
    assert "annotator" not in gone.messages[-1].text.lower()
    # Privacy: neither the Telegram id nor the pseudonym is logged.
    assert not any(leaving in r.getMessage() for r in caplog.records)
    assert not any(str(gone.chat_id) in r.getMessage() for r in caplog.records)


async def _finish_one(p: Participant) -> None:
    """Answer the items of the target in front of them until the next one is shown."""
    while True:
        item = current_item(p)
        assert item is not None
        if "Exchange 2 of" in item.text:
            return
        shown = (item.message_id, tuple(data_of(item)))
        label = point(1)(item)
        if label is None:
            await p.send_text("fine")
        else:
            await p.tap(text=label, message_id=item.message_id)
        await p.wait_for(lambda q, was=shown: _showing(q) not in (None, was))


def _showing(p: Participant) -> tuple[int, tuple[str, ...]] | None:
    item = current_item(p)
    return None if item is None else (item.message_id, tuple(data_of(item)))


async def test_a_researcher_drops_an_annotator_while_the_bot_runs(
    emulator: BotApiEmulator,
    start_bot: StartBot,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    db = tmp_path / "xrec.sqlite"
    team = await _three_annotators(emulator, start_bot, db, 7700)
    leaving, third, theirs = team.leaving, team.third, team.theirs
    people, gone = team.people, team.people[team.leaving]
    await _finish_one(gone)
    done = await stored(db, lambda s: s.annotation_state("xrec"))
    assert done is not None
    [finished] = [a.target for a in done.assignments if a.annotator == leaving and a.done_at]

    argv = ["annotators", "drop", leaving, "--db", str(db)]
    assert await asyncio.to_thread(main, argv) == 0
    said = capsys.readouterr().out
    back = len(theirs) - 1
    assert f"dropped {leaving} of job xrec: {back} open targets back to the pool" in said

    # Their open targets are the third annotator's now: found with their next message.
    after = await stored(db, lambda s: s.annotation_state("xrec"))
    assert after is not None
    assert {a.target for a in after.assignments if a.annotator == third} == theirs - {finished}
    await people[third].send_text("anything for me?")
    await people[third].wait_for_text("Exchange 1 of", timeout=15)
    # What they rated stays (research data); their chat id is forgotten; the bot says so.
    ratings = await stored(db, lambda s: s.annotation_ratings())
    assert {r.target for r in ratings if r.annotator == leaving} == {finished}
    [dropped] = [a for a in await stored(db, lambda s: s.annotators()) if a.annotator_id == leaving]
    assert dropped.dropped and dropped.chat_key is None
    item = current_item(gone)
    assert item is not None
    await gone.tap(text="Yes", message_id=item.message_id)
    await gone.wait_for_text("no longer active")

    # Dropping again, or someone unknown: said, nothing changes.
    assert await asyncio.to_thread(main, argv) == 0
    assert f"{leaving} was dropped already" in capsys.readouterr().out
    assert await asyncio.to_thread(main, ["annotators", "drop", "A-NONE", "--db", str(db)]) == 3
    assert "no annotator A-NONE" in capsys.readouterr().err
    nowhere = ["annotators", "drop", leaving, "--db", str(tmp_path / "none.sqlite")]
    assert await asyncio.to_thread(main, nowhere) == 5  # never a new, empty study
    assert "no study database at" in capsys.readouterr().err

    # Dropped, they still have the right to withdraw: what they rated goes too.
    await gone.send_text("/withdraw")
    await gone.wait_for_text("stop annotating and withdraw?")
    await gone.tap(text="Yes, withdraw and erase", message_id=_prompt(gone))
    await gone.wait_for_text("You have withdrawn. Erased: your ratings")
    ratings = await stored(db, lambda s: s.annotation_ratings())
    assert not any(r.annotator == leaving for r in ratings)
    assert leaving not in {a.annotator_id for a in await stored(db, lambda s: s.annotators())}
