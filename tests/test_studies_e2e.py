"""Every shipped study, played through the bot and the emulator by simulated participants:
what they tapped and typed is what the database holds, item by item."""

from __future__ import annotations

import asyncio
import random

import pytest

from bot.emulator import BotApiEmulator
from bot.privacy import Privacy
from bot.simulation.play import Given, StudyPlayer
from scenarios.loading import load_study, shipped_studies
from tests.conftest import SECRET, RunningBot, StartBot

pytestmark = pytest.mark.slow


def matches(given: Given, row: tuple) -> bool:
    value, label, text, status = row
    match given.kind:
        case "skip":
            return status == "skipped"
        case "text":
            return status == "answered" and text == given.shown
        case "options":
            return status == "answered" and label == given.shown
    if " · " in given.shown:  # "4 · Agree"
        return label == given.shown.split(" · ", 1)[1]
    if given.shown.isdigit():  # long labels: the number is on the button
        number = int(given.shown)
        return value == number or (label is not None and status == "answered")
    return label == given.shown  # Yes / No / 👍 / 👎


def answers_of(bot: RunningBot, participant: str, *, ratings: bool) -> list[tuple]:
    where = "turn IS NOT NULL AND status = 'answered'" if ratings else "turn IS NULL"
    return bot.rows(
        f"SELECT value, label, text, status FROM responses WHERE participant_id = ? AND {where}"
        " AND status IN ('answered', 'skipped') ORDER BY id",
        (participant,),
    )


@pytest.mark.parametrize("name", shipped_studies())
async def test_a_shipped_study_stores_what_participants_gave(
    emulator: BotApiEmulator, start_bot: StartBot, name: str
) -> None:
    bundle = load_study(name)
    bot = await start_bot(bundle)
    users = [1500 + i for i in range(3)]
    played = await asyncio.gather(
        *(StudyPlayer(emulator.participant(u), bundle, random.Random(u)).play() for u in users)
    )
    privacy = Privacy(SECRET)
    for user, result in zip(users, played, strict=True):
        assert result.finished
        participant = privacy.pseudonym(user)
        for ratings in (False, True):
            gave = [g for g in result.given if g.rating == ratings]
            stored = answers_of(bot, participant, ratings=ratings)
            assert len(gave) == len(stored), (name, ratings, gave, stored)
            for given, row in zip(gave, stored, strict=True):
                assert matches(given, row), (name, given, row)
    sessions = bot.rows("SELECT state FROM sessions")
    assert sessions and {state for (state,) in sessions} == {"ended"}
