"""Annotators rate a study's conversations in Telegram, through the emulator: the shipped
HRI CUES job (three annotators, every exchange and each conversation, seen once) and the
XRec job (two annotators, a third where they disagree)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from bot.core.vocabulary import AnnotationRound
from bot.pilot.emulator import BotApiEmulator, BotMessage, Participant
from scenarios.loading import load_study
from tests.annotating_support import (
    by_exchange,
    current_item,
    invite,
    json_report,
    play,
    point,
    rate_all,
    stored,
)
from tests.conftest import StartBot

pytestmark = pytest.mark.slow

RATIONALE = "hri-cues-overall.rationale"
TYPED = "Smooth, and they laughed twice."
WAITING = ("Nothing to rate yet", "Exchange 1 of")


def _waiting(p: Participant) -> bool:
    return any(t in m.text for m in p.messages for t in WAITING)


async def test_three_annotators_rate_hri_cues_conversations(
    emulator: BotApiEmulator, start_bot: StartBot, tmp_path: Path
) -> None:
    bundle = load_study("hri-cues")
    db = tmp_path / "cues.sqlite"
    await start_bot(bundle, db=db)
    await play(emulator, bundle, participants=2)
    codes = await invite(db, "hri-cues", 3)
    annotators = [emulator.participant(7000 + i, first_name=f"Ann{i}") for i in range(3)]
    for p, (_, code) in zip(annotators, codes, strict=True):
        await p.send_text(f"/start {code}")
        await p.wait_for_text("How to rate")
    for shift, p in zip((0, 0, 1), annotators, strict=True):
        await rate_all(p, by_exchange(shift))
    ratings = await stored(db, lambda s: s.annotation_ratings())
    targets = await stored(db, lambda s: s.annotation_targets("hri-cues"))
    assert targets
    given = {}
    for pseudonym, _ in codes:
        scale = [r for r in ratings if r.annotator == pseudonym and r.item_id != RATIONALE]
        assert len(scale) == len(targets)  # every exchange and every conversation, once
        given[pseudonym] = {(r.target, r.level): r.value for r in scale}
    one, two, three = (given[pseudonym] for pseudonym, _ in codes)
    assert one == two and one != three
    assert {r.value for r in ratings if r.item_id == RATIONALE} == {TYPED}

    participants = await stored(db, lambda s: s.load_participants("hri-cues"))
    assert len(participants) == 2  # annotators are never participants

    report = await json_report(db, tmp_path / "report.json")
    rows = [r for r in report["reliability"] if r["job"] == "hri-cues"]
    assert {r["level"] for r in rows} == {"exchange", "session"}
    pooled = {r["statistic"]: r for r in rows if r["level"] == "exchange" and r["system"] is None}
    assert {"ICC2", "ICC2k", "alpha_ordinal"} <= set(pooled)
    assert pooled["ICC2"]["n_annotators"] == 3 and pooled["ICC2"]["value"] is not None
    assert report["annotations"]["leave_one_out"]


def _odd_exchange(message: BotMessage) -> bool:
    found = re.search(r"Exchange (\d+) of", message.text)
    return found is not None and int(found.group(1)) % 2 == 1


def _disagreeing(message: BotMessage) -> str | None:
    """The second annotator: "No" to the yes/no questions of odd exchanges, else as the
    first annotator (the first answer offered)."""
    if _odd_exchange(message) and "No" in message.buttons:
        return "No"
    return point(1)(message)


async def test_xrec_disagreement_brings_in_the_third_annotator_for_exactly_those(
    emulator: BotApiEmulator, start_bot: StartBot, tmp_path: Path
) -> None:
    bundle = load_study("xrec")
    db = tmp_path / "xrec.sqlite"
    await start_bot(bundle, db=db)
    await play(emulator, bundle, participants=1)
    codes = dict(await invite(db, "xrec", 3))
    people = {}
    for i, (pseudonym, code) in enumerate(codes.items()):
        p = people[pseudonym] = emulator.participant(7100 + i, first_name=f"Ann{i}")
        await p.send_text(f"/start {code}")
        await p.wait_for(
            lambda q: any(t in m.text for m in q.messages for t in WAITING), timeout=15
        )
    state = await stored(db, lambda s: s.annotation_state("xrec"))
    assert state is not None
    first = sorted({a.annotator for a in state.assignments})
    assert len(first) == 2  # one conversation: kept together, with two annotators
    [third] = set(codes) - set(first)
    assert "Nothing to rate yet" in people[third].messages[-1].text
    await rate_all(people[first[0]], point(1))
    await rate_all(people[first[1]], _disagreeing)
    extra = "Information about the recommended games"
    assert any(extra in m.text for m in people[first[0]].messages)  # before question 11
    await people[third].wait_for_text("There is more to rate", timeout=15)
    await rate_all(people[third], point(1))

    targets = await stored(db, lambda s: s.annotation_targets("xrec"))
    odd = {t.target for t in targets if t.turn is not None and t.turn % 2 == 1}
    assert odd and odd != {t.target for t in targets}
    after = await stored(db, lambda s: s.annotation_state("xrec"))
    assert after is not None
    adjudicated = {
        (a.target, a.annotator)
        for a in after.assignments
        if a.round is AnnotationRound.ADJUDICATION
    }
    assert adjudicated == {(target, third) for target in odd}  # exactly the disputed ones
    ratings = await stored(db, lambda s: s.annotation_ratings())
    assert {r.target for r in ratings if r.annotator == third} == odd
    assert {r.round for r in ratings if r.annotator == third} == {"adjudication"}

    report = await json_report(db, tmp_path / "report.json")
    adjudication = [r for r in report["annotations"]["adjudication"] if r["job"] == "xrec"]
    q1 = next(r for r in adjudication if r["item"] == "xrec-exchange.q1_recommendation_rate")
    assert (q1["n_disagreed"], q1["n_adjudicated"]) == (len(odd), len(odd))


async def test_a_dropped_annotators_targets_reach_the_third_who_waits(
    emulator: BotApiEmulator, start_bot: StartBot, tmp_path: Path
) -> None:
    bundle = load_study("xrec")
    db = tmp_path / "xrec.sqlite"
    await start_bot(bundle, db=db)
    await play(emulator, bundle, participants=1)
    codes = dict(await invite(db, "xrec", 3))
    people = {}
    for i, (pseudonym, code) in enumerate(codes.items()):
        p = people[pseudonym] = emulator.participant(7400 + i, first_name=f"Ann{i}")
        await p.send_text(f"/start {code}")
        await p.wait_for(_waiting, timeout=15)
    state = await stored(db, lambda s: s.annotation_state("xrec"))
    assert state is not None
    leaving, staying = sorted({a.annotator for a in state.assignments})
    [third] = set(codes) - {leaving, staying}
    theirs = {a.target for a in state.assignments if a.annotator == leaving}

    assert await stored(db, lambda s: s.drop_annotator(leaving))
    await rate_all(people[staying], point(1))  # each finished target plans the job again
    await people[third].wait_for_text("There is more to rate", timeout=15)
    await rate_all(people[third], point(1))
    after = await stored(db, lambda s: s.annotation_state("xrec"))
    assert after is not None
    assert {a.target for a in after.assignments if a.annotator == third} == theirs
    assert not any(a.annotator == leaving for a in after.assignments)

    # The dropped annotator taps the item still in front of them: told, nothing kept.
    gone = people[leaving]
    item = current_item(gone)
    assert item is not None
    await gone.tap(text="Yes", message_id=item.message_id)
    await gone.wait_for_text("no longer active")
    ratings = await stored(db, lambda s: s.annotation_ratings())
    assert not any(r.annotator == leaving for r in ratings)
    await gone.send_text("hello?")
    await gone.wait_for_text("no longer active")
