"""Side by side with three or more systems: the pairs are balanced by default.

The design's system meets a partner chosen with the assignment (``bot.engine.arena.partners``),
in turn round the systems, so every unordered pair gets the same number of sessions per
complete cycle; which side is A is still drawn per session. Checked on the pure function
over a balanced design's arrivals, and on a three-system study played by simulated
participants through the real bot, where ``reveal_names: false`` must never show a name.
"""

from __future__ import annotations

import asyncio
import hashlib
import itertools
import json
import random
from collections import Counter
from dataclasses import replace
from pathlib import Path

import pytest
import yaml

import scenarios
from analytics.data.loading import load_study_data
from bot.core.privacy import Privacy
from bot.engine.arena import draw, partners
from bot.engine.assignment import Cell, assign_scenarios, cell_counts
from bot.engine.journey import Journey, Task
from bot.pilot.emulated import emulated_study
from bot.pilot.emulator.participant import Participant
from bot.pilot.simulation.lookout import StoreLookout
from bot.pilot.simulation.pace import Pace, SimulatedClock
from bot.pilot.simulation.play import ScriptedMind, StudyPlayer
from bot.store import open_store
from bot.systems.registry import build_systems, close_systems
from scenarios.loading import load_study
from scenarios.models import StudyBundle
from tests.test_engine_taps import Chat

SYSTEMS = ("shop-v1", "shop-v0", "shop-chat")
NAMES = {"shop-v1": "GameShop Pro", "shop-v0": "GameShop Classic", "shop-chat": "Shopper"}


def arena_of(folder: Path, systems: int, *, reveal: bool, exchanges: int = 5) -> StudyBundle:
    """The shipped arena study with ``systems`` demo systems (variants repeated under other
    ids past three) and ``exchanges`` turns a session."""
    shipped = Path(scenarios.__file__).parent / "library"
    (folder / "scenarios").mkdir(exist_ok=True)
    task = (shipped / "scenarios" / "arena-gift.yaml").read_text()
    task = task.replace("max_exchanges: 5", f"max_exchanges: {exchanges}")
    (folder / "scenarios" / "arena-gift.yaml").write_text(task)
    study = yaml.safe_load((shipped / "studies" / "arena.yaml").read_text())
    ids = [*SYSTEMS, "shop-v1b", "shop-v0b"][:systems]
    variants = ["v1", "v0", "chat", "v1", "v0"]
    study["systems"] = [
        {"type": "demo", "id": system, "variant": variant}
        for system, variant in zip(ids, variants, strict=False)
    ]
    names = {system: [NAMES[system]] for system in ids if system in NAMES}
    study["side_by_side"] = {"reveal_names": reveal, "names": names}
    (folder / "study.yaml").write_text(yaml.safe_dump(study, sort_keys=False))
    return load_study(folder / "study.yaml")


def pairs_of(bundle: StudyBundle, arrivals: int) -> list[tuple[str, str]]:
    """(design's system, partner) of each of ``arrivals`` participants, one after another."""
    tasks: list[tuple[Cell, ...]] = []
    drawn: list[tuple[str, str]] = []
    for arrival in range(arrivals):
        cells = cell_counts(tasks)
        assigned = assign_scenarios(bundle.study, f"p{arrival}", arrival=arrival, cells=cells)
        (partner,) = partners(bundle, assigned.tasks, cells)
        ((_, own),) = assigned.tasks
        assert partner is not None and partner != own
        drawn.append((own, partner))
        tasks.append(assigned.tasks)
    return drawn


@pytest.mark.parametrize("systems", [3, 4, 5])
def test_every_pair_gets_as_many_sessions_per_complete_cycle(tmp_path: Path, systems: int) -> None:
    bundle = arena_of(tmp_path, systems, reveal=False)
    ids = [s.id for s in bundle.study.systems]
    cycle = systems * (systems - 1)
    drawn = pairs_of(bundle, 3 * cycle)
    every_pair = {frozenset(p) for p in itertools.combinations(ids, 2)}
    for cycles in (1, 2, 3):
        per_pair = Counter(frozenset(p) for p in drawn[: cycles * cycle])
        assert set(per_pair) == every_pair
        assert set(per_pair.values()) == {2 * cycles}  # each order of the pair once a cycle
    # Within a cycle, no pair runs more than two sessions ahead of another.
    for upto in range(1, 3 * cycle):
        per_pair = Counter(frozenset(p) for p in drawn[:upto])
        counts = [per_pair.get(pair, 0) for pair in every_pair]
        assert max(counts) - min(counts) <= 2


def test_the_first_sessions_of_three_systems_are_three_different_pairs(tmp_path: Path) -> None:
    bundle = arena_of(tmp_path, 3, reveal=False)
    first = {frozenset(p) for p in pairs_of(bundle, 3)}
    assert len(first) == 3


def test_a_failing_partner_gives_way_and_other_scenarios_get_none(tmp_path: Path) -> None:
    bundle = arena_of(tmp_path, 3, reveal=False)
    cells = {("arena-gift", "shop-v1"): 0}
    (partner,) = partners(bundle, [("arena-gift", "shop-v1")], cells)
    (instead,) = partners(bundle, [("arena-gift", "shop-v1")], cells, frozenset({partner or ""}))
    assert partner is not None and instead not in {partner, "shop-v1", None}
    assert partners(bundle, [("other-scenario", "shop-v1")], cells) == (None,)


def test_the_partner_is_stored_with_the_task_and_a_journey_without_one_still_draws(
    tmp_path: Path,
) -> None:
    bundle = arena_of(tmp_path, 3, reveal=False)
    chat = Chat(bundle)
    journey = chat.in_dialogue()
    assert journey.sides is not None and journey.task.partner is not None
    assert set(journey.sides.systems) == {journey.task.system_id, journey.task.partner}
    assert Journey.from_json(journey.to_json()) == journey
    before = replace(journey, tasks=(Task(journey.task.scenario_id, journey.task.system_id),))
    own, other = sorted(draw(bundle, before), key=lambda s: s != journey.task.system_id)
    assert own == journey.task.system_id and other in SYSTEMS and other != own


async def _play(bundle: StudyBundle, db: Path, participants: int) -> list[Participant]:
    """``participants`` scripted participants one after another, as ``ozlab demo`` plays
    them, keeping each one's chat to read what the bot showed them."""
    secret = hashlib.sha256(b"pairs test secret").hexdigest()
    clock = SimulatedClock()
    built = build_systems(bundle.study.systems, env={})
    store = await open_store(db, clock, study=bundle.study.id)
    privacy = Privacy(secret)
    chats: list[Participant] = []
    try:
        async with emulated_study(
            bundle,
            db,
            secret=secret,
            token="123456:pairs-test",
            store=store,
            systems=dict(built),
            clock=clock,
            timer=clock,
        ) as emulator:
            for i in range(participants):
                user = 800_000_000 + i
                rng = random.Random(i)
                p = emulator.participant(user, first_name=f"Sim{i}")
                player = StudyPlayer(
                    p,
                    bundle,
                    rng,
                    mind=ScriptedMind(rng),
                    pace=Pace(clock, random.Random(f"pace:{i}")),
                    lookout=StoreLookout(store, privacy.pseudonym(user)),
                )
                played = await player.play()
                assert played.finished
                chats.append(p)
    finally:
        await close_systems(built)
    return chats


@pytest.mark.parametrize("reveal", [False, True])
def test_three_systems_side_by_side_played_by_simulated_participants(
    tmp_path: Path, reveal: bool
) -> None:
    """Twelve participants (two complete cycles of three systems' pairs) play one
    side-by-side task each: every pair has four sessions, each system is A in about half
    of its eight, the sides are stored with the votes, and with ``reveal_names: false`` no
    message the bot showed a participant carries a system's id or one of its names (with
    ``true``, the ids are revealed after the votes)."""
    bundle = arena_of(tmp_path, 3, reveal=reveal, exchanges=2)
    db = tmp_path / "arena3.sqlite"
    chats = asyncio.run(_play(bundle, db, 12))
    data = load_study_data(db)
    drawn = data.events[data.events["kind"].astype(object) == "sides_drawn"]
    sides = [json.loads(str(raw)) for raw in drawn["data"]]
    assert len(sides) == 12
    per_pair = Counter(frozenset((s["a"], s["b"])) for s in sides)
    assert sorted(per_pair.values()) == [4, 4, 4]
    as_a = Counter(s["a"] for s in sides)
    in_sessions = Counter(system for s in sides for system in (s["a"], s["b"]))
    assert set(in_sessions.values()) == {8}
    for system in SYSTEMS:
        assert 2 <= as_a[system] <= 6  # drawn per session: about half of its eight
    votes = data.votes
    assert len(votes) > 0
    voted = {(str(v.system_a), str(v.system_b)) for v in votes.itertuples()}
    assert voted <= {(s["a"], s["b"]) for s in sides}

    shown = " ".join(m.text for p in chats for m in p.messages)
    assert "Your vote" in shown  # the votes were answered
    if reveal:
        assert all(system in shown for system in SYSTEMS)
        return
    for system in SYSTEMS:
        assert system not in shown and NAMES[system] not in shown
