"""A thumbs item answered after every reply (the starter study's, ``ozlab new``): the
comparisons table says that its tests saw each participant's most frequent answer, and gives
the repeated-measures model of every answer beside them (a logistic GEE with participants as
clusters), checked against R's geepack through the user's path:
tests/fixtures/repeated_thumbs.csv goes in with ``ozlab import responses`` and the numbers
come out of ``ozlab report --format json``. Fixture values from tests/r/repeated_thumbs.R
(geepack 1.3, epsilon 1e-12)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from analytics.statistics.effect_intervals import WALD_ROBUST
from analytics.statistics.proportions import EVERY_ANSWER
from bot.cli import main

FIXTURE = Path(__file__).parent / "fixtures" / "repeated_thumbs.csv"
ITEM = "my-reply-rating.good"
# shop-v1 over shop-v0: the odds ratio of 👍 with its Wald interval; the Wald χ² and its p
ODDS, LOW, HIGH = 1.71581402166174, 0.68384053077514, 4.30512323332748
WALD, P = 1.32313616943437, 0.250029981032935


def imported(tmp_path: Path) -> Path:
    """The starter study's database with the fixture's answers."""
    assert main(["new", str(tmp_path / "starter")]) == 0
    study = tmp_path / "starter" / "study.yaml"
    db = tmp_path / "starter.sqlite"
    assert main(["import", "responses", str(FIXTURE), "--db", str(db), "--study", str(study)]) == 0
    return db


def test_answers_given_after_every_reply_are_modelled_beside_the_per_participant_test(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = imported(tmp_path)
    capsys.readouterr()
    assert main(["report", "--db", str(db), "--format", "json"]) == 0
    table = json.loads(capsys.readouterr().out)["comparisons"]["table"]
    rows = [r for r in table if r["measure"] == ITEM]
    per_participant = [r for r in rows if r["kind"] == "omnibus"]
    (fisher,) = per_participant
    assert fisher["test"].startswith("Fisher")
    assert fisher["n_total"] == 24  # participants, each once
    assert (
        "each participant's most frequent answer: 104 answers of 24 participants"
        in (fisher["note"])
    )
    (model,) = [r for r in rows if r["kind"] == "repeated"]
    assert model["test"] == EVERY_ANSWER
    assert model["n_total"] == 24
    assert model["statistic"] == pytest.approx(WALD, rel=1e-8)
    assert model["p"] == pytest.approx(P, rel=1e-8)
    assert model["effect_direction"] == "shop-v1 over shop-v0"
    assert model["effect"] == pytest.approx(ODDS, rel=1e-8)
    assert (model["effect_ci_low"], model["effect_ci_high"]) == pytest.approx((LOW, HIGH), rel=1e-8)
    assert model["effect_ci_method"] == WALD_ROBUST


def test_the_markdown_report_shows_both_rows(tmp_path: Path) -> None:
    db = imported(tmp_path)
    out = tmp_path / "report.md"
    assert main(["report", "--db", str(db), "--out", str(out)]) == 0
    text = " ".join(out.read_text(encoding="utf-8").split())
    assert "each participant's most frequent answer: 104 answers of 24 participants" in text
    assert f"{EVERY_ANSWER} | shop-v1 vs shop-v0" in text
    assert "Wald χ² = 1.3, p = .250" in text
