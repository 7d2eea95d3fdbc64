"""A matrix asked through the real bot on the emulator: its statements answered one after
another in the one message (a tap, an undo, a typed number), a forged tap changing nothing;
then each statement in the export as its own column and in the codebook as a scale item;
and a pilot whose simulated participants answer the statements as each system's profile
says, which the report's items, construct scores and Cronbach's α show."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from analytics.data.loading import load_study_data
from analytics.io.export import codebook, wide_responses
from bot.pilot.emulator import BotApiEmulator
from questionnaires.models import Questionnaire
from scenarios.models import StudyBundle
from tests.conftest import StartBot
from tests.food_pilot import piloted_report
from tests.test_matrix import GRID

pytestmark = pytest.mark.slow

USER_ID = 555_000_727


def with_matrix(hmd: StudyBundle) -> StudyBundle:
    """The house study, screening with the matrix (asked right after consent)."""
    grid = Questionnaire.model_validate(yaml.safe_load(GRID))
    study = hmd.study.model_copy(update={"screening": ("ux",)})
    return hmd.model_copy(
        update={"study": study, "questionnaires": {**hmd.questionnaires, "ux": grid}}
    )


async def test_a_matrixs_statements_are_answered_in_one_message_and_exported_one_by_one(
    start_bot: StartBot, emulator: BotApiEmulator, hmd: StudyBundle
) -> None:
    bot = await start_bot(with_matrix(hmd))
    p = emulator.participant(USER_ID)
    await p.send_text("/start")
    await p.wait_for_text("Privacy agreement")
    await p.tap(text="I agree")
    grid = await p.wait_for_text("How much do you agree?")
    assert "▶ The assistant understood me" in grid.text and "· It confused me" in grid.text
    assert [label for row in grid.keyboard for label, _ in row] == [
        "1 · Disagree", "2 · Neutral", "3 · Agree",
    ]  # fmt: skip
    showing = grid.keyboard[0][0][1].split(":")[1]

    await p.tap(text="3 · Agree", message_id=grid.message_id)
    assert await p.wait_for_toast() == "Agree"
    await p.wait_for_text("✓ The assistant understood me — Agree")
    await p.tap(text="↩ Undo", message_id=grid.message_id)
    await p.wait_for_text("▶ The assistant understood me")
    await p.tap(text="2 · Neutral", message_id=grid.message_id)
    await p.wait_for_text("▶ Its answers were clear")

    await p.send_callback(f"a:{showing}:7", message_id=grid.message_id)  # no such point
    await p.wait_for_toast("already recorded")
    await p.send_text("3")  # a typed number answers the current statement
    again = await p.wait_for_text("▶ It confused me")
    assert again.message_id != grid.message_id
    assert p.bot_message(grid.message_id).keyboard == []  # the old message's buttons gone
    await p.tap(text="1 · Disagree", message_id=again.message_id)
    await p.wait_for_text("Your task")
    await bot.stop()

    data = load_study_data(bot.db)
    answers = data.responses[data.responses["questionnaire_id"].astype(object) == "ux"]
    stored = dict(zip(answers["item_id"].astype(object), answers["value"], strict=True))
    assert stored == {"ux.understood": 2.0, "ux.clear": 3.0, "ux.confusing": 1.0}
    scored = dict(zip(answers["item_id"].astype(object), answers["score"], strict=True))
    assert scored["ux.confusing"] == 3.0  # reverse-keyed: 1 + 3 − 1
    book = codebook(data).set_index("item_id")
    assert list(book.loc[["ux.understood", "ux.clear", "ux.confusing"], "type"]) == ["scale"] * 3
    assert book.loc["ux.confusing", "reverse"] == 1
    assert book.loc["ux.clear", "construct"] == "usability"
    assert book.loc["ux.clear", "labels"] == "1=Disagree; 2=Neutral; 3=Agree"
    assert (
        book.loc["ux.clear", "text"]
        == "Its answers were clear (matrix ux.grid: How much do you agree?)"
    )
    wide = wide_responses(data)
    columns = {c.name: c for c in wide.columns}
    assert columns["ux.clear"].labels == {1: "Disagree", 2: "Neutral", 3: "Agree"}
    assert [wide.frame[n].dropna().tolist() for n in ("ux.understood", "ux.clear")] == [[2], [3]]


PILOT_SCENARIO = """\
id: dinner
title: Dinner in town
brief: Find a vegetarian restaurant near the station for four people on Friday.
max_exchanges: 2
post_task: [food-ux]
simulation:
  say: ["Hi, I need a vegetarian place near the station", "for four people on friday"]
  answers:
    consistency: 0.7
    profiles:
      bistro-a: {default: 4.3}
      bistro-b: {default: 1.8}
"""
PILOT_QUESTIONNAIRE = """\
id: food-ux
title: About the recommender
items:
  - type: matrix
    id: food-ux.grid
    text: How much do you agree?
    construct: usability
    labels: {1: Strongly disagree, 2: Disagree, 3: Neutral, 4: Agree, 5: Strongly agree}
    statements:
      - {id: food-ux.understood, text: The assistant understood me}
      - {id: food-ux.clear, text: Its answers were clear}
      - {id: food-ux.useful, text: Its suggestions were useful}
      - {id: food-ux.confusing, text: It confused me, reverse: true}
"""


def test_a_pilot_reports_a_matrixs_statements_its_construct_and_alpha(tmp_path: Path) -> None:
    _, report = piloted_report(tmp_path, PILOT_SCENARIO, "food-ux", PILOT_QUESTIONNAIRE)
    items = {(r["system_id"], r["item_id"]): r for r in report["questionnaires"]["items"]}
    for statement in ("understood", "clear", "useful"):
        a, b = (
            items[("bistro-a", f"food-ux.{statement}")],
            items[("bistro-b", f"food-ux.{statement}")],
        )
        assert a["n"] >= 4 and b["n"] >= 4, (a, b)
        assert a["mean"] > 3.3 and b["mean"] < 2.7, (statement, a["mean"], b["mean"])
    confusing = items[("bistro-a", "food-ux.confusing")]
    assert confusing["mean"] < 2.7  # reverse-keyed: a good system confuses little
    constructs = {
        (r["system_id"], r["construct"]): r for r in report["questionnaires"]["constructs"]
    }
    assert (
        constructs[("bistro-a", "usability")]["mean"]
        > constructs[("bistro-b", "usability")]["mean"]
    )
    [every] = [
        r for r in report["questionnaires"]["reliability"]
        if r["construct"] == "usability" and r["system_id"] == "(all systems)"
    ]  # fmt: skip
    assert every["k_items"] == 4 and every["alpha"] > 0.6, every
