"""``ozlab demo`` and ``ozlab pilot``: a whole study played offline by simulated participants.

The emulator stands in for Telegram, the real bot runs against it over loopback HTTP, and
each simulated participant reads and taps like a person. Nothing is mocked: what the demo
leaves in the database is what a real study would leave, with two differences a report
shows: the participants are marked simulated, and time is simulated (each participant
moves the bot's clock on at a person's pace, one participant after another), so the same
seed writes the same database, row for row.
"""

from __future__ import annotations

import hashlib
import os
import random
import time
from collections.abc import Callable, Mapping
from pathlib import Path

from bot.core.conversation import Conversation, SystemReply
from bot.core.errors import StoreError, SystemSetupError
from bot.core.privacy import SECRET_ENV, Privacy
from bot.pilot.emulated import emulated_study
from bot.pilot.simulation.annotating import play_annotators, simulated_jobs
from bot.pilot.simulation.lookout import StoreLookout
from bot.pilot.simulation.pace import DEMO_EPOCH, Pace, SimulatedClock
from bot.pilot.simulation.platform import platform_visit
from bot.pilot.simulation.play import Mind, Played, ScriptedMind, StudyPlayer
from bot.speech.espeak import Espeak
from bot.store import holdings, open_store
from bot.store import lock as running
from bot.store.claims import WriterClaim
from bot.store.opening import Database, locate
from bot.systems.base import System
from bot.systems.registry import build_systems, close_systems
from bot.systems.tools import scenario_tools
from scenarios.models import StudyBundle
from scenarios.systems import HttpSystem, OpenAISystem

_FIRST_USER_ID = 700_000_000
_FIRST_ANNOTATOR_ID = 710_000_000

MindFor = Callable[[int, random.Random], Mind]
"""The mind of participant ``i`` (scripted by default; a language model in ``ozlab pilot``)."""


def clear_demo_database(db: Database, study: str | None = None) -> None:
    """Make room for a simulation at ``db``: nothing is there, or an earlier simulation's
    database that no process has open, removed with its ``-wal`` and ``-shm``. A file that is
    not an ozlab database, one that holds anything besides simulated participants and
    annotators (people, invitation codes, annotators who are people, their ratings, anyone
    else's votes...), or one a process has open is refused in one
    line, and there is no ``--force``: a demo never deletes people's data. The caller holds
    the writer's lock (``bot.store.claims.claim``), so no bot starts on the file meanwhile.
    On a server, the same of the study's schema (``study``, or the URL's)."""
    place = locate(db)
    if place.server is not None:
        from bot.store.postgres.holdings import clear_simulation

        named = place.study or study
        if named is None:
            raise StoreError("name the study the simulation writes to on the server (--study)")
        held = clear_simulation(place.server, named)
        if held:
            raise StoreError(f"study {named} holds {_listed(held)}: choose another study")
        return
    db = Path(place.path)
    beside = [Path(f"{db}{suffix}") for suffix in ("-wal", "-shm")]
    if not db.exists():
        stray = next((path for path in beside if path.exists()), None)
        if stray is not None:
            raise StoreError(
                f"{stray} is there without {db}: what is left of a study that was moved or"
                " deleted; move it away or choose another --db"
            )
        return
    if not db.is_file():
        raise StoreError(f"{db} is not a file; choose another --db")
    with running.unused(db) as unused:
        held = holdings.not_simulated(db)  # a file that is not ozlab's is refused first
        if held:
            raise StoreError(f"{db} holds {_listed(held)}: choose another --db")
        if not unused or holdings.open_elsewhere(db):
            raise StoreError(
                f"{db} is open in another process (a bot, a console, a report, a backup):"
                " a simulation replaces only a database nobody has open; choose another --db"
            )
        for path in (db, *beside):
            path.unlink(missing_ok=True)


def _listed(things: list[str]) -> str:
    return things[0] if len(things) == 1 else f"{', '.join(things[:-1])} and {things[-1]}"


async def unanswered(bundle: StudyBundle, env: Mapping[str, str]) -> list[str]:
    """What is wrong with each system behind a server that does not answer one message (as
    ``ozlab check --ping`` sends it), and how to start it: the starter's language model
    before ``ozlab serve-demo --openai`` runs."""
    from bot.systems.ping import ping_systems

    specs = {spec.id: spec for spec in bundle.study.systems}
    found = []
    for ping in await ping_systems(bundle, env):
        if ping.up:
            continue
        spec = specs[ping.system_id]
        hint = "start its server first"
        if isinstance(spec, OpenAISystem):
            hint += " (the demo model: ozlab serve-demo --openai)"
            if spec.url_env:
                hint += f", or set {spec.url_env} to where it runs"
        elif isinstance(spec, HttpSystem):
            hint += " (the demo shop: ozlab serve-demo)"
        found.append(
            f"system {ping.system_id} ({ping.kind}) does not answer at {ping.address}:"
            f" {ping.problem}; {hint}"
        )
    return found


async def servers_answer(bundle: StudyBundle, env: Mapping[str, str]) -> None:
    """Stop before a simulation whose system behind a server does not answer: each of its
    participants would otherwise play against a dead server. The first such system is a
    :class:`~bot.core.errors.SystemSetupError` saying how to start it."""
    found = await unanswered(bundle, env)
    if found:
        raise SystemSetupError(found[0])


class PacedSystem:
    """A system whose replies take simulated time: a local demo system answers at once,
    so the demo lets it think for as long as a served one might (seeded, hence the same
    every run)."""

    def __init__(self, system: System, clock: SimulatedClock, rng: random.Random) -> None:
        self.system = system
        self.clock = clock
        self.rng = rng

    async def respond(self, conversation: Conversation) -> SystemReply:
        reply = await self.system.respond(conversation)
        size = sum(len(text) for text in reply.texts)
        self.clock.advance(0.4 + 0.002 * size + self.rng.random() * 0.8)
        return reply

    async def close(self) -> None:
        """Nothing: the systems it wraps are closed together (they share one client)."""


def demo_secret(seed: int) -> str:
    """``OZLAB_SECRET`` when it is set, so that ``ozlab export payments`` and ``ozlab
    prolific`` open a demo's simulated platform ids as they will the study's; else a key of
    the seed's (the simulated users are nobody)."""
    secret = os.environ.get(SECRET_ENV, "")
    if len(secret) >= 16:
        return secret
    return hashlib.sha256(f"ozlab demo secret {seed}".encode()).hexdigest()


def simulated_voice(bundle: StudyBundle) -> Espeak | None:
    """espeak-ng, when a task's simulated participants speak some of their lines
    (``simulation.voice_rate``), with the voice and pace PocketSphinx was measured on
    (``tests/test_speech_sphinx.py``); none otherwise. No espeak-ng then stops the demo."""
    speaking = any(
        s.simulation is not None and s.simulation.voice_rate > 0 for s in bundle.scenarios.values()
    )
    return Espeak(voice="en-us", words_per_minute=140) if speaking else None


async def play_study(
    bundle: StudyBundle,
    db: Database,
    *,
    participants: int,
    seed: int = 1,
    mind_for: MindFor | None = None,
    paced_systems: bool = True,
    writer: WriterClaim | None = None,
    annotators: int = 0,
) -> list[Played]:
    """Play the study with ``participants`` simulated participants, one after another,
    then ``annotators`` simulated annotators of each of its annotation jobs, rating and
    pairwise (``bot.pilot.simulation.annotating``), on the same bot and clock.

    ``paced_systems``: the systems' latency is simulated too (demo systems, for a demo
    that replays exactly); False measures the real latency (``ozlab pilot`` against a
    served system). ``writer``: the writer's lock the caller already holds on ``db``
    (the bot takes its own otherwise)."""
    token = f"{random.Random(seed).randrange(10**9)}:demo-{seed}"
    secret = demo_secret(seed)
    clock = SimulatedClock(DEMO_EPOCH)
    built = build_systems(bundle.study.systems, env=os.environ, tools=scenario_tools(bundle))
    systems: dict[str, System] = dict(built)
    if paced_systems:
        latency = random.Random(f"{seed}:latency")
        systems = {name: PacedSystem(s, clock, latency) for name, s in systems.items()}
    privacy = Privacy(secret)
    voice = simulated_voice(bundle)
    recruited = bundle.study.recruitment is not None
    store = await open_store(db, clock, study=locate(db).study_or(bundle.study.id))
    played: list[Played] = []
    marked: list[str] = []
    try:
        async with emulated_study(
            bundle,
            db,
            secret=secret,
            token=token,
            store=store,
            systems=systems,
            clock=clock,
            timer=clock if paced_systems else time.perf_counter,
            writer=writer,
        ) as emulator:
            try:
                for i in range(participants):
                    user = _FIRST_USER_ID + i
                    pseudonym = privacy.pseudonym(user)
                    marked.append(pseudonym)
                    rng = random.Random(seed * 10_007 + i)
                    player = StudyPlayer(
                        emulator.participant(user, first_name=f"Sim{i}"),
                        bundle,
                        rng,
                        mind=mind_for(i, rng) if mind_for is not None else ScriptedMind(rng),
                        pace=Pace(clock, random.Random(f"{seed}:pace:{i}")),
                        lookout=StoreLookout(store, pseudonym),
                        visit=platform_visit(seed, i) if recruited else None,
                        voice=voice,
                    )
                    played.append(await player.play())
                    # Marked as each one ends: a demo killed later leaves no one unmarked
                    # but the participant it was playing.
                    await store.mark_simulated([pseudonym])
                for number, job in enumerate(simulated_jobs(bundle) if annotators else ()):
                    await play_annotators(
                        emulator,
                        store,
                        bundle,
                        job,
                        count=annotators,
                        seed=seed,
                        clock=clock,
                        first_user=_FIRST_ANNOTATOR_ID + number * 10_000,
                    )
            finally:
                await store.mark_simulated(marked)  # while the bot (and its store) still run
    finally:
        if paced_systems:
            await close_systems(built)
    return played
