"""A visual-analogue slider (0–100) asked through the real bot on the emulator: a row of
buttons, a typed number accepted, anything else refused politely, a forged tap changing
nothing; then its answers in the export's codebook and the report's numeric summary; and a
pilot whose simulated participants answer it as each system's profile says."""

from __future__ import annotations

from pathlib import Path

import pytest

from analytics.data.loading import load_study_data
from analytics.io.export import codebook, wide_responses
from analytics.report.numbers import build_report
from analytics.report.present_questionnaires import questionnaire_blocks
from analytics.report.render_md import render_markdown
from analytics.statistics.questionnaires import describe_items
from bot.pilot.emulator import BotApiEmulator
from questionnaires.models import Questionnaire
from scenarios.models import StudyBundle
from tests.conftest import StartBot
from tests.food_pilot import piloted_report

pytestmark = pytest.mark.slow

USER_ID = 555_000_725
VAS = Questionnaire.model_validate(
    {
        "id": "vas",
        "title": "How it felt",
        "items": [
            {
                "type": "slider",
                "id": "vas.trust",
                "text": "How much did you trust the assistant?",
                "left": "Not at all",
                "right": "Completely",
            },
            {"type": "slider", "id": "vas.ease", "text": "How easy was it?", "step": 20},
        ],
        "translations": {
            "it": {"items": {"vas.trust": {"left": "Per niente", "right": "Del tutto"}}}
        },
    }
)


def with_sliders(hmd: StudyBundle) -> StudyBundle:
    """The house study, screening with the slider questionnaire (asked right after consent)."""
    study = hmd.study.model_copy(update={"screening": ("vas",)})
    return hmd.model_copy(
        update={"study": study, "questionnaires": {**hmd.questionnaires, "vas": VAS}}
    )


async def test_a_slider_is_answered_by_a_typed_number_and_by_a_button(
    start_bot: StartBot, emulator: BotApiEmulator, hmd: StudyBundle
) -> None:
    bot = await start_bot(with_sliders(hmd))
    p = emulator.participant(USER_ID)
    await p.send_text("/start")
    await p.wait_for_text("Privacy agreement")
    await p.tap(text="I agree")
    trust = await p.wait_for_text("How much did you trust")
    assert "0 = Not at all" in trust.text and "100 = Completely" in trust.text
    assert "type any whole number from 0 to 100" in trust.text
    rows = [[label for label, _ in row] for row in trust.keyboard]
    assert rows == [["0", "10", "20", "30", "40", "50"], ["60", "70", "80", "90", "100"]]

    for wrong in ("150", "-3", "a lot", "37.5"):
        await p.send_text(wrong)
        refusal = await p.wait_for_text("type a number from 0 to 100")
        assert (
            refusal.text == "Please tap one of the buttons above, or type a number from 0 to 100."
        )
    await p.send_text("37")
    ease = await p.wait_for_text("How easy was it?")
    assert p.bot_message(trust.message_id).keyboard == []  # answered by typing: buttons gone
    assert [label for row in ease.keyboard for label, _ in row] == [
        "0", "20", "40", "60", "80", "100",
    ]  # fmt: skip

    # An old button of the first slider, and a point this slider never offered.
    await p.send_callback(f"a:{_asked(ease) - 1}:7", message_id=ease.message_id)
    assert "already recorded" in await p.wait_for_toast()
    await p.send_callback(f"a:{_asked(ease)}:9", message_id=ease.message_id)
    assert "already recorded" in await p.wait_for_toast()

    await p.tap(text="80", message_id=ease.message_id)
    assert await p.wait_for_toast() == "80"
    await p.wait_for_text("Your task")
    await bot.stop()

    data = load_study_data(bot.db)
    answers = data.responses[data.responses["questionnaire_id"].astype(object) == "vas"]
    stored = dict(zip(answers["item_id"].astype(object), answers["value"], strict=True))
    assert stored == {"vas.trust": 37.0, "vas.ease": 80.0}
    assert sorted(answers["label"].astype(object)) == ["37", "80"]  # typed or tapped alike
    book = codebook(data).set_index("item_id")
    assert book.loc["vas.trust", "type"] == "slider"
    assert (book.loc["vas.trust", "min"], book.loc["vas.trust", "max"]) == (0, 100)
    assert book.loc["vas.trust", "labels"] == "0=Not at all; 100=Completely"
    wide = wide_responses(data)
    [column] = [c for c in wide.columns if c.name == "vas.trust"]
    assert (column.kind, column.labels) == ("integer", {0: "Not at all", 100: "Completely"})
    assert list(wide.frame["vas.trust"].dropna()) == [37]
    described = describe_items(data.responses).set_index("item_id")
    assert described.loc["vas.trust", "mean"] == 37.0
    assert described.loc["vas.trust", "distribution"] == {37: 1}  # no 101 empty points
    text = render_markdown(questionnaire_blocks(build_report(data)))
    assert "visual-analogue scale" in text and "0 = Not at all to 100 = Completely" in text
    assert "37–37" in text  # the distribution of a slider's answers: their range


def _asked(message: object) -> int:
    """The showing number the message's buttons carry (``a:ASKED:INDEX``)."""
    keyboard: list[list[tuple[str, str]]] = getattr(message, "keyboard")  # noqa: B009
    return int(keyboard[0][0][1].split(":")[1])


PILOT_SCENARIO = """\
id: dinner
title: Dinner in town
brief: Find a vegetarian restaurant near the station for four people on Friday.
max_exchanges: 2
post_task: [food-vas]
simulation:
  say: ["Hi, I need a vegetarian place near the station", "for four people on friday"]
  answers:
    types: {slider: 50}
    profiles:
      bistro-a: {slider: 75}
      bistro-b: {food-vas.trust: 25}
"""
PILOT_QUESTIONNAIRE = """\
id: food-vas
title: About the recommender
items:
  - type: slider
    id: food-vas.trust
    text: How much did you trust the recommender?
    left: Not at all
    right: Completely
    step: 5
"""


def test_a_pilot_reports_the_difference_planted_between_two_systems_on_a_slider(
    tmp_path: Path,
) -> None:
    """Simulated participants answer the slider by its buttons, each system as its profile
    says (a type for one, the item's own id for the other): the report's means show it."""
    _, report = piloted_report(tmp_path, PILOT_SCENARIO, "food-vas", PILOT_QUESTIONNAIRE)
    items = {(r["system_id"], r["item_id"]): r for r in report["questionnaires"]["items"]}
    a, b = items[("bistro-a", "food-vas.trust")], items[("bistro-b", "food-vas.trust")]
    assert a["n"] >= 4 and b["n"] >= 4, (a, b)
    assert 60 < a["mean"] < 90 and 10 < b["mean"] < 40, (a["mean"], b["mean"])
    assert 5 < a["sd"] < 30, a  # about 17.5 points: the spread in quarters of the range
