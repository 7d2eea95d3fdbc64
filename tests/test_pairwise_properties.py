"""Over many simulated studies, the pairwise section never prints a number its own
interval or sentence contradicts: separation, 2–4 raters, groups that never met, all ties,
a system never shown, both tie models."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from analytics.statistics.pairwise import PairwiseOptions, pairwise_section
from tests.test_pairwise_statistics import votes_frame

KINDS = ("random", "separated", "disconnected", "all_ties", "shown_first_wins")


def simulated(rng: np.random.Generator, kind: str) -> tuple[pd.DataFrame, tuple[str, ...]]:
    """One study's votes and its declared systems (one of them, ``never``, never shown)."""
    k = int(rng.integers(2, 5))
    raters = int(rng.integers(2, 5))
    strengths = rng.normal(0, 1.5, size=k)
    rows = []
    for vote in range(int(rng.integers(6, 30))):
        a, b = (int(v) for v in rng.choice(k, size=2, replace=False))
        if kind == "disconnected" and k >= 4:
            a, b = (0, 1) if vote % 2 else (2, 3)
            a, b = (a, b) if rng.random() < 0.5 else (b, a)
        eta = strengths[a] - strengths[b] + rng.normal(0, 0.5)
        if kind == "separated":
            winner = "a" if a < b else "b"  # s0 beats all, s1 beats the rest, …
        elif kind == "all_ties":
            winner = "tie"
        elif kind == "shown_first_wins":
            winner = "a"
        else:
            u = rng.random()
            winner = "tie" if u < 0.1 else ("a" if rng.random() < 1 / (1 + math.exp(-eta)) else "b")
        rows.append((f"r{vote % raters}", f"s{a}", f"s{b}", winner))
    frame = pd.DataFrame(rows, columns=["rater", "system_a", "system_b", "winner"])
    return votes_frame(frame), (*(f"s{j}" for j in range(k)), "never")


def within(low: float, value: float, high: float) -> bool:
    """Inside, to rounding: a round of the same counts refits to the last few digits."""
    slack = 1e-9 * (1 + abs(value))
    return bool(low - slack <= value <= high + slack)


@pytest.mark.slow
@pytest.mark.parametrize("ties", ["half", "davidson"])
def test_no_estimate_outside_its_interval_and_no_interval_outside_its_range(ties: str) -> None:
    rng = np.random.default_rng(20261129)
    for study in range(50):
        kind = KINDS[study % len(KINDS)]
        votes, systems = simulated(rng, kind)
        options = PairwiseOptions(ties=ties, rounds=100, seed=study)  # type: ignore[arg-type]
        found = pairwise_section(votes, systems, options)
        where = f"study {study} ({kind}, {ties})"
        row = found.counts.iloc[0]
        assert "never" not in set(found.scores["system"]), where
        for score in found.scores.to_dict("records"):
            value = score["log_strength"]
            if pd.isna(value):
                assert row["estimator"] is None, where
                assert pd.isna(score["boot_low"]) and pd.isna(score["sandwich_low"]), where
                continue
            assert math.isfinite(value), where
            assert within(score["boot_low"], value, score["boot_high"]), where
            if not pd.isna(score["sandwich_low"]):
                assert within(score["sandwich_low"], value, score["sandwich_high"]), where
            assert within(score["elo_boot_low"], score["elo"], score["elo_boot_high"]), where
            assert 1 <= score["rank"] <= score["rank_worst"] <= row["systems"], where
        for p in found.parameters.to_dict("records"):
            assert math.isfinite(p["estimate"]), where
            assert within(p["boot_low"], p["estimate"], p["boot_high"]), where
            if p["parameter"] == "shown_first":
                assert p["probability_low"] >= 0 and p["probability_high"] <= 1, where
                assert within(p["probability_low"], p["probability"], p["probability_high"])
        # the sentences beside the numbers
        if row["estimator"] == "firth":
            assert any("Firth's bias-reduced" in note for note in found.notes), where
        if row["estimator"] is None and row["systems"] >= 2:
            assert any("never compared with each other" in n for n in found.notes), where
        if row["estimator"] == "maximum_likelihood":
            assert row["identified"], where
        rates = found.win_rates["win_rate"]
        assert ((rates >= 0) & (rates <= 1)).all(), where
