"""Bradley–Terry fits, intervals and tables of pairwise votes, checked against R and by hand.

The R values come from tests/r/pairwise.R (BradleyTerry2 and geepack, run once; the tests
never run R): Agresti's baseball data as BradleyTerry2 ships it, and
tests/fixtures/pairwise_votes.csv for ties as half a win and the clustered sandwich.
"""

from __future__ import annotations

import csv
import io
import math
from dataclasses import replace
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from analytics.statistics.pairwise import PairwiseOptions, pairwise_section
from analytics.statistics.pairwise.fitting import (
    count_battles,
    covariances,
    design,
    fit,
    newton_rounds,
)
from analytics.statistics.pairwise.ranking import ELO, arena_ranks
from analytics.statistics.pairwise.summaries import comparisons_needed

FIXTURE = Path(__file__).parent / "fixtures" / "pairwise_votes.csv"

# BradleyTerry2's ``baseball``: home team, away team, home wins, away wins.
BASEBALL = [
    ("Milwaukee", "Detroit", 4, 3), ("Milwaukee", "Toronto", 4, 2),
    ("Milwaukee", "New York", 4, 3), ("Milwaukee", "Boston", 6, 1),
    ("Milwaukee", "Cleveland", 4, 2), ("Milwaukee", "Baltimore", 6, 0),
    ("Detroit", "Milwaukee", 3, 3), ("Detroit", "Toronto", 4, 2),
    ("Detroit", "New York", 4, 3), ("Detroit", "Boston", 6, 0),
    ("Detroit", "Cleveland", 6, 1), ("Detroit", "Baltimore", 4, 3),
    ("Toronto", "Milwaukee", 2, 5), ("Toronto", "Detroit", 4, 3),
    ("Toronto", "New York", 2, 4), ("Toronto", "Boston", 4, 3),
    ("Toronto", "Cleveland", 4, 2), ("Toronto", "Baltimore", 6, 0),
    ("New York", "Milwaukee", 3, 3), ("New York", "Detroit", 5, 1),
    ("New York", "Toronto", 2, 5), ("New York", "Boston", 4, 3),
    ("New York", "Cleveland", 4, 2), ("New York", "Baltimore", 6, 1),
    ("Boston", "Milwaukee", 5, 1), ("Boston", "Detroit", 2, 5),
    ("Boston", "Toronto", 3, 3), ("Boston", "New York", 4, 2),
    ("Boston", "Cleveland", 5, 2), ("Boston", "Baltimore", 6, 0),
    ("Cleveland", "Milwaukee", 2, 5), ("Cleveland", "Detroit", 3, 3),
    ("Cleveland", "Toronto", 3, 4), ("Cleveland", "New York", 4, 3),
    ("Cleveland", "Boston", 4, 2), ("Cleveland", "Baltimore", 2, 4),
    ("Baltimore", "Milwaukee", 2, 5), ("Baltimore", "Detroit", 1, 5),
    ("Baltimore", "Toronto", 1, 6), ("Baltimore", "New York", 2, 4),
    ("Baltimore", "Boston", 1, 6), ("Baltimore", "Cleveland", 3, 4),
]  # fmt: skip
TEAMS = ("Baltimore", "Boston", "Cleveland", "Detroit", "Milwaukee", "New York", "Toronto")
# R: coef(BTm(cbind(home.wins, away.wins), home.team, away.team, data = baseball, id = "team"))
R_PLAIN = [1.107697705372, 0.683852769153, 1.436408431806, 1.581355876655, 1.247617845135,
           1.294485123905]  # fmt: skip
R_PLAIN_SE = [0.333877908162, 0.331876399144, 0.339568187482, 0.343255664026, 0.335860615785,
              0.336669092693]  # fmt: skip
# R: the same with ~ team + at.home (BradleyTerry2's vignette): the last is the home advantage
R_HOME = [1.143802653297, 0.704694456900, 1.475357213586, 1.619554993578, 1.281340403276,
          1.327110398072, 0.302260655528]  # fmt: skip
R_HOME_SE = [0.337842188911, 0.335001403342, 0.344551823286, 0.347365306113, 0.340403358811,
             0.340322208808, 0.130943642532]  # fmt: skip
# R: geeglm(y ~ beta + gamma + delta, binomial, weights = w, id = rater, independence) on the
# fixture, a tie a win and a loss of weight 1/2: beta, gamma, delta, then the intercept (γ)
R_HALF = [0.345520676816, -0.811748719032, 0.364104314833, 0.776483059738]
R_SANDWICH_SE = [0.338386909707, 0.461531708480, 0.241860375255, 0.267593181293]
R_MODEL_SE = [0.434040839786, 0.425132315963, 0.467049490512, 0.271522886677]


def _baseball() -> pd.DataFrame:
    rows = []
    for home, away, home_wins, away_wins in BASEBALL:
        rows += [("league", home, away, "a")] * home_wins + [
            ("league", home, away, "b")
        ] * away_wins
    return pd.DataFrame(rows, columns=["rater", "system_a", "system_b", "winner"])


def votes_frame(rows: pd.DataFrame, **columns: object) -> pd.DataFrame:
    """The votes frame of votes-contract (docs/pairwise.md) around rater/a/b/winner rows."""
    frame = rows.reset_index(drop=True).copy()
    defaults: dict[str, object] = {
        "vote_id": [f"v{k}" for k in range(len(frame))],
        "source": "side_by_side",
        "rater_kind": "participant",
        "strength": None,
        "question": "turn",
        "scenario": "shop",
        "session": None,
        "session_a": None,
        "session_b": None,
        "turn": None,
        "flagged": False,
        "flag_reason": None,
        "onboarding": False,
        "onboarding_correct": None,
        "time": pd.Timestamp("2026-11-27T09:00:00Z"),
    }
    for name, value in {**defaults, **columns}.items():
        if name not in frame:
            frame[name] = value
    return frame


@pytest.mark.parametrize(("position", "expected", "expected_se"), [
    (False, R_PLAIN, R_PLAIN_SE),
    (True, R_HOME, R_HOME_SE),
])  # fmt: skip
def test_agresti_baseball_fit_is_bradley_terry2s(
    position: bool, expected: list[float], expected_se: list[float]
) -> None:
    battles = count_battles(_baseball(), TEAMS)
    model = design(battles, TEAMS.index("Baltimore"), "half", position=position)
    theta = fit(model, battles.totals())
    inverse, _ = covariances(battles, model, theta)
    assert theta == pytest.approx(expected, abs=1e-4)
    assert np.sqrt(np.diag(inverse)) == pytest.approx(expected_se, abs=1e-4)


def test_half_ties_and_clustered_sandwich_are_geepacks() -> None:
    votes = pd.read_csv(FIXTURE)
    battles = count_battles(votes, ("alpha", "beta", "gamma", "delta"))
    model = design(battles, 0, "half")
    theta = fit(model, battles.totals())
    model_cov, robust_cov = covariances(battles, model, theta)
    assert theta == pytest.approx(R_HALF, abs=1e-4)
    assert np.sqrt(np.diag(robust_cov)) == pytest.approx(R_SANDWICH_SE, abs=1e-4)
    assert np.sqrt(np.diag(model_cov)) == pytest.approx(R_MODEL_SE, abs=1e-4)


def test_the_section_reports_the_fit_on_both_scales_with_the_anchor_at_its_score() -> None:
    votes = votes_frame(pd.read_csv(FIXTURE))
    options = PairwiseOptions(rounds=200, anchor="alpha", anchor_score=1200)
    found = pairwise_section(votes, ("alpha", "beta", "gamma", "delta"), options)
    scores = found.scores.set_index("system")
    for system, value in zip(("beta", "gamma", "delta"), R_HALF, strict=False):
        assert scores.loc[system, "log_strength"] == pytest.approx(value, abs=1e-4)
        assert scores.loc[system, "elo"] == pytest.approx(1200 + ELO * value, abs=1e-3)
    assert scores.loc["alpha", "elo"] == 1200
    assert bool(scores.loc["alpha", "anchor"])
    se = dict(zip(("beta", "gamma", "delta"), R_SANDWICH_SE, strict=False))
    for system, value in se.items():
        half_width = (scores.loc[system, "sandwich_high"] - scores.loc[system, "sandwich_low"]) / 2
        assert half_width == pytest.approx(1.959964 * value, abs=1e-4)
    shown_first = found.parameters.set_index("parameter").loc["shown_first"]
    assert shown_first["estimate"] == pytest.approx(R_HALF[3], abs=1e-4)
    assert shown_first["se_sandwich"] == pytest.approx(R_SANDWICH_SE[3], abs=1e-4)
    assert shown_first["probability"] == pytest.approx(1 / (1 + math.exp(-R_HALF[3])), abs=1e-4)
    assert shown_first["boot_low"] < shown_first["estimate"] < shown_first["boot_high"]
    counts = found.counts.iloc[0]
    assert (counts["votes"], counts["fitted"], counts["ties"], counts["raters"]) == (81, 81, 10, 10)
    assert counts["tie_rate"] == pytest.approx(10 / 81)
    assert list(found.scores["system"]) == ["delta", "beta", "alpha", "gamma"]


def test_davidson_fit_is_the_closed_form_for_two_systems() -> None:
    """Two systems, w wins, l losses, t ties: π₁/π₂ = w/l and ν = t / √(w·l)."""
    rows = [("r", "x", "y", "a")] * 12 + [("r", "x", "y", "b")] * 5 + [("r", "x", "y", "tie")] * 4
    votes = pd.DataFrame(rows, columns=["rater", "system_a", "system_b", "winner"])
    battles = count_battles(votes, ("x", "y"))
    theta = fit(design(battles, 1, "davidson", position=False), battles.totals())
    assert theta[0] == pytest.approx(math.log(12 / 5), abs=1e-6)
    assert math.exp(theta[1]) == pytest.approx(4 / math.sqrt(12 * 5), abs=1e-6)


@pytest.mark.parametrize("ties", ["half", "davidson"])
def test_batched_newton_rounds_reach_the_library_fit(ties: str) -> None:
    votes = pd.read_csv(FIXTURE)
    battles = count_battles(votes, ("alpha", "beta", "gamma", "delta"))
    model = design(battles, 0, ties)  # type: ignore[arg-type]
    theta = fit(model, battles.totals())
    rounds = newton_rounds(model, np.stack([battles.totals()] * 2), np.zeros(model.width))
    assert rounds.converged.all() and not rounds.loose.any()
    assert rounds.theta[1] == pytest.approx(theta, abs=1e-8)


def test_ranks_are_arenas_and_overlapping_systems_share_one() -> None:
    low = np.array([2.0, 1.5, 0.0, -1.0])
    high = np.array([3.0, 2.5, 1.0, 0.5])
    rank, worst = arena_ranks(low, high)
    assert list(rank) == [1, 1, 3, 3]
    assert list(worst) == [2, 2, 4, 4]


def test_the_bootstrap_is_seeded_and_resamples_raters() -> None:
    votes = votes_frame(pd.read_csv(FIXTURE))
    one = pairwise_section(votes, options=PairwiseOptions(rounds=100, seed=7))
    two = pairwise_section(votes, options=PairwiseOptions(rounds=100, seed=7))
    other = pairwise_section(votes, options=PairwiseOptions(rounds=100, seed=8))
    pd.testing.assert_frame_equal(one.scores, two.scores)
    assert not np.allclose(one.scores["boot_low"], other.scores["boot_low"])
    # one rater's votes all alike: resampling votes would see no spread, raters do
    same = votes_frame(
        pd.DataFrame(
            [("r1", "x", "y", "a")] * 20 + [("r2", "x", "y", "b")] * 20 + [("r3", "x", "y", "a")],
            columns=["rater", "system_a", "system_b", "winner"],
        )
    )
    found = pairwise_section(same, ("y", "x"), PairwiseOptions(rounds=200, position=False))
    x = found.scores.set_index("system").loc["x"]
    assert math.isinf(x["boot_low"]) or x["boot_low"] < -2
    assert x["sandwich_high"] - x["sandwich_low"] > 3


def test_what_is_left_out_of_the_fit_is_counted() -> None:
    base = pd.read_csv(FIXTURE)
    extra = pd.DataFrame(
        [
            ("r00", "alpha", "beta", "both_bad", False, False),
            ("r01", "alpha", "beta", "both_bad", False, False),
            ("r02", "alpha", "beta", "not_comparable", False, False),
            ("r03", "alpha", "beta", "a", True, False),
            ("r04", "alpha", "beta", "a", False, True),
            ("r05", "beta", "beta", "a", False, False),
        ],
        columns=["rater", "system_a", "system_b", "winner", "flagged", "onboarding"],
    )
    votes = votes_frame(pd.concat([base.assign(flagged=False, onboarding=False), extra]))
    excluded = pairwise_section(votes, options=PairwiseOptions(rounds=50)).counts.iloc[0]
    assert (excluded["votes"], excluded["fitted"], excluded["both_bad"]) == (87, 81, 2)
    assert (excluded["not_comparable"], excluded["flagged"], excluded["onboarding"]) == (1, 1, 1)
    assert excluded["same_system"] == 1
    assert excluded["both_bad_rate"] == pytest.approx(2 / 87)
    as_ties = pairwise_section(votes, options=PairwiseOptions(rounds=50, both_bad="tie"))
    counted = as_ties.counts.iloc[0]
    assert (counted["fitted"], counted["ties"], counted["both_bad"]) == (83, 12, 2)


def test_win_rates_pairs_and_agreement_by_hand() -> None:
    rows = [
        ("ann", "x", "y", "a"), ("ann", "y", "x", "b"), ("ann", "x", "z", "tie"),
        ("bob", "x", "y", "a"), ("bob", "z", "x", "a"),
        ("cyd", "y", "x", "a"), ("cyd", "x", "z", "a"),
    ]  # fmt: skip
    votes = votes_frame(pd.DataFrame(rows, columns=["rater", "system_a", "system_b", "winner"]))
    found = pairwise_section(votes, ("x", "y", "z"), PairwiseOptions(rounds=20))
    rates = found.win_rates.set_index(["system", "opponent"])
    assert rates.loc[("x", "y"), ["comparisons", "wins", "losses", "ties"]].tolist() == [4, 3, 1, 0]
    assert rates.loc[("x", "y"), "win_rate"] == pytest.approx(0.75)
    assert rates.loc[("x", "z"), "win_rate"] == pytest.approx((1 + 0.5) / 3)
    pairs = found.pairs.set_index(["system_1", "system_2"])
    assert pairs.loc[("x", "y")].tolist()[1:] == [4, 2, 2, 3, 1, 0, 0.0]
    assert pairs.loc[("x", "z"), "tie_rate"] == pytest.approx(1 / 3)
    agreement = found.raters.set_index("rater")
    # ann: x>y twice, others x>y 1 : y>x 1 → tied, unscored; her tie is not decisive
    assert agreement.loc["ann", ["votes", "decisive", "scored", "agreed"]].tolist() == [3, 2, 0, 0]
    # bob: x>y (others 2:1 for x, agrees), z>x (others 1:0 for x, disagrees)
    assert agreement.loc["bob", ["scored", "agreed"]].tolist() == [2, 1]
    assert agreement.loc["bob", "agreement"] == pytest.approx(0.5)
    # cyd: y>x (others 3:0 for x, disagrees), x>z (others 0:1, disagrees)
    assert agreement.loc["cyd", ["scored", "agreed", "agreement"]].tolist() == [2, 0, 0.0]


def test_onboarding_result_per_annotator() -> None:
    rows = pd.DataFrame(
        [("ann", "x", "y", "a", True, True)] * 3
        + [("ann", "x", "y", "b", True, False)]
        + [("bob", "x", "y", "a", True, True), ("bob", "x", "y", "b", True, False)]
        + [("ann", "x", "y", "a", False, None), ("bob", "y", "x", "a", False, None)],
        columns=["rater", "system_a", "system_b", "winner", "onboarding", "onboarding_correct"],
    )
    votes = votes_frame(rows, source="acute", rater_kind="annotator", question="engagingness")
    found = pairwise_section(votes, options=PairwiseOptions(rounds=20))
    table = found.onboarding.set_index("rater")
    assert table.loc["ann", ["pairs", "correct", "rate", "passed"]].tolist() == [4, 3, 0.75, True]
    assert table.loc["bob", ["pairs", "correct", "rate", "passed"]].tolist() == [2, 1, 0.5, False]
    assert found.counts.iloc[0]["fitted"] == 2


@pytest.mark.parametrize(
    ("p", "expected"),
    [(0.55, 786), (0.6, 199), (0.617, 145), (0.661, 74), (0.7, 49), (0.8, 20), (0.9, 12),
     (1.0, 6)],
)  # fmt: skip
def test_comparisons_needed_are_rs_exact_binomial_power(p: float, expected: int) -> None:
    """tests/r/pairwise_sample_size.R: the smallest n with exact power 0.8 (the normal
    approximation ran about 2% short: 194 for 0.6, 141 for 0.617)."""
    assert comparisons_needed(p) == expected
    assert comparisons_needed(1 - p) == expected
    assert math.isnan(comparisons_needed(0.5))


def test_the_sample_size_line_follows_the_ranking_in_decisive_votes() -> None:
    votes = votes_frame(pd.read_csv(FIXTURE))
    found = pairwise_section(votes, options=PairwiseOptions(rounds=20))
    lines = found.sample_size
    assert list(zip(lines["system"], lines["opponent"], strict=True)) == [
        ("delta", "beta"), ("beta", "alpha"), ("alpha", "gamma"),
    ]  # fmt: skip
    first = lines.iloc[2]
    # ties as half: σ(Δ) counts a tie as half, so the decisive rate is ½ + (σ − ½)/(1 − t)
    share = 1 / (1 + math.exp(-(0 - R_HALF[1])))
    ties = float(found.counts.iloc[0]["tie_rate"])
    assert 0 < ties < 1 and first["tie_share"] == pytest.approx(ties)
    assert first["win_probability"] == pytest.approx(0.5 + (share - 0.5) / (1 - ties), abs=1e-4)
    assert first["decisive_needed"] == comparisons_needed(first["win_probability"])
    assert first["needed_per_pair"] == math.ceil(first["decisive_needed"] / (1 - ties))
    assert first["comparisons"] == 18
    # Davidson's model gives the decisive rate and the ties itself
    found = pairwise_section(votes, options=PairwiseOptions(rounds=20, ties="davidson"))
    nu = math.exp(found.parameters.set_index("parameter").loc["tie_log_nu", "estimate"])
    row = found.sample_size.iloc[0]
    table = found.scores.set_index("system")["log_strength"]
    gap = table[row["system"]] - table[row["opponent"]]
    assert row["win_probability"] == pytest.approx(1 / (1 + math.exp(-gap)))
    assert row["tie_share"] == pytest.approx(nu / (math.exp(gap / 2) + math.exp(-gap / 2) + nu))


def test_few_raters_are_said() -> None:
    rows = [("r1", "x", "y", "a"), ("r2", "y", "x", "a"), ("r1", "x", "y", "b")] * 3
    rows.append(("r2", "y", "x", "b"))  # else y wins whenever shown first: no estimate
    votes = votes_frame(pd.DataFrame(rows, columns=["rater", "system_a", "system_b", "winner"]))
    found = pairwise_section(votes, ("x", "y"), PairwiseOptions(rounds=20))
    assert not found.scores.empty
    assert found.notes == (
        "turn: only 2 raters; intervals that resample raters and the sandwich need many more "
        "(at least 10) to be trusted.",
    )


def _simulated(rng: np.random.Generator, strengths: np.ndarray) -> pd.DataFrame:
    """Raters with a taste of their own (a rater effect on one system), 12 votes each."""
    rows = []
    k = len(strengths)
    for rater in range(30):
        taste = rng.normal(0, 0.3, size=k)
        for _ in range(12):
            a, b = rng.choice(k, size=2, replace=False)
            eta = strengths[a] + taste[a] - strengths[b] - taste[b] + 0.2
            u = rng.random()
            p_first = 1 / (1 + math.exp(-eta))
            winner = "tie" if u < 0.1 else ("a" if rng.random() < p_first else "b")
            rows.append((f"r{rater}", f"s{a}", f"s{b}", winner))
    return pd.DataFrame(rows, columns=["rater", "system_a", "system_b", "winner"])


def test_rater_bootstrap_intervals_cover_the_true_strengths() -> None:
    """Simulated battles from known strengths: the 95% bootstrap intervals of the three
    free systems cover the truth about 95% of the time (a band a broken interval, such as
    resampling votes with rater effects, or a wrong sign, would leave)."""
    rng = np.random.default_rng(20261127)
    strengths = np.array([0.0, 0.4, -0.3, 0.8])
    systems = tuple(f"s{k}" for k in range(4))
    covered = sandwich_covered = total = 0
    for simulation in range(40):
        votes = votes_frame(_simulated(rng, strengths))
        found = pairwise_section(
            votes, systems, PairwiseOptions(rounds=150, seed=simulation, anchor="s0")
        )
        table = found.scores.set_index("system")
        for k in range(1, 4):
            row = table.loc[f"s{k}"]
            covered += row["boot_low"] <= strengths[k] <= row["boot_high"]
            sandwich_covered += row["sandwich_low"] <= strengths[k] <= row["sandwich_high"]
            total += 1
    assert 0.90 <= covered / total <= 0.99
    assert 0.90 <= sandwich_covered / total <= 0.99


def test_exported_votes_neutralise_formulas_in_csv(tmp_path: Path) -> None:
    from analytics.data.loading import StudyData
    from analytics.io.export import csv_cells
    from analytics.io.export_votes import vote_tables
    from bot.core.researcher_files import write_rows

    empty = pd.DataFrame()
    data = StudyData(empty, empty, empty, empty, empty, empty, empty)
    rows = [("r1", "x", "y", "a"), ("r2", "y", "x", "b")]
    votes = votes_frame(
        pd.DataFrame(rows, columns=["rater", "system_a", "system_b", "winner"]),
        question='=HYPERLINK("http://x")',
    )
    (table,) = vote_tables(replace(data, votes=votes, vote_studies=("s", "s"))).values()
    written = io.StringIO()
    write_rows(written, [c.name for c in table.columns], csv_cells(table))
    safe = list(csv.DictReader(io.StringIO(written.getvalue())))
    assert [row["question"] for row in safe] == ['\'=HYPERLINK("http://x")'] * 2
    assert table.frame["winner_system"].tolist() == ["x", "x"]
    assert vote_tables(data) == {}


def test_davidson_through_the_section_reports_nu_and_keeps_the_order() -> None:
    votes = votes_frame(pd.read_csv(FIXTURE))
    half = pairwise_section(votes, options=PairwiseOptions(rounds=100))
    davidson = pairwise_section(votes, options=PairwiseOptions(rounds=100, ties="davidson"))
    assert list(davidson.scores["system"]) == list(half.scores["system"])
    assert davidson.counts.iloc[0]["model"] == "davidson"
    parameters = davidson.parameters.set_index("parameter")
    assert set(parameters.index) == {"shown_first", "tie_log_nu"}
    nu = parameters.loc["tie_log_nu"]
    assert nu["boot_low"] < nu["estimate"] < nu["boot_high"]
    assert "Davidson" in davidson.methods["model"]


def test_excluding_flagged_participants_takes_their_votes_out_too() -> None:
    from analytics.data.loading import StudyData
    from analytics.statistics.quality import exclude_flagged

    people = pd.DataFrame({"participant_id": ["p1", "p2"], "session_id": ["s1", "s2"]})
    data = StudyData(people, people, people, people, people, people, pd.DataFrame())
    rows = [("p1", "x", "y", "a"), ("p2", "x", "y", "b"), ("p1", "y", "x", "a")]
    votes = votes_frame(pd.DataFrame(rows, columns=["rater", "system_a", "system_b", "winner"]))
    annotator = votes_frame(
        pd.DataFrame([("p1", "x", "y", "a")], columns=["rater", "system_a", "system_b", "winner"]),
        source="acute",
        rater_kind="annotator",
    )
    both = pd.concat([votes, annotator], ignore_index=True)
    data = replace(data, votes=both, vote_studies=("one", "two", "one", "one"))
    flags = pd.DataFrame({"participant_id": ["p1"], "flag": ["too_fast"]})
    kept, _ = exclude_flagged(data, flags)
    assert kept.votes["rater"].tolist() == ["p2", "p1"]
    assert kept.votes["rater_kind"].tolist() == ["participant", "annotator"]
    assert kept.vote_studies == ("two", "one")
