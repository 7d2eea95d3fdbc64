"""A report computes on one BLAS thread: its matrices are small (a mixed model's are the
size of the participants), and BLAS's own threads, which wait for work spinning, made a
small study's report ten times slower on a machine busy with other work."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from threadpoolctl import threadpool_info, threadpool_limits

from analytics.data.synthetic import write_synthetic_study
from analytics.report.writing import report


def _blas_threads() -> set[int]:
    return {pool["num_threads"] for pool in threadpool_info() if pool["user_api"] == "blas"}


def test_the_statistics_run_on_one_blas_thread_and_the_caller_keeps_its_own(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    db = tmp_path / "small.sqlite"
    write_synthetic_study(db, sessions=16, responses_per_session=12, seed=3, systems=2)
    seen: list[set[int]] = []
    cholesky: Callable[..., Any] = np.linalg.cholesky

    def observed(*args: Any, **kwargs: Any) -> Any:
        if len(seen) < 3:
            seen.append(_blas_threads())
        return cholesky(*args, **kwargs)

    monkeypatch.setattr(np.linalg, "cholesky", observed)
    # as a machine without OPENBLAS_NUM_THREADS has them (the test run sets it to 1)
    with threadpool_limits(limits=2, user_api="blas"):
        assert report(db, outputs=[("json", tmp_path / "report.json")]) == 0
        assert _blas_threads() == {2}
    assert seen, "the report fitted no mixed model: the study does not test what it should"
    assert all(threads == {1} for threads in seen)
