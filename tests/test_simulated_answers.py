"""How scripted simulated participants answer: settings per system, item and item type
(``default`` never answers a yes/no item), and a construct's items drawn together so that
Cronbach's α comes out as people's would; ``ozlab check`` tells a setting that cannot be
used at its line."""

from __future__ import annotations

import contextlib
import io
import random
from pathlib import Path
from statistics import fmean, pvariance
from typing import Any

import pytest

from bot.check.study import check
from bot.pilot.simulation.answering import Question, ScriptedAnswers
from questionnaires.models import Item, ScaleItem, YesNoItem
from scenarios.loading import StudyError, load_study
from scenarios.simulation import Answers, Simulation

LABELS = {1: "1", 2: "2", 3: "3", 4: "4", 5: "5"}
YES = YesNoItem(type="yes_no", id="q.found", text="Did you find one?")


def scale(name: str, *, reverse: bool = False, construct: str | None = "ease") -> ScaleItem:
    return ScaleItem.model_validate(
        {"type": "scale", "id": f"q.{name}", "text": f"{name}?", "labels": LABELS,
         "reverse": reverse, "construct": construct}
    )  # fmt: skip


def answers_of(
    items: list[Item],
    answers: dict[str, Any],
    system: str = "a",
    people: int = 400,
    seed: int = 1,
    attention_fail_rate: float = 0.0,
) -> list[list[int]]:
    """Each simulated participant's answers to ``items`` (one person: one ScriptedAnswers)."""
    plan = Simulation(
        answers=Answers.model_validate(answers), attention_fail_rate=attention_fail_rate
    )
    rng = random.Random(seed)
    rows = []
    for _ in range(people):
        person = ScriptedAnswers(rng)
        row = []
        for item in items:
            values = [v for v, _ in item.choices()]  # type: ignore[union-attr]
            index = person.choose(Question(item.text, item, None), len(values), plan, system)
            row.append(int(values[index]))
        rows.append(row)
    return rows


def share_of_yes(answers: dict[str, Any], system: str = "a") -> float:
    return fmean(row[0] for row in answers_of([YES], answers, system))


def cronbach(rows: list[list[int]]) -> float:
    k = len(rows[0])
    items = sum(pvariance([row[i] for row in rows]) for i in range(k))
    return k / (k - 1) * (1 - items / pvariance([sum(row) for row in rows]))


def test_default_answers_scale_items_and_never_a_yes_no_item() -> None:
    rows = answers_of([YES, scale("easy")], {"profiles": {"a": {"default": 3.0}}})
    assert 0.4 < fmean(row[0] for row in rows) < 0.6  # uniform, not "yes" every time
    assert 2.8 < fmean(row[1] for row in rows) < 3.2


def test_a_share_of_yes_per_item_type_and_per_system() -> None:
    settings = {"types": {"yes_no": 0.8}, "profiles": {"b": {"yes_no": 0.1}}}
    assert 0.74 < share_of_yes(settings, "a") < 0.86
    assert 0.05 < share_of_yes(settings, "b") < 0.15
    assert share_of_yes({"profiles": {"a": {"q.found": 1.0}}}) == 1.0  # the item's own wins


def test_a_distribution_per_system_is_accepted_and_used() -> None:
    settings = {"profiles": {"a": {"q.easy": {4: 1, 5: 3}}, "b": {"scale": {1: 1}}}}
    rows = answers_of([scale("easy")], settings, "a")
    assert {row[0] for row in rows} == {4, 5}
    assert 0.7 < fmean(row[0] == 5 for row in rows) < 0.8
    assert {row[0] for row in answers_of([scale("easy")], settings, "b")} == {1}


def test_a_constructs_items_hang_together_as_a_persons_do() -> None:
    items: list[Item] = [scale("easy"), scale("quick"), scale("hard", reverse=True)]
    rows = answers_of(items, {"profiles": {"a": {"default": 3.0}}, "spread": 1.0})
    scored = [[a, b, 6 - c] for a, b, c in rows]  # the reverse item scored back
    assert 0.7 < cronbach(scored) < 0.9  # three items correlated 0.6: α ≈ 0.82
    uniform = answers_of(items, {})  # no setting at all: uniform, and still together
    assert cronbach([[a, b, 6 - c] for a, b, c in uniform]) > 0.6
    apart = answers_of(items, {"consistency": 0.0, "profiles": {"a": {"default": 3.0}}})
    assert abs(cronbach([[a, b, 6 - c] for a, b, c in apart])) < 0.2
    alone = answers_of([scale("x", construct=None), scale("y", construct=None)], {})
    assert abs(cronbach(alone)) < 0.2  # items of no construct stay independent


SCENARIO = """\
id: dinner
title: Dinner
brief: Find a restaurant.
post_task: [food]
simulation:
  answers:
    profiles:
      bistro-a:
        default: 4.5
        food.helpful: {4: 1, 5: 2}
      bistro-z: {default: 2}
      bistro-b:
        food.found: 3.0
        food.helpful: 9
        food.nothing: 1
    types: {yes_no: 0.7}
    items:
      food.helpful: {6: 1}
"""

QUESTIONNAIRE = """\
id: food
title: About the recommender
items:
  - type: scale
    id: food.helpful
    text: Was it helpful
    labels: {1: Not at all, 2: Hardly, 3: Somewhat, 4: Mostly, 5: Very}
  - {type: yes_no, id: food.found, text: Did you find one}
"""

STUDY = """\
id: food
title: Food
texts: {welcome: Hi, consent: Do you agree, declined: Bye}
systems:
  - {type: demo, id: bistro-a}
  - {type: demo, id: bistro-b}
scenarios: [dinner]
"""


def test_check_tells_each_setting_that_cannot_be_used_at_its_line(tmp_path: Path) -> None:
    """A setting that would answer wrongly is an error; one this study never uses (a
    scenario may serve several studies) is a warning of ``ozlab check``."""
    (tmp_path / "scenarios").mkdir()
    (tmp_path / "questionnaires").mkdir()
    (tmp_path / "scenarios" / "dinner.yaml").write_text(SCENARIO)
    (tmp_path / "questionnaires" / "food.yaml").write_text(QUESTIONNAIRE)
    (tmp_path / "study.yaml").write_text(STUDY)
    with pytest.raises(StudyError) as caught:
        load_study(tmp_path / "study.yaml")
    told = [(p.file.name, p.line, p.message) for p in caught.value.problems]
    assert told == [
        ("dinner.yaml", 13, "item 'food.found' has two buttons: give the share of its higher"
         " answer (1) from 0 to 1, not 3"),
        ("dinner.yaml", 14, "a mean of 9 is off the scale of item 'food.helpful' (1 to 5)"),
        ("dinner.yaml", 18, "item 'food.helpful' has no answer 6 (its answers: 1, 2, 3, 4, 5)"),
    ]  # fmt: skip
    fixed = (
        SCENARIO.replace("food.found: 3.0", "food.found: 0.3")
        .replace("food.helpful: 9", "food.helpful: 2")
        .replace("food.helpful: {6: 1}", "food.helpful: {5: 1}")
    )
    (tmp_path / "scenarios" / "dinner.yaml").write_text(fixed)
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        check(tmp_path / "study.yaml", env={})
    warnings = [line for line in out.getvalue().splitlines() if ": warning: " in line]
    dinner = tmp_path / "scenarios" / "dinner.yaml"
    assert warnings == [
        f"{dinner}:11: warning: simulation.answers.profiles.bistro-z: no system 'bistro-z' in"
        " this study (its systems: bistro-a, bistro-b): the profile is not used",
        f"{dinner}:15: warning: simulation.answers.profiles.bistro-b.food.nothing:"
        " 'food.nothing' is neither an item of this study's questionnaires, nor an item type"
        " (scale, yes_no, thumbs, choice, slider), nor default: the setting is not used",
    ]


@pytest.mark.parametrize("rate", [0.0, 0.3, 1.0])
def test_attention_checks_are_failed_at_the_stated_rate_and_otherwise_passed(rate: float) -> None:
    check = ScaleItem.model_validate(
        {"type": "scale", "id": "q.reading", "text": 'Choose "2".', "labels": LABELS,
         "attention": 2}
    )  # fmt: skip
    yes_check = YesNoItem(type="yes_no", id="q.read", text="Answer no.", attention=False)
    leaning = {"profiles": {"a": {"default": 4.5}}, "types": {"yes_no": 0.9}}  # away from them
    answered = answers_of([check, yes_check], leaning, people=1000, attention_fail_rate=rate)
    for column, instructed in ((0, 2), (1, 0)):
        failed = sum(row[column] != instructed for row in answered) / len(answered)
        assert abs(failed - rate) < 0.05
