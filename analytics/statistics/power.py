"""``ozlab power``: how many participants the study's own design needs, and the smallest
effect a collected sample could have detected.

The report compares systems with rank tests (Mann–Whitney, Kruskal–Wallis, Wilcoxon,
Friedman), so the plan says what those need: the parametric test's n divided by the rank
test's asymptotic relative efficiency under normal data (``rank_plan``). The parametric
test follows the study: between participants, two systems are a two-sample t-test
(one group per system) and more systems a one-way ANOVA; within participants (everybody
meets every system), two systems are a paired t-test and more a repeated-measures ANOVA;
one system is a one-sample t-test (its mean against a fixed value, such as the scale's
middle). The numbers are pingouin's power functions' (``ozlab power``; a report computes
the same floats without importing pingouin), which agree with R's ``pwr``
and G*Power; what was used is named in the output, so that a paper can cite it. All tests
are two-sided. Effects are Cohen's d for t-tests (d_z, the mean difference over the SD of
the differences, for the paired one) and Cohen's f for ANOVAs (η² = f² / (1 + f²)).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Literal

import numpy as np
from scipy.optimize import brenth
from scipy.stats import f as f_distribution
from scipy.stats import ncf, nct
from scipy.stats import t as t_distribution

from bot.core.errors import StudyDataError
from bot.core.vocabulary import SessionState
from bot.engine.assignment import design_block
from scenarios.models import Study

DesignKind = Literal["between", "within"]
DEFAULT_D = 0.5
"""Cohen's "medium" d."""
DEFAULT_F = 0.25
"""Cohen's "medium" f (η² ≈ 0.059)."""


@dataclass(frozen=True)
class PowerTest:
    """The test a design's comparison of systems calls for, as a paper would name it."""

    name: str
    call: str
    """The pingouin function and options used, e.g. ``pingouin.power_ttest(contrast='paired')``."""
    effect: str
    """The effect size's name: ``Cohen's d``, ``Cohen's d_z`` or ``Cohen's f``."""
    design: DesignKind
    systems: int
    corr: float | None = None
    """Repeated-measures ANOVA: the assumed correlation between a participant's measures."""

    @property
    def anova(self) -> bool:
        return self.effect == "Cohen's f"

    @property
    def default_effect(self) -> float:
        return DEFAULT_F if self.anova else DEFAULT_D


class _Whole:
    """Whole participants from a plan's exact n (``exact``: per system between
    participants, participants in all within)."""

    test: PowerTest
    exact: float

    @property
    def per_system(self) -> int:
        """Participants each system needs (within participants: the same people)."""
        return math.ceil(self.exact - 1e-9)

    @property
    def participants(self) -> int:
        """Participants in all."""
        return self.per_system * (self.test.systems if self.test.design == "between" else 1)


@dataclass(frozen=True)
class SampleSize(_Whole):
    """Participants needed to detect ``effect`` with ``power`` at ``alpha``."""

    test: PowerTest
    effect: float
    alpha: float
    power: float
    exact: float
    """pingouin's n: per system between participants, participants in all within."""


@dataclass(frozen=True)
class Detectable:
    """The smallest effect a sample of ``n`` had ``power`` to detect at ``alpha``."""

    test: PowerTest
    n: tuple[int, ...]
    """Participants per system (between) or participants with every system (within)."""
    alpha: float
    power: float
    effect: float | None
    """``None`` when the sample is too small for the test (fewer than 2 per group)."""

    def sentence(self) -> str:
        """One sentence for a report or a paper."""
        if self.effect is None:
            return (
                f"With {_sample_words(self)}, a {self.test.name} has too few participants "
                "to detect any effect."
            )
        symbol = "f" if self.test.anova else ("d_z" if "d_z" in self.test.effect else "d")
        return (
            f"With {_sample_words(self)}, a two-sided {self.test.name} at α = "
            f"{self.alpha:g} had {self.power:.0%} power to detect effects of {symbol} ≥ "
            f"{self.effect:.2f} ({self.test.effect}; {self.test.call})."
        )


@dataclass(frozen=True)
class RankPlan(_Whole):
    """The sample the report's rank test needs: the parametric test's n divided by the rank
    test's asymptotic relative efficiency (ARE) against it under normal data, as G*Power's
    "A.R.E." method plans the Wilcoxon–Mann–Whitney test."""

    name: str
    efficiency: float
    efficiency_words: str
    exact: float
    """Per system between participants, participants in all within."""
    test: PowerTest
    test_n: float
    """The parametric test's n it comes from."""


_THREE_OVER_PI = 3 / math.pi


def rank_plan(needed: SampleSize) -> RankPlan:
    """How many participants the rank test the report runs for this design needs:
    Mann–Whitney U and Kruskal–Wallis H (ARE 3/π against the t-test and one-way ANOVA),
    Wilcoxon's signed-rank test (3/π against the paired or one-sample t-test), Friedman's
    test (3k/(π(k + 1)) against the repeated-measures ANOVA, van Elteren and Noether 1959)."""
    test = needed.test
    k = test.systems
    if test.design == "within" and k > 2:
        name, are = "Friedman test", _THREE_OVER_PI * k / (k + 1)
        words = f"3k/(π(k + 1)) = {are:.3f} for k = {k}, against the repeated-measures ANOVA"
    else:
        name = {
            "one-sample t-test": "Wilcoxon signed-rank test",
            "paired t-test": "Wilcoxon signed-rank test",
            "two-sample t-test": "Mann–Whitney U test",
        }.get(test.name, "Kruskal–Wallis H test")
        are = _THREE_OVER_PI
        words = f"3/π = {are:.3f}, against the {test.name}"
    return RankPlan(name, are, words, needed.exact / are, test, needed.exact)


def power_test(design: DesignKind, systems: int, *, corr: float = 0.5) -> PowerTest:
    """The test that compares ``systems`` systems in a ``design`` study."""
    if systems < 1:
        raise StudyDataError("a study has at least one system")
    if systems == 1:
        return PowerTest(
            "one-sample t-test",
            "pingouin.power_ttest(contrast='one-sample')",
            "Cohen's d",
            design,
            1,
        )
    if design == "between":
        if systems == 2:
            return PowerTest(
                "two-sample t-test",
                "pingouin.power_ttest(contrast='two-samples')",
                "Cohen's d",
                design,
                2,
            )
        return PowerTest(
            "one-way ANOVA", f"pingouin.power_anova(k={systems})", "Cohen's f", design, systems
        )
    if systems == 2:
        return PowerTest(
            "paired t-test",
            "pingouin.power_ttest(contrast='paired')",
            "Cohen's d_z",
            design,
            2,
        )
    return PowerTest(
        "repeated-measures ANOVA",
        f"pingouin.power_rm_anova(m={systems}, corr={corr:g})",
        "Cohen's f",
        design,
        systems,
        corr=corr,
    )


def sample_size(
    design: DesignKind,
    systems: int,
    *,
    effect: float | None = None,
    alpha: float = 0.05,
    power: float = 0.8,
    corr: float = 0.5,
) -> SampleSize:
    """Participants needed per system for ``effect`` (default Cohen's medium effect)."""
    import pingouin as pg  # here: ozlab power plans with it, a report never does

    _check(alpha, power, corr)
    test = power_test(design, systems, corr=corr)
    size = test.default_effect if effect is None else effect
    if not size > 0:
        raise StudyDataError(f"the effect size must be above 0, not {size:g}")
    if test.anova:
        eta = _eta_squared(size)
        if design == "between":
            n = pg.power_anova(eta_squared=eta, k=systems, power=power, alpha=alpha)
        else:
            n = pg.power_rm_anova(eta_squared=eta, m=systems, power=power, alpha=alpha, corr=corr)
    else:
        n = pg.power_ttest(d=size, power=power, alpha=alpha, contrast=_contrast(test))
    return SampleSize(test, size, alpha, power, float(n))


def smallest_detectable_effect(
    design: DesignKind,
    sizes: Sequence[int],
    *,
    alpha: float = 0.05,
    power: float = 0.8,
    corr: float = 0.5,
) -> Detectable:
    """The smallest effect the sample had ``power`` to detect (the report's statement).

    ``sizes`` has one number per system. Between participants: the participants of each
    system (unequal groups are exact for two systems; for more, the ANOVA is computed on
    the harmonic mean of the group sizes). Within participants: the participants counted
    with each system; the smallest count is used, since a participant enters a paired test
    or a repeated-measures ANOVA only with every system (pass the complete cases)."""
    _check(alpha, power, corr)
    test = power_test(design, len(sizes), corr=corr)
    counts = tuple(int(n) for n in sizes)
    if design == "within" or len(counts) == 1:
        counts = (min(counts),)
    if min(counts) < 2 or (test.name == "two-sample t-test" and sum(counts) < 4):
        return Detectable(test, counts, alpha, power, None)
    effect: float
    if test.anova and design == "between":
        harmonic = len(counts) / sum(1 / n for n in counts)
        if len(set(counts)) > 1:
            call = f"pingouin.power_anova(k={len(counts)}, n={harmonic:.2f}: the harmonic mean)"
            test = replace(test, call=call)
        effect = _f(anova_eta_squared(harmonic, len(sizes), power, alpha))
    elif test.name == "two-sample t-test":
        nx, ny = counts
        test = replace(test, call=f"pingouin.power_ttest2n(nx={nx}, ny={ny})")
        effect = t_test_d(1 / np.sqrt(1 / nx + 1 / ny), nx + ny - 2, power, alpha)
    elif test.anova:
        effect = _f(rm_anova_eta_squared(counts[0], len(sizes), power, alpha, corr))
    else:  # paired or one-sample: noncentrality d·√n on n − 1 degrees of freedom
        effect = t_test_d(np.sqrt(counts[0]), counts[0] - 1, power, alpha)
    value = float(effect)
    return Detectable(test, counts, alpha, power, value if math.isfinite(value) else None)


def anova_eta_squared(n: float, k: int, power: float, alpha: float) -> float:
    """The η² a one-way ANOVA of ``k`` groups of ``n`` detects with this power (NaN when
    none does), as ``pingouin.power_anova(n=, k=, power=, alpha=)`` solves it, step for
    step (the same floats), without importing pingouin: its import took longer than a large
    report's tests."""

    def short_of(eta: float) -> float:
        f_squared = eta / (1 - eta)
        dof1, dof2 = k - 1, (n * k) - k
        critical = f_distribution.ppf(1 - alpha, dof1, dof2)
        return float(ncf.sf(critical, dof1, dof2, (n * k) * f_squared)) - power

    return _root(short_of, 1e-10, 1 - 1e-10)


def t_test_d(scale: float, dof: float, power: float, alpha: float) -> float:
    """The Cohen's d a two-sided t test detects with this power (NaN when none does), its
    noncentrality d·``scale`` on ``dof`` degrees of freedom, as pingouin's ``power_ttest``
    and ``power_ttest2n`` solve it, step for step (the same floats), without importing
    pingouin: its import (with matplotlib's and seaborn's) took a second of a report."""

    critical = t_distribution.ppf(1 - alpha / 2, dof)

    def short_of(d: float) -> float:
        noncentral = d * scale
        reached = nct.sf(critical, dof, noncentral) + (1 - nct.sf(-critical, dof, noncentral))
        return float(reached) - power

    return _root(short_of, 1e-07, 10)


def rm_anova_eta_squared(n: int, m: int, power: float, alpha: float, corr: float) -> float:
    """The η² a repeated-measures ANOVA of ``m`` conditions met by ``n`` participants
    detects with this power (NaN when none does), as ``pingouin.power_rm_anova(n=, m=,
    power=, alpha=, corr=)`` solves it, step for step, without importing pingouin."""
    dof1 = m - 1
    dof2 = (n - 1) * dof1
    critical = f_distribution.ppf(1 - alpha, dof1, dof2)

    def short_of(eta: float) -> float:
        noncentral = eta / (1 - eta) * n * m / (1 - corr)
        return float(ncf.sf(critical, dof1, dof2, noncentral)) - power

    return _root(short_of, 1e-10, 1 - 1e-10)


def _root(short_of: Callable[[float], float], low: float, high: float) -> float:
    """Where ``short_of`` is 0 between ``low`` and ``high`` (Brent's method, as pingouin
    solves its power equations), or NaN when it is not: no effect reaches the power."""
    try:
        return float(brenth(short_of, low, high))
    except ValueError:
        return math.nan


def collected_sizes(sessions_by_system: dict[str, set[str]], design: DesignKind) -> tuple[int, ...]:
    """Per system, the participants a comparison can use: between, each system's own;
    within, the participants who finished a task with every system (the complete cases)."""
    if design == "between":
        return tuple(len(people) for people in sessions_by_system.values())
    groups = list(sessions_by_system.values())
    complete = set.intersection(*groups) if groups else set()
    return tuple(len(complete) for _ in groups)


def power_report(
    ref: str | Path,
    *,
    effect: float | None = None,
    alpha: float = 0.05,
    power: float = 0.8,
    corr: float = 0.5,
    study: str | None = None,
) -> str:
    """``ozlab power``'s text for a study (a shipped name or a YAML file) or a database;
    a database adds what the participants who finished a task so far could detect."""
    from analytics.data.selecting import load_study as load_data
    from bot.store.opening import locate

    path = Path(ref)
    finished: dict[str, set[str]] | None = None
    on_server = locate(ref).server is not None
    if on_server or (path.is_file() and path.suffix.lower() not in (".yaml", ".yml")):
        data = load_data(ref, study)
        bundle = (data.bundles.get(study) if study else None) or data.bundle
        if bundle is None:
            raise StudyDataError(
                f"{path} holds no readable study definition: run ozlab power on the study "
                "file instead"
            )
        ended = data.sessions[data.sessions["state"].astype(object) == SessionState.ENDED.value]
        finished = {spec.id: set() for spec in bundle.study.systems}
        for system_id, participant in zip(
            ended["system_id"].astype(str), ended["participant_id"].astype(str), strict=True
        ):
            finished.setdefault(system_id, set()).add(participant)
    else:
        from scenarios.loading import load_study

        bundle = load_study(ref)
    design = bundle.study.design
    systems = [spec.id for spec in bundle.study.systems]
    needed = sample_size(
        design.systems, len(systems), effect=effect, alpha=alpha, power=power, corr=corr
    )
    test = needed.test
    lines = [
        f"Study {bundle.study.id!r}: {len(systems)} "
        f"system{'s' if len(systems) != 1 else ''} ({', '.join(systems)}), "
        + _design_words(design.systems, len(systems)),
        f"Test: two-sided {test.name} ({test.call})",
        f"Effect: {test.effect} = {needed.effect:g}"
        + (f" (η² = {_eta_squared(needed.effect):.3f})" if test.anova else "")
        + f", α = {alpha:g}, power = {power:g}",
        _needed_words(needed),
        *(_rank_words(rank_plan(needed)) if len(systems) > 1 else []),
    ]
    # plan from the test the report will run: the rank test's sample where it runs one
    planned = rank_plan(needed).participants if len(systems) > 1 else needed.participants
    if whole := in_whole_cells(bundle.study, planned):
        lines.append(whole)
    if design.systems == "within" and len(systems) > 1:
        tasks = design.tasks_per_participant
        if tasks is not None and tasks < len(systems):
            lines.append(
                f"Note: each participant plays {tasks} tasks, fewer than the {len(systems)} "
                "systems, so nobody meets every system: the estimate assumes they do."
            )
    if finished is not None:
        sizes = collected_sizes(finished, design.systems)
        found = smallest_detectable_effect(
            design.systems, sizes, alpha=alpha, power=power, corr=corr
        )
        counts = ", ".join(f"{s} {len(p)}" for s, p in finished.items())
        lines.append(f"Finished a task so far: {counts} participants.")
        lines.append(found.sentence())
    return "\n".join(lines) + "\n"


def in_whole_cells(study: Study, participants: int) -> str | None:
    """The sample a study's design needs for ``participants`` to be enough: rounded up to
    a whole multiple of the participants that fill its cells evenly (Latin-square rows,
    balanced cells; ``bot.engine.assignment.design_block``); None when any number does."""
    block = design_block(study)
    if block.participants == 1:
        return None
    planned = block.whole(participants)
    return (
        f"Design: {block.cells}: whole multiples of {block.participants} participants fill it"
        f" evenly; for the {participants} the report's test needs, plan {planned} in all."
    )


def _design_words(design: DesignKind, systems: int) -> str:
    if systems == 1:
        return "so the test compares its mean with a fixed value (e.g. the scale's middle)."
    if design == "between":
        return "between participants (each participant meets one system)."
    return "within participants (each participant meets every system)."


def _needed_words(needed: SampleSize) -> str:
    if needed.test.design == "between" and needed.test.systems > 1:
        return (
            f"Needed: {needed.per_system} participants per system (n = {needed.exact:.2f}), "
            f"{needed.participants} in all."
        )
    every = ", each meeting every system" if needed.test.systems > 1 else ""
    return f"Needed: {needed.per_system} participants{every} (n = {needed.exact:.2f})."


def _rank_words(plan: RankPlan) -> list[str]:
    """What the report's own test needs, said as such (the numbers above are the
    parametric test's)."""
    if plan.test.design == "between" and plan.test.systems > 1:
        size = f"{plan.per_system} participants per system, {plan.participants} in all"
    else:
        every = ", each meeting every system" if plan.test.systems > 1 else ""
        size = f"{plan.per_system} participants{every}"
    return [
        f"The report runs the {plan.name}, a rank test: planned by asymptotic relative "
        f"efficiency under normal data (ARE {plan.efficiency_words}), n = "
        f"{plan.test_n:.2f} / {plan.efficiency:.3f} = {plan.exact:.2f}.",
        f"Needed for the report's test: {size}.",
    ]


def _sample_words(found: Detectable) -> str:
    if found.test.design == "between" and found.test.systems > 1:
        *first, last = map(str, found.n)
        return f"{', '.join(first)} and {last} participants per system"
    if found.test.systems == 1:
        return f"{found.n[0]} participants"
    return f"{found.n[0]} participants who met every system"


def _contrast(test: PowerTest) -> str:
    return {"one-sample t-test": "one-sample", "paired t-test": "paired"}.get(
        test.name, "two-samples"
    )


def _eta_squared(f: float) -> float:
    return f * f / (1 + f * f)


def _f(eta_squared: float) -> float:
    return math.sqrt(eta_squared / (1 - eta_squared))


def _check(alpha: float, power: float, corr: float) -> None:
    if not 0 < alpha < 1:
        raise StudyDataError(f"α must be between 0 and 1, not {alpha:g}")
    if not alpha < power < 1:
        raise StudyDataError(f"power must be between α ({alpha:g}) and 1, not {power:g}")
    if not -1 < corr < 1:
        raise StudyDataError(f"the correlation must be between -1 and 1, not {corr:g}")
