"""Quotas through the real bot on the emulator: a place is taken by whoever is under way, a
newcomer to a full design is told so before consent with Prolific's return instruction
(also after a restart), and the console and ``ozlab prolific status`` show each cell."""

from __future__ import annotations

import asyncio
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from bot.desk import formatting as fmt
from bot.desk.desk import Desk
from bot.pilot.emulator import BotApiEmulator
from scenarios.models import Design, Recruitment, StudyBundle
from tests.command_line import environment
from tests.conftest import SECRET, StartBot, say
from tests.e2e_support import PROJECT_ROOT, only_system
from tests.fake_prolific import FakeProlific, FakeSubmission
from tests.fake_servers import serving
from tests.prolific_commands import prolific as prolific_command
from tests.test_screen_out_e2e import screening

pytestmark = pytest.mark.slow

FIRST, SECOND, THIRD = "5f1a2b3c4d5e6f7a8b9c0d1e", "60aa11bb22cc33dd44ee55ff", "6" * 24
STUDY_ID = "6543210fedcba9876543210f"


def one_place_each(hmd: StudyBundle) -> StudyBundle:
    """HMD with two systems between subjects, one completed participant each, one task of
    one exchange and no questionnaire: quick to fill."""
    gift = hmd.scenarios["hmd-gift"].model_copy(update={"max_exchanges": 1, "post_task": ()})
    study = hmd.study.model_copy(
        update={
            "recruitment": Recruitment(completion_code="C1A2B3C4"),
            "scenarios": ("hmd-gift",),
            "design": Design(type="balanced", quota=1),
        }
    )
    return hmd.model_copy(update={"study": study, "scenarios": {"hmd-gift": gift}})


@pytest.mark.parametrize("stored_in", ["sqlite", "postgresql"])
async def test_a_full_design_turns_newcomers_away_before_consent(
    emulator: BotApiEmulator, start_bot: StartBot, hmd: StudyBundle, stored_in: str
) -> None:
    bundle = one_place_each(hmd)
    systems = [s.id for s in bundle.study.systems]
    assert len(systems) == 2
    bot = await start_bot(bundle)
    under_way = emulator.participant(701)
    await under_way.send_text(f"/start pid_{FIRST}")
    await under_way.wait_for_text("Privacy agreement")
    await under_way.tap(text="I agree")
    await under_way.wait_for_text("Your task")
    finishing = emulator.participant(702)
    await finishing.send_text(f"/start pid_{SECOND}")
    await finishing.wait_for_text("Privacy agreement")
    await finishing.tap(text="I agree")
    await finishing.wait_for_text("Your task")
    await say(finishing, "Hi! I need adventure games for Linux")
    await finishing.wait_for_text("C1A2B3C4")

    # Both places are taken (one completed, one under way): the next is told at once.
    late = emulator.participant(703)
    await late.send_text(f"/start pid_{THIRD}")
    full = await late.wait_for_text("has all the participants it needs")
    returning = await late.wait_for_text("return your submission on Prolific")
    assert full.text == bundle.study.texts.study_full
    assert "cc=" not in returning.text
    assert not any("Privacy agreement" in m.text for m in late.messages)
    assert len(bot.participants()) == 2  # nothing kept of the one turned away
    await bot.stop()

    bot = await start_bot(bundle, db=bot.db)  # type: ignore[arg-type]  # the places are counted again at start-up
    await late.send_text(f"/start pid_{THIRD}")
    await late.wait_for(lambda q: sum("all the participants" in m.text for m in q.messages) == 2)

    async with await Desk.open(bot.db, "ada") as desk:
        cells = await desk.cells()
    assert sorted((c.completed, c.under_way, c.quota) for c in cells) == [(0, 1, 1), (1, 0, 1)]
    assert [c.cell for c in cells] == systems and all(c.full for c in cells)
    assert fmt.cells(cells).startswith("quota ") and fmt.cells(cells).count(" full") == 2
    await bot.stop()

    fake = FakeProlific(STUDY_ID)
    fake.submissions.append(FakeSubmission("sub01aaaaaaaaaaaaaaaaaaaa", SECOND))
    async with serving(fake.app()) as url:
        done = await asyncio.to_thread(prolific_status, bot.db, url)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    at = lines.index("hmd, quota of the design's cells:")
    shown = sorted(lines[at + 1 : at + 3])
    assert [line.split(": ", 1)[1] for line in shown] == sorted(
        ["1/1 completed, 0 under way (full)", "0/1 completed, 1 under way (full)"]
    )
    assert FIRST not in done.stdout and SECOND not in done.stdout


def prolific_status(db: Path | str, url: str) -> subprocess.CompletedProcess[str]:
    """``ozlab prolific status`` against the local Prolific, as a researcher runs it."""
    return prolific_command("status", "--db", db, "--study-id", STUDY_ID, url=url, secret=SECRET)


def test_a_demo_of_a_study_with_a_quota_stops_at_it(tmp_path: Path) -> None:
    """Simulated participants turned away by a full design leave; the rest fill it."""
    study = (PROJECT_ROOT / "scenarios/library/studies/hmd.yaml").read_text(encoding="utf-8")
    assert "  seed: 20241\n" in study
    path = tmp_path / "quota.yaml"
    path.write_text(study.replace("  seed: 20241\n", "  seed: 20241\n  quota: 1\n"))
    db = tmp_path / "demo.sqlite"
    demo = ["demo", "--study", str(path), "-n", "5", "--annotators", "0", "--db", str(db)]
    done = subprocess.run(
        [sys.executable, "-m", "bot.cli", *demo],
        env=environment(),
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    with sqlite3.connect(db) as conn:
        cells = conn.execute(
            "SELECT design_cell, count(*) FROM participants WHERE stage = 'finished'"
            " GROUP BY design_cell ORDER BY design_cell"
        ).fetchall()
        everyone = conn.execute("SELECT count(*) FROM participants").fetchone()
    assert cells == [("shop-v0", 1), ("shop-v1", 1)] and everyone == (2,)


async def test_a_participant_in_screening_holds_a_place_until_screened_out(
    emulator: BotApiEmulator, start_bot: StartBot, hmd: StudyBundle
) -> None:
    bundle = screening(only_system(hmd, "shop-v1"))
    study = bundle.study.model_copy(update={"design": Design(type="balanced", quota=1)})
    bot = await start_bot(bundle.model_copy(update={"study": study}))
    answering = emulator.participant(711)
    await answering.send_text(f"/start pid_{FIRST}")
    await answering.wait_for_text("Privacy agreement")
    await answering.tap(text="I agree")
    await answering.wait_for_text("18 or older")  # consented, not assigned: holds the place
    waiting = emulator.participant(712)
    await waiting.send_text(f"/start pid_{SECOND}")
    await waiting.wait_for_text("has all the participants it needs")
    await answering.tap(text="No")
    await answering.wait_for_text("SCREEN9")  # screened out: the place is free again
    await waiting.send_text(f"/start pid_{SECOND}")
    await waiting.wait_for_text("Privacy agreement")
    await bot.stop()
