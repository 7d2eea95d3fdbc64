"""Agreement between annotators: published values reproduced, cross-checked against other
implementations, and the report's rules (no pooling by bare id, first round only,
leave-one-out, adjudication, self-reports) on the analytics' input frame."""

from __future__ import annotations

# scikit-learn and statsmodels, the references, are imported by the tests that compare with
# them: at the top they cost every test process half a second of collection.
import numpy as np
import pandas as pd
import pytest

from analytics.annotations import agreement as ag
from analytics.annotations.ratings import (
    RATING_COLUMNS,
    STATISTICS,
    Annotations,
    ItemScale,
    analyse,
    item_scales,
)
from questionnaires.models import Questionnaire
from tests.annotation_tables import (
    FLEISS_COUNTS,
    FLEISS_KAPPA,
    KRIPPENDORFF,
    KRIPPENDORFF_ALPHA,
    SHROUT_FLEISS,
    SHROUT_FLEISS_F,
    SHROUT_FLEISS_ICC,
    fleiss_table,
    ratings_frame,
)

pytestmark = pytest.mark.slow  # whole commands, reports or renderings: make test, not make check


def _scale(
    low: int, high: int, measurement: str = "ordinal", item: str = "judge.score"
) -> ItemScale:
    points = tuple(range(low, high + 1))
    return ItemScale("judge", item, "scale", tuple(map(str, points)),
                     tuple(map(float, points)), measurement)  # fmt: skip


def _rows(result: Annotations | None, **where: object) -> dict[str, dict]:
    assert result is not None
    table = result.reliability
    for key, value in where.items():
        table = table[table[key].isna()] if value is None else table[table[key] == value]
    return {r["statistic"]: r for r in table.to_dict("records")}


def test_all_six_icc_forms_and_both_f_tests_of_shrout_and_fleiss() -> None:
    result = analyse(ratings_frame(SHROUT_FLEISS), {("judge", "judge.score"): _scale(1, 10)})
    rows = _rows(result)
    for name, published in SHROUT_FLEISS_ICC.items():
        assert rows[name]["value"] == pytest.approx(published, abs=0.005), name
        assert (rows[name]["n_targets"], rows[name]["n_annotators"]) == (6, 4)
    for name, (f, df1, df2) in SHROUT_FLEISS_F.items():
        for form in (name, name + "k"):
            assert rows[form]["f"] == pytest.approx(f, abs=0.005)
            assert (rows[form]["df1"], rows[form]["df2"]) == (df1, df2)
    assert rows["ICC2"]["p"] < 0.001 < rows["ICC1"]["p"]
    # R psych::ICC on the same table (pingouin's tests): 95% intervals to 2 dp.
    assert (round(rows["ICC2"]["ci_low"], 2), round(rows["ICC2"]["ci_high"], 2)) == (0.02, 0.76)
    assert (round(rows["ICC2k"]["ci_low"], 2), round(rows["ICC2k"]["ci_high"], 2)) == (0.07, 0.93)


def test_krippendorff_2011_example_with_missing_data_at_every_level() -> None:
    scale = _scale(1, 5)
    result = analyse(ratings_frame(KRIPPENDORFF), {("judge", "judge.score"): scale})
    rows = _rows(result)
    for level, published in KRIPPENDORFF_ALPHA.items():
        row = rows[f"alpha_{level}"]
        assert row["value"] == pytest.approx(published, abs=5e-4), level
        assert row["ci_low"] < row["value"] <= row["ci_high"] <= 1
        assert row["reported"] == (level == "ordinal")  # a scale unless declared otherwise
    assert rows["alpha_nominal"]["n_targets"] == 11  # unit 12 has one value: not pairable
    assert rows["ICC2"]["n_targets"] == 8  # ICC only on units 2-9, which every observer rated


def test_the_bootstrap_over_coincidences_gives_the_package_s_alpha() -> None:
    data = np.array([[np.nan if v is None else v for v in r] for r in KRIPPENDORFF.values()])
    for level in ag.LEVELS:
        assert ag.alpha_from_coincidences(data, level, range(1, 6)) == pytest.approx(
            ag.alpha(data, level, range(1, 6)), abs=1e-12
        )
    assert ag.alpha_interval(data, "ordinal", range(1, 6)) == ag.alpha_interval(
        data, "ordinal", range(1, 6)
    )


def test_fleiss_kappa_of_the_published_example() -> None:
    from statsmodels.stats import inter_rater

    result = analyse(ratings_frame(fleiss_table()), {("judge", "judge.score"): _scale(1, 5)})
    row = _rows(result)["fleiss_kappa"]
    assert row["value"] == pytest.approx(FLEISS_KAPPA, abs=5e-4)
    assert row["value"] == pytest.approx(inter_rater.fleiss_kappa(np.array(FLEISS_COUNTS)))
    assert (row["n_targets"], row["n_annotators"]) == (10, 14)


def test_fleiss_kappa_with_unequal_numbers_of_ratings_is_gwets_published_value() -> None:
    """Krippendorff's twelve units are the ``cac.raw4raters`` example of Gwet (2014),
    Handbook of Inter-Rater Reliability, 4th ed., p. 120: no target has all four ratings.
    Fleiss' kappa in the form for unequal numbers of raters, as R's irrCAC prints it:

        library(irrCAC); fleiss.kappa.raw(cac.raw4raters)$est
        #  coeff.name        pa        pe coeff.val
        #  Fleiss' Kappa 0.8181818 0.2387153   0.76117

    pa over the 11 targets with two ratings or more, pe from every rated target's shares
    (the single rating of unit 12 counts there). Only the 8 fully rated targets gave 0.64."""
    result = analyse(ratings_frame(KRIPPENDORFF),
                     {("judge", "judge.score"): _scale(1, 5, "nominal")})  # fmt: skip
    row = _rows(result)["fleiss_kappa"]
    pa, pe = 0.8181818, 0.2387153
    assert row["value"] == pytest.approx((pa - pe) / (1 - pe), abs=1e-7)
    assert row["value"] == pytest.approx(0.76117, abs=5e-6)
    assert row["n_targets"] == 11
    assert row["ci_low"] < row["value"] < row["ci_high"]


def test_cohen_kappa_matches_statsmodels_and_scikit_learn() -> None:
    from sklearn.metrics import cohen_kappa_score
    from statsmodels.stats import inter_rater

    first = [1, 2, 3, 3, 2, 1, 4, 1, 2, 5, 4, 3, 2, 5, 1]
    second = [1, 2, 3, 4, 2, 2, 4, 1, 3, 5, 3, 3, 1, 4, 1]
    result = analyse(ratings_frame({"a": first, "b": second}),
                     {("judge", "judge.score"): _scale(1, 5)})  # fmt: skip
    rows = _rows(result)
    table = np.zeros((5, 5))
    for a, b in zip(first, second, strict=True):
        table[a - 1, b - 1] += 1
    for scheme in ("linear", "quadratic"):
        value = rows[f"cohen_kappa_{scheme}"]["value"]
        assert value == pytest.approx(inter_rater.cohens_kappa(table, wt=scheme).kappa)
        assert value == pytest.approx(cohen_kappa_score(first, second, weights=scheme))
    assert "fleiss_kappa" not in rows
    answers = {
        "a": ["yes", "no", "yes", "yes", "no", "no"],
        "b": ["yes", "no", "no", "yes", "no", "yes"],
    }
    yes_no = ItemScale("judge", "judge.score", "yes_no", ("1", "0"), (1.0, 0.0), "nominal")
    rows = _rows(analyse(ratings_frame(answers), {("judge", "judge.score"): yes_no}))
    assert rows["cohen_kappa"]["value"] == pytest.approx(
        cohen_kappa_score(answers["a"], answers["b"])
    )
    assert set(rows) == {"alpha_nominal", "cohen_kappa", "percent_agreement"}
    assert rows["percent_agreement"]["value"] == pytest.approx(4 / 6)


def test_targets_are_kept_apart_by_job_level_and_system() -> None:
    table = {"a": [1, 2, 3, 3, 2, 1], "b": [1, 2, 3, 3, 1, 1], "c": [2, 2, 3, 3, 2, 1]}
    systems = ["A", "A", "A", "B", "B", "B"]
    result = analyse(
        ratings_frame(table, systems=systems), {("judge", "judge.score"): _scale(1, 5)}
    )
    assert _rows(result, system=None)["alpha_ordinal"]["n_targets"] == 6
    only_a = analyse(ratings_frame({k: v[:3] for k, v in table.items()}),
                     {("judge", "judge.score"): _scale(1, 5)})  # fmt: skip
    row_a = _rows(result, system="A")["alpha_ordinal"]
    assert row_a["n_targets"] == 3
    assert row_a["value"] == pytest.approx(_rows(only_a)["alpha_ordinal"]["value"])
    # The same bare ids in two jobs, or at two levels, are other material: never pooled.
    first = ratings_frame({k: v[:3] for k, v in table.items()}, job="one")
    second = ratings_frame({k: v[3:] for k, v in table.items()}, job="two")
    third = ratings_frame({k: v[3:] for k, v in table.items()}, job="one", level="exchange")
    result = analyse(pd.concat([first, second, third]), {("judge", "judge.score"): _scale(1, 5)})
    assert result is not None
    alphas = result.reliability[result.reliability["statistic"] == "alpha_ordinal"]
    assert list(zip(alphas["job"], alphas["level"], alphas["n_targets"], strict=True)) == [
        ("one", "exchange", 3), ("one", "session", 3), ("two", "session", 3),
    ]  # fmt: skip


def test_leave_one_annotator_out_shows_the_divergent_one() -> None:
    close = [1, 2, 3, 4, 5, 3, 2, 4, 1, 5]
    table = {
        "a1": [6 - v for v in close],
        "a2": close,
        "a3": [min(5, v + (i % 2)) for i, v in enumerate(close)],
    }
    result = analyse(ratings_frame(table), {("judge", "judge.score"): _scale(1, 5)})
    assert result is not None
    loo = result.leave_one_out
    icc2 = loo[loo["statistic"] == "ICC2"].set_index("left_out")["value"]
    assert icc2.idxmax() == "a1"  # without the divergent annotator, reliability rises
    assert icc2["a1"] > _rows(result)["ICC2"]["value"]
    assert set(loo["n_annotators"]) == {2}
    means = result.annotators.set_index("annotator")["mean"]
    assert means["a2"] == pytest.approx(np.mean(close))
    assert result.annotators.set_index("annotator")["distribution"]["a2"] == {
        1: 2,
        2: 2,
        3: 2,
        4: 2,
        5: 2,
    }


def _xrec(values: dict[str, list[str | None]], third: dict[int, str]) -> pd.DataFrame:
    frame = ratings_frame(values, job="xrec", instrument="x", item="x.q1", level="exchange")
    rows = [
        frame.iloc[0].to_dict() | {"annotator": "c", "target": f"t{t:02d}", "value": v,
                                   "round": "adjudication"}
        for t, v in third.items()
    ]  # fmt: skip
    return pd.concat([frame, pd.DataFrame(rows, columns=RATING_COLUMNS)], ignore_index=True)


def test_adjudication_uses_the_third_annotator_and_agreement_the_first_round() -> None:
    yes_no = ItemScale("x", "x.q1", "yes_no", ("1", "0"), (1.0, 0.0), "nominal")
    first = {"a": ["1", "1", "0", "1"], "b": ["1", "0", "0", "0"]}
    result = analyse(_xrec(first, {2: "0", 4: "1"}), {("x", "x.q1"): yes_no})
    assert result is not None
    (summary,) = result.adjudication.to_dict("records")
    assert (summary["n_targets"], summary["n_disagreed"], summary["n_adjudicated"]) == (4, 2, 2)
    final = result.final_values.set_index("target")
    assert list(final["value"]) == ["1", "0", "0", "1"]
    assert list(final["how"]) == ["agreed", "third annotator", "agreed", "third annotator"]
    (described,) = result.final_by_system.to_dict("records")
    assert described["distribution"] == {"1": 2, "0": 2} and described["n_resolved"] == 4
    rows = _rows(result)
    assert rows["cohen_kappa"]["n_annotators"] == 2  # the third annotator is not counted
    assert rows["percent_agreement"]["value"] == pytest.approx(0.5)


def test_final_value_of_three_annotators_on_a_scale() -> None:
    table = {"a": [3, 3, 1], "b": [3, 4, 3], "c": [2, 5, 5]}
    result = analyse(ratings_frame(table), {("judge", "judge.score"): _scale(1, 5)})
    assert result is not None
    final = result.final_values.set_index("target")
    assert list(final["how"]) == ["majority", "median", "median"]
    assert list(final["score"]) == [3.0, 4.0, 3.0]


def test_measurement_declared_by_the_instrument_is_the_one_reported() -> None:
    questionnaire = Questionnaire.model_validate(
        {
            "id": "judge",
            "title": "J",
            "measurement": "interval",
            "items": [
                {"type": "scale", "id": "judge.score", "text": "?", "min": 1, "max": 5,
                 "labels": {i: str(i) for i in range(1, 6)}},
                {"type": "scale", "id": "judge.other", "text": "?", "min": 1, "max": 5,
                 "labels": {i: str(i) for i in range(1, 6)}, "measurement": "ratio"},
                {"type": "choice", "id": "judge.kind", "text": "?",
                 "options": [{"value": "a", "label": "A"}, {"value": "b", "label": "B"}]},
            ],
        }
    )  # fmt: skip
    scales = item_scales([questionnaire])
    assert [s.measurement for s in scales.values()] == ["interval", "ratio", "nominal"]
    rows = _rows(analyse(ratings_frame(KRIPPENDORFF), scales))
    assert [s for s, r in rows.items() if r["reported"]] == ["alpha_interval"]


def test_unknown_item_and_off_scale_values_are_said() -> None:
    frame = ratings_frame({"a": [1, 2, 9], "b": [1, 3, 2]})
    result = analyse(frame, {("judge", "judge.score"): _scale(1, 5)})
    assert result is not None and any("not among" in n for n in result.notes)
    result = analyse(ratings_frame({"a": ["x", "y"], "b": ["x", "x"]}), {})
    assert result is not None and any("No definition" in n for n in result.notes)
    assert set(result.reliability["statistic"]) <= set(STATISTICS)


def test_no_ratings_no_section() -> None:
    assert analyse(ratings_frame({}), {}) is None


def test_spearman_between_overall_ratings_and_self_reports() -> None:
    sessions = [f"s{i}" for i in range(1, 9)]
    overall = {"a": [1, 2, 3, 4, 5, 2, 4, 3], "b": [2, 2, 3, 5, 4, 1, 4, 3]}
    frame = ratings_frame(overall, targets=sessions)
    frame["session_id"] = frame["target"]
    reported = [1.5, 2.0, 3.5, 4.5, 4.0, 1.0, 3.0, 3.0]
    scores = pd.DataFrame(
        {"participant_id": [f"p{i}" for i in range(8)], "session_id": sessions,
         "questionnaire_id": "self", "construct": "enjoyment", "moment": "post_task",
         "score": reported}
    )  # fmt: skip
    result = analyse(frame, {("judge", "judge.score"): _scale(1, 5)}, scores=scores)
    assert result is not None
    (row,) = result.self_report.to_dict("records")
    mean = (np.array(overall["a"]) + np.array(overall["b"])) / 2
    expected = pd.Series(mean).corr(pd.Series(reported), method="spearman")
    assert row["rho"] == pytest.approx(expected)
    assert row["n"] == 8 and row["ci_low"] < row["rho"] < row["ci_high"] and 0 < row["p"] < 1


def test_free_text_ratings_are_kept_out_of_agreement() -> None:
    rationale = Questionnaire.model_validate(
        {"id": "judge", "title": "J", "items": [
            {"type": "scale", "id": "judge.score", "text": "?", "min": 1, "max": 5,
             "labels": {i: str(i) for i in range(1, 6)}},
            {"type": "text", "id": "judge.why", "text": "Why?"}]}
    )  # fmt: skip
    scores = ratings_frame({"a": [1, 2, 3], "b": [1, 3, 3]})
    words = ratings_frame({"a": ["fun", "dull", "ok"], "b": ["fun", "ok", "ok"]}, item="judge.why")
    result = analyse(pd.concat([scores, words]), item_scales([rationale]))
    assert result is not None and not result.notes
    assert set(result.reliability["item"]) == {"judge.score"}
    assert set(result.final_values["item"]) == {"judge.score"}
    only_words = analyse(words, item_scales([rationale]))
    assert only_words is None


def test_the_third_annotator_breaks_ties_and_never_overrides_agreement() -> None:
    choice = ItemScale("x", "x.q1", "choice", ("a", "b", "c"), (0.0, 1.0, 2.0), "nominal")
    first = {"a": ["a", "a", "a", "a"], "b": ["a", "b", "b", "c"]}
    result = analyse(_xrec(first, {1: "c", 2: "b", 3: "c"}), {("x", "x.q1"): choice})
    assert result is not None
    final = result.final_values.set_index("target")
    assert list(final["value"]) == ["a", "b", "c", None]
    assert list(final["how"]) == ["agreed", "third annotator", "third annotator", "unresolved"]
    (summary,) = result.adjudication.to_dict("records")
    assert (summary["n_disagreed"], summary["n_adjudicated"], summary["n_unresolved"]) == (3, 3, 1)


def test_final_values_between_points_are_listed_in_numeric_order() -> None:
    """Two annotators one point apart give a median between points; the report lists
    1, 1.5, 2, 2.5 … as numbers, not the scale's points first and the halves after."""
    table = {"a": [1, 1, 2, 2, 2, 3, 1], "b": [1, 2, 2, 2, 3, 3, 1]}
    result = analyse(ratings_frame(table), {("judge", "judge.score"): _scale(1, 5)})
    assert result is not None
    (described,) = result.final_by_system.to_dict("records")
    assert list(described["distribution"].items()) == [(1, 2), ("1.5", 1), (2, 2), ("2.5", 1),
                                                        (3, 1)]  # fmt: skip
