"""Every effect of the systems compared reads the way the table's columns do: the study's
first system over its second, whatever their names sort to, and says so in its row (every
format) and in the JSON (``effect_direction``). A study that lists "beta" before "alpha"
shows beta's column first, and beta, rated higher, gets a positive rank-biserial r and an
odds ratio of "Yes" above 1."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pandas as pd
import pytest

from analytics.data.loading import load_study_data
from analytics.report.document import Table
from analytics.report.numbers import Report, build_report
from analytics.report.present import document
from analytics.statistics.proportions import compare_proportions
from analytics.statistics.questionnaires import compare_systems
from bot.cli import analytics_main as main
from tests.report_study import write_report_study

LOW, HIGH = [1.0, 2, 2, 3, 1, 2], [4.0, 5, 4, 3, 5, 4]


def _long(groups: dict[str, list[float]], paired: bool = False) -> pd.DataFrame:
    rows = [
        {"participant_id": f"p{i}" if paired else f"{g}{i}", "system_id": g, "score": v}
        for g, values in groups.items()
        for i, v in enumerate(values)
    ]
    return pd.DataFrame(rows)


@pytest.mark.parametrize("paired", [False, True])
def test_a_rank_effect_follows_the_studys_order_of_systems(paired: bool) -> None:
    scores = _long({"zeta": HIGH, "alpha": LOW}, paired)
    (row,) = compare_systems(scores, systems=("zeta", "alpha")).to_dict("records")
    assert row["groups"] == "zeta vs alpha" and row["effect_direction"] == "zeta over alpha"
    assert row["effect"] > 0  # zeta, listed first, is rated higher
    (sorted_row,) = compare_systems(scores).to_dict("records")  # no order: names sorted
    assert sorted_row["groups"] == "alpha vs zeta" and sorted_row["effect"] == pytest.approx(
        -row["effect"]
    )


def test_three_systems_pair_in_the_studys_order() -> None:
    scores = _long({"zeta": HIGH, "alpha": LOW, "mid": [3.0, 3, 2, 4, 3, 3]})
    table = compare_systems(scores, systems=("zeta", "mid", "alpha"))
    assert list(table["groups"]) == ["zeta, mid, alpha", "zeta vs mid", "zeta vs alpha",
                                     "mid vs alpha"]  # fmt: skip
    assert pd.isna(table["effect_direction"].iloc[0])  # ε² has no direction
    assert list(table["effect_direction"].iloc[1:]) == ["zeta over mid", "zeta over alpha",
                                                        "mid over alpha"]  # fmt: skip
    assert (table["effect"].iloc[1:] > 0).all()


@pytest.mark.parametrize("paired", [False, True])
def test_an_odds_ratio_follows_the_studys_order_of_systems(paired: bool) -> None:
    yes = {"zeta": [1, 1, 1, 1, 1, 0, 1], "alpha": [0, 0, 1, 0, 0, 0, 0]}
    rows = [
        {"participant_id": f"p{i}" if paired else f"{g}{i}", "system_id": g, "answer": v}
        for g, values in yes.items()
        for i, v in enumerate(values)
    ]
    table = compare_proportions(
        pd.DataFrame(rows), systems=("zeta", "alpha"), order=[1, 0], labels={1: "Yes", 0: "No"}
    )
    (row,) = table.to_dict("records")
    assert row["groups"] == "zeta vs alpha" and row["effect_direction"] == "zeta over alpha"
    assert row["effect"] > 1  # "Yes" more often with zeta


@pytest.fixture(scope="module")
def study_db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    db = tmp_path_factory.mktemp("direction") / "study.sqlite"
    asyncio.run(write_report_study(db, ("beta", "alpha")))  # beta first, rated higher
    return db


@pytest.fixture(scope="module")
def report(study_db: Path) -> Report:
    return build_report(load_study_data(study_db))


@pytest.mark.slow
def test_the_headline_reads_the_way_its_columns_do(report: Report) -> None:
    glance = next(
        b for b in document(report) if isinstance(b, Table) and "at a glance" in (b.caption or "")
    )
    assert glance.columns == ("Measure", "beta", "alpha", "Test", "Result")
    rows = {row[0]: row for row in glance.rows}
    trust = rows["trust (post, construct)"]
    assert float(trust[1].split()[0]) > float(trust[2].split()[0])  # beta's mean is higher
    assert "rank-biserial r = 0." in trust[4] and "(beta over alpha)" in trust[4]
    again = rows["Would you use it again?"]
    # R: fisher.test(matrix(c(15, 3, 2, 10), 2)) gives the odds ratio 21.30531 (1 / 0.04693661)
    assert "odds ratio of Yes = 21.3 (beta over alpha)" in again[4]


@pytest.mark.slow
def test_every_format_and_the_json_say_which_way_round(study_db: Path, tmp_path: Path) -> None:
    suffixes = ("txt", "md", "html", "tex", "json")
    outs = [a for suffix in suffixes for a in ("--out", str(tmp_path / f"report.{suffix}"))]
    assert main(["report", "--db", str(study_db), *outs]) == 0
    for suffix in suffixes[:-1]:
        out = tmp_path / f"report.{suffix}"
        files = [out, *tmp_path.glob("report-tables/*.tex")] if suffix == "tex" else [out]
        text = " ".join(" ".join(f.read_text(encoding="utf-8").split()) for f in files)
        assert "beta over alpha" in text, suffix
        assert "alpha over beta" not in text, suffix
    out = tmp_path / "report.json"
    rows = json.loads(out.read_text(encoding="utf-8"))["comparisons"]["table"]
    trust = next(r for r in rows if r["measure"] == "trust")
    assert (trust["groups"], trust["effect_direction"]) == ("beta vs alpha", "beta over alpha")
    assert trust["effect"] > 0
    again = next(r for r in rows if r["measure"] == "post.again")
    assert again["effect"] == pytest.approx(1 / 0.04693661, rel=1e-5)
