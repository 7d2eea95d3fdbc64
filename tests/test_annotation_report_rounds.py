"""The report on a job's real rounds: the shipped xrec study's job through the store and the
planner (two annotators, a third where they disagree), then ``ozlab report``: agreement of
the first round, how often the third annotator was needed, and the final values."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bot.annotation.jobs import assign, prepare_job
from bot.cli import main
from bot.store.sqlite import open_store
from scenarios.loading import load_study
from tests.annotation_support import store_study
from tests.test_annotation_rounds import Q1, Q2, XREC, rate_all


async def _xrec_rounds(db: Path) -> set[str]:
    """Three exchanges; A-2 answers no to Q1 where the others say yes. The targets A-2 rated
    in the first round (the disagreements)."""
    bundle = load_study("xrec")
    job = bundle.jobs["xrec"]
    store = await open_store(db, lambda: 10.0)
    try:
        await store_study(store, "xrec", "xrec-recommend", XREC)
        await prepare_job(store, bundle, job)
        await store.add_annotators("xrec", [("A-1", "ann-1"), ("A-2", "ann-2"), ("A-3", "ann-3")])
        await assign(store, bundle, job, 10.0)
        state = await store.annotation_state("xrec")
        assert state is not None
        disagreeing = {a.target for a in state.assignments if a.annotator == "A-2"}
        for who, value in {"A-1": 1, "A-2": 0, "A-3": 1}.items():
            await rate_all(store, who, {Q1: value, Q2: 1})
        await assign(store, bundle, job, 11.0)
        for who in ("A-1", "A-2", "A-3"):
            await rate_all(store, who, {Q1: 1, Q2: 1})
        return disagreeing
    finally:
        await store.close()


async def test_the_report_on_an_xrec_job_with_a_third_annotator(tmp_path: Path) -> None:
    db = tmp_path / "xrec.sqlite"
    disagreeing = await _xrec_rounds(db)
    out = tmp_path / "report.json"
    assert main(["report", "--db", str(db), "--format", "json", "--out", str(out)]) == 0
    report = json.loads(out.read_text(encoding="utf-8"))
    annotations = report["annotations"]
    assert not annotations["notes"]  # every item described by the stored study
    by_item = {r["item"]: r for r in annotations["adjudication"]}
    assert (by_item[Q1]["n_targets"], by_item[Q1]["n_adjudicated"]) == (3, len(disagreeing))
    # The third annotator rates a whole target, Q2 too; the first two agreed there.
    assert (by_item[Q2]["n_disagreed"], by_item[Q2]["n_adjudicated"]) == (0, len(disagreeing))
    finals = [r for r in annotations["final_values"] if r["item"] == Q1]
    assert {r["value"] for r in finals} == {"1"}
    assert {r["target"] for r in finals if r["how"] == "third annotator"} == disagreeing
    assert {r["how"] for r in annotations["final_values"] if r["item"] == Q2} == {"agreed"}
    assert {r["system"] for r in finals} == {"shop-v1", "shop-v0"}
    q1 = {(r["statistic"], r["system"]): r for r in report["reliability"] if r["item"] == Q1}
    pooled = q1[("percent_agreement", None)]
    assert pooled["value"] == pytest.approx(1 - len(disagreeing) / 3)  # first round only
    assert pooled["n_targets"] == 3 and pooled["n_annotators"] == 3
    assert ("alpha_nominal", "shop-v1") in q1 and ("alpha_nominal", "shop-v0") in q1
    assert not any(s.startswith("ICC") for s, _ in q1)  # yes/no items get no ICC
    assert not any("with_judges" in r for r in report["reliability"])  # no judge rated
    md = tmp_path / "report.md"
    assert main(["report", "--db", str(db), "--format", "md", "--out", str(md)]) == 0
    assert "Third annotator asked" in md.read_text(encoding="utf-8")
    assert "Raters" not in md.read_text(encoding="utf-8")
