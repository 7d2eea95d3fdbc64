"""Annotators rate a study's conversations in Telegram, through the emulator: the shipped
HRI CUES job (three annotators, every exchange and each conversation, seen once) and the
XRec job (two annotators, a third where they disagree)."""

from __future__ import annotations

from pathlib import Path

import pytest

from bot.emulator import BotApiEmulator
from scenarios.loading import load_study
from tests.annotating_support import invite, play, point, rate_all, stored
from tests.conftest import StartBot

pytestmark = pytest.mark.slow


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
    for value, p in zip((4, 5, 3), annotators, strict=True):
        await rate_all(p, point(value))
    ratings = await stored(db, lambda s: s.annotation_ratings())
    targets = await stored(db, lambda s: s.annotation_targets("hri-cues"))
    assert targets
    for (pseudonym, _), value in zip(codes, (4, 5, 3), strict=True):
        mine = [r for r in ratings if r.annotator == pseudonym]
        scale = [r for r in mine if r.item_id != "hri-cues-overall.rationale"]
        assert len(scale) == len(targets)  # every exchange and every conversation, once
        assert {r.value for r in scale} == {str(value)}
