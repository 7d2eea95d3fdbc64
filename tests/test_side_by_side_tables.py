"""Side-by-side sessions in the report's per-system tables: a session of a side-by-side
task compared two systems, while its stored system is only the design's. System
reliability counts each side's own replies and latency (from the ``sides_replied``
events); the per-system session tables leave such sessions out, and the report says so."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import numpy as np
import pytest

import scenarios
from analytics.data.loading import SEVERAL_SYSTEMS, StudyData, load_study_data
from analytics.report.numbers import build_report
from analytics.statistics.questionnaires import ALL_SYSTEMS
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


def _rated_arena(folder: Path) -> Path:
    """The shipped arena study with the HMD form after its side-by-side task."""
    shipped = Path(scenarios.__file__).parent / "library"
    (folder / "scenarios").mkdir()
    task = (shipped / "scenarios" / "arena-gift.yaml").read_text()
    task = task.replace("id: arena-gift", "id: arena-rated").replace(
        "post_task: []", "post_task: [hmd]"
    )
    (folder / "scenarios" / "arena-rated.yaml").write_text(task)
    study = (shipped / "studies" / "arena.yaml").read_text()
    (folder / "study.yaml").write_text(study.replace("[arena-gift]", "[arena-rated]"))
    return folder / "study.yaml"


@pytest.fixture(scope="module")
def rated_arena(tmp_path_factory: pytest.TempPathFactory) -> StudyData:
    folder = tmp_path_factory.mktemp("rated-arena")
    db = folder / "arena.sqlite"
    asyncio.run(play_study(load_study(_rated_arena(folder)), db, participants=4, seed=5))
    return load_study_data(db)


def test_answers_after_a_side_by_side_session_are_in_no_systems_column(
    rated_arena: StudyData,
) -> None:
    """The form after a side-by-side task rates an experience of two systems at once: its
    answers are described under "(several systems)", as a post-study form of someone who
    met two systems one after the other, and never compared as the design's system's."""
    answers = rated_arena.responses
    after = answers[answers["moment"].astype(object) == "post_task"]
    assert len(after) >= 4 * 4  # four participants, the four HMD criteria at least
    assert set(after["system_id"].astype(object)) == {SEVERAL_SYSTEMS}
    report = build_report(rated_arena)
    assert report.comparisons.table.empty
    assert "fewer than two systems" in report.comparisons.method
    items = report.questionnaires.items
    assert set(items["system_id"].astype(object)) <= {SEVERAL_SYSTEMS, ALL_SYSTEMS}
    assert any(
        "given after side-by-side sessions are under (several systems)" in note
        for note in report.notes
    )
