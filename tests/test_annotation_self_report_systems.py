"""Spearman's rho between the annotators' overall ratings and the participants' self-reports,
per system as well as pooled: known answers from scipy on the same pairs, the
Fisher-z interval, the "too few conversations" rule, and the rows in every report format."""

from __future__ import annotations

import html
import itertools
import json
import math
from dataclasses import replace
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from analytics.annotations.ratings import SELF_REPORT_COLUMNS, Annotations, ItemScale, analyse
from analytics.data.loading import load_study_data
from analytics.data.synthetic import write_synthetic_study
from analytics.report.numbers import build_report
from analytics.statistics.correlation import (
    BONETT_WRIGHT,
    EDGEWORTH,
    EXACT_PERMUTATIONS,
    T_APPROXIMATION,
)
from tests.annotation_tables import ratings_frame
from tests.test_analytics_annotations_report import _formats, hri_cues_ratings

pytestmark = pytest.mark.slow  # whole commands, reports or renderings: make test, not make check

SCALE = {("judge", "judge.score"): ItemScale(
    "judge", "judge.score", "scale", tuple("12345"), (1.0, 2.0, 3.0, 4.0, 5.0), "ordinal"
)}  # fmt: skip
SESSIONS = [f"s{i}" for i in range(1, 12)]
SYSTEMS = ["alpha"] * 7 + ["beta"] * 4
RATINGS = {"a": [1, 2, 3, 4, 5, 2, 4, 3, 5, 1, 2], "b": [2, 2, 3, 5, 4, 1, 4, 2, 4, 2, 2]}
REPORTED = [1.5, 2.0, 3.5, 4.5, 4.0, 1.0, 3.0, 3.0, 2.0, 2.5, 4.0]


def _section(systems: list[str], ratings: dict[str, list[int]] = RATINGS) -> Annotations:
    frame = ratings_frame(ratings, targets=SESSIONS, systems=systems)
    frame["session_id"] = frame["target"]
    scores = pd.DataFrame(
        {"participant_id": [f"p{i}" for i in range(len(SESSIONS))], "session_id": SESSIONS,
         "questionnaire_id": "self", "construct": "enjoyment", "moment": "post_task",
         "score": REPORTED}
    )  # fmt: skip
    found = analyse(frame, SCALE, scores=scores, system_order=["beta", "alpha"])
    assert found is not None
    return found


def _expected(rows: slice) -> tuple[float, float, float, float]:
    """scipy's rho; its p (t with n − 2 df) when there are ties, else twice the tail of S
    over every ordering, as R's cor.test; the Bonett–Wright 95% interval
    (tanh(atanh(rho) ± 1.959964 · √((1 + rho²/2) / (n − 3))))."""
    mean = ((np.array(RATINGS["a"]) + np.array(RATINGS["b"])) / 2)[rows]
    reported = np.array(REPORTED)[rows]
    rho, p = stats.spearmanr(mean, reported)
    n = len(mean)
    if len(set(mean)) == n and len(set(reported)) == n:
        orders = np.array(list(itertools.permutations(range(n))))
        s = ((orders - np.arange(n)) ** 2).sum(axis=1)
        observed = ((stats.rankdata(mean) - stats.rankdata(reported)) ** 2).sum()
        tail = s >= observed if observed > (n**3 - n) / 6 else s <= observed
        p = min(1.0, 2 * np.count_nonzero(tail) / len(s))
    half = stats.norm.ppf(0.975) * math.sqrt((1 + rho**2 / 2) / (n - 3))
    return (
        float(rho),
        float(p),
        math.tanh(math.atanh(rho) - half),
        math.tanh(math.atanh(rho) + half),
    )


def test_rho_pooled_and_per_system_with_known_answers() -> None:
    table = _section(SYSTEMS).self_report
    assert list(table.columns) == SELF_REPORT_COLUMNS
    assert [None if pd.isna(s) else s for s in table["system"]] == [None, "beta", "alpha"]
    rows = {None if pd.isna(r["system"]) else r["system"]: r for r in table.to_dict("records")}
    for system, part in ((None, slice(None)), ("alpha", slice(0, 7)), ("beta", slice(7, 11))):
        row = rows[system]
        rho, p, low, high = _expected(part)
        assert row["n"] == len(SESSIONS[part])
        assert (row["rho"], row["p"]) == (pytest.approx(rho, abs=1e-12), pytest.approx(p))
        assert (row["ci_low"], row["ci_high"]) == (pytest.approx(low), pytest.approx(high))
        assert row["ci_method"] == BONETT_WRIGHT
        assert row["note"] is None
    assert rows["alpha"]["rho"] != pytest.approx(rows[None]["rho"])  # not the pooled figure
    # beta's four conversations have no ties: every ordering counted, as R's cor.test
    assert rows["beta"]["p_method"] == EXACT_PERMUTATIONS
    assert rows[None]["p_method"] == rows["alpha"]["p_method"] == T_APPROXIMATION


def test_a_system_with_too_few_conversations_gets_the_rule_not_a_number() -> None:
    systems = ["alpha"] * 8 + ["beta"] * 3
    rows = _section(systems).self_report.set_index("system", drop=False)
    beta = rows.loc["beta"]
    assert math.isnan(beta["rho"]) and beta["n"] == 3
    assert beta["note"] == "3 conversations with both; at least 4 needed"
    assert not math.isnan(rows.loc["alpha", "rho"])


def test_one_system_gives_only_the_pooled_row() -> None:
    (row,) = _section(["alpha"] * len(SESSIONS)).self_report.to_dict("records")
    assert row["system"] is None and row["n"] == len(SESSIONS)


def test_every_report_format_shows_the_per_system_rows(tmp_path: Path) -> None:
    db = tmp_path / "study.sqlite"
    write_synthetic_study(db, sessions=24, responses_per_session=12, seed=5, systems=2)
    data = load_study_data(db)
    formats = _formats(build_report(replace(data, annotations=hri_cues_ratings(data))))
    rows = json.loads(formats["json"])["annotations"]["self_report"]
    pooled = [r for r in rows if r["system"] is None]
    assert pooled and all(r["n"] == 24 for r in pooled)
    per_system = [r for r in rows if r["system"] is not None]
    assert {r["system"] for r in per_system} == {"system-a", "system-b"}
    assert all(r["n"] == 12 for r in per_system) and len(per_system) == 2 * len(pooled)
    tested = [r for r in rows if r["rho"] is not None]
    assert tested and all(r["ci_method"] == BONETT_WRIGHT for r in tested)
    assert all(r["p_method"] in (EXACT_PERMUTATIONS, EDGEWORTH, T_APPROXIMATION) for r in tested)
    for fmt in ("md", "terminal", "html"):
        text = html.unescape(formats[fmt])
        start = text.index("Spearman's ρ (95% CI)")
        header, table = text[start - 200 : start], text[start : start + 2500]
        assert "System" in header, fmt
        for system in ("all", "system-a", "system-b"):
            assert system in table, (fmt, system)
        assert "(construct)" in table, fmt
        assert "Bonett–Wright" in " ".join(text.split()), fmt
