"""A ranking asked through the real bot on the emulator: options tapped in order into the
message edited in place, the last one taken back, a typed message reminded, old and forged
taps changing nothing, Done; then its ranks in the export and its codebook entry and the
report's section; and a pilot whose simulated participants rank as each system's weights
say, which the report's mean ranks and tests show."""

from __future__ import annotations

import contextlib
import io
from pathlib import Path

import pytest

from analytics.data.loading import load_study_data
from analytics.io.export import codebook, wide_responses
from analytics.report.numbers import build_report
from analytics.report.present_ranking import ranking_blocks
from analytics.report.render_md import render_markdown
from bot.cli import analytics_main
from bot.pilot.emulator import BotApiEmulator
from questionnaires.models import Questionnaire
from scenarios.models import StudyBundle
from tests.conftest import StartBot
from tests.food_pilot import piloted_report

pytestmark = pytest.mark.slow

USER_ID = 555_000_726
ORDER = Questionnaire.model_validate(
    {
        "id": "order",
        "title": "What matters",
        "items": [
            {
                "type": "ranking",
                "id": "order.matters",
                "text": "What matters most in a recommendation?",
                "options": [
                    {"value": "price", "label": "The price"},
                    {"value": "fit", "label": "How well it fits me"},
                    {"value": "speed", "label": "A quick answer"},
                ],
            }
        ],
    }
)


def with_ranking(hmd: StudyBundle) -> StudyBundle:
    """The house study, screening with the ranking (asked right after consent)."""
    study = hmd.study.model_copy(update={"screening": ("order",)})
    return hmd.model_copy(
        update={"study": study, "questionnaires": {**hmd.questionnaires, "order": ORDER}}
    )


def _labels(message: object) -> list[list[str]]:
    keyboard: list[list[tuple[str, str]]] = getattr(message, "keyboard")  # noqa: B009
    return [[label for label, _ in row] for row in keyboard]


async def test_a_ranking_is_tapped_in_order_undone_and_confirmed_in_one_message(
    start_bot: StartBot, emulator: BotApiEmulator, hmd: StudyBundle
) -> None:
    bot = await start_bot(with_ranking(hmd))
    p = emulator.participant(USER_ID)
    await p.send_text("/start")
    await p.wait_for_text("Privacy agreement")
    await p.tap(text="I agree")
    asked = await p.wait_for_text("What matters most")
    assert "Tap the options from first to last" in asked.text
    assert _labels(asked) == [["The price"], ["How well it fits me"], ["A quick answer"]]
    showing = asked.keyboard[0][0][1].split(":")[1]

    await p.send_text("price first")
    reminder = await p.wait_for_text("in order")
    assert reminder.text == "Please tap the options in order, from first to last, then Done."

    await p.tap(text="How well it fits me", message_id=asked.message_id)
    assert await p.wait_for_toast() == "1. How well it fits me"
    await p.wait_for_text("1. How well it fits me")
    assert _labels(p.bot_message(asked.message_id)) == [
        ["The price"], ["A quick answer"], ["↩ Undo"],
    ]  # fmt: skip
    await p.tap(text="A quick answer", message_id=asked.message_id)
    await p.wait_for_text("2. A quick answer")
    await p.tap(text="↩ Undo", message_id=asked.message_id)
    await p.wait_for(lambda q: "2. A quick" not in q.bot_message(asked.message_id).text)

    # A tap on an option already placed, on one the item never had, and an old showing's.
    for forged in (f"r:{showing}:1", f"r:{showing}:7", f"r:{int(showing) - 1}:0"):
        await p.send_callback(forged, message_id=asked.message_id)
        await p.wait_for_toast("already recorded")
    assert sum("already recorded" in toast for toast in p.toasts) == 3
    assert "2." not in p.bot_message(asked.message_id).text

    await p.tap(text="The price", message_id=asked.message_id)
    await p.wait_for_text("2. The price")
    await p.tap(text="A quick answer", message_id=asked.message_id)
    await p.wait_for_text("3. A quick answer")
    assert _labels(p.bot_message(asked.message_id)) == [["↩ Undo", "Done"]]
    await p.tap(text="Done", message_id=asked.message_id)
    await p.wait_for_text("Your task")
    await bot.stop()

    data = load_study_data(bot.db)
    answers = data.responses[data.responses["item_id"].astype(object) == "order.matters"]
    [row] = answers.astype(object).to_dict("records")
    assert (row["type"], row["text"], row["label"]) == (
        "ranking",
        "fit,price,speed",
        "How well it fits me; The price; A quick answer",
    )
    book = codebook(data).set_index("item_id")
    assert book.loc["order.matters", "type"] == "ranking"
    assert (book.loc["order.matters", "min"], book.loc["order.matters", "max"]) == (1, 3)
    assert book.loc["order.matters", "labels"] == (
        "price=The price; fit=How well it fits me; speed=A quick answer"
    )
    wide = wide_responses(data)
    ranks = {c.name: c for c in wide.columns if c.name.startswith("order.matters_")}
    assert list(ranks) == ["order.matters_price", "order.matters_fit", "order.matters_speed"]
    assert ranks["order.matters_fit"].labels == {1: "first", 3: "last"}
    assert "its rank, 1 = first, 3 = last" in ranks["order.matters_fit"].meaning
    assert [wide.frame[name].dropna().tolist() for name in ranks] == [[2], [1], [3]]
    text = render_markdown(ranking_blocks(build_report(data)))
    assert "What matters most in a recommendation? (ranks 1 = first to 3 = last)" in text
    assert "How well it fits me" in text and "1.00" in text


PILOT_SCENARIO = """\
id: dinner
title: Dinner in town
brief: Find a vegetarian restaurant near the station for four people on Friday.
max_exchanges: 2
post_task: [food-order]
simulation:
  say: ["Hi, I need a vegetarian place near the station", "for four people on friday"]
  answers:
    profiles:
      bistro-a: {food-order.matters: {price: 20, fit: 2, speed: 1}}
      bistro-b: {food-order.matters: {price: 1, fit: 2, speed: 20}}
"""
PILOT_QUESTIONNAIRE = """\
id: food-order
title: About the recommender
items:
  - type: ranking
    id: food-order.matters
    text: What mattered most to you?
    options:
      - {value: price, label: The price}
      - {value: fit, label: How well it fits me}
      - {value: speed, label: A quick answer}
"""


def test_a_pilot_reports_the_order_planted_for_each_system(tmp_path: Path) -> None:
    """Simulated participants tap the options in the order each system's weights make
    likely: the price first with one system, a quick answer with the other; the report's
    mean ranks and its per-option tests show it."""
    db, report = piloted_report(tmp_path, PILOT_SCENARIO, "food-order", PILOT_QUESTIONNAIRE)
    means = {(r["system_id"], r["option"]): r for r in report["rankings"]["mean_ranks"]}
    price_a, price_b = means[("bistro-a", "price")], means[("bistro-b", "price")]
    assert price_a["n"] >= 4 and price_b["n"] >= 4, (price_a, price_b)
    assert price_a["mean"] < 1.5 < price_b["mean"], (price_a, price_b)
    speed_a, speed_b = means[("bistro-a", "speed")], means[("bistro-b", "speed")]
    assert speed_b["mean"] < 1.5 < 2.5 < speed_a["mean"], (speed_a, speed_b)
    assert speed_b["first"] > 0.5 > speed_a["first"]
    tests = {r["option"]: r for r in report["rankings"]["tests"]}
    assert {r["test"] for r in tests.values()} == {"Mann–Whitney U"}
    assert tests["speed"]["p"] < 0.05 and tests["speed"]["p_family"] < 0.05, tests["speed"]
    assert report["questionnaires"]["items"] == [] or all(
        r["item_id"] != "food-order.matters" for r in report["questionnaires"]["items"]
    )  # a ranking is not summarised as one answer
    for form in ("md", "html", "terminal"):
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            assert analytics_main(["report", "--db", str(db), "--format", form]) == 0
        assert "Rankings" in out.getvalue() and "A quick answer" in out.getvalue(), form
    paper = tmp_path / "paper" / "report.tex"
    with contextlib.redirect_stdout(io.StringIO()):
        assert analytics_main(["report", "--db", str(db), "--out", str(paper)]) == 0
    written = "".join(f.read_text() for f in paper.parent.rglob("*.tex"))
    assert "Rankings" in written and "A quick answer" in written
