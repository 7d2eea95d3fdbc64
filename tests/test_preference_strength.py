"""A preference's strength ("much", "slightly", no preference) in the Bradley–Terry fit.

Ignored by default (a win is a win); with the study file's ``pairwise: strength: graded``, a
"slightly" preference counts 0.75 of a win and 0.25 for the other side, "much" a whole win,
no preference a tie: a fractional outcome in the same binomial likelihood. The values come
from tests/r/preference_strength.R (geepack and glm, run once; the tests never run R) on
tests/fixtures/preference_votes.csv.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from analytics.statistics.pairwise import PairwiseOptions, pairwise_section
from analytics.statistics.pairwise.fitting import count_battles, covariances, design, fit
from tests.test_pairwise_statistics import votes_frame

FIXTURE = Path(__file__).parent / "fixtures" / "preference_votes.csv"
SYSTEMS = ("alpha", "beta", "gamma")
# R: geeglm(y ~ beta + gamma, binomial, weights = w, id = rater, independence), each vote a
# win of weight y and a loss of weight 1 - y: beta, gamma, then the intercept (shown first)
R_GRADED = [0.1255318316098, -0.3336321863159, 0.0980651437705]
R_GRADED_SANDWICH_SE = [0.152335723418, 0.169405268421, 0.197230216078]
R_GRADED_MODEL_SE = [0.320296373908, 0.342388466539, 0.239990536334]
# R: glm(y_a ~ beta + gamma, quasibinomial), every win a whole win, a tie half of one
R_IGNORED = [0.0578172039206, -0.5235196426530, 0.1839729443545]


def _votes() -> pd.DataFrame:
    return pd.read_csv(FIXTURE, keep_default_na=False).replace({"strength": {"": None}})


def test_graded_strength_is_the_fractional_outcome_fit_with_geepacks_sandwich() -> None:
    battles = count_battles(_votes(), SYSTEMS, slightly=0.75)
    model = design(battles, 0, "half")
    theta = fit(model, battles.totals())
    model_cov, robust_cov = covariances(battles, model, theta)
    assert theta == pytest.approx(R_GRADED, abs=1e-4)
    assert np.sqrt(np.diag(robust_cov)) == pytest.approx(R_GRADED_SANDWICH_SE, abs=1e-4)
    assert np.sqrt(np.diag(model_cov)) == pytest.approx(R_GRADED_MODEL_SE, abs=1e-4)


def test_by_default_a_win_is_a_win_whatever_its_strength() -> None:
    battles = count_battles(_votes(), SYSTEMS)
    theta = fit(design(battles, 0, "half"), battles.totals())
    assert theta == pytest.approx(R_IGNORED, abs=1e-4)


def test_a_slightly_share_of_one_is_a_whole_win_and_of_a_half_a_tie() -> None:
    votes = _votes()
    whole = count_battles(votes, SYSTEMS, slightly=1.0)
    assert (whole.totals() == count_battles(votes, SYSTEMS).totals()).all()
    half = count_battles(votes, SYSTEMS, slightly=0.5).totals()
    slight = (votes["strength"] == "slightly").sum()
    assert half[:, 2].sum() == (votes["winner"] == "tie").sum() + slight
    assert half[:, :2].sum() == (votes["strength"] == "much").sum()


def test_the_section_grades_strength_and_reports_the_votes_as_given() -> None:
    votes = votes_frame(_votes(), source="preference", question="preference.overall")
    graded = pairwise_section(votes, SYSTEMS, PairwiseOptions(strength="graded", rounds=50))
    ignored = pairwise_section(votes, SYSTEMS, PairwiseOptions(rounds=50))
    scores = graded.scores.set_index("system")
    assert scores.loc[["beta", "gamma"], "log_strength"].tolist() == pytest.approx(
        R_GRADED[:2], abs=1e-4
    )
    assert scores.loc[["beta", "gamma"], "se_sandwich"].tolist() == pytest.approx(
        R_GRADED_SANDWICH_SE[:2], abs=1e-4
    )
    as_given = ignored.scores.set_index("system")[["comparisons", "wins", "losses", "ties"]]
    assert scores[["comparisons", "wins", "losses", "ties"]].equals(as_given)
    assert int(scores["wins"].sum()) == int((votes["winner"] != "tie").sum())
    [row] = graded.counts.to_dict("records")
    assert row["model"] == "bradley_terry_half_ties_graded_strength"
    assert "'slightly' 0.75 of a win and 0.25 for the other side" in graded.methods["model"]
    assert "a win is a win" in ignored.methods["model"]


def test_graded_strength_with_davidsons_ties_is_refused() -> None:
    with pytest.raises(ValueError, match="ties: half"):
        PairwiseOptions(ties="davidson", strength="graded")
    with pytest.raises(ValueError, match=r"from 0\.5"):
        PairwiseOptions(strength="graded", slightly=0.4)
