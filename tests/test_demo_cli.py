"""`ozlab demo` as a researcher runs it: a subprocess, a real database, a printed summary."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from bot.core.errors import SystemSetupError
from scenarios.starter import write_starter
from tests.command_line import environment
from tests.fake_servers import closed_port_url
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
    assert "6 simulated participants and 4 simulated annotators of hmd-acute" in done.stdout
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
    [line] = [row for row in done.stdout.splitlines() if row.startswith("ACUTE-Eval")]
    assert line.split()[1:4] == ["shop-v0", "+", "shop-v1"] and line.split()[4] == str(len(real))


def test_an_arena_demo_lists_side_by_side_sessions_under_their_pair(tmp_path: Path) -> None:
    """A side-by-side session met both systems: the summary's row is the pair's, without a
    task success it cannot have, and the votes say which system was preferred."""
    db = tmp_path / "arena.sqlite"
    done = subprocess.run(
        [sys.executable, "-m", "bot.cli", "demo", "--study", "arena", "-n", "4", "--db", str(db)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    rows = {line.split("  ")[0]: line.split() for line in done.stdout.splitlines()}
    assert rows["shop-v0 + shop-v1"][3:7] == ["4", "-", "-", "5.0"]
    assert "shop-v0" not in rows and "shop-v1" not in rows  # never one system's sessions
    assert "0%" not in done.stdout
    votes = next(r for key, r in rows.items() if key.startswith("side by side"))
    assert votes[3:6] == ["shop-v0", "+", "shop-v1"] and int(votes[6]) == 20  # 4 × 5 turns


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


def test_demo_stops_in_one_line_when_a_model_server_is_not_running(tmp_path: Path) -> None:
    """The starter's language model needs its server: a demo without it would play every
    participant of that system against refused connections, for minutes, to a useless end."""
    write_starter(tmp_path / "pilot")
    db = tmp_path / "demo.sqlite"
    nowhere = closed_port_url()
    done = subprocess.run(
        [sys.executable, "-m", "bot.cli", "demo", "--study", str(tmp_path / "pilot" / "study.yaml"),
         "-n", "3", "--db", str(db)],
        capture_output=True,
        text=True,
        timeout=120,
        env={**environment(), "OZLAB_MODEL_URL": nowhere},
    )  # fmt: skip
    assert done.returncode == SystemSetupError.exit_code, done.stderr
    [line] = done.stderr.splitlines()
    assert line.startswith("ozlab: system my-llm (openai) does not answer at ")
    assert nowhere.removeprefix("http://") in line and "ozlab serve-demo --openai" in line
    assert "OZLAB_MODEL_URL" in line
    assert not db.exists()
