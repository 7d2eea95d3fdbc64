"""``ozlab power``: sample sizes for the study's own design, checked against R's ``pwr`` and
G*Power, and the smallest effect a collected sample could have detected."""

from __future__ import annotations

# pingouin, the reference, is imported by the tests that compare with it: at the top it
# cost every test process a third of a second of collection.
import math
from pathlib import Path

import pytest

from analytics.data.synthetic import write_synthetic_study
from analytics.statistics.power import (
    power_test,
    rank_plan,
    sample_size,
    smallest_detectable_effect,
)
from bot.cli import main as ozlab
from bot.core.errors import StudyDataError

# R: pwr 1.3 (Champely), G*Power 3.1: published reference values.
# pwr.t.test(d = 0.5, sig.level = 0.05, power = 0.8)                   n = 63.76561 per group
# pwr.t.test(d = 0.5, sig.level = 0.05, power = 0.8, type = "paired")  n = 33.36713 pairs
# pwr.t.test(d = 0.3, sig.level = 0.05, power = 0.9)                   n = 234.4627 per group
# pwr.anova.test(k = 3, f = 0.25, sig.level = 0.05, power = 0.8)       n = 52.3966 per group
# G*Power, ANOVA repeated measures within factors, f = 0.25, 1 group, 3 measurements,
#   corr 0.5, ε = 1, α = 0.05, power 0.8: total sample size 28
# pwr.t.test(n = 20, sig.level = 0.05, power = 0.8)                    d = 0.9091
REFERENCE = [
    ("between", 2, 0.5, 0.8, 63.76561, 64, 128),
    ("within", 2, 0.5, 0.8, 33.36713, 34, 34),
    ("between", 2, 0.3, 0.9, 234.4627, 235, 470),
    ("between", 3, 0.25, 0.8, 52.3966, 53, 159),
    ("within", 3, 0.25, 0.8, 27.2187, 28, 28),
]


@pytest.mark.parametrize(("design", "k", "effect", "power", "n", "per_system", "total"), REFERENCE)
def test_sample_sizes_match_pwr_and_gpower(
    design: str, k: int, effect: float, power: float, n: float, per_system: int, total: int
) -> None:
    needed = sample_size(design, k, effect=effect, power=power)  # type: ignore[arg-type]
    assert needed.exact == pytest.approx(n, abs=5e-4)
    assert (needed.per_system, needed.participants) == (per_system, total)


def test_the_test_follows_the_design_and_the_number_of_systems() -> None:
    assert power_test("between", 2).call == "pingouin.power_ttest(contrast='two-samples')"
    assert power_test("within", 2).effect == "Cohen's d_z"
    assert power_test("between", 4).name == "one-way ANOVA"
    assert power_test("within", 3).call == "pingouin.power_rm_anova(m=3, corr=0.5)"
    assert power_test("between", 1).name == "one-sample t-test"
    assert sample_size("between", 3).effect == 0.25  # Cohen's medium f by default
    assert sample_size("within", 2).effect == 0.5


def test_smallest_detectable_effect() -> None:
    import pingouin as pg

    equal = smallest_detectable_effect("between", [20, 20])
    assert equal.effect == pytest.approx(0.9091, abs=5e-4)  # pwr.t.test(n = 20, power = .8)
    unequal = smallest_detectable_effect("between", [20, 25])
    assert unequal.effect == pytest.approx(pg.power_ttest2n(nx=20, ny=25, power=0.8), rel=1e-9)
    assert 0.8 < unequal.effect < equal.effect  # five more participants: a smaller effect
    assert "power_ttest2n(nx=20, ny=25)" in unequal.sentence()
    # Within participants only the participants with every system count.
    paired = smallest_detectable_effect("within", [33, 40])
    assert paired.n == (33,)
    anova = smallest_detectable_effect("between", [53, 53, 53])
    assert anova.effect is not None and anova.effect == pytest.approx(0.25, abs=3e-3)
    assert "f ≥ 0.25" in anova.sentence()
    assert smallest_detectable_effect("between", [1, 30]).effect is None
    assert "too few" in smallest_detectable_effect("within", [1, 1]).sentence()


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"alpha": 0}, "α must be"),
        ({"power": 0.01}, "power must be"),
        ({"effect": -0.2}, "above 0"),
        ({"corr": 1.0}, "correlation"),
    ],
)
def test_impossible_settings_are_one_line(kwargs: dict[str, float], message: str) -> None:
    with pytest.raises(StudyDataError, match=message):
        sample_size("between", 2, **kwargs)


def test_ozlab_power_on_a_shipped_study(capsys: pytest.CaptureFixture[str]) -> None:
    assert ozlab(["power", "hmd"]) == 0
    out = capsys.readouterr().out
    assert "between participants" in out
    assert "pingouin.power_ttest(contrast='two-samples')" in out
    assert "Needed: 64 participants per system (n = 63.77), 128 in all." in out


def test_ozlab_power_on_a_database(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    db = tmp_path / "within.sqlite"
    write_synthetic_study(
        db,
        sessions=60,
        responses_per_session=4,
        seed=3,
        systems=3,
        design="within",
        tasks_per_participant=3,
    )
    assert ozlab(["power", str(db), "--effect", "0.4", "--power", "0.9"]) == 0
    out = capsys.readouterr().out
    assert "within participants" in out
    assert "repeated-measures ANOVA (pingouin.power_rm_anova(m=3, corr=0.5))" in out
    assert "Cohen's f = 0.4 (η² = 0.138)" in out
    assert "Finished a task so far:" in out
    assert "participants who met every system" in out


def test_ozlab_power_refuses_nonsense(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        ozlab(["power", "hmd", "--alpha", "1.5"])
    assert "between 0 and 1" in capsys.readouterr().err
    assert ozlab(["power", "hmd", "--power", "0.01"]) == 3
    assert "power must be between" in capsys.readouterr().err


# The report's rank tests need the parametric n divided by their asymptotic relative
# efficiency under normal data: 3/π for Mann–Whitney, Kruskal–Wallis and Wilcoxon's
# signed-rank test; 3k/(π(k + 1)) for Friedman's (van Elteren and Noether 1959).
RANK = [
    ("between", 2, "Mann–Whitney U test", 63.76561 * math.pi / 3, 67, 134),
    ("within", 2, "Wilcoxon signed-rank test", 33.36713 * math.pi / 3, 35, 35),
    ("between", 3, "Kruskal–Wallis H test", 52.3966 * math.pi / 3, 55, 165),
    ("within", 3, "Friedman test", 27.2187 * math.pi * 4 / 9, 39, 39),
]


@pytest.mark.parametrize(("design", "k", "name", "n", "per_system", "total"), RANK)
def test_rank_tests_are_planned_by_their_efficiency(
    design: str, k: int, name: str, n: float, per_system: int, total: int
) -> None:
    plan = rank_plan(sample_size(design, k))  # type: ignore[arg-type]
    assert plan.name == name
    assert plan.exact == pytest.approx(n, abs=1e-3)
    assert (plan.per_system, plan.participants) == (per_system, total)


def test_ozlab_power_says_which_test_the_report_runs(capsys: pytest.CaptureFixture[str]) -> None:
    assert ozlab(["power", "hmd", "--effect", "0.5", "--alpha", "0.05", "--power", "0.8"]) == 0
    out = capsys.readouterr().out
    assert "Needed: 64 participants per system (n = 63.77), 128 in all." in out
    assert "The report runs the Mann–Whitney U test, a rank test" in out
    assert "ARE 3/π = 0.955, against the two-sample t-test" in out
    assert "Needed for the report's test: 67 participants per system, 134 in all." in out
