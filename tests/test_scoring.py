"""Reverse coding and constructs on the shipped instruments, computed by hand."""

from __future__ import annotations

from importlib.resources import files

import pytest

from questionnaires.models import ScaleItem
from questionnaires.scoring import construct_scores, scored
from scenarios.loading import load_questionnaire


def shipped(questionnaire_id: str):
    return load_questionnaire(files("questionnaires") / "library" / f"{questionnaire_id}.yaml")


def test_the_strange_item_of_hri_cues_is_reversed() -> None:
    self_report = shipped("hri-cues-self-report")
    answers = {
        "hri-cues-self-report.satisfied": 4,
        "hri-cues-self-report.fun": 5,
        "hri-cues-self-report.interesting": 3,
        "hri-cues-self-report.strange": 2,
    }
    items = {item.id: item for item in self_report.items if isinstance(item, ScaleItem)}
    reversed_ids = [i for i, item in items.items() if item.reverse]
    assert reversed_ids == ["hri-cues-self-report.strange"]
    assert scored(items["hri-cues-self-report.strange"], 2) == 4  # 1 + 5 − 2
    assert construct_scores(self_report, answers) == {"enjoyment": (4 + 5 + 3 + 4) / 4}


def test_idial_statement_4_counts_against_effectiveness() -> None:
    idial = shipped("idial")
    answers = {item.id: 4 for item in idial.items}  # "always" to everything
    scores = construct_scores(idial, answers)
    # Effectiveness holds statements 3, 4, 7 and 10; statement 4 ("incoherent") reversed on 0–4.
    assert scores["effectiveness"] == (4 + 0 + 4 + 4) / 4
    assert scores["task_completion"] == 4 and scores["user_satisfaction"] == 4


def test_unanswered_items_do_not_count_and_off_scale_answers_are_refused() -> None:
    idial = shipped("idial")
    first = next(item for item in idial.items if isinstance(item, ScaleItem))
    assert construct_scores(idial, {first.id: 2, "idial.s2": None}) == {first.construct_name: 2}
    with pytest.raises(ValueError, match="not on the scale"):
        scored(first, 9)
