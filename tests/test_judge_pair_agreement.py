"""A judge of ACUTE pairs beside people: its agreement with people's majority and Cohen's
kappa on the pairs both decided, counted by hand."""

from __future__ import annotations

import pandas as pd
import pytest

from analytics.annotations.judges import judge_findings
from analytics.annotations.pair_agreement import pair_agreement
from analytics.report.present_judges import JudgesSection, judges_json, judges_lines
from tests.test_judge_win_rates import _vote


def planted() -> pd.DataFrame:
    rows = []
    # pairs 0–9: the judge's verdict (v1 won on 0–5, v0 on 6–9), consistent in both orders
    judge_v1 = [True] * 6 + [False] * 4
    for t, v1_won in enumerate(judge_v1):
        a = "v1" if t % 2 else "v0"
        winner = "a" if (a == "v1") == v1_won else "b"
        rows.append(_vote(t, "model:judge", "model", a, winner, "model_verdict", "ab"))
        rows.append(_vote(t, "model:judge", "model", a, winner, "swapped_repeat", "ba"))
    # pair 10: the verdict flipped with the order
    rows.append(_vote(10, "model:judge", "model", "v1", "a", "inconsistent", "ab"))
    rows.append(_vote(10, "model:judge", "model", "v1", "b", "inconsistent", "ba"))
    # people: majority v1 on 0–3 and 6, v0 on 4–5 and 7–9 (two of three); pair 9 split
    people_v1 = {0: 3, 1: 2, 2: 2, 3: 3, 4: 1, 5: 0, 6: 2, 7: 1, 8: 0, 10: 2}
    for t, v1_votes in people_v1.items():
        for p in range(3):
            says_v1 = p < v1_votes
            rows.append(_vote(t, f"A-{p}", "annotator", "v1", "a" if says_v1 else "b", None))
    for p, winner in enumerate(["a", "b"]):
        rows.append(_vote(9, f"A-{p}", "annotator", "v1", winner, None))
    frame = pd.DataFrame(rows)
    return frame.assign(session=frame["vote_id"].str.split(":").str[1])  # the pair's


def test_agreement_with_peoples_majority_and_kappa_by_hand() -> None:
    found = pair_agreement(planted())
    [row] = found.to_dict("records")
    assert (row["judge"], row["question"], row["job"]) == (
        "model:judge",
        "engagingness",
        "acute-job",
    )
    # shared: 0–8 (9 split, 10 flipped); agreed: 0–3 (v1), 7–8 (v0) = 6 of 9
    assert (row["pairs"], row["agreed"], row["flipped"], row["split"]) == (9, 6, 1, 1)
    assert row["agreement"] == pytest.approx(6 / 9)
    # kappa: judge v1 on 6 of 9, people v1 on 5 of 9; observed 6/9, chance
    # (6/9)(5/9) + (3/9)(4/9) = 42/81; kappa = (6/9 − 42/81) / (1 − 42/81) = 12/39
    assert row["kappa"] == pytest.approx(12 / 39)
    assert row["kappa_low"] <= row["kappa"] <= row["kappa_high"]
    assert row["agreement_low"] < 6 / 9 < row["agreement_high"]


def test_the_report_says_it_beside_the_judges_other_pair_findings() -> None:
    votes = planted()
    ratings = pd.DataFrame(
        columns=["job", "level", "instrument_id", "item_id", "round", "origin", "annotator",
                 "target", "value"]
    )  # fmt: skip
    findings = judge_findings(ratings, pd.DataFrame(), {}, votes=votes)
    assert findings is not None
    section = JudgesSection(findings, pd.DataFrame(), {}, pd.DataFrame())
    lines = judges_lines(section)
    assert any(
        "chose as people's majority on 6 of 9 pairs, 67%" in line and "kappa 0.31" in line
        for line in lines
    )
    assert judges_json(section)["pair_agreement"][0]["pairs"] == 9
