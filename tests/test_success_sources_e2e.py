"""The sources of task success after tool calls, end to end: a participant's answer to the
study's success item, given through the emulator to the real bot, and a wizard's judgement,
given with the console's keys; the report's rate is theirs and names its source."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from analytics.data.loading import load_study_data
from analytics.report.numbers import build_report
from analytics.report.present import document
from analytics.report.render_md import render_markdown
from bot.desk.desk import Desk
from bot.pilot.demo import play_study
from bot.pilot.emulator import BotApiEmulator
from bot.systems.served_model import model_app
from scenarios.loading import load_study
from scenarios.models import StudyBundle
from scenarios.starter import write_starter
from scenarios.systems import OpenAISystem
from tests.conftest import StartBot, consent
from tests.fake_servers import serving
from tests.test_wizard_app import app_of, console, shows, status
from tests.test_wizard_desk import session_of, until, woz

pytestmark = pytest.mark.slow

SUCCESS_ITEM = "my-questionnaire.done"


def asked_only(bundle: StudyBundle, url: str) -> StudyBundle:
    """The starter with its language model alone, served at ``url``, offered no tools (it
    can only talk), and the participants asked whether they did the task."""
    [model] = [s for s in bundle.study.systems if isinstance(s, OpenAISystem)]
    task = bundle.scenario("my-task")
    talking = task.model_copy(
        update={
            "tools": (),
            "success_if": {k: v for k, v in task.success_if.items() if "." not in k},
        }
    )
    study = bundle.study.model_copy(
        update={"systems": (model.model_copy(update={"url": url}),), "success_item": SUCCESS_ITEM}
    )
    return bundle.model_copy(
        update={"study": study, "scenarios": {**bundle.scenarios, task.id: talking}, "tools": {}}
    )


def answers(db: Path) -> dict[str, int]:
    """Each session's answer to the success item, as stored."""
    with sqlite3.connect(db) as conn:
        rows = conn.execute(
            "SELECT session_id, value FROM responses WHERE item_id = ? AND status = 'answered'",
            (SUCCESS_ITEM,),
        ).fetchall()
    return dict(rows)


async def test_the_participant_s_answer_decides_a_model_without_tools(tmp_path: Path) -> None:
    write_starter(tmp_path / "pilot")
    db = tmp_path / "pilot.sqlite"
    async with serving(model_app()) as url:
        bundle = asked_only(load_study(tmp_path / "pilot" / "study.yaml"), url)
        await play_study(bundle, db, participants=8, seed=4, paced_systems=False)
    said = answers(db)
    assert said and set(said.values()) <= {0, 1}
    report = build_report(load_study_data(db))
    [row] = report.completion.by_system.to_dict("records")
    assert row["system_id"] == "my-llm"
    yes = sum(said.values())
    assert (row["success_n"], row["successes"]) == (len(said), yes)
    assert row["success_rate"] == pytest.approx(yes / len(said))
    # success_if judges what a system reports doing: nothing here, so not measured either.
    assert row["correct_n"] == 0
    [source] = report.completion.sources.to_dict("records")
    assert (source["decided_by"], source["sessions_decided"]) == (
        "the participant's answer",
        len(said),
    )
    text = render_markdown(document(report))
    assert f"| my-llm | the participant's answer | {len(said)} |" in text


async def judge_in_the_console(db: Path, emulator: BotApiEmulator, user: int, key: str) -> str:
    """A participant starts their task; a wizard selects it in the console, presses ``key``
    (``s`` success, ``x`` failure) and ends it; the session's id."""
    p = emulator.participant(user)
    await consent(p)
    async with await Desk.open(db, "ada") as desk:
        session = await until(lambda: session_of(desk))
    async with console(db, "ada") as pilot:
        app = app_of(pilot)
        app.filters = type(app.filters)(state="dialogue")  # the one still talking
        await shows(pilot, lambda: app.selected == session)
        await pilot.press(key)
        await shows(pilot, lambda: ": applied" in status(pilot))
        await pilot.press("d", *"judged", "enter")
        await p.wait_for_text("This task is over.")
        await shows(pilot, lambda: "end: applied" in status(pilot))
    return session


async def test_a_wizard_s_judgement_from_the_console_decides_a_wizard_system(
    emulator: BotApiEmulator, start_bot: StartBot, hmd: StudyBundle
) -> None:
    bot = await start_bot(woz(hmd), command_interval=0.05)
    await judge_in_the_console(bot.db, emulator, 861, "s")
    await judge_in_the_console(bot.db, emulator, 862, "x")
    report = build_report(load_study_data(bot.db))
    [row] = report.completion.by_system.to_dict("records")
    assert row["system_id"] == "woz"
    assert (row["success_n"], row["successes"]) == (2, 1)
    [source] = report.completion.sources.to_dict("records")
    assert (source["decided_by"], source["sessions_decided"]) == ("a wizard's judgement", 2)
    assert "| woz | a wizard's judgement | 2 |" in render_markdown(document(report))
