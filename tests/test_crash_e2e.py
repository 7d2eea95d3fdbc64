"""Crash safety: participants through whole ``hmd`` sessions while ``ozlab run`` is killed with
SIGKILL at random moments (within 60 ms of someone writing, while it starts, or at any moment
it is up) and started again: nothing lost, nothing stored twice, every message answered, and
the re-sent messages the design allows (at least once) counted. What is counted is in
``tests/crash_support.py``; ``bench/crash.py`` runs 60 sessions with 20 kills.

The seed is fixed so that the suite is repeatable; ``OZLAB_CRASH_SEED=<n>`` tries another.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.crash_annotating import run_annotator_crash
from tests.crash_support import CrashSettings, run_crash
from tests.postgres_server import PostgresServer

pytestmark = pytest.mark.slow

SEED = int(os.environ.get("OZLAB_CRASH_SEED", "2"))


async def test_killed_at_random_moments_nothing_is_lost_or_stored_twice(tmp_path: Path) -> None:
    report = await run_crash(CrashSettings(sessions=6, kills=3, seed=SEED), tmp_path)
    again = f"OZLAB_CRASH_SEED={SEED} pytest {Path(__file__).name} or bench/crash.py --seed {SEED}"
    context = f"seed {SEED} (again: {again})\n{report.summary()}"
    assert report.problems() == [], context
    assert report.kills == 3, context
    assert report.sessions_completed == 6, context
    assert report.lost == [] and report.duplicated_rows == [] and report.unanswered == [], context
    # At least once, and no more: only messages that went out just before a kill come again
    # (problems() lists any that had been out for over a second).
    assert len(report.duplicate_ages) == report.duplicate_messages, context


async def test_killed_on_a_postgresql_server_nothing_is_lost_or_stored_twice(
    tmp_path: Path, postgres: PostgresServer
) -> None:
    """The same at a smaller size with the study on a server: a committed step survives the
    bot's SIGKILL there too, and nothing is handled twice."""
    report = await run_crash(
        CrashSettings(sessions=4, kills=2, seed=SEED), tmp_path, postgres.fresh_database()
    )
    context = f"seed {SEED}\n{report.summary()}"
    assert report.problems() == [], context
    assert report.kills == 2 and report.sessions_completed == 4, context
    assert report.lost == [] and report.duplicated_rows == [] and report.unanswered == [], context


async def test_annotators_killed_mid_rating_lose_nothing_and_rate_once(tmp_path: Path) -> None:
    report = await run_annotator_crash(tmp_path, seed=SEED, annotators=2, kills=3)
    context = f"{report.summary()} (again: OZLAB_CRASH_SEED={SEED})"
    assert report.problems() == [], context
    assert report.kills == 3, context
