"""The two-restaurant-bot pilot the item types' end-to-end tests share: a study folder with
the test's scenario and questionnaire, two local model servers, twelve simulated
participants through the real bot, and the report's JSON."""

from __future__ import annotations

import asyncio
import contextlib
import io
import json
from pathlib import Path
from typing import Any

from bot.cli import analytics_main
from bot.pilot.demo import clear_demo_database
from bot.pilot.pilot_run import pilot_study
from scenarios.loading import load_study
from tests.fake_servers import FakeOpenAI
from tests.test_pilot_sim import STUDY


def piloted_report(
    tmp_path: Path, scenario: str, questionnaire: str, questionnaire_yaml: str
) -> tuple[Path, dict[str, Any]]:
    """The database and JSON report of a pilot of ``STUDY`` (two systems, bistro-a and
    bistro-b) whose scenario ``dinner`` is ``scenario`` and whose questionnaire
    ``questionnaire`` is ``questionnaire_yaml``."""
    folder = tmp_path / "food"
    (folder / "scenarios").mkdir(parents=True)
    (folder / "questionnaires").mkdir()
    (folder / "scenarios" / "dinner.yaml").write_text(scenario)
    (folder / "questionnaires" / f"{questionnaire}.yaml").write_text(questionnaire_yaml)
    db = tmp_path / "pilot.sqlite"
    clear_demo_database(db)

    async def pilot() -> None:
        async with FakeOpenAI(_restaurants) as a, FakeOpenAI(_restaurants) as b:
            text = STUDY.replace('"URL"', f'"{a.url}"', 1).replace('"URL"', f'"{b.url}"')
            (folder / "study.yaml").write_text(text)
            bundle = load_study(folder / "study.yaml")
            await pilot_study(bundle, db, participants=12, seed=5, simulator=None, env={})

    asyncio.run(pilot())
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert analytics_main(["report", "--db", str(db), "--format", "json"]) == 0
    return db, json.loads(out.getvalue())


def _restaurants(body: dict[str, Any]) -> str:
    return "Here are two:\n1. Verde Station, vegetarian\n2. Olive Tree, vegetarian"
