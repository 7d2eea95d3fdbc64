"""A within-subjects study compares its systems pair by pair: each participant counts once
per system met, and the paired test runs on the participants who answered a measure for
both. A measure nobody answered for two systems (a form after one task only) is compared
between subjects, and its row and the method say so, rather than "0 paired"."""

from __future__ import annotations

import asyncio
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from analytics.data.loading import load_study_data
from analytics.report.numbers import build_report
from analytics.statistics.compare import UNPAIRED, compare_systems
from bot.pilot.demo import play_study
from scenarios.loading import load_study


def answers(pairs: int, alone: int) -> pd.DataFrame:
    """``pairs`` participants who rated both systems (b a point above a), then ``alone``
    participants per system who rated one system only."""
    rng = np.random.default_rng(7)
    rows = []
    for i in range(pairs):
        base = float(rng.integers(1, 4))
        rows += [(f"p{i}", "a", base), (f"p{i}", "b", base + 1 + float(rng.integers(0, 2)))]
    for i in range(alone):
        rows += [(f"qa{i}", "a", float(rng.integers(1, 6))), (f"qb{i}", "b", 5.0)]
    return pd.DataFrame(rows, columns=["participant_id", "system_id", "score"])


def test_participants_who_met_both_systems_are_paired_and_counted_once() -> None:
    (row,) = compare_systems(answers(8, 3), within=True, systems=["a", "b"]).to_dict("records")
    assert row["test"] == "Wilcoxon signed-rank"
    assert row["n_total"] == 8  # the pairs; those who met one system cannot be paired
    assert row["p"] < 0.05
    assert not row["note"]


def test_a_measure_nobody_answered_for_two_systems_is_compared_between_subjects() -> None:
    (row,) = compare_systems(answers(0, 8), within=True, systems=["a", "b"]).to_dict("records")
    assert row["design"] == "between"
    assert row["test"] == "Mann–Whitney U"
    assert row["n_per_group"] == {"a": 8, "b": 8}
    assert np.isfinite(row["p"])
    assert row["note"] == UNPAIRED


@pytest.mark.slow
def test_the_shipped_within_study_compares_its_systems_pair_by_pair(tmp_path: Path) -> None:
    db = tmp_path / "within.sqlite"
    played = asyncio.run(play_study(load_study("within"), db, participants=16, seed=3))
    assert all(p.finished for p in played)
    report = build_report(load_study_data(db))
    hmd = report.comparisons.table
    hmd = hmd[hmd["questionnaire_id"] == "hmd"]
    assert len(hmd) == 4  # the four HMD criteria
    assert set(hmd["test"]) == {"Wilcoxon signed-rank"}
    assert set(hmd["n_total"]) == {16}  # every participant, once, with both systems
    assert hmd["p"].notna().all()
    assert "nothing to pair" not in report.comparisons.method
