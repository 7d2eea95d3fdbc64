"""The ``slider`` item: loading told at its file and line, its words in another language,
the buttons and typed numbers the engine accepts, and simulated participants' answers."""

from __future__ import annotations

import random
from pathlib import Path
from statistics import fmean

import pytest

from bot.engine import asking
from bot.pilot.simulation.answering import Question, ScriptedAnswers
from questionnaires.models import Questionnaire, SliderItem
from scenarios.loading import StudyError, load_questionnaire
from scenarios.simulation import Answers, Simulation
from tests.test_loading import line_of, write

VAS = """\
id: vas
title: How it felt
items:
  - type: slider
    id: vas.trust
    text: How much did you trust it?
    left: Not at all
    right: Completely
"""


def slider(**fields: object) -> SliderItem:
    return SliderItem.model_validate({"type": "slider", "id": "v.s", "text": "How?", **fields})


def test_a_slider_loads_with_its_buttons_every_ten_points(tmp_path: Path) -> None:
    [item] = load_questionnaire(write(tmp_path, "vas.yaml", VAS)).items
    assert isinstance(item, SliderItem) and (item.min, item.max, item.step) == (0, 100, 10)
    points = item.choices()
    assert [v for v, _ in points] == list(range(0, 101, 10))
    assert (points[0][1], points[-1][1]) == ("0", "100")  # stored as a typed answer is
    assert item.anchors() == [(0, "Not at all"), (100, "Completely")]


@pytest.mark.parametrize(
    ("extra", "field", "message"),
    [
        ("    step: 30\n", "items[0].step", "step 30 does not divide 100: use 5, 10, 20, 25 or 50"),
        ("    step: 1\n", "items[0].step", "Input should be greater than or equal to 5"),
        ("    max: 10\n", "items[0].max", "a slider runs from 0 to 100: max is 100"),
    ],
)
def test_a_slider_that_cannot_be_asked_is_told_at_its_line(
    tmp_path: Path, extra: str, field: str, message: str
) -> None:
    text = VAS + extra
    with pytest.raises(StudyError) as caught:
        load_questionnaire(write(tmp_path, "vas.yaml", text))
    [problem] = caught.value.problems
    assert (problem.line, problem.field, problem.message) == (
        line_of(text, extra.split(":")[0].strip()),
        field,
        message,
    )


def test_a_sliders_ends_in_another_language_and_what_is_still_untranslated() -> None:
    base = {"id": "vas", "title": "T", "items": [slider(left="Never", right="Always")]}
    words = {"it": {"title": "T", "items": {"v.s": {"text": "Come?", "left": "Mai"}}}}
    instrument = Questionnaire.model_validate({**base, "translations": words})
    [item] = instrument.in_language("it").items
    assert isinstance(item, SliderItem) and (item.left, item.right) == ("Mai", "Always")
    assert instrument.missing_in("it") == ["v.s right"]
    with pytest.raises(ValueError, match=r"'v\.s' is not a slider item"):
        Questionnaire.model_validate(
            {
                "id": "q",
                "title": "T",
                "items": [{"type": "yes_no", "id": "v.s", "text": "Y?"}],
                "translations": {"it": {"items": {"v.s": {"left": "Mai"}}}},
            }
        )


def test_a_typed_number_is_a_point_from_0_to_100_and_nothing_else() -> None:
    """Shared by participants and annotators: "5" is the point 5, never the fifth button."""
    item = slider()
    typed = [asking.typed_answer(item, t) for t in ("0", " 5 ", "100", "４２")]
    assert typed == [(0, "0"), (5, "5"), (100, "100"), (42, "42")]
    assert [asking.typed_answer(item, t) for t in ("101", "-1", "37.5", "half", "")] == [None] * 5
    assert asking.typed_range(item) == (0, 100)


def test_simulated_participants_answer_a_slider_near_each_systems_mean() -> None:
    item = slider(step=5)
    values = [v for v, _ in item.choices()]
    settings = Answers.model_validate({"types": {"slider": 40}, "profiles": {"b": {"v.s": 80}}})
    plan = Simulation(answers=settings)
    rng = random.Random(7)

    def mean_for(system: str) -> float:
        chosen = [
            values[
                ScriptedAnswers(rng).choose(
                    Question(item.text, item, None), len(values), plan, system
                )
            ]
            for _ in range(400)
        ]
        assert set(chosen) <= set(values)
        return fmean(chosen)

    assert 37 < mean_for("a") < 43  # spread 0.7 of a quarter: about 17.5 points
    assert 74 < mean_for("b") < 83  # clipped at 100, so a little under the mean
