"""The report's figures drawn side by side in forked children are the bytes drawn one
after another here, in the order of the document, each told to the progress bar."""

from __future__ import annotations

import os
from pathlib import Path

from analytics.data.loading import load_study_data
from analytics.data.synthetic import write_synthetic_study
from analytics.report.document import Figure
from analytics.report.drawing import pictures, side_by_side
from analytics.report.figures import charts
from analytics.report.numbers import build_report
from analytics.report.plots import encode
from analytics.report.present import document


def test_figures_drawn_side_by_side_are_the_bytes_drawn_in_turn(tmp_path: Path) -> None:
    db = tmp_path / "small.sqlite"
    write_synthetic_study(db, sessions=8, responses_per_session=20, seed=5, systems=2)
    report = build_report(load_study_data(db))
    blocks = document(report)
    figures = [b for b in blocks if isinstance(b, Figure)]
    assert len(figures) >= 3
    told: list[str] = []
    drawn = pictures(report, blocks, ("svg", "png"), told.append)
    assert list(drawn) == figures and len(told) == len(figures)
    for block in figures:
        alone = [
            (c.name, c.caption, {f: encode(c.figure, f) for f in ("svg", "png")})
            for c in charts(report, block)
        ]
        assert drawn[block] == alone, block.kind


def test_work_is_done_in_other_processes_on_several_cores_and_given_back_in_order() -> None:
    here = os.getpid()
    done = list(side_by_side([lambda i=i: (i, os.getpid()) for i in range(4)]))
    assert [i for i, _ in done] == [0, 1, 2, 3]
    elsewhere = here not in {pid for _, pid in done}
    assert elsewhere == (len(os.sched_getaffinity(0)) > 1)


def test_a_child_that_dies_leaves_the_work_to_be_done_here() -> None:
    here = os.getpid()

    def drawing() -> int:
        if os.getpid() != here:
            os._exit(1)  # a child killed (out of memory, say)
        return here

    assert list(side_by_side([drawing, drawing, drawing])) == [here] * 3
