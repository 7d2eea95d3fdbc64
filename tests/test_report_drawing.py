"""The report's figures drawn side by side in forked children, or by an easel set up
while the statistics are computed, are the bytes drawn one after another here, in the
order of the document, each told to the progress bar."""

from __future__ import annotations

import gc
import multiprocessing
import os
import signal
import threading
from typing import Any

import pytest

from analytics.data.loading import load_study_data
from analytics.data.synthetic import write_synthetic_study
from analytics.report import drawing
from analytics.report.document import Block, Figure
from analytics.report.drawing import Easel, pictures, side_by_side
from analytics.report.figures import charts
from analytics.report.numbers import Report, build_report
from analytics.report.plots import encode
from analytics.report.present import document

Drawn = dict[Figure, list[tuple[str, str, dict[str, bytes]]]]


@pytest.fixture(scope="module")
def small(tmp_path_factory: pytest.TempPathFactory) -> tuple[Report, list[Block]]:
    db = tmp_path_factory.mktemp("drawing") / "small.sqlite"
    write_synthetic_study(db, sessions=8, responses_per_session=20, seed=5, systems=2)
    report = build_report(load_study_data(db))
    return report, document(report)


@pytest.fixture(scope="module")
def drawn_here(small: tuple[Report, list[Block]]) -> Drawn:
    """Each figure drawn in turn in this process, in SVG and PDF."""
    report, blocks = small
    figures = dict.fromkeys(b for b in blocks if isinstance(b, Figure))
    return {
        block: [
            (c.name, c.caption, {f: encode(c.figure, f) for f in ("svg", "pdf")})
            for c in charts(report, block)
        ]
        for block in figures
    }


def _easels() -> list[multiprocessing.process.BaseProcess]:
    return [p for p in multiprocessing.active_children() if p.name == "easel"]


def test_figures_drawn_by_an_easel_are_the_bytes_drawn_in_turn_and_it_goes_after(
    small: tuple[Report, list[Block]], drawn_here: Drawn, monkeypatch: pytest.MonkeyPatch
) -> None:
    report, blocks = small
    told: list[str] = []
    with Easel(("svg", "pdf")) as easel:
        several = len(os.sched_getaffinity(0)) > 1
        assert len(_easels()) == several
        drew_here: list[object] = []  # this process's drawing, patched once the easel forked

        def here(*args: Any) -> dict[Figure, list[tuple[str, str, dict[str, bytes]]]]:
            drew_here.append(args)
            return pictures(*args)

        monkeypatch.setattr(drawing, "pictures", here)
        drawn = easel.pictures(report, blocks, ("svg", "pdf"), told.append)
        assert not drew_here if several else drew_here  # by the easel, where there is one
        assert drawn == drawn_here and list(drawn) == list(drawn_here)
        assert len(told) == len(drawn_here)
    assert not _easels()


def test_an_easel_gone_leaves_the_figures_to_be_drawn_here(
    small: tuple[Report, list[Block]], drawn_here: Drawn
) -> None:
    report, blocks = small
    first = next(b for b in blocks if isinstance(b, Figure))  # drawn here: one is enough
    with Easel(("svg", "pdf")) as easel:
        for process in _easels():  # killed (out of memory, say)
            assert process.pid is not None
            os.kill(process.pid, signal.SIGKILL)
            process.join()
        assert easel.pictures(report, [first], ("svg", "pdf")) == {first: drawn_here[first]}


@pytest.mark.timeout(60, func_only=True)
def test_an_easel_stuck_before_it_is_ready_leaves_the_figures_to_be_drawn_here(
    small: tuple[Report, list[Block]], drawn_here: Drawn, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An easel that never gets ready (forked from a process whose other threads held a
    lock, it could wait for it for ever; here its setting up never ends) is not waited for
    past its time."""
    report, blocks = small
    first = next(b for b in blocks if isinstance(b, Figure))
    monkeypatch.setattr(drawing, "_loaded", lambda formats: threading.Event().wait())
    with Easel(("svg", "pdf"), ready_within=0.5) as easel:
        stuck = _easels()
        assert easel.pictures(report, [first], ("svg", "pdf")) == {first: drawn_here[first]}
        assert not any(process.is_alive() for process in stuck)


def test_an_easel_stopped_by_ctrl_c_goes_quietly(capfd: pytest.CaptureFixture[str]) -> None:
    """Ctrl-C reaches every process of the terminal's: the report's says it stopped. The
    easel goes whatever the process it was forked from does with Ctrl-C (here: nothing, as
    an asyncio loop's handler, which a test before this one may have left)."""
    kept = signal.signal(signal.SIGINT, lambda *_: None)
    try:
        easel = Easel(("pdf",))
    finally:
        signal.signal(signal.SIGINT, kept)
    with easel:
        for process in _easels():
            assert process.pid is not None and easel.ready(60)  # waiting for its report
            os.kill(process.pid, signal.SIGINT)
            process.join(timeout=60)
            assert process.exitcode == 0
    assert "Traceback" not in capfd.readouterr().err


def test_an_easel_not_given_a_report_goes_when_closed() -> None:
    with Easel(("pdf",)):
        pass
    assert not _easels()


def test_figures_drawn_side_by_side_are_the_bytes_drawn_in_turn(
    small: tuple[Report, list[Block]], drawn_here: Drawn
) -> None:
    report, blocks = small
    figures = [b for b in blocks if isinstance(b, Figure)]
    assert len(figures) >= 3
    told: list[str] = []
    drawn = pictures(report, blocks, ("svg", "pdf"), told.append)
    assert list(drawn) == figures and len(told) == len(figures)
    for block in figures:
        assert drawn[block] == drawn_here[block], block.kind


def test_work_is_done_in_other_processes_on_several_cores_and_given_back_in_order() -> None:
    here = os.getpid()
    done = list(side_by_side([lambda i=i: (i, os.getpid()) for i in range(4)]))
    assert [i for i, _ in done] == [0, 1, 2, 3]
    elsewhere = here not in {pid for _, pid in done}
    assert elsewhere == (len(os.sched_getaffinity(0)) > 1)


def test_children_never_collect_the_objects_they_were_forked_with() -> None:
    """Scanning the report's and the libraries' objects took a drawing child 0.13 s."""
    here = gc.get_freeze_count()
    counts = list(side_by_side([gc.get_freeze_count for _ in range(2)]))
    if len(os.sched_getaffinity(0)) > 1:
        tracked = len(gc.get_objects())
        assert all(frozen > here + tracked // 2 for frozen in counts), (counts, here, tracked)
    assert gc.get_freeze_count() == here  # this process's collected as ever


def test_a_child_that_dies_leaves_the_work_to_be_done_here() -> None:
    here = os.getpid()

    def drawing() -> int:
        if os.getpid() != here:
            os._exit(1)  # a child killed (out of memory, say)
        return here

    assert list(side_by_side([drawing, drawing, drawing])) == [here] * 3
