"""A judge's verdicts on every ACUTE pair and people's on some: each system's win rate by
prediction-powered inference, the pairs matched by their target, a flipped verdict half."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from analytics.annotations.judges import _win_rates_powered
from analytics.data.votes import VOTE_COLUMNS
from analytics.statistics.prediction_powered import prediction_powered_mean


def _vote(target: int, rater: str, kind: str, a: str, winner: str, reason: str | None,
          order: str = "") -> dict[str, object]:  # fmt: skip
    b = "v0" if a == "v1" else "v1"
    suffix = f":{order}" if order else ""
    return {
        **dict.fromkeys(VOTE_COLUMNS),
        "vote_id": f"acute-job:pair-{target}:{rater}:engagingness{suffix}", "source": "acute",
        "rater": rater, "rater_kind": kind, "system_a": a, "system_b": b, "winner": winner,
        "question": "engagingness", "flagged": kind == "model", "flag_reason": reason,
        "onboarding": False,
    }  # fmt: skip


def test_each_systems_win_rate_is_prediction_powered_from_the_pairs_both_judged() -> None:
    rng = np.random.default_rng(4)
    rows, judge_v1, people_v1 = [], {}, {}
    for t in range(40):
        a = "v1" if t % 2 else "v0"  # v1 shown first in half of the pairs
        v1_won = rng.random() < 0.7
        if t % 9 == 0:  # the verdict flipped with the order: recorded in both orders
            rows.append(_vote(t, "model:judge", "model", a, "a", "inconsistent", "ab"))
            rows.append(_vote(t, "model:judge", "model", a, "b", "inconsistent", "ba"))
            judge_v1[t] = 0.5
        else:
            winner = "a" if (a == "v1") == v1_won else "b"
            rows.append(_vote(t, "model:judge", "model", a, winner, "model_verdict", "ab"))
            rows.append(_vote(t, "model:judge", "model", a, winner, "swapped_repeat", "ba"))
            judge_v1[t] = float(v1_won)
        if t < 16:  # people voted on the first 16 pairs, two each
            scores = []
            for p in range(2):
                agrees = rng.random() < 0.8
                says_v1 = v1_won if agrees else not v1_won
                winner = "a" if (a == "v1") == says_v1 else "b"
                rows.append(_vote(t, f"A-{p}", "annotator", a, winner, None))
                scores.append(float(says_v1))
            people_v1[t] = float(np.mean(scores))
    votes = pd.DataFrame(rows, columns=VOTE_COLUMNS)
    found = {r["system"]: r for r in _win_rates_powered(votes)}
    assert set(found) == {"v0", "v1"}
    rated = sorted(people_v1)
    expected = prediction_powered_mean(
        np.array([judge_v1[t] for t in range(40) if t not in people_v1]),
        np.array([judge_v1[t] for t in rated]),
        np.array([people_v1[t] for t in rated]),
        (0.0, 1.0),
    )
    assert expected is not None
    v1 = found["v1"]
    assert (v1["n_judged"], v1["n_people"]) == (40, 16)
    assert v1["mean"] == pytest.approx(expected.prediction_powered.value, abs=1e-12)
    assert (v1["low"], v1["high"]) == pytest.approx(
        (expected.prediction_powered.low, expected.prediction_powered.high), abs=1e-12
    )
    assert v1["judge_mean"] == pytest.approx(np.mean(list(judge_v1.values())), abs=1e-12)
    assert v1["people_mean"] == pytest.approx(np.mean(list(people_v1.values())), abs=1e-12)
    assert found["v0"]["mean"] == pytest.approx(1 - v1["mean"], abs=1e-12)  # every pair is v0–v1
    assert all(0 <= r["low"] <= r["mean"] <= r["high"] <= 1 for r in found.values())
