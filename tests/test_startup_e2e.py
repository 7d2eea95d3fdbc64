"""Start-up: a command that cannot start exits at once, with one clear line and a
non-zero status, so a supervisor's restart fires (it used to hang after the message)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import SECRET, TOKEN

pytestmark = pytest.mark.slow

STUDY = """\
id: resto
title: Restaurants
texts:
  welcome: Hello
  consent: Do you agree
  declined: Bye
systems:
  - type: python
    id: resto
    entry: "{entry}"
scenarios: [hmd-gift]
"""


def ozlab(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "TELEGRAM_BOT_TOKEN": TOKEN, "OZLAB_SECRET": SECRET}
    return subprocess.run(
        [sys.executable, "-m", "bot.cli", *args],
        cwd=cwd,
        env={**env, "PYTHONPATH": str(Path(__file__).parents[1])},
        capture_output=True,
        text=True,
        timeout=60,  # the defect: these never returned
    )


@pytest.fixture
def misspelled(tmp_path: Path) -> Path:
    (tmp_path / "restobot.py").write_text(
        "class RestoBot:\n    async def respond(self, c): ...\n    async def close(self): ...\n"
    )
    study = tmp_path / "study.yaml"
    study.write_text(STUDY.format(entry="restobot:RestoBott"))
    return study


@pytest.mark.parametrize("command", ["run", "demo"])
def test_a_study_whose_adapter_cannot_be_built_exits_at_once(
    misspelled: Path, command: str
) -> None:
    args = ["run", str(misspelled), "--bot-api-url", "http://127.0.0.1:9"]
    if command == "demo":
        args = ["demo", "--study", str(misspelled), "--db", str(misspelled.parent / "d.sqlite")]
    done = ozlab(*args, cwd=misspelled.parent)
    assert done.returncode != 0
    lines = [line for line in done.stderr.splitlines() if line.strip()]
    assert "Traceback" not in done.stderr, done.stderr
    assert any("RestoBott" in line for line in lines), done.stderr
