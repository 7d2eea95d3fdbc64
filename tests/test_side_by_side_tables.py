"""Side-by-side sessions in the report's per-system tables: a session of a side-by-side
task compared two systems, while its stored system is only the design's. System
reliability counts each side's own replies and latency (from the ``sides_replied``
events); the per-system session tables leave such sessions out, and the report says so."""

from __future__ import annotations

import asyncio
import json

import numpy as np
import pytest

from analytics.data.loading import StudyData, load_study_data
from analytics.report.numbers import build_report
from bot.pilot.demo import play_study
from scenarios.loading import load_study

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def arena(tmp_path_factory: pytest.TempPathFactory) -> StudyData:
    db = tmp_path_factory.mktemp("arena") / "arena.sqlite"
    asyncio.run(play_study(load_study("arena"), db, participants=4, seed=5))
    return load_study_data(db)


def test_each_side_answers_for_itself_in_system_reliability(arena: StudyData) -> None:
    replied = arena.events[arena.events["kind"].astype(object) == "sides_replied"]
    sides = [side for data in replied["data"] for side in json.loads(str(data))["replies"]]
    turns = len(arena.exchanges)
    assert len(replied) == turns and len(sides) == 2 * turns
    table = build_report(arena).system_reliability.by_system.set_index("system_id")
    assert sorted(table.index) == ["shop-v0", "shop-v1"]
    for system, row in table.iterrows():
        mine = [s["latency_ms"] for s in sides if s["system"] == system]
        assert row["exchanges"] == row["replied"] == len(mine) == turns  # every turn, both
        assert row["latency_p50_ms"] == pytest.approx(float(np.percentile(mine, 50)))
        assert row["latency_max_ms"] == pytest.approx(max(mine))


def test_side_by_side_sessions_leave_the_per_system_session_tables(arena: StudyData) -> None:
    report = build_report(arena)
    assert report.participation.by_system.empty
    assert report.completion.by_system.empty and report.completion.by_scenario.empty
    assert report.participation.overall["sessions"] == len(arena.sessions) == 4
    assert (
        "4 side-by-side sessions are left out of the per-system session tables: each "
        "compared two systems"
    ) in " ".join(report.notes)
