"""Repeated answers to one ordinal item get a cumulative link mixed model, checked against
R's ``ordinal::clmm`` through the user's path: the answers of
tests/fixtures/ordinal_within.csv (30 participants of the shipped within study, each
answering hmd.understanding after a task with each system, the order alternating) go in with
``ozlab import responses`` and the model comes out of ``ozlab report --format json``.
Fixture values from tests/r/ordinal_clmm.R (ordinal 2022.11, nAGQ = 20)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from analytics.statistics.ordinal import METHOD
from bot.cli import main

FIXTURE = Path(__file__).parent / "fixtures" / "ordinal_within.csv"
# term: (estimate, SE, z, p), from tests/r/ordinal_clmm.R
CLMM = {
    "shop-v1 − shop-v0": (
        1.636648353805976, 0.759987676171219, 2.153519596595739, 0.03127786566463444,
    ),
    "period 2 − period 1": (
        -0.919750490844471, 0.693304805961681, -1.326617791966245, 0.18463514731002650,
    ),
    "carry-over of shop-v1": (
        1.248532427105550, 1.084072766766751, 1.151705370137929, 0.24944216479835074,
    ),
}  # fmt: skip
THRESHOLDS = (-1.646454948782675, -0.280922568372595, 0.900564173451588, 1.999855736007754)
VARIANCE, LOG_LIKELIHOOD = 0.457216958375099, -91.6657168979956


def test_an_ordinal_item_answered_twice_gives_clmms_model(tmp_path: Path, capsys) -> None:
    db = tmp_path / "within.sqlite"
    assert main(["import", "responses", str(FIXTURE), "--db", str(db), "--study", "within"]) == 0
    capsys.readouterr()
    assert main(["report", "--db", str(db), "--format", "json"]) == 0
    models = json.loads(capsys.readouterr().out)["models"]["mixed"]
    (fit,) = [f for f in models["fits"] if f["measure"] == "hmd.understanding"]
    assert fit["method"] == METHOD and fit["statistic"] == "z"
    assert (fit["n_scores"], fit["n_participants"]) == (60, 30)
    assert fit["thresholds"] == pytest.approx(THRESHOLDS, abs=1e-5)
    assert fit["var_participant"] == pytest.approx(VARIANCE, abs=1e-5)
    assert fit["log_likelihood"] == pytest.approx(LOG_LIKELIHOOD, abs=1e-7)
    terms = {t["term"]: t for t in models["terms"] if t["measure"] == "hmd.understanding"}
    assert set(terms) == set(CLMM)
    for name, (estimate, se, z, p) in CLMM.items():
        got = terms[name]
        assert got["estimate"] == pytest.approx(estimate, abs=1e-5), name
        assert got["se"] == pytest.approx(se, abs=1e-5), name
        assert got["statistic"] == pytest.approx(z, abs=1e-4), name
        assert got["p"] == pytest.approx(p, abs=1e-5), name
        assert got["df"] is None  # a Wald z test has no degrees of freedom
        assert got["ci_low"] < estimate < got["ci_high"]
