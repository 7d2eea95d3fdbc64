"""Mixed models of repeated scores, checked against R's lme4 through the user's path: the
answers of tests/fixtures/mixed_idial.csv go in with ``ozlab import responses`` and the
numbers come out of ``ozlab report --format json``.

Twelve participants each rated four tasks of IDIAL's questionnaire, two with each system, in
six orders (ABAB, BABA, AABB, BBAA, ABBA, BAAB); the task_completion construct is the mean of
idial.s1 and idial.s2. Fixture values from tests/r/mixed_idial.R (lme4 1.1, REML;
``confint(method = "Wald")``), agreeing here to 1e-6 (the two optimisers stop at slightly
different points of a flat optimum).
"""

from __future__ import annotations

import json
import math
from dataclasses import replace
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy.linalg import cho_factor, cho_solve, solve_triangular

from analytics.data.loading import load_study_data
from analytics.report.models import models_section
from analytics.statistics.mixed import (
    UNTIMED,
    _cholesky_solved,
    _lower_solved,
    _upper_cholesky,
    mixed_model,
)
from analytics.statistics.questionnaires import construct_scores
from bot.cli import main

FIXTURE = Path(__file__).parent / "fixtures" / "mixed_idial.csv"
TOLERANCE = 1e-6
# term: (estimate, standard error) from tests/r/mixed_idial.R; (Satterthwaite's df, p, t
# interval low, high) from tests/r/mixed_satterthwaite.R (lmerTest 3.1)
LME4 = {
    "intercept (shop-v0, period 1)": (1.6641411134738946, 0.235821944075131),
    "shop-v1 − shop-v0": (0.6717177730522119, 0.173818445833938),
    "period 2 − period 1": (0.4065644538955762, 0.256508050527895),
    "period 3 − period 1": (0.3648977872289095, 0.256508050527895),
    "period 4 − period 1": (0.2815644538955762, 0.256508050527895),
    "carry-over of shop-v1": (-0.0631289077911525, 0.207280983428188),
}
LMERTEST = {
    "intercept (shop-v0, period 1)": (
        32.8343484254728, 4.59404956469609e-08, 1.184265789650372, 2.144016437297417,
    ),
    "shop-v1 − shop-v0": (
        31.1442371376169, 5.28645383761908e-04, 0.317279247504705, 1.026156298599719,
    ),
    "period 2 − period 1": (
        31.2574001647555, 1.23033537200188e-01, -0.116412609635844, 0.929541517426996,
    ),
    "period 3 − period 1": (
        31.2574001646523, 1.64767830060242e-01, -0.158079276302580, 0.887874850760399,
    ),
    "period 4 − period 1": (
        31.2574001657720, 2.80727303620222e-01, -0.241412609635160, 0.804541517426313,
    ),
    "carry-over of shop-v1": (
        32.5297919264659, 7.62643413940469e-01, -0.485076934718298, 0.358819119135993,
    ),
}  # fmt: skip
VAR_PARTICIPANT, VAR_RESIDUAL, REML = 0.246375144574821, 0.330330170777292, 102.336676963954


def _report(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> dict:
    db = tmp_path / "idial.sqlite"
    assert main(["import", "responses", str(FIXTURE), "--db", str(db), "--study", "idial"]) == 0
    capsys.readouterr()
    assert main(["report", "--db", str(db), "--format", "json"]) == 0
    return json.loads(capsys.readouterr().out)


def test_imported_repeated_scores_give_lme4s_model_in_the_json_report(tmp_path, capsys) -> None:
    models = _report(tmp_path, capsys)["models"]
    fits = {(f["measure_kind"], f["measure"]): f for f in models["mixed"]["fits"]}
    fit = fits[("construct", "task_completion")]
    assert fit["n_scores"] == 48 and fit["n_participants"] == 12 and fit["n_scenarios"] == 0
    assert "random intercept per participant" in fit["formula"]
    assert "period + carry-over" in fit["formula"] and "lmer" in fit["method"]
    assert fit["var_participant"] == pytest.approx(VAR_PARTICIPANT, abs=TOLERANCE)
    assert fit["var_residual"] == pytest.approx(VAR_RESIDUAL, abs=TOLERANCE)
    assert fit["reml_criterion"] == pytest.approx(REML, abs=TOLERANCE)
    assert fit["dropped"] == "" and fit["note"] is None
    terms = {
        t["term"]: t
        for t in models["mixed"]["terms"]
        if (t["measure_kind"], t["measure"]) == ("construct", "task_completion")
    }
    assert set(terms) == set(LME4)
    for name, (estimate, se) in LME4.items():
        got = terms[name]
        assert got["estimate"] == pytest.approx(estimate, abs=TOLERANCE), name
        assert got["se"] == pytest.approx(se, abs=TOLERANCE), name
        df, p, low, high = LMERTEST[name]
        assert got["df"] == pytest.approx(df, rel=1e-5), name
        assert got["p"] == pytest.approx(p, rel=1e-5), name
        assert (got["ci_low"], got["ci_high"]) == pytest.approx((low, high), abs=TOLERANCE)
        assert got["statistic"] == pytest.approx(estimate / se, rel=1e-6)
    # the single items of the construct are not modelled alone; no task success here
    assert models["success"]["test"] == []


def test_too_few_participants_give_no_model_and_say_why() -> None:
    answers = pd.read_csv(FIXTURE)
    few = answers[answers["participant_id"].isin(["P01", "P02", "P03", "P04"])]
    sets = few[few["item_id"] == "idial.s1"].assign(scenario_id=None, score=few["value"])
    found = mixed_model(sets)
    assert found.fit["note"] == "fewer than 5 participants" and found.terms.empty
    assert math.isnan(float(found.fit["var_residual"]))  # type: ignore[arg-type]


# tests/r/mixed_crossed.R: (estimates, standard errors), variances (participant, scenario,
# residual), REML criterion. lme4 stops where the likelihood is flat to 1e-8: ozlab's
# optimum is as good or better (a lower REML criterion), its variances within 2e-5.
CROSSED = {
    "crossed_usability": (
        (3.305069579479237, -0.510350438692159, -0.241248702345269),
        (0.166931934304978, 0.209534864412289, 0.211837895089848),
        (0.5047919482666057, 0.0119206266861454, 0.1624524354701732),
        311.85205434904,
    ),
    "crossed_boundary": (
        (2.075000000000003, -0.775000000000002, 0.149999999999998),
        (0.263784165466318, 0.373047144341735, 0.373047144341736),
        (0.479150697062941, 0.0, 0.433340324889354),
        154.582304768356,
    ),
    # the participants' variance is 0: a fit that stops just above the bound has a
    # singular Hessian in the variances (the report raised on it)
    "crossed_participant_boundary": (
        (3.866666666666668, 0.0833333333333334),
        (0.502735572129510, 0.629704516259346),
        (0.0, 0.163437499757031, 2.379166666784502),
        87.3475599017141,
    ),
}


# tests/r/mixed_satterthwaite.R: Satterthwaite's df and p of each term (lmerTest 3.1); the
# boundary fit has no scenarios' variance to differentiate in (lmerTest keeps it at 0).
SATTERTHWAITE = {
    "crossed_usability": (
        (13.7624103810136, 76.4518206258177, 76.8418254190881),
        (1.65501686220295e-11, 1.71946096768436e-02, 2.58309364751645e-01),
    ),
    "crossed_participant_boundary": (
        (5.19783752422333, 20.00000000042183),
        (0.000497054252744791, 0.896039936646834345),
    ),
}


@pytest.mark.parametrize("name", sorted(CROSSED))
def test_crossed_scenarios_give_lme4s_model(name: str) -> None:
    scores = pd.read_csv(FIXTURE.parent / f"{name}.csv").assign(answered_at=0.0)
    found = mixed_model(scores)
    estimates, errors, variances, reml = CROSSED[name]
    assert found.fit["n_scenarios"] == scores["scenario_id"].nunique() > 1
    assert "one per scenario (crossed)" in found.fit["formula"]
    assert list(found.terms["estimate"]) == pytest.approx(estimates, abs=1e-5)
    assert list(found.terms["se"]) == pytest.approx(errors, abs=1e-5)
    if name in SATTERTHWAITE:
        df, p = SATTERTHWAITE[name]
        assert list(found.terms["df"]) == pytest.approx(df, rel=2e-5)
        assert list(found.terms["p"]) == pytest.approx(p, rel=1e-4)
    got = [found.fit[k] for k in ("var_participant", "var_scenario", "var_residual")]
    assert got == pytest.approx(variances, abs=1e-4)
    assert float(found.fit["reml_criterion"]) <= reml + 1e-7  # type: ignore[arg-type]
    assert float(found.fit["reml_criterion"]) == pytest.approx(reml, abs=1e-6)  # type: ignore[arg-type]


def test_the_markdown_report_shows_the_model_in_words(tmp_path: Path, capsys) -> None:
    db = tmp_path / "idial.sqlite"
    assert main(["import", "responses", str(FIXTURE), "--db", str(db), "--study", "idial"]) == 0
    out = tmp_path / "report.md"
    assert main(["report", "--db", str(db), "--format", "md", "--out", str(out)]) == 0
    text = " ".join(out.read_text(encoding="utf-8").split()).replace("\\_", "_")
    assert "Mixed model of idial: task_completion" in text
    assert "score ~ system + period + carry-over (the previous answer set's system)" in text
    assert "| shop-v1 − shop-v0 | 0.67 (0.32–1.03) | 0.17 | 31.1 | 3.86 | \\< .001 |" in text
    assert "| carry-over of shop-v1 | −0.06 (−0.49 to 0.36) |" in text
    assert "Satterthwaite's degrees of freedom" in text


def test_answer_sets_without_times_leave_out_period_and_carry_over() -> None:
    answers = pd.read_csv(FIXTURE).assign(answered_at=1_760_000_000.0)
    sets = answers.groupby(["participant_id", "system_id", "scope"], as_index=False).agg(
        score=("value", "mean"), answered_at=("answered_at", "min")
    )
    found = mixed_model(sets.assign(scenario_id=None))
    assert found.fit["dropped"] == UNTIMED and found.fit["note"] is None
    assert list(found.terms["kind"]) == ["intercept", "system"]
    assert "period" not in str(found.fit["formula"])


def test_a_measure_larger_than_the_report_fits_by_default_is_left_out_and_says_how() -> None:
    answers = pd.read_csv(FIXTURE).assign(answered_at=1_760_000_000.0)
    sets = answers.groupby(["participant_id", "system_id", "scope"], as_index=False).agg(
        score=("value", "mean"), answered_at=("answered_at", "min")
    )
    sets = sets.assign(scenario_id=None)
    left_out = mixed_model(sets, largest=len(sets) - 1)
    assert left_out.terms.empty
    assert f"not fitted: {len(sets):,} scores" in str(left_out.fit["note"])
    assert "ozlab report --models" in str(left_out.fit["note"])
    fitted = mixed_model(sets, largest=None)
    assert list(fitted.terms["kind"]) == ["intercept", "system"]


def test_the_answer_sets_times_do_not_depend_on_the_order_answers_come_in(tmp_path, capsys) -> None:
    db = tmp_path / "idial.sqlite"
    assert main(["import", "responses", str(FIXTURE), "--db", str(db), "--study", "idial"]) == 0
    data = load_study_data(db)
    scores = construct_scores(data.responses)
    shuffled = replace(data, responses=data.responses.sample(frac=1.0, random_state=3))
    stored, reordered = models_section(data, scores), models_section(shuffled, scores)
    assert stored is not None and reordered is not None
    pd.testing.assert_frame_equal(stored.fits, reordered.fits)
    pd.testing.assert_frame_equal(stored.terms, reordered.terms)


@pytest.mark.parametrize("size", [1, 2, 7, 30])
def test_the_deviances_lapack_calls_give_scipys_numbers_bit_for_bit(size: int) -> None:
    """The profiled deviance calls LAPACK as ``scipy.linalg`` does, without its checks: the
    very numbers of ``solve_triangular``, ``cho_factor`` and ``cho_solve``, for a factor
    laid out by rows (numpy's) or by columns, and a 1 × 1 one."""
    rng = np.random.default_rng(size)
    square = rng.normal(size=(size, size))
    positive = square @ square.T + size * np.eye(size)
    lower = np.linalg.cholesky(positive)
    b = rng.normal(size=(size, 3))
    for factor in (lower, np.asfortranarray(lower)):
        expected = solve_triangular(factor, b, lower=True, check_finite=False)
        assert np.array_equal(_lower_solved(factor, b), expected)
    upper = _upper_cholesky(positive)
    factored = cho_factor(positive, check_finite=False)
    assert np.array_equal(upper, factored[0])
    right = rng.normal(size=size)
    assert np.array_equal(_cholesky_solved(upper, right), cho_solve(factored, right))
