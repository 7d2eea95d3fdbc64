"""Every shipped study, played through the bot and the emulator by simulated participants:
what they tapped and typed is what the database holds, item by item."""

from __future__ import annotations

import asyncio
import contextlib
import random
from importlib.resources import files
from typing import Any

import pytest

from bot.core.privacy import Privacy
from bot.pilot.emulator import BotApiEmulator
from bot.pilot.simulation.play import Given, StudyPlayer
from bot.systems.served_model import model_app
from questionnaires.models import Questionnaire
from scenarios.loading import load_questionnaire, load_study, shipped_studies
from scenarios.models import StudyBundle
from scenarios.systems import OpenAISystem
from tests.conftest import SECRET, RunningBot, StartBot
from tests.fake_servers import serving
from tests.store_reads import pick
from tests.test_llm_tools_e2e import served_at

pytestmark = pytest.mark.slow


def matches(given: Given, row: tuple) -> bool:
    value, label, text, status = row
    match given.kind:
        case "skip":
            return status == "skipped"
        case "text":
            return status == "answered" and text == given.shown
        case "options" | "order":
            return status == "answered" and label == given.shown
    if " · " in given.shown:  # "4 · Agree"
        return label == given.shown.split(" · ", 1)[1]
    if given.shown.isdigit():  # long labels: the number is on the button
        number = int(given.shown)
        return value == number or (label is not None and status == "answered")
    return label == given.shown  # Yes / No / 👍 / 👎


def answers_of(bot: RunningBot, participant: str, *, ratings: bool) -> list[tuple]:
    """The participant's answers beside the chat (``ratings``: the ones given) or not, as
    stored; items skip logic left out and ratings never given are not among them."""

    def wanted(row: dict[str, Any]) -> bool:
        if row["participant_id"] != participant:
            return False
        if ratings:
            return row["turn"] is not None and row["status"] == "answered"
        return row["turn"] is None and row["status"] in ("answered", "skipped")

    return pick(filter(wanted, bot.responses()), "value", "label", "text", "status")


def with_every_hri_cues_instrument(bundle: StudyBundle) -> StudyBundle:
    """HRI CUES with its per-exchange enjoyment rating beside the chat and the overall rating
    after it, so that the two instruments the shipped study leaves out are played too."""
    loaded = load_study("hri-cues")  # the library's instruments, resolved by the loader
    chat = bundle.scenarios["hri-cues-chat"].model_copy(
        update={
            "exchange": ("hri-cues",),
            "post_task": ("hri-cues-self-report", "hri-cues-overall"),
        }
    )
    extra = {q: loaded_questionnaire(q) for q in ("hri-cues", "hri-cues-overall")} | dict(
        loaded.questionnaires
    )
    return bundle.model_copy(update={"scenarios": {"hri-cues-chat": chat}, "questionnaires": extra})


def loaded_questionnaire(questionnaire_id: str) -> Questionnaire:
    return load_questionnaire(files("questionnaires") / "library" / f"{questionnaire_id}.yaml")


WITH_RATINGS = "hri-cues+ratings"
"""hri-cues with every instrument of the library asked after each reply too."""


# Studies named, and loaded by the test: loading them all took every test process's
# collection 0.4 s, for tests that run in make test only.
@pytest.mark.parametrize("study", [*shipped_studies(), WITH_RATINGS])
async def test_a_shipped_study_stores_what_participants_gave(
    emulator: BotApiEmulator, start_bot: StartBot, study: str
) -> None:
    if study == WITH_RATINGS:
        bundle = with_every_hri_cues_instrument(load_study("hri-cues"))
    else:
        bundle = load_study(study)
    name = bundle.study.id
    async with contextlib.AsyncExitStack() as stack:
        if any(isinstance(s, OpenAISystem) for s in bundle.study.systems):
            url = await stack.enter_async_context(serving(model_app()))  # the shop as a model
            bundle = served_at(bundle, url)
        await _play_and_compare(emulator, start_bot, bundle, name)


async def _play_and_compare(
    emulator: BotApiEmulator, start_bot: StartBot, bundle: StudyBundle, name: str
) -> None:
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
            gave = [g for g in result.given if g.rating == ratings and g.kind != "vote"]
            stored = answers_of(bot, participant, ratings=ratings)
            assert len(gave) == len(stored), (name, ratings, gave, stored)
            for given, row in zip(gave, stored, strict=True):
                assert matches(given, row), (name, given, row)
    stored = bot.tables()
    for user, result in zip(users, played, strict=True):  # side by side: a vote a turn
        votes = [v for v in stored["votes"] if v["rater"] == privacy.pseudonym(user)]
        turns = [
            v for v in votes if v["source"] == "side_by_side" and v["winner"] != "not_comparable"
        ]
        assert len(turns) == len([g for g in result.given if g.kind == "vote"])
    sessions = stored["sessions"]
    assert sessions and {s["state"] for s in sessions} == {"ended"}
    played_scenarios = {s["scenario_id"] for s in sessions}
    assert played_scenarios == set(bundle.study.scenarios)  # every scenario was played
    asked = {r["questionnaire_id"] for r in stored["responses"]}
    study = bundle.study
    for_participants = {*study.screening, *study.post_study} | {
        q
        for scenario in bundle.scenarios.values()
        for q in (*scenario.post_task, *scenario.exchange, *scenario.rate_with)
    }
    assert for_participants <= set(bundle.questionnaires)  # the rest are annotators'
    assert asked == for_participants  # and every instrument was asked
