"""``ozlab pilot``: a study played by simulated participants that a language model drives
(or the study's own ``simulation:`` blocks), over the real bot and the emulator, before any
participant is paid. ``ozlab report --pilot`` then shows where it lost or confused them."""

from __future__ import annotations

import random
from collections.abc import Mapping

from bot.pilot.demo import MindFor, play_study
from bot.pilot.simulation.llm import PERSONAS, LanguageModelMind
from bot.pilot.simulation.play import Mind, Played
from bot.store.claims import WriterClaim
from bot.store.opening import Database
from bot.systems.http_json import JsonClient
from bot.systems.openai import OpenAIChat
from scenarios.models import StudyBundle
from scenarios.systems import OpenAISystem


def simulator_spec(url: str, model: str, api_key_env: str | None) -> OpenAISystem:
    """The ``openai`` adapter's settings for the model that plays the participants (checked
    as a study file's system would be)."""
    return OpenAISystem(
        type="openai",
        id="simulator",
        url=url,
        model=model,
        api_key_env=api_key_env,
        temperature=0.9,
        history_turns=None,
    )


async def pilot_study(
    bundle: StudyBundle,
    db: Database,
    *,
    participants: int,
    seed: int,
    simulator: OpenAISystem | None,
    env: Mapping[str, str],
    writer: WriterClaim | None = None,
) -> list[Played]:
    """Play ``participants`` simulated participants; with ``simulator``, a language model
    (one persona each, in turn) writes and taps for them. Either way the systems' latency
    is real, as participants would meet it: a pilot is run against the study's own systems.
    ``writer``: the writer's lock on ``db`` when the caller holds it (``ozlab pilot``)."""
    if simulator is None:
        return await play_study(
            bundle, db, participants=participants, seed=seed, paced_systems=False, writer=writer
        )
    client = JsonClient()
    chat = OpenAIChat(simulator, client, env)

    def mind(i: int, rng: random.Random) -> Mind:
        return LanguageModelMind(chat, PERSONAS[i % len(PERSONAS)], rng)

    minds: MindFor = mind
    try:
        return await play_study(
            bundle,
            db,
            participants=participants,
            seed=seed,
            mind_for=minds,
            paced_systems=False,
            writer=writer,
        )
    finally:
        await client.close()
