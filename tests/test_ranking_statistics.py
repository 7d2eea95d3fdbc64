"""Ranking items' statistics against R: mean ranks per option and system with Student's t
intervals on the logit of the place between 1 and k, and Mann–Whitney U per option with
Holm across the item's options
(tests/r/ranking.R computed the values)."""

from __future__ import annotations

import pandas as pd
import pytest

from analytics.statistics.ranking import compare_ranks, mean_ranks, option_ranks

ORDERS = [
    ("a1", "price,fit,speed"), ("a2", "price,speed,fit"), ("a3", "fit,price,speed"),
    ("a4", "price,fit,speed"), ("a5", "speed,price,fit"), ("a6", "price,fit,speed"),
    ("a6", "fit,price,speed"),
    ("b1", "fit,speed,price"), ("b2", "speed,fit,price"), ("b3", "fit,price,speed"),
    ("b4", "speed,fit,price"), ("b5", "fit,speed,price"), ("b6", "price,fit,speed"),
]  # fmt: skip
"""As in tests/r/ranking.R: a6 ranked twice with system a (two tasks)."""

CHOICES = pd.DataFrame(
    {
        "questionnaire_id": "q",
        "item_id": "q.order",
        "position": [0, 1, 2],
        "value": ["price", "fit", "speed"],
        "label": ["Price", "Fit", "Speed"],
    }
)


def responses(orders: list[tuple[str, str]] = ORDERS) -> pd.DataFrame:
    rows = [
        {
            "participant_id": who,
            "session_id": f"{who}-{n}",
            "system_id": who[0],
            "questionnaire_id": "q",
            "item_id": "q.order",
            "type": "ranking",
            "status": "answered",
            "text": order,
        }
        for n, (who, order) in enumerate(orders)
    ]
    skipped = {**rows[0], "status": "skipped", "text": None}
    stale = {**rows[0], "text": "price,fit"}  # not an order of today's options: left out
    other = {**rows[0], "type": "scale", "item_id": "q.a", "text": None}
    return pd.DataFrame([*rows, skipped, stale, other])


def test_each_answer_becomes_a_rank_per_option() -> None:
    ranks = option_ranks(responses(), CHOICES)
    assert len(ranks) == 3 * len(ORDERS)
    first = ranks[ranks["session_id"] == "a2-1"].sort_values("rank")
    assert list(zip(first["option"], first["label"], first["rank"], strict=True)) == [
        ("price", "Price", 1),
        ("speed", "Speed", 2),
        ("fit", "Fit", 3),
    ]


@pytest.mark.parametrize(
    ("option", "system", "mean", "sd", "low", "high", "first"),
    [
        ("price", "a", 17 / 12, 0.491596040125088, 1.104407243847991, 2.113995167023420, 0.5),
        ("price", "b", 2.5, 0.836660026534076, 1.447906080443077, 2.937863105304578, 1 / 6),
        ("fit", "a", 25 / 12, 0.801040989379861, 1.357163758678796, 2.730615628198702, 1 / 6),
        ("fit", "b", 1.5, 0.547722557505166, 1.134288016576976, 2.213745877403197, 0.5),
        ("speed", "a", 2.5, 0.836660026534076, 1.447906080443077, 2.937863105304578, 1 / 6),
        ("speed", "b", 2.0, 0.894427190999916, 1.265401485432708, 2.734598514567292, 1 / 3),
    ],
)  # fmt: skip
def test_mean_ranks_and_intervals_are_rs(
    option: str, system: str, mean: float, sd: float, low: float, high: float, first: float
) -> None:
    means = mean_ranks(option_ranks(responses(), CHOICES))
    [row] = means[(means["option"] == option) & (means["system_id"] == system)].to_dict("records")
    assert row["n"] == 6  # participants: a6's two rankings count once, as their mean
    assert (row["options"], row["label"]) == (3, option.capitalize())
    assert [row[k] for k in ("mean", "sd", "ci_low", "ci_high", "first")] == pytest.approx(
        [mean, sd, low, high, first], abs=1e-12
    )
    assert 1 <= row["ci_low"] <= row["mean"] <= row["ci_high"] <= row["options"]


def test_the_options_ranks_are_compared_by_mann_whitney_with_holm_across_options() -> None:
    tests = compare_ranks(option_ranks(responses(), CHOICES), within=False)
    assert list(tests["option"]) == ["price", "fit", "speed"]
    assert set(tests["test"]) == {"Mann–Whitney U"} and set(tests["groups"]) == {"a vs b"}
    assert set(tests["p_method"]) == {"normal approximation with continuity and tie corrections"}
    assert list(tests["statistic"]) == pytest.approx([5.5, 25.5, 24.0])  # R's W
    assert list(tests["p"]) == pytest.approx(
        [0.044683785962524, 0.235197495029290, 0.339347620219304], abs=1e-12
    )
    assert list(tests["p_family"]) == pytest.approx(
        [0.134051357887572, 0.470394990058579, 0.470394990058579], abs=1e-12
    )


def test_nothing_answered_gives_empty_tables() -> None:
    answers = responses()
    none = option_ranks(answers[answers["type"] == "scale"], CHOICES)
    assert none.empty and mean_ranks(none).empty and compare_ranks(none).empty


def test_within_subjects_each_option_is_compared_by_the_signed_rank_test() -> None:
    """The same participants ranked with both systems: Wilcoxon per option, pairs by
    participant (the test itself is checked against R in test_analytics_stats)."""
    orders = [(f"p{n}", "price,fit,speed") for n in range(6)]
    orders += [(f"p{n}", "speed,fit,price" if n < 5 else "price,fit,speed") for n in range(6)]
    answers = responses(orders)
    answers.loc[answers.index[:12], "system_id"] = ["a"] * 6 + ["b"] * 6
    answers = answers.iloc[:12]
    tests = compare_ranks(option_ranks(answers, CHOICES), within=True)
    assert set(tests["test"]) == {"Wilcoxon signed-rank"}
    price = tests[tests["option"] == "price"].iloc[0]
    assert price["n_total"] == 6 and price["p"] < 0.1
    assert tests[tests["option"] == "fit"].iloc[0]["note"].startswith("every participant rated")
