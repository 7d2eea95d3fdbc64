"""When the Bradley–Terry maximum-likelihood estimate does not exist: separation (a system
won or lost everything, the system shown first won every vote), a comparison graph in
groups that never met, and bootstrap rounds without a finite estimate.

Firth's estimates are checked against R's ``BTm(br = TRUE)`` (tests/r/pairwise_separation.R,
run once; the tests never run R) and against the penalised likelihood maximised by hand.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from scipy import optimize

from analytics.statistics.pairwise import PairwiseOptions, pairwise_section
from analytics.statistics.pairwise.fitting import (
    count_battles,
    derivatives,
    design,
    estimability,
    fit,
    newton_rounds,
)
from analytics.statistics.pairwise.ranking import percentile_interval
from tests.test_pairwise_statistics import votes_frame

COLUMNS = ["rater", "system_a", "system_b", "winner"]
# tests/r/pairwise_separation.R: home team, away team, home wins, away wins; A never lost
GAMES = [
    ("A", "B", 3, 0), ("B", "A", 0, 2), ("A", "C", 2, 0), ("C", "A", 0, 3), ("B", "C", 2, 1),
    ("C", "B", 1, 2), ("A", "D", 2, 0), ("D", "A", 0, 2), ("B", "D", 1, 1), ("D", "B", 1, 1),
    ("C", "D", 2, 1), ("D", "C", 1, 1),
]  # fmt: skip
R_FIRTH = [-3.07744952664, -3.41521495606, -3.45940022280]
R_FIRTH_HOME = [-2.976783284397, -3.304382412226, -3.332729992121, 0.109647711565]


def games() -> pd.DataFrame:
    rows = []
    for home, away, home_wins, away_wins in GAMES:
        rows += [("r", home, away, "a")] * home_wins + [("r", home, away, "b")] * away_wins
    return pd.DataFrame(rows, columns=COLUMNS)


@pytest.mark.parametrize(("position", "expected"), [(False, R_FIRTH), (True, R_FIRTH_HOME)])
def test_firths_estimates_are_bradley_terry2s_bias_reduced_ones(
    position: bool, expected: list[float]
) -> None:
    battles = count_battles(games(), ("A", "B", "C", "D"))
    assert estimability(battles, battles.totals(), "half").separated
    model = design(battles, 0, "half", position=position)
    assert fit(model, battles.totals(), penalised=True) == pytest.approx(expected, abs=1e-5)


@pytest.mark.parametrize("ties", ["half", "davidson"])
def test_firths_estimate_maximises_the_likelihood_penalised_by_jeffreys_prior(
    ties: str,
) -> None:
    """By hand: log L + ½·log det I maximised by a general-purpose optimiser."""
    rows = games()
    rows.loc[[0, 5, 9], "winner"] = "tie"
    battles = count_battles(rows, ("A", "B", "C", "D"))
    model = design(battles, 0, ties)  # type: ignore[arg-type]
    totals = battles.totals()[None]

    def penalised(theta: np.ndarray) -> float:
        loglik, _, hessian = derivatives(theta[None], model, totals)
        return -float(loglik[0] + 0.5 * np.linalg.slogdet(-hessian[0])[1])

    by_hand = optimize.minimize(
        penalised,
        np.zeros(model.width),
        method="Nelder-Mead",
        options={"xatol": 1e-9, "fatol": 1e-12, "maxiter": 20000},
    )
    found = fit(model, battles.totals(), penalised=True)
    assert found == pytest.approx(by_hand.x, abs=1e-4)


def test_a_system_that_won_every_comparison_gets_firths_score_inside_its_interval() -> None:
    rows = [(f"r{k % 5}", a, b, w) for k, (a, b, w) in enumerate(
        [("x", "y", "a"), ("y", "x", "b"), ("x", "z", "a"), ("z", "x", "b"), ("y", "z", "a"),
         ("z", "y", "a"), ("y", "z", "b")] * 3
    )]  # fmt: skip
    found = pairwise_section(votes_frame(pd.DataFrame(rows, columns=COLUMNS)), ("y", "x", "z"),
                             PairwiseOptions(rounds=200))  # fmt: skip
    row = found.counts.iloc[0]
    assert not row["identified"] and row["estimator"] == "firth"
    assert "maximum-likelihood estimate does not exist" in found.notes[0]
    assert "Firth's bias-reduced estimates" in found.notes[0]
    table = found.scores.set_index("system")
    assert np.isfinite(table["log_strength"]).all()
    assert (table["boot_low"] <= table["log_strength"]).all()
    assert (table["log_strength"] <= table["boot_high"]).all()
    assert table.drop(index="y")["sandwich_low"].isna().all()  # the anchor's is 0 to 0
    # x beat both, y and z beat each other: the wins alone rank x first, y and z 2–3
    assert table.loc["x", ["rank", "rank_worst"]].tolist() == [1, 1]
    assert table.loc["y", ["rank", "rank_worst"]].tolist() == [2, 3]
    assert table.loc["x", ["wins", "losses"]].tolist() == [12, 0]
    assert found.sample_size.empty


def test_the_system_shown_first_winning_every_vote_is_said_and_fitted_by_firth() -> None:
    rows = [("r1", "x", "y", "a"), ("r2", "y", "x", "a")] * 6
    found = pairwise_section(votes_frame(pd.DataFrame(rows, columns=COLUMNS)), ("x", "y"),
                             PairwiseOptions(rounds=50))  # fmt: skip
    assert found.counts.iloc[0]["estimator"] == "firth"
    shown_first = found.parameters.iloc[0]
    assert math.isfinite(shown_first["estimate"]) and 0.5 < shown_first["probability"] < 1
    assert shown_first["boot_low"] <= shown_first["estimate"] <= shown_first["boot_high"]
    assert found.win_rates["win_rate"].tolist() == [0.5, 0.5]


def test_a_graph_in_groups_that_never_met_gets_wins_and_their_order_but_no_score() -> None:
    rows = [("r1", "a", "b", "a"), ("r2", "b", "a", "a"), ("r1", "a", "b", "a"),
            ("r1", "c", "d", "a"), ("r2", "d", "c", "b")] * 2  # fmt: skip
    found = pairwise_section(votes_frame(pd.DataFrame(rows, columns=COLUMNS)),
                             options=PairwiseOptions(rounds=50))  # fmt: skip
    assert "2 groups that were never compared with each other (a, b; c, d)" in found.notes[0]
    table = found.scores.set_index("system")
    assert table["log_strength"].isna().all() and table["boot_low"].isna().all()
    # a and b split their votes; c beat d every time; nothing orders the two groups
    assert table.loc["c", ["rank", "rank_worst"]].tolist() == [1, 3]
    assert table.loc["d", ["rank", "rank_worst"]].tolist() == [2, 4]
    assert table.loc["a", ["rank", "rank_worst"]].tolist() == [1, 4]
    assert found.counts.iloc[0]["estimator"] is None


def test_a_pair_always_shown_in_one_order_is_fitted_without_the_shown_first_term() -> None:
    rows = [("r1", "x", "y", "a"), ("r2", "x", "y", "b"), ("r3", "x", "y", "a")] * 2
    found = pairwise_section(votes_frame(pd.DataFrame(rows, columns=COLUMNS)), ("x", "y"),
                             PairwiseOptions(rounds=50))  # fmt: skip
    assert "shown in one order only" in found.notes[0]
    assert found.parameters.empty
    y = found.scores.set_index("system").loc["y"]
    assert y["log_strength"] == pytest.approx(-math.log(2))


def test_a_round_without_a_finite_estimate_is_not_taken_for_converged() -> None:
    """y never won: its log-strength goes to −∞ and γ is left undetermined, however slowly
    Newton's steps creep (no magnitude cut-off decides)."""
    rows = [("r1", "x", "y", "a")] * 3 + [("r1", "y", "x", "b")] * 2
    battles = count_battles(pd.DataFrame(rows, columns=COLUMNS), ("x", "y"))
    model = design(battles, 0, "half")
    for iterations in (20, 60, 200):
        found = newton_rounds(model, battles.totals()[None], np.zeros(2), iterations=iterations)
        assert not found.converged[0]
        assert found.theta[0, 0] == -math.inf
        assert found.loose[0].tolist() == [False, True]


def test_an_end_reached_by_more_than_its_tail_of_infinite_rounds_is_infinite() -> None:
    finite = np.linspace(-1, 1, 1000)
    for share, infinite in ((0.02, False), (0.03, True)):
        samples = finite.copy()
        samples[: int(share * 1000)] = -np.inf
        low, high = percentile_interval(samples[:, None], 0.95)
        assert math.isinf(low[0]) is infinite and math.isfinite(high[0])
    loose = np.zeros((1000, 1), dtype=bool)
    loose[:30] = True
    low, high = percentile_interval(finite[:, None], 0.95, loose)
    assert math.isinf(low[0]) and math.isinf(high[0])


def test_few_annotators_whose_rounds_lose_everything_leave_that_end_unbounded() -> None:
    """Four annotators, x preferred 16 to 4: resampled rounds that drew only x's friends
    have y losing everything. They are no finite estimate and, being more than 2.5%, make
    y's lower end unbounded (they used to stall near −14 and enter the percentiles)."""
    rng = np.random.default_rng(0)
    rows = []
    for rater in range(4):
        for _ in range(5):
            a, b = ("x", "y") if rng.random() < 0.5 else ("y", "x")
            x_wins = rng.random() < 0.85
            rows.append((f"r{rater}", a, b, "a" if (a == "x") == x_wins else "b"))
    found = pairwise_section(votes_frame(pd.DataFrame(rows, columns=COLUMNS)), ("x", "y"),
                             PairwiseOptions(rounds=1000))  # fmt: skip
    row = found.counts.iloc[0]
    assert row["estimator"] == "maximum_likelihood"
    assert row["rounds"] - row["converged_rounds"] > 25
    y = found.scores.set_index("system").loc["y"]
    assert y["boot_low"] == -math.inf
    assert y["boot_low"] <= y["log_strength"] <= y["boot_high"] < 0
    shown_first = found.parameters.iloc[0]
    assert shown_first["probability_low"] == 0 and shown_first["probability_high"] == 1
