"""A paid study rehearsed without a token: ``ozlab demo`` gives its simulated participants
Prolific ids (most with the link, some late, some twice, some never finishing) and
``ozlab export payments`` lists each of them once, as the study's own database would."""

from __future__ import annotations

import csv
import io
import re
import subprocess
import sys
from pathlib import Path

import pytest

from bot.core.privacy import SECRET_ENV
from bot.pilot.simulation.platform import Arrival, platform_visit
from tests.command_line import environment
from tests.e2e_support import database_bytes
from tests.paid_study import recruiting_study

pytestmark = pytest.mark.slow

SECRET = "paid-study-rehearsal-0123456789"
PARTICIPANTS = 10


def ozlab(*args: str | Path) -> subprocess.CompletedProcess[str]:
    env = {**environment(), SECRET_ENV: SECRET}
    return subprocess.run(
        [sys.executable, "-m", "bot.cli", *map(str, args)],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )


@pytest.fixture(scope="module")
def demo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("paid")
    db = folder / "demo.sqlite"
    study = recruiting_study(folder)
    done = ozlab("demo", "-n", PARTICIPANTS, "--annotators", "0", "--db", db, "--study", study)
    assert done.returncode == 0, done.stderr
    return db


def test_a_demo_of_a_paid_study_lists_every_simulated_platform_participant(demo: Path) -> None:
    done = ozlab("export", "payments", "--db", demo)
    assert done.returncode == 0, done.stderr
    rows = list(csv.DictReader(io.StringIO(done.stdout)))
    visits = [platform_visit(1, i) for i in range(PARTICIPANTS)]
    listed = {row["platform_id"]: row["status"] for row in rows}
    assert len(rows) == PARTICIPANTS  # the late ones and the twice ones once each
    expected = {
        v.platform_id: "started" if v.arrival is Arrival.LEAVES else "completed" for v in visits
    }
    assert listed == expected
    assert {v.arrival for v in visits} == set(Arrival)
    assert all(re.fullmatch(r"[0-9a-f]{24}", v.platform_id) for v in visits)
    blob = database_bytes(demo)
    assert not any(v.platform_id.encode() in blob for v in visits)
