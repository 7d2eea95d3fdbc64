"""The wizard console's stress-test screen: an experimenter presses v, reads the two
replies side by side and judges with p / f / u (s skips), as ``ozlab stress judge`` does."""

from __future__ import annotations

import asyncio
from pathlib import Path

from textual.widgets import Static

from bot.desk.desk import Desk
from bot.store.stress_records import Judge, Verdict
from tests.test_stress_run import logged_store
from wizard_console.app import WizardApp
from wizard_console.stress_screen import StressJudgeScreen


async def test_an_experimenter_judges_replays_in_the_console(tmp_path: Path) -> None:
    store, ids = await logged_store(tmp_path)
    await store.close()
    async with await Desk.open(tmp_path / "study.sqlite", "ada") as desk:
        app = WizardApp(desk, interval=0.1)
        async with app.run_test(size=(100, 30)) as pilot:
            await pilot.press("v")
            await pilot.pause()
            screen = app.screen
            assert isinstance(screen, StressJudgeScreen)
            async with asyncio.timeout(10):
                while not screen.todo:  # read on mount
                    await pilot.pause()
            shown = str(screen.query_one("#stress-perturbed", Static).render())
            assert "Sorry?" in shown and "advneture games" in str(
                screen.query_one("#stress-test", Static).render()
            )
            await pilot.press("f")  # the first fails
            await pilot.press("s")  # the second waits
            await pilot.press("u")  # the third: unsure
            await pilot.press("p")  # the second, back again: passes
            await pilot.pause()
            assert screen.todo == [] and screen.judged == 3
            await pilot.press("escape")
            assert not isinstance(app.screen, StressJudgeScreen)
        verdicts = {
            r.test.id: (j.verdict, j.judged_by)
            for r in await desk.store.stress_results()
            if (j := r.by(Judge.HUMAN)) is not None
        }
    assert verdicts == {
        ids[0]: (Verdict.FAIL, "ada"),
        ids[1]: (Verdict.PASS, "ada"),
        ids[2]: (Verdict.UNSURE, "ada"),
    }
