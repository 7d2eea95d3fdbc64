"""The statistics a report computes without importing pingouin equal pingouin's, to the
last bit, and a between-subjects report never imports it (nor matplotlib, seaborn, xarray
through it): the import took longer than a large report's tests."""

from __future__ import annotations

# pingouin, the reference, is imported by the tests that compare with it: at the top it
# cost every test process a third of a second of collection.
import json
import math
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from analytics.statistics.compare import holm, kruskal_wallis
from analytics.statistics.power import anova_eta_squared, smallest_detectable_effect
from analytics.statistics.questionnaires import cronbach_alpha

SEEDS = range(12)


def _samples(seed: int) -> dict[str, np.ndarray]:
    """Three to five systems of unequal size, named out of alphabetical order, with ties
    (means of a few answers on a 1–5 scale) and, for some seeds, a missing value."""
    rng = np.random.default_rng(seed)
    names = ["sys-c", "sys-a", "sys-e", "sys-b", "sys-d"][: 3 + seed % 3]
    samples = {
        name: rng.integers(1, 6, size=(int(rng.integers(5, 60)), 1 + seed % 4)).mean(axis=1)
        for name in names
    }
    if seed % 2:
        samples[names[0]][0] = np.nan
    return samples


@pytest.mark.parametrize("seed", SEEDS)
def test_kruskal_wallis_is_pingouins(seed: int) -> None:
    import pingouin as pg

    samples = _samples(seed)
    long = pd.DataFrame(
        {
            "group": np.repeat(list(samples), [len(v) for v in samples.values()]),
            "dv": np.concatenate(list(samples.values())),
        }
    )
    theirs = pg.kruskal(long, dv="dv", between="group").iloc[0]
    assert kruskal_wallis(samples) == (float(theirs["H"]), float(theirs["p_unc"]))


@pytest.mark.parametrize("seed", SEEDS)
def test_holm_is_pingouins(seed: int) -> None:
    import pingouin as pg

    rng = np.random.default_rng(seed)
    p = rng.uniform(0, 0.2, size=2 + seed)
    p[: seed % 3] = p[-1]  # tied p-values
    _, theirs = pg.multicomp(p, method="holm")
    assert holm(p).tolist() == np.asarray(theirs, dtype=float).tolist()
    assert holm(list(p)).tolist() == holm(p).tolist()


def test_holm_caps_at_one() -> None:
    assert holm([0.4, 0.5, 0.01]).tolist() == [0.8, 0.8, 0.03]
    assert holm([0.9, 0.6]).tolist() == [1.0, 1.0]


@pytest.mark.parametrize("seed", SEEDS)
def test_cronbach_alpha_is_pingouins(seed: int) -> None:
    import pingouin as pg

    rng = np.random.default_rng(seed)
    people, items = int(rng.integers(5, 400)), 2 + seed % 5
    trait = rng.normal(size=(people, 1))
    wide = pd.DataFrame(
        np.clip(np.rint(3 + trait + rng.normal(size=(people, items))), 1, 5),
        columns=[f"q{i}" for i in range(items)],
    )
    confidence = (0.95, 0.9, 0.99)[seed % 3]
    alpha, interval = cronbach_alpha(wide, confidence)
    their_alpha, their_interval = pg.cronbach_alpha(data=wide, ci=confidence)
    assert alpha == float(their_alpha)
    assert interval.tolist() == np.asarray(their_interval).tolist()


@pytest.mark.parametrize(
    ("n", "k", "power", "alpha"),
    [(20.0, 3, 0.8, 0.05), (3333.3, 3, 0.8, 0.05), (7.5, 4, 0.9, 0.01), (2.0, 5, 0.5, 0.1),
     (1733.0, 6, 0.95, 0.05), (2.0, 2, 0.99, 0.001)],
)  # fmt: skip
def test_anova_eta_squared_is_pingouins(n: float, k: int, power: float, alpha: float) -> None:
    import pingouin as pg

    theirs = float(pg.power_anova(n=n, k=k, power=power, alpha=alpha))
    assert anova_eta_squared(n, k, power, alpha) == pytest.approx(theirs, abs=0, rel=0)
    assert np.isfinite(theirs)


@pytest.mark.parametrize(
    ("design", "sizes", "power", "alpha"),
    [("between", (12, 13), 0.8, 0.05), ("between", (2, 3), 0.9, 0.01),
     ("between", (400, 9), 0.5, 0.1), ("between", (30,), 0.8, 0.05),
     ("within", (15, 15), 0.8, 0.05), ("within", (3, 4), 0.95, 0.001),
     ("within", (20, 18, 19), 0.8, 0.05), ("within", (5, 5, 5, 5), 0.9, 0.01),
     ("within", (2, 2, 2), 0.99, 0.001)],
)  # fmt: skip
def test_the_smallest_detectable_effect_of_a_t_test_or_repeated_anova_is_pingouins(
    design: str, sizes: tuple[int, ...], power: float, alpha: float
) -> None:
    """Two groups (pingouin's ``power_ttest2n``), one group or pairs (``power_ttest``) and
    repeated measures (``power_rm_anova``, Cohen's f from its η²), without pingouin."""
    import pingouin as pg

    found = smallest_detectable_effect(design, sizes, power=power, alpha=alpha)  # type: ignore[arg-type]
    n = min(sizes)
    if len(sizes) == 2 and design == "between":
        theirs = float(pg.power_ttest2n(nx=sizes[0], ny=sizes[1], power=power, alpha=alpha))
    elif len(sizes) == 1:
        theirs = float(pg.power_ttest(n=n, power=power, alpha=alpha, contrast="one-sample"))
    elif len(sizes) == 2:
        theirs = float(pg.power_ttest(n=n, power=power, alpha=alpha, contrast="paired"))
    else:
        eta = float(pg.power_rm_anova(n=n, m=len(sizes), power=power, alpha=alpha, corr=0.5))
        theirs = math.sqrt(eta / (1 - eta))
    assert found.effect == (theirs if np.isfinite(theirs) else None)


def test_between_subjects_report_never_imports_pingouin(tmp_path: Path) -> None:
    """Whole JSON reports of two and of three systems between participants (Mann–Whitney
    and Kruskal–Wallis, Holm, Cronbach's alpha, the smallest detectable effect of a t test
    and of an ANOVA), in one fresh interpreter; nor the HTTP client the judges call models
    with (reading their verdicts needs none)."""
    code = (
        "import json, sys\n"
        "from pathlib import Path\n"
        "from analytics.data.synthetic import write_synthetic_study\n"
        "from analytics.data.loading import load_study_data\n"
        "from analytics.report.numbers import build_report\n"
        "from analytics.report.render_json import render_json\n"
        "for systems in (2, 3):\n"
        "    db = Path(sys.argv[1]) / f'{systems}.sqlite'\n"
        "    write_synthetic_study(db, sessions=60, responses_per_session=12, seed=3,\n"
        "                          systems=systems)\n"
        "    report = build_report(load_study_data(db))\n"
        "    render_json(report)\n"
        "    print(json.dumps({'tested': int(report.comparisons.table['p'].notna().sum()),\n"
        "        'alphas': int(report.questionnaires.reliability['alpha'].notna().sum()),\n"
        "        'detectable': report.provenance.detectable is not None}))\n"
        "print(json.dumps(sorted({'pingouin', 'matplotlib', 'seaborn', 'xarray', 'aiohttp'}\n"
        "                        & set(sys.modules))))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code, str(tmp_path)], capture_output=True, text=True, check=True
    )
    *reports, loaded = done.stdout.splitlines()[-3:]
    for line in reports:
        found = json.loads(line)
        assert found["tested"] > 0 and found["alphas"] > 0 and found["detectable"]
    assert json.loads(loaded) == []
