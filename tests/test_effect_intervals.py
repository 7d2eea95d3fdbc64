"""Every effect size of the comparison tests carries its 95% interval and the interval's
method, checked against R: the closed-form and exact intervals to 1e-9, the bootstrap ones
within their Monte Carlo error of R's ``boot`` with 20,000 resamples. Fixture values from
tests/r/effect_intervals.R (the datasets of the tests' own known-answer checks in
tests/test_analytics_stats.py and tests/test_analytics_proportions.py); the headline table
shows the intervals in every format and the JSON carries them with their method."""

from __future__ import annotations

import asyncio
import json
import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from analytics.statistics import effect_intervals as ci
from analytics.statistics.compare import compare_systems
from analytics.statistics.proportions import compare_proportions
from bot.cli import analytics_main as main
from tests.report_study import write_report_study
from tests.test_analytics_proportions import _answers_of
from tests.test_analytics_stats import ROUNDING_TIMES, _long

EXACT = 1e-9
ROOT = 1e-9
"""Fisher's conditional odds ratio and its ends are roots found numerically: relative."""
BOOTSTRAP = 0.025
"""ozlab's 2,000 resamples against R's 20,000 with other random numbers: the ends moved by
up to 0.019 between five of ozlab's seeds on these data (Cochran's discrete η²_Q most)."""
# R, tests/r/effect_intervals.R: (effect, low, high)
R_MWU = (-0.388888888888889, -0.79705643349074, 0.263167082496099)
R_WILCOXON = (0.777777777777778, 0.295363129336242, 0.944155901920081)
R_FISHER = (0.04693663904968, 0.00331716395065736, 0.36318960235668)
# (fisher.test itself prints 0.0469366088, 0.0033257640, 0.3631822715: its uniroot stops at
# a tolerance of 1e-4; the script solves its own equations again at 1e-14)
R_MCNEMAR = (4.5, 0.931412258193768, 42.7997159352678)
R_KRUSKAL = (0.0593406593406594, 0.00666666666666692, 0.704697986577181)
R_FRIEDMAN = (0.253246753246753, 0.0486631016042781, 0.625434270370979)
R_CHISQ = (0.104435802356468, 0.0697728077959384, 0.142751551650603)
R_COCHRAN = (0.4, 0.19047619047619, 0.704545454545455)
PARTIES: dict[str, dict[object, int]] = {
    "Democrat": {"F": 762, "M": 484},
    "Independent": {"F": 327, "M": 239},
    "Republican": {"F": 468, "M": 477},
}
COCHRAN_YES = [
    (1, 1, 0), (1, 0, 0), (1, 1, 1), (0, 0, 0), (1, 0, 0), (1, 1, 0), (1, 0, 1), (1, 1, 0),
    (0, 1, 0), (1, 0, 0), (1, 1, 0), (1, 0, 0),
]  # fmt: skip


def _check(
    row: dict, expected: tuple[float, float, float], tolerance: float, method: str, rel: float = 0
) -> None:
    effect, low, high = expected
    assert row["effect"] == pytest.approx(effect, abs=EXACT, rel=rel)
    assert row["effect_ci_low"] == pytest.approx(low, abs=tolerance, rel=rel)
    assert row["effect_ci_high"] == pytest.approx(high, abs=tolerance, rel=rel)
    assert row["effect_ci_method"] == method


def test_rank_biserial_intervals_match_r() -> None:
    """The tortoise and the hare (Mann–Whitney) and Hollander & Wolfe's depression scores
    (Wilcoxon): Fisher z intervals of r, as R's ``effectsize::rank_biserial``."""
    order = "THHHHHTTTTTH"
    places = {
        "hare": [i + 1 for i, a in enumerate(order) if a == "H"],
        "tortoise": [i + 1 for i, a in enumerate(order) if a == "T"],
    }
    (row,) = compare_systems(_long(places)).to_dict("records")
    _check(row, R_MWU, EXACT, ci.FISHER_Z)
    x = [1.83, 0.50, 1.62, 2.48, 1.68, 1.88, 1.55, 3.06, 1.30]
    y = [0.878, 0.647, 0.598, 2.05, 1.06, 1.29, 1.06, 3.14, 1.29]
    (row,) = compare_systems(_long({"a-first": x, "b-second": y}, paired=True)).to_dict("records")
    _check(row, R_WILCOXON, EXACT, ci.FISHER_Z)


def test_odds_ratio_intervals_match_r() -> None:
    """Fisher's twins: R's ``fisher.test`` conditional interval; McNemar with 9 and 2
    discordant pairs: R's ``binom.test`` interval of 9 / 11 as odds."""
    twins = _answers_of({"a": {"yes": 2, "no": 10}, "b": {"yes": 15, "no": 3}})
    (row,) = compare_proportions(twins, order=["yes", "no"]).to_dict("records")
    _check(row, R_FISHER, 0, ci.CONDITIONAL, rel=ROOT)
    pairs = [("yes", "no")] * 9 + [("no", "yes")] * 2 + [("yes", "yes")] * 5 + [("no", "no")] * 4
    rows = [
        (f"p{i}", system, answer)
        for i, both in enumerate(pairs)
        for system, answer in zip(("a", "b"), both, strict=True)
    ]
    frame = pd.DataFrame(rows, columns=["participant_id", "system_id", "answer"])
    (row,) = compare_proportions(frame, order=["yes", "no"]).to_dict("records")
    assert row["test"] == "McNemar"
    _check(row, R_MCNEMAR, EXACT, ci.CLOPPER_PEARSON)


def test_bootstrap_intervals_agree_with_r_within_monte_carlo_error() -> None:
    """ε² (Hollander & Wolfe's mucociliary efficiency), Kendall's W (RoundingTimes), Cramér's
    V (Agresti's party identification by gender, parties as systems) and η²_Q (twelve
    participants' yes/no with three systems) against R's ``boot`` percentile intervals."""
    groups = {
        "normal": [2.9, 3.0, 2.5, 2.6, 3.2],
        "obstructive": [3.8, 2.7, 4.0, 2.4],
        "asbestosis": [2.8, 3.4, 3.7, 2.2, 2.0],
    }
    kruskal = compare_systems(_long(groups), min_n=4).iloc[0].to_dict()
    _check(kruskal, R_KRUSKAL, BOOTSTRAP, ci.BOOTSTRAP_STRATA)
    columns = list(zip(*ROUNDING_TIMES, strict=True))
    rounding = {"narrow": columns[1], "round": columns[0], "wide": columns[2]}
    friedman = compare_systems(_long(rounding, paired=True)).iloc[0].to_dict()
    _check(friedman, R_FRIEDMAN, BOOTSTRAP, ci.BOOTSTRAP)
    parties = _answers_of(PARTIES)
    chisq = compare_proportions(parties, order=["F", "M"]).iloc[0].to_dict()
    assert chisq["test"] == "χ² test of independence"
    _check(chisq, R_CHISQ, BOOTSTRAP, ci.BOOTSTRAP_STRATA)
    rows = [
        (f"p{i}", system, "yes" if hit else "no")
        for i, answers in enumerate(COCHRAN_YES)
        for system, hit in zip(("a", "b", "c"), answers, strict=True)
    ]
    frame = pd.DataFrame(rows, columns=["participant_id", "system_id", "answer"])
    cochran = compare_proportions(frame, order=["yes", "no"]).iloc[0].to_dict()
    assert cochran["test"] == "Cochran's Q"
    _check(cochran, R_COCHRAN, BOOTSTRAP, ci.BOOTSTRAP)


def test_the_same_data_give_the_same_bootstrap_interval() -> None:
    """The bootstrap is seeded: a report is reproducible to the byte."""
    groups = {"a": [1.0, 2, 3, 4, 5, 2], "b": [2.0, 3, 4, 5, 5, 4], "c": [3.0, 4, 5, 5, 4, 5]}
    first, again = (compare_systems(_long(groups)).iloc[0] for _ in range(2))
    assert (first["effect_ci_low"], first["effect_ci_high"]) == (
        again["effect_ci_low"],
        again["effect_ci_high"],
    )


@pytest.fixture(scope="module")
def study_db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    db = tmp_path_factory.mktemp("intervals") / "study.sqlite"
    asyncio.run(write_report_study(db, ("alpha", "beta")))
    return db


NUMBER = r"−?\d\.\d\d"
INTERVAL = re.compile(
    rf"rank-biserial r = {NUMBER} \(alpha over beta\), 95% CI \[{NUMBER}, {NUMBER}\] \(Fisher z\)"
)


def test_the_headline_shows_each_effect_with_its_interval_in_every_format(
    study_db: Path, tmp_path: Path
) -> None:
    """Terminal, Markdown, HTML and LaTeX show ``r = …, 95% CI […, …] (Fisher z)`` in the
    systems compared; the JSON carries each tested row's interval with its method in full."""
    suffixes = ("txt", "md", "html", "tex", "json")
    outs = [a for suffix in suffixes for a in ("--out", str(tmp_path / f"report.{suffix}"))]
    assert main(["report", "--db", str(study_db), *outs]) == 0
    for suffix in suffixes[:-1]:
        out = tmp_path / f"report.{suffix}"
        text = " ".join(out.read_text(encoding="utf-8").split())
        if suffix == "tex":
            text = " ".join(
                " ".join(p.read_text(encoding="utf-8").split()) for p in tmp_path.rglob("*.tex")
            )
        escapes = {"\\[": "[", "\\]": "]", "\\%": "%", "-{}": "-", "\\textminus{}": "−"}
        for escaped, plain in escapes.items():  # Markdown's and LaTeX's
            text = text.replace(escaped, plain)
        if suffix == "txt":  # the terminal's table wraps the cell over lines
            assert "95% CI [" in text and "(Fisher" in text, suffix
        else:
            assert INTERVAL.search(text), suffix
    out = tmp_path / "report.json"
    rows = json.loads(out.read_text(encoding="utf-8"))["comparisons"]["table"]
    tested = [r for r in rows if r["effect"] is not None and r["p"] is not None]
    assert tested
    for r in tested:
        assert r["effect_ci_low"] is not None and r["effect_ci_high"] is not None, r
        assert r["effect_ci_low"] <= r["effect_ci_high"]
        assert r["effect_ci_method"] in ci.INTERVAL_METHODS


# R, tests/r/effect_intervals.R (the last lines): U, p, rank-biserial r, low, high
R_HMD = (57.5, 0.0068900832194361, 0.796875, 0.467436794546619, 0.931973150685667)
HMD_ANSWERS = {"shop-v0": [2, 3, 3, 4, 2, 1, 3, 2], "shop-v1": [4, 5, 3, 4, 5, 4, 3, 5]}


def test_the_known_answer_passes_through_import_and_report(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """HMD's usefulness answers imported with ``ozlab import responses``: the JSON report's
    test, p, effect and interval are R's."""
    file = tmp_path / "answers.csv"
    rows = [
        (f"P{system[-1]}{i}", "hmd", "hmd.usefulness", value, system)
        for system, values in HMD_ANSWERS.items()
        for i, value in enumerate(values)
    ]
    pd.DataFrame(
        rows, columns=["participant_id", "questionnaire_id", "item_id", "value", "system_id"]
    ).to_csv(file, index=False)
    db = tmp_path / "hmd.sqlite"
    assert main(["import", "responses", str(file), "--db", str(db), "--study", "hmd"]) == 0
    capsys.readouterr()
    assert main(["report", "--db", str(db), "--format", "json"]) == 0
    table = json.loads(capsys.readouterr().out)["comparisons"]["table"]
    (row,) = [r for r in table if r["measure"] == "hmd.usefulness"]
    u, p, r, low, high = R_HMD
    assert (row["test"], row["groups"]) == (
        "Mann–Whitney U",
        "shop-v1 vs shop-v0",
    )  # the study's order
    assert row["statistic"] == u and row["p"] == pytest.approx(p, abs=1e-12)
    assert row["effect"] == pytest.approx(r, abs=EXACT)
    assert (row["effect_ci_low"], row["effect_ci_high"]) == pytest.approx((low, high), abs=EXACT)
    assert row["effect_ci_method"] == ci.FISHER_Z


def test_kruskal_h_from_counts_is_scipys_on_the_values() -> None:
    """The bootstrap computes H from counts of distinct values: the same H as scipy's
    ``kruskal`` (with its tie correction) on the values those counts stand for."""
    from scipy.stats import kruskal

    rng = np.random.default_rng(3)
    for _ in range(20):
        values = np.round(rng.normal(size=7) * 2) / 2
        counts = rng.integers(0, 6, size=(3, len(values)))
        counts[:, 0] += 1  # every system has a participant
        order = np.argsort(values)
        samples = [np.repeat(values[order], row[order]) for row in counts]
        distinct = np.unique(values)
        table = np.array([[np.sum(s == v) for v in distinct] for s in samples], dtype=float)
        assert ci.kruskal_h(table) == pytest.approx(kruskal(*samples).statistic, rel=1e-12)


def test_epsilon_squared_interval_is_kruskal_h_of_the_drawn_counts() -> None:
    """ε²'s bootstrap sums each resample's ranks as dot products, per system: the same
    interval, to the last bit, as H of the whole resample × system × value array of the
    same draws, with few or many distinct values, two to five systems."""
    rng = np.random.default_rng(5)
    for trial in range(24):
        samples = [
            np.round(rng.normal(size=int(rng.integers(2, 200))) * (1 + trial), trial % 3)
            for _ in range(2 + trial % 4)
        ]
        draws = np.random.default_rng(ci.SEED)
        distinct, codes = np.unique(np.concatenate(samples), return_inverse=True)
        sizes = [len(s) for s in samples]
        drawn = np.stack(
            [
                draws.multinomial(n, np.bincount(part, minlength=len(distinct)) / n, ci.RESAMPLES)
                for n, part in zip(sizes, np.split(codes, np.cumsum(sizes)[:-1]), strict=True)
            ],
            axis=1,
        ).astype(float)
        kept = ci.kruskal_h(drawn) / (sum(sizes) - 1)
        kept = kept[np.isfinite(kept)]
        tail = (1 - ci.LEVEL) / 2
        low, high = np.quantile(kept, [tail, 1 - tail])
        assert ci.epsilon_squared(samples) == (low, high, ci.BOOTSTRAP_STRATA)


def test_complete_separation_gives_the_degenerate_interval_not_an_error() -> None:
    """Every value of one system above every value of the other: r = 1, and the Fisher z
    interval is [1, 1] (R: ``tanh(atanh(1) - 1.96 * se)`` is 1)."""
    table = compare_systems(_long({"a": [1.0, 1, 2, 2, 1], "b": [4.0, 5, 4, 5, 5]})).iloc[0]
    assert abs(table["effect"]) == 1
    assert (table["effect_ci_low"], table["effect_ci_high"]) == (table["effect"],) * 2
