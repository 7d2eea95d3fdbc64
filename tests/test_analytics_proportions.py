"""Known-answer tests of the tests for yes/no and choice items (proportions, not ranks),
of how every p-value says how it was computed, of Holm's correction across a family of
measures, and of Cronbach's alpha without items that never vary.

Reference values are R's (the examples of ``fisher.test``, ``chisq.test``, ``p.adjust``
and ``psych::alpha``) or computed by hand in the test, then cross-checked with scipy."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy.stats import binom, fisher_exact, hypergeom, mannwhitneyu, wilcoxon
from scipy.stats.contingency import odds_ratio

from analytics.data.loading import load_study_data
from analytics.statistics.compare import (
    CHI2_TIES,
    EXACT,
    NORMAL,
    SIGN_PERMUTATION,
    compare_systems,
    family_holm,
)
from analytics.statistics.proportions import (
    CHI2,
    FREEMAN_HALTON,
    MCNEMAR_EXACT,
    RANDOM_TABLES,
    RESAMPLES,
    compare_proportions,
    fisher_exact_two_rows,
    one_answer_each,
)
from analytics.statistics.questionnaires import ALL_SYSTEMS, construct_reliability
from bot.engine import effects as fx
from tests.test_analytics_stats import CRONBACH, _answers, _bundle, _scale, _write


def _answers_of(counts: dict[str, dict[object, int]]) -> pd.DataFrame:
    """One participant per answer: ``{"system": {answer: how many}}``."""
    rows = []
    for system, answers in counts.items():
        k = 0
        for answer, times in answers.items():
            for _ in range(times):
                rows.append((f"{system}-{k}", system, answer))
                k += 1
    return pd.DataFrame(rows, columns=["participant_id", "system_id", "answer"])


# --- Fisher's exact test ------------------------------------------------------------------


def test_fisher_matches_r_on_the_tea_tasting_example() -> None:
    """R's ``fisher.test`` example (Agresti 1990, p. 61): the lady guessed 3 of 4 cups
    poured milk first. By hand, the tables with these margins have probabilities
    1, 16, 36, 16, 1 (/70); those no more likely than the observed 16/70 sum to
    34/70 = 0.4857. R: p-value = 0.4857, odds ratio 6.408309 (conditional MLE)."""
    table = _answers_of({"milk": {"yes": 3, "no": 1}, "tea": {"yes": 1, "no": 3}})
    (row,) = compare_proportions(table, order=["yes", "no"], min_n=4).to_dict("records")
    assert (row["test"], row["p_method"]) == ("Fisher's exact test", EXACT)
    assert row["p"] == pytest.approx(34 / 70)
    assert row["effect_name"] == "odds ratio of yes"
    assert row["effect"] == pytest.approx(6.408309, rel=1e-5)
    assert math.isnan(row["statistic"])


def test_fisher_matches_r_on_fishers_twins() -> None:
    """R's ``fisher.test`` example (Fisher 1962): convictions of like-sex twins of
    criminals, R's matrix c(2, 10, 15, 3) (dizygotic twins 2 convicted of 17,
    monozygotic 10 of 13), here transposed, which changes neither p nor the odds ratio:
    R gives p-value = 0.0005367 and odds ratio 0.04693661."""
    table = _answers_of({"a": {"yes": 2, "no": 10}, "b": {"yes": 15, "no": 3}})
    (row,) = compare_proportions(table, order=["yes", "no"]).to_dict("records")
    assert row["p"] == pytest.approx(0.0005367, abs=5e-8)
    assert row["effect"] == pytest.approx(0.04693661, rel=1e-5)
    # By hand: the hypergeometric probabilities no larger than the observed one's.
    dist = hypergeom(30, 17, 12)  # 30 people, 17 convicted, 12 in the first group
    probs = dist.pmf(np.arange(0, 13))
    assert row["p"] == pytest.approx(probs[probs <= dist.pmf(2) * (1 + 1e-7)].sum())


def test_freeman_halton_by_hand_and_against_the_two_by_two_test() -> None:
    """2 × 3 table [[2, 0, 1], [0, 2, 1]], margins (3, 3) and (2, 2, 2): the 7 tables with
    these margins have probabilities 2, 2, 2, 2, 2, 2 and 8 (/20); the observed is 2/20,
    so p = 12/20 = 0.6."""
    assert fisher_exact_two_rows(np.array([[2, 0, 1], [0, 2, 1]])) == pytest.approx(0.6)
    rng = np.random.default_rng(1)
    for _ in range(20):  # on 2 × 2 tables it is Fisher's test itself
        table = rng.integers(0, 12, size=(2, 2))
        if table.sum(axis=0).min() and table.sum(axis=1).min():
            assert fisher_exact_two_rows(table) == pytest.approx(fisher_exact(table).pvalue)
    assert fisher_exact_two_rows(np.array([[40, 40, 40], [40, 40, 40]]), limit=10) is None


def test_two_systems_and_three_options_use_the_exact_freeman_halton_test() -> None:
    table = _answers_of({"a": {"x": 6, "y": 4, "z": 2}, "b": {"x": 3, "y": 9, "z": 6}})
    (row,) = compare_proportions(table).to_dict("records")
    assert (row["test"], row["p_method"], row["effect_name"]) == (
        "Fisher's exact test",
        FREEMAN_HALTON,
        "Cramér's V",
    )
    assert row["p"] == pytest.approx(fisher_exact_two_rows(np.array([[6, 4, 2], [3, 9, 6]])))


def test_a_pairs_odds_ratio_is_labelled_with_the_two_answers_its_table_holds() -> None:
    """Systems b and c never chose Alpha: their 2 × 2 table is Beta against Gamma, so the
    odds ratio is Beta's over Gamma (b chose Beta 4 of 6, c 1 of 6: above 1), not Alpha's.
    R: fisher.test(matrix(c(4, 1, 2, 5), 2))$estimate is the same conditional MLE."""
    counts = {
        "a": {"alpha": 5, "gamma": 1},
        "b": {"beta": 4, "gamma": 2},
        "c": {"beta": 1, "gamma": 5},
        "d": {"alpha": 2, "gamma": 4},
    }
    labels = {"alpha": "Alpha", "beta": "Beta", "gamma": "Gamma"}
    table = compare_proportions(
        _answers_of(counts), order=["alpha", "beta", "gamma"], labels=labels
    )
    pairs = table[table["kind"] == "pairwise"].set_index("groups")
    assert pairs.loc["b vs c", "effect_name"] == "odds ratio of Beta vs Gamma"
    expected = odds_ratio(np.array([[4, 2], [1, 5]]), kind="conditional").statistic
    assert pairs.loc["b vs c", "effect"] == pytest.approx(expected)
    assert pairs.loc["b vs c", "effect"] > 1
    assert pairs.loc["a vs b", "effect_name"] == "Cramér's V"
    assert pairs.loc["a vs d", "effect_name"] == "odds ratio of Alpha vs Gamma"


# --- χ² and Cramér's V --------------------------------------------------------------------


def test_chi_squared_and_cramers_v_match_r_on_agresti_party_identification() -> None:
    """R's ``chisq.test`` example (Agresti 2007, p. 39): party identification by gender,
    F (762, 327, 468), M (484, 239, 477). R: X-squared = 30.07, df = 2, p-value =
    2.954e-07 (no continuity correction beyond 2 × 2). Cramér's V by hand:
    √(30.0701 / (2757 · 1)) = 0.10444. Here the parties are the "systems"."""
    counts = {
        "democrat": {"F": 762, "M": 484},
        "independent": {"F": 327, "M": 239},
        "republican": {"F": 468, "M": 477},
    }
    table = compare_proportions(_answers_of(counts), order=["F", "M"])
    omnibus = table.iloc[0]
    assert (omnibus["test"], omnibus["statistic_name"], omnibus["p_method"]) == (
        "χ² test of independence",
        "χ²(2)",
        CHI2,
    )
    assert omnibus["statistic"] == pytest.approx(30.07, abs=5e-3)
    assert omnibus["p"] == pytest.approx(2.954e-07, rel=5e-4)
    assert omnibus["effect"] == pytest.approx(math.sqrt(30.070149 / 2757), abs=1e-6)
    assert omnibus["effect"] == pytest.approx(0.10444, abs=5e-6)
    pairs = table[table["kind"] == "pairwise"]
    assert list(pairs["test"]) == ["Fisher's exact test"] * 3
    p = np.sort(pairs["p"].to_numpy())
    holm = np.minimum(1, np.maximum.accumulate(p * np.array([3, 2, 1])))
    assert np.sort(pairs["p_holm"].to_numpy()) == pytest.approx(holm)


def test_small_expected_counts_take_a_reproducible_monte_carlo_p_value() -> None:
    counts = {"a": {"x": 5, "y": 1}, "b": {"x": 1, "y": 5}, "c": {"x": 3, "y": 3}}
    first = compare_proportions(_answers_of(counts)).iloc[0]
    again = compare_proportions(_answers_of(counts)).iloc[0]
    assert first["p_method"].startswith(RANDOM_TABLES)
    assert "expected counts are small" in first["p_method"]
    assert first["p"] == again["p"] and 0 < first["p"] < 1
    assert first["statistic"] == pytest.approx(16 / 3)  # χ² by hand: Σ (O − E)² / E


def test_monte_carlo_p_values_carry_an_error_below_a_thousandth_near_005() -> None:
    """With B random tables the standard error of p is √(p (1 − p) / B): below 0.001 at
    p = 0.05 needs B ≥ 47,500. Each sampled p carries its own; an exact p has none."""
    assert RESAMPLES >= 47_500 and math.sqrt(0.05 * 0.95 / RESAMPLES) < 0.001
    assert f"{RESAMPLES:,} random tables" in RANDOM_TABLES
    counts = {"a": {"x": 5, "y": 1}, "b": {"x": 1, "y": 5}, "c": {"x": 3, "y": 3}}
    table = compare_proportions(_answers_of(counts))
    sampled = table.iloc[0]
    assert sampled["p_method"].startswith(RANDOM_TABLES)
    p = sampled["p"]
    assert sampled["p_mc_error"] == pytest.approx(math.sqrt(p * (1 - p) / RESAMPLES))
    assert table.iloc[1:]["p_method"].eq(EXACT).all()
    assert table.iloc[1:]["p_mc_error"].isna().all()


def test_too_few_participants_and_one_answer_give_no_p_value() -> None:
    few = compare_proportions(_answers_of({"a": {"y": 2, "n": 2}, "b": {"y": 3, "n": 3}}))
    assert math.isnan(few.iloc[0]["p"])
    assert few.iloc[0]["note"].startswith("too few participants: a has 4")
    same = compare_proportions(_answers_of({"a": {"y": 6}, "b": {"y": 7}}))
    assert same.iloc[0]["note"] == "every answer is y: nothing to compare"


def test_one_answer_per_participant_the_most_frequent_then_the_latest() -> None:
    answers = pd.DataFrame(
        {
            "participant_id": ["p", "p", "p", "q", "q"],
            "system_id": ["a"] * 5,
            "answer": [1, 0, 0, 1, 0],
        }
    )
    chosen = one_answer_each(answers).set_index("participant_id")["answer"]
    assert chosen.to_dict() == {"p": 0, "q": 0}  # q: a tie, the latest answer wins


# --- within subjects: McNemar and Cochran's Q ----------------------------------------------


def _paired(answers: dict[str, list[int]]) -> pd.DataFrame:
    return pd.DataFrame(
        [(f"p{i}", system, v) for system, values in answers.items() for i, v in enumerate(values)],
        columns=["participant_id", "system_id", "answer"],
    )


def test_mcnemar_gives_the_exact_binomial_p_of_the_discordant_pairs() -> None:
    """10 participants: 6 said yes to a only, 1 to b only, 3 agreed. By hand, the exact
    two-sided p is 2 · P(X ≤ 1 | n = 7, ½) = 2 · 8/128 = 0.125; χ² with continuity
    correction (R's mcnemar.test) (|6 − 1| − 1)² / 7 = 2.2857; odds ratio 6/1."""
    a = [1, 1, 1, 1, 1, 1, 0, 1, 0, 0]
    b = [0, 0, 0, 0, 0, 0, 1, 1, 0, 0]
    (row,) = compare_proportions(_paired({"a": a, "b": b}), order=[1, 0], within=True).to_dict(
        "records"
    )
    assert (row["test"], row["p_method"], row["n_total"]) == ("McNemar", MCNEMAR_EXACT, 10)
    assert row["p"] == pytest.approx(0.125) == pytest.approx(2 * binom.cdf(1, 7, 0.5))
    assert row["statistic"] == pytest.approx(16 / 7)
    assert row["effect"] == 6.0


def test_cochrans_q_by_hand() -> None:
    """Q = (k − 1) (k Σ C_j² − N²) / (k N − Σ R_i²), C_j column totals, R_i row totals,
    N the grand total (Cochran 1950)."""
    a = [1, 1, 1, 1, 1, 1, 1, 0, 1, 1]
    b = [0, 1, 0, 0, 0, 1, 0, 0, 0, 0]
    c = [1, 1, 1, 0, 1, 1, 1, 1, 1, 1]
    table = compare_proportions(_paired({"a": a, "b": b, "c": c}), order=[1, 0], within=True)
    omnibus = table.iloc[0]
    x = np.array([a, b, c]).T
    k, columns, rows = 3, x.sum(axis=0), x.sum(axis=1)
    n = x.sum()
    q = (k - 1) * (k * (columns**2).sum() - n**2) / (k * n - (rows**2).sum())
    assert omnibus["test"] == "Cochran's Q"
    assert omnibus["statistic"] == pytest.approx(q)
    assert omnibus["effect"] == pytest.approx(q / (10 * 2))
    assert list(table["test"][1:]) == ["McNemar"] * 3


def test_choice_items_with_more_options_are_not_tested_within_subjects() -> None:
    answers = _paired({"a": [1, 2, 3, 1, 2, 3], "b": [2, 3, 1, 1, 1, 2]})
    (row,) = compare_proportions(answers, within=True).to_dict("records")
    assert math.isnan(row["p"]) and "more than two options" in row["note"]


# --- how each p-value was computed --------------------------------------------------------


def _long(groups: dict[str, list[float]], paired: bool = False) -> pd.DataFrame:
    rows = [
        {"participant_id": f"p{i}" if paired else f"{g}{i}", "system_id": g, "score": v}
        for g, values in groups.items()
        for i, v in enumerate(values)
    ]
    return pd.DataFrame(rows)


def test_mann_whitney_is_exact_as_in_r_without_ties_below_50() -> None:
    """Twelve per group, no ties: R's wilcox.test is exact (n < 50), scipy's ``auto``
    would approximate (it is exact only up to 8); with ties both approximate with
    continuity and tie corrections."""
    x = [1.1, 2.3, 3.2, 4.8, 5.1, 6.7, 7.3, 8.9, 9.2, 10.4, 11.6, 12.5]
    y = [3.5, 5.9, 6.1, 8.2, 9.9, 11.1, 12.9, 13.3, 14.7, 15.2, 16.8, 17.4]
    (row,) = compare_systems(_long({"a": x, "b": y})).to_dict("records")
    assert row["p_method"] == EXACT
    assert row["p"] == pytest.approx(mannwhitneyu(x, y, method="exact").pvalue)
    tied = [round(v) for v in x], [round(v) for v in y]
    (row,) = compare_systems(_long({"a": tied[0], "b": tied[1]})).to_dict("records")
    assert row["p_method"] == NORMAL
    reference = mannwhitneyu(*tied, method="asymptotic", use_continuity=True).pvalue
    assert row["p"] == pytest.approx(reference)


def test_wilcoxon_with_ties_and_few_pairs_takes_the_permutation_distribution() -> None:
    """Eight pairs with tied differences: every one of the 2^8 sign patterns is counted,
    as scipy's ``auto`` does for n ≤ 13; more pairs: the normal approximation with R's
    continuity correction."""
    x = np.array([4.0, 5.0, 3.0, 4.5, 5.0, 2.0, 3.5, 4.0])
    y = np.array([3.0, 4.0, 3.5, 3.5, 3.0, 1.0, 2.5, 3.0])
    (row,) = compare_systems(_long({"a": x, "b": y}, paired=True)).to_dict("records")
    assert row["p_method"] == SIGN_PERMUTATION
    assert row["p"] == pytest.approx(wilcoxon(x, y, method="auto").pvalue)
    many_x, many_y = np.tile(x, 3) + np.repeat([0, 0.25, 0.5], 8), np.tile(y, 3)
    (row,) = compare_systems(_long({"a": many_x, "b": many_y}, paired=True)).to_dict("records")
    assert row["p_method"] == NORMAL
    reference = wilcoxon(many_x, many_y, method="asymptotic", correction=True).pvalue
    assert row["p"] == pytest.approx(reference)


def test_kruskal_wallis_names_its_approximation() -> None:
    groups = {"a": [1, 2, 3, 4, 5], "b": [2, 3, 4, 5, 6], "c": [4, 5, 6, 7, 8]}
    assert compare_systems(_long(groups)).iloc[0]["p_method"] == CHI2_TIES


# --- Holm across a family of measures --------------------------------------------------------


def test_family_holm_matches_r_p_adjust() -> None:
    """R: p.adjust(c(0.01, 0.02, 0.03, 0.04, 0.05), "holm") gives 0.05 0.08 0.09 0.09 0.09
    (by hand: 0.01·5, 0.02·4, max(0.03·3, ·), then kept monotone). Pairwise rows and
    untested rows stay out of the family; raw p is kept."""
    raw = [0.03, 0.01, 0.05, 0.02, 0.04]
    table = pd.DataFrame(
        {
            "kind": ["omnibus"] * 5 + ["pairwise", "omnibus"],
            "p": [*raw, 0.001, math.nan],
        }
    )
    assert family_holm(table) == 5
    assert table["p_family"][:5].tolist() == pytest.approx([0.09, 0.05, 0.09, 0.08, 0.09])
    assert table["p"][:5].tolist() == raw
    assert table["p_family"][5:].isna().all()


def test_family_holm_across_every_test_matches_r_p_adjust() -> None:
    """``across="all"``: pairwise rows join the family. R:
    p.adjust(c(0.03, 0.01, 0.05, 0.02, 0.04, 0.001), "holm") gives
    0.090 0.050 0.090 0.080 0.090 0.006; the untested row stays out."""
    table = pd.DataFrame(
        {
            "kind": ["omnibus"] * 5 + ["pairwise", "omnibus"],
            "p": [0.03, 0.01, 0.05, 0.02, 0.04, 0.001, math.nan],
        }
    )
    assert family_holm(table, across="all") == 6
    expected = [0.09, 0.05, 0.09, 0.08, 0.09, 0.006]
    assert table["p_family"][:6].tolist() == pytest.approx(expected)
    assert math.isnan(table["p_family"][6])


# --- Cronbach's alpha as psych::alpha computes it ------------------------------------------


async def test_alpha_leaves_out_items_that_never_vary_as_psych_does(tmp_path: Path) -> None:
    """psych::alpha warns "Item = r.q11 had no variance and was deleted" and gives the
    alpha of the other ten items: 0.592 on pingouin's "cronbach_alpha" dataset (the value
    of test_analytics_stats). Kept, the constant item would change k (10/9 → 11/10)."""
    items = [_scale(f"r.q{i}", "c", 1, 7) for i in range(1, 12)]
    bundle = _bundle({"r": {"id": "r", "title": "Ratings", "items": items}}, post_task=["r"])
    steps = []
    for subject, row in enumerate(CRONBACH):
        session = f"s{subject}"
        values = {f"r.q{i}": v for i, v in enumerate(row, start=1)} | {"r.q11": 4}
        opened = fx.OpenSession(session, "task", "s1", 0, "random", "0")
        steps.append((f"p{subject:02d}", [opened, *_answers(session, "r", values)]))
    await _write(tmp_path / "study.sqlite", bundle, steps)
    table = construct_reliability(load_study_data(tmp_path / "study.sqlite").responses)
    row = table.set_index("system_id").loc[ALL_SYSTEMS]
    assert row["alpha"] == pytest.approx(0.5917188, abs=1e-6)
    assert (row["k_items"], row["dropped"], row["warning"]) == (10, "r.q11", None)


async def test_alpha_of_two_items_carries_a_warning(tmp_path: Path) -> None:
    items = [_scale("t.a", "pair", 1, 5), _scale("t.b", "pair", 1, 5)]
    bundle = _bundle({"t": {"id": "t", "title": "T", "items": items}}, post_study=["t"])
    pairs = [(1, 2), (2, 2), (3, 4), (4, 3), (5, 5), (2, 1), (4, 5)]
    steps = [(f"p{i}", _answers(None, "t", {"t.a": a, "t.b": b})) for i, (a, b) in enumerate(pairs)]
    await _write(tmp_path / "study.sqlite", bundle, steps)
    table = construct_reliability(load_study_data(tmp_path / "study.sqlite").responses)
    row = table.set_index("system_id").loc[ALL_SYSTEMS]
    x = np.array(pairs, dtype=float)
    by_hand = 2 * (1 - x.var(axis=0, ddof=1).sum() / x.sum(axis=1).var(ddof=1))
    assert row["alpha"] == pytest.approx(by_hand)
    assert row["warning"].startswith("two items only")
    assert row["note"] is None
