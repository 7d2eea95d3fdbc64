"""The terminal report at the width it is given, as a researcher reads it: at 80 and 120
columns no line is longer and no cell loses a word ("67% (0 of 24 longer" cut at the edge);
the stress chart draws a bar, with its n, for every system and phenomenon, the legend above
the bars, and "none applied" where a system had no applicable test."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from rich.cells import cell_len

from analytics.data.selecting import load_study
from analytics.data.synthetic import write_synthetic_study
from analytics.report.document import Table
from analytics.report.numbers import build_report
from analytics.report.present import document
from analytics.report.stress import stress_chart, stress_section
from bot.core.phenomena import StressType
from bot.core.stress import Perturbation, Source
from bot.store.stress_records import (
    Judge,
    Judgement,
    Replay,
    ReplyTaken,
    Review,
    StressResult,
    StressTest,
    Verdict,
)

pytestmark = pytest.mark.slow  # whole commands: make test, not make check

OZLAB = str(Path(sys.executable).with_name("ozlab"))


@pytest.fixture(scope="module")
def study_db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Three systems, expected durations, a comparison table of long sentences."""
    db = tmp_path_factory.mktemp("wide") / "study.sqlite"
    write_synthetic_study(db, sessions=160, responses_per_session=40, seed=3, systems=3)
    return db


@pytest.fixture(scope="module")
def tables(study_db: Path) -> list[Table]:
    """The report's tables, built once: each width reads them."""
    report = build_report(load_study(study_db))
    return [b for b in document(report, limit=15) if isinstance(b, Table)]


@pytest.mark.parametrize("columns", [80, 120])
def test_no_line_is_wider_than_the_terminal_and_no_cell_loses_a_word(
    study_db: Path, tables: list[Table], columns: int
) -> None:
    environment = os.environ | {"COLUMNS": str(columns)}
    done = subprocess.run(
        [OZLAB, "report", "--db", str(study_db)],
        capture_output=True,
        text=True,
        env=environment,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert max(cell_len(line) for line in lines) <= columns
    assert max(cell_len(line) for line in lines) > columns - 10  # the width is used
    shown = set(done.stdout.split())
    lost = {
        word for table in tables for row in table.rows for cell in row for word in cell.split()
    } - shown
    assert not lost
    longer = [w for t in tables for row in t.rows for w in row if w.endswith("longer)")]
    assert longer  # the cell the issue saw cut is there, each word of it shown


def _result(n: int, system: str, kind: StressType, verdict: Verdict, applicable: bool = True):
    p = Perturbation(f"s-{n}", 1, kind, "adventure games", "advneture games", Source.GENERATED)
    replay = Replay(n, system, 0.0, 1.0, ReplyTaken(("a",)), ReplyTaken(("b",)), applicable)
    return StressResult(
        StressTest(n, p, Review.ACCEPTED), replay, (Judgement(n, system, Judge.HUMAN, verdict),)
    )


def test_the_stress_chart_shows_every_bar_with_its_n_and_none_applied() -> None:
    results = [
        _result(1, "shop-v1", StressType.ST_2, Verdict.PASS),
        _result(2, "shop-v1", StressType.ST_2, Verdict.FAIL),
        _result(3, "shop-v1", StressType.ST_2, Verdict.PASS),
        _result(4, "shop-v1", StressType.ST_9, Verdict.PASS),
        _result(1, "shop-v0", StressType.ST_2, Verdict.PASS, applicable=False),
        _result(4, "shop-v0", StressType.ST_9, Verdict.PASS, applicable=False),
    ]
    section = stress_section(results)
    assert section is not None
    chart = stress_chart(section, ["shop-v1", "shop-v0"], "Pass rates")
    assert chart is not None
    figure = chart.figure
    (axes,) = figure.axes
    texts = [t.get_text() for t in axes.texts]
    assert sorted(t for t in texts if t.startswith("n = ")) == ["n = 1", "n = 3"]
    assert texts.count("shop-v0: none applied") == 2  # nothing applied: kept, and said so
    (legend,) = figure.legends
    assert [t.get_text() for t in legend.get_texts()] == ["shop-v1", "shop-v0"]
    figure.draw_without_rendering()  # lays it out as it is saved
    above = legend.get_window_extent()
    inside = axes.get_window_extent()
    assert above.y0 >= inside.y1  # the legend is above the bars, not on them
