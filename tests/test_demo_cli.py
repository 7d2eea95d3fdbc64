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
from tests.store_reads import pick, tables

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
