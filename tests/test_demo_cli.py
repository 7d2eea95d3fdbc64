"""`ozlab demo` as a researcher runs it: a subprocess, a real database, a printed summary."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from tests.store_reads import pick, reading, tables

pytestmark = pytest.mark.slow


def test_demo_plays_a_study_and_prints_a_summary(tmp_path: Path) -> None:
    db = tmp_path / "demo.sqlite"
    done = subprocess.run(
        [sys.executable, "-m", "bot.cli", "demo", "-n", "6", "--db", str(db)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    assert "6 simulated participants" in done.stdout
    assert str(db.resolve()) in done.stdout
    stored = tables(db)
    sessions = pick(stored["sessions"], "system_id", "state")
    items = len({r["item_id"] for r in stored["responses"]})
    assert len(sessions) == 6 and {state for _, state in sessions} == {"ended"}
    for system in {system for system, _ in sessions}:
        assert system in done.stdout
    assert items == 5  # the four HMD criteria and the comment (answered or skipped)
    # then the study's ACUTE-Eval job, by four simulated annotators through the same bot
    annotators = reading(db, lambda store: store.annotators("hmd-acute"))
    assert len(annotators) == 4 and all(a.simulated and a.joined_at for a in annotators)
    acute = [v for v in stored["votes"] if v["source"] == "acute"]
    assert {v["rater"] for v in acute} == {a.annotator_id for a in annotators}
    real = [v for v in acute if not v["onboarding"]]
    assert {frozenset((v["system_a"], v["system_b"])) for v in real} == {
        frozenset(("shop-v0", "shop-v1"))
    }


def test_demo_refuses_to_overwrite_a_file_that_is_not_its_database(tmp_path: Path) -> None:
    precious = tmp_path / "thesis.sqlite"
    precious.write_text("not a database")
    done = subprocess.run(
        [sys.executable, "-m", "bot.cli", "demo", "-n", "1", "--db", str(precious)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode != 0 and "not an ozlab database" in done.stderr
    assert precious.read_text() == "not a database"
