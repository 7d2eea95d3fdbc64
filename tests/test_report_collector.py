"""A report computes with the libraries' objects frozen out of Python's cycle collector:
each full collection walked pandas', scipy's and the study models' million objects again,
a tenth of a second of a small report each time, and a quarter of a second while they were
imported; at the end of ``ozlab report`` as a process, the interpreter's exit walked them
once more (0.4 s). A caller in the same process gets its collector back as it was."""

from __future__ import annotations

import gc
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from analytics.data.synthetic import write_synthetic_study
from analytics.report.writing import report
from bot.cli import main
from bot.core.errors import StudyDataError


@pytest.fixture(scope="module")
def small_db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    db = tmp_path_factory.mktemp("collector") / "small.sqlite"
    write_synthetic_study(db, sessions=16, responses_per_session=12, seed=3, systems=2)
    return db


@pytest.fixture
def collector() -> Iterator[None]:
    """A caller without frozen objects (the suite freezes what its collection made, a
    choice of its own that a report leaves alone), and the suite's collector back after."""
    enabled, frozen = gc.isenabled(), gc.get_freeze_count() > 0
    gc.unfreeze()
    yield
    gc.unfreeze()
    if enabled:
        gc.enable()
    if frozen:
        gc.freeze()


def _watch(monkeypatch: pytest.MonkeyPatch) -> list[tuple[bool, int]]:
    """The collector's state (on, frozen objects) when the first mixed model is fitted: the
    statistics, after the read. Once: counting the frozen objects walks them all (in a test
    process that has run hundreds of tests, millions: 18 s over a report's fits)."""
    seen: list[tuple[bool, int]] = []
    cholesky: Callable[..., Any] = np.linalg.cholesky

    def observed(*args: Any, **kwargs: Any) -> Any:
        if not seen:
            seen.append((gc.isenabled(), gc.get_freeze_count()))
        return cholesky(*args, **kwargs)

    monkeypatch.setattr(np.linalg, "cholesky", observed)
    return seen


def test_the_statistics_run_with_the_libraries_frozen_and_the_caller_gets_its_collector_back(
    small_db: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, collector: None
) -> None:
    gc.enable()
    seen = _watch(monkeypatch)
    assert report(small_db, outputs=[("json", tmp_path / "report.json")]) == 0
    assert seen, "the report fitted no mixed model: the study does not test what it should"
    # on, and everything the imports and the read made frozen (pandas alone: 100,000s)
    assert all(enabled and frozen > 100_000 for enabled, frozen in seen)
    assert gc.isenabled()
    assert gc.get_freeze_count() == 0


def test_a_caller_that_keeps_the_collector_off_finds_it_off_and_nothing_frozen(
    small_db: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, collector: None
) -> None:
    gc.disable()
    seen = _watch(monkeypatch)
    assert report(small_db, outputs=[("json", tmp_path / "report.json")]) == 0
    assert seen
    assert all(not enabled and frozen == 0 for enabled, frozen in seen)
    assert not gc.isenabled()
    assert gc.get_freeze_count() == 0


def test_a_caller_that_froze_objects_of_its_own_finds_them_frozen(
    small_db: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, collector: None
) -> None:
    gc.enable()
    gc.freeze()
    before = gc.get_freeze_count()
    seen = _watch(monkeypatch)
    assert report(small_db, outputs=[("json", tmp_path / "report.json")]) == 0
    assert seen
    # frozen objects are still freed when nothing refers to them: fewer, never more
    assert all(enabled and 0 < frozen <= before for enabled, frozen in seen)
    assert gc.isenabled()
    assert 0 < gc.get_freeze_count() <= before


def test_a_report_that_fails_gives_the_collector_back(
    small_db: Path, tmp_path: Path, collector: None
) -> None:
    gc.enable()
    with pytest.raises(StudyDataError):
        report(small_db, outputs=[("json", tmp_path / "report.json")], study="no-such-study")
    assert gc.isenabled()
    assert gc.get_freeze_count() == 0


def test_ozlab_as_its_own_process_ends_with_its_objects_frozen(collector: None) -> None:
    """Whatever the command: ``main()`` freezes before the process ends (``check`` here, a
    fraction of a report's time), and leaves a caller's process as it was."""
    study = Path(__file__).parents[1] / "scenarios" / "library" / "studies" / "arena.yaml"
    argv = ["ozlab", "check", str(study)]
    code = (
        "import gc, sys\n"
        "from bot.cli import main\n"
        f"sys.argv = {argv!r}\n"
        "status = main()\n"
        "print(status, gc.get_freeze_count())\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=300, check=True
    )
    status, frozen = done.stdout.split()[-2:]
    assert status == "0"
    assert int(frozen) > 10_000  # what the command imported: pydantic and the study models
    # in a caller's process (argv given) nothing stays frozen
    gc.enable()
    assert main(argv[1:]) == 0
    assert gc.get_freeze_count() == 0
