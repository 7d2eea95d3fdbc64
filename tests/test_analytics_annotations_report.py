"""The report's annotation section: in every format, the same bytes on every run, keyed by
the documented JSON names, and absent (at no cost) for a study without annotations."""

from __future__ import annotations

import io
import json
from dataclasses import replace
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from analytics.data.loading import ANNOTATION_COLUMNS, StudyData, load_study_data
from analytics.data.selecting import select_study
from analytics.data.synthetic import write_synthetic_study
from analytics.report.document import Figure
from analytics.report.figures import write_report_figures
from analytics.report.numbers import Report, build_report
from analytics.report.present import document
from analytics.report.render_html import render_html
from analytics.report.render_json import render_json
from analytics.report.render_md import render_markdown
from analytics.report.render_terminal import render_terminal
from analytics.statistics.quality import exclude_flagged
from scenarios.loading import load_study

pytestmark = pytest.mark.slow  # whole commands, reports or renderings: make test, not make check

RELIABILITY_KEYS = {
    "job", "item", "level", "system", "n_targets", "n_annotators", "statistic", "value",
    "ci_low", "ci_high",
}  # fmt: skip


@pytest.fixture(scope="module")
def study(tmp_path_factory: pytest.TempPathFactory) -> StudyData:
    db = tmp_path_factory.mktemp("annotated") / "study.sqlite"
    write_synthetic_study(db, sessions=24, responses_per_session=12, seed=5, systems=2)
    return load_study_data(db)


def hri_cues_ratings(data: StudyData, turns: int = 5) -> pd.DataFrame:
    """Three annotators rate every exchange of each session and the session overall (the
    hri-cues job); a1 is more positive than the others, as A1 was in the paper."""
    rng = np.random.default_rng(7)
    rows = []
    sessions = data.sessions.sort_values("session_id")
    for s in sessions.itertuples():
        base = rng.integers(2, 5)
        for turn in [*range(1, turns + 1), None]:
            truth = int(np.clip(base + rng.integers(-1, 2), 1, 5))
            for annotator in ("a1", "a2", "a3"):
                value = truth + (1 if annotator == "a1" and rng.random() < 0.6 else 0)
                value += int(rng.random() < 0.15) * (1 if annotator == "a3" else 0)
                level = "session" if turn is None else "exchange"
                rows.append(
                    {
                        "job": "hri-cues",
                        "level": level,
                        "target": s.session_id if turn is None else f"{s.session_id}#{turn}",
                        "session_id": s.session_id,
                        "turn": turn,
                        "system": s.system_id,
                        "scenario": s.scenario_id,
                        "annotator": annotator,
                        "instrument_id": "hri-cues" if turn else "hri-cues-overall",
                        "item_id": "hri-cues.exchange" if turn else "hri-cues-overall.overall",
                        "value": str(min(5, value)),
                        "round": "first",
                        "origin": "telegram",
                        "recorded_at": f"2026-03-01T10:{len(rows) // 60:02d}:{len(rows) % 60:02d}Z",
                    }
                )
    return pd.DataFrame(rows, columns=ANNOTATION_COLUMNS)


def _formats(report: Report) -> dict[str, str]:
    blocks = document(report, source="study.sqlite")
    terminal = io.StringIO()
    render_terminal(document(report, limit=15, source="study.sqlite"), file=terminal)
    return {
        "json": render_json(report, source="study.sqlite"),
        "md": render_markdown(blocks),
        "html": render_html(report, blocks),
        "terminal": terminal.getvalue(),
    }


def test_the_section_in_every_format_and_the_same_bytes_twice(
    study: StudyData, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "1767225600")
    annotated = replace(study, annotations=hri_cues_ratings(study))
    report = build_report(annotated)
    first = _formats(report)
    second = _formats(build_report(annotated))
    assert first == second
    for fmt in ("md", "html", "terminal"):
        assert "Annotations" in first[fmt], fmt
        assert "ICC(2,k)" in first[fmt] and "Krippendorff" in first[fmt], fmt
        assert "Left out" in first[fmt], fmt
    assert 'id="trajectories-hri-cues"' in first["html"]
    [figure] = [b for b in document(report) if isinstance(b, Figure) and b.kind == "trajectories"]
    assert figure.caption.startswith("hri-cues: ")  # no bundle names the job: its id
    titled = replace(annotated, bundles={**study.bundles, "hri-cues": load_study("hri-cues")})
    [figure] = [
        b
        for b in document(build_report(titled))
        if isinstance(b, Figure) and b.kind == "trajectories"
    ]
    assert figure.caption.startswith("HRI CUES: rate the user's enjoyment")  # its title
    assert "<svg" not in first["md"]
    document_ = json.loads(first["json"])
    rows = document_["reliability"]
    assert rows and all(set(r) >= RELIABILITY_KEYS for r in rows)
    systems = {r["system"] for r in rows}
    assert None in systems and len(systems) == 3  # pooled and each of two systems
    levels = {(r["item"], r["level"]) for r in rows}
    assert levels == {("hri-cues.exchange", "exchange"), ("hri-cues-overall.overall", "session")}
    icc2k = [r for r in rows if r["statistic"] == "ICC2k" and r["system"] is None]
    assert len(icc2k) == 2 and all(r["df1"] and r["f"] > 1 for r in icc2k)
    reported = [r for r in rows if r["reported"]]
    assert {r["statistic"] for r in reported} == {"alpha_ordinal"}
    annotations = document_["annotations"]
    loo = annotations["leave_one_out"]
    assert {r["left_out"] for r in loo} == {"a1", "a2", "a3"}
    pooled = [r for r in loo if r["system"] is None and r["level"] == "exchange"]
    icc = {r["left_out"]: r["value"] for r in pooled if r["statistic"] == "ICC2"}
    assert max(icc, key=icc.__getitem__) == "a1"  # leaving the divergent one out helps most
    means = {r["annotator"]: r["mean"] for r in annotations["annotators"]
             if r["level"] == "exchange"}  # fmt: skip
    assert means["a1"] > means["a2"]
    assert len(annotations["final_values"]) == len(study.sessions) * 6
    assert annotations["trajectories"]
    by_system = [r for r in annotations["final_by_system"] if r["level"] == "session"]
    assert {r["system"] for r in by_system} == systems
    assert sum(d["count"] for d in by_system[0]["distribution"]) == len(study.sessions)
    assert {r["measure_kind"] for r in annotations["self_report"]} <= {"construct", "item"}
    written = write_report_figures(report, tmp_path / "figures")
    assert tmp_path / "figures" / "trajectories-hri-cues.svg" in written


def test_no_annotations_no_section(study: StudyData, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "1767225600")
    report = build_report(study)
    assert report.annotations is None
    formats = _formats(report)
    document_ = json.loads(formats["json"])
    assert document_["reliability"] == [] and document_["annotations"] is None
    assert all("Annotations" not in formats[f] for f in ("md", "html", "terminal"))


def test_annotations_of_excluded_participants_go_with_them(study: StudyData) -> None:
    annotated = replace(study, annotations=hri_cues_ratings(study))
    person = str(study.sessions["participant_id"].iloc[0])
    flags = pd.DataFrame([{"participant_id": person, "flag": "abandoned", "count": 1, "out_of": 1,
                           "detail": ""}])  # fmt: skip
    kept, _ = exclude_flagged(annotated, flags)
    gone = set(study.sessions.loc[study.sessions["participant_id"].astype(str) == person,
                                  "session_id"])  # fmt: skip
    assert gone and not gone & set(kept.annotations["session_id"])
    assert len(kept.annotations) == len(annotated.annotations) - 6 * 3 * len(gone)


def test_choosing_one_study_keeps_only_its_ratings(study: StudyData) -> None:
    """``--study`` in a database of two studies: the other study's conversations' ratings go
    with them (and ratings of material from outside any study stay only with no choice)."""
    people = sorted(set(study.participants["participant_id"].astype(str)))
    others = set(people[::2])

    def moved(frame: pd.DataFrame) -> pd.DataFrame:
        frame = frame.copy()
        other = frame["participant_id"].astype(str).isin(others)
        frame["study_id"] = np.where(other, "other", frame["study_id"].astype(object))
        return frame

    two = replace(
        study,
        participants=moved(study.participants),
        sessions=moved(study.sessions),
        annotations=hri_cues_ratings(study),
    )
    chosen = select_study(two, "synthetic")
    kept = set(chosen.sessions["session_id"].astype(str))
    assert kept and kept < set(study.sessions["session_id"].astype(str))
    assert set(chosen.annotations["session_id"]) == kept
    assert len(chosen.annotations) == 6 * 3 * len(kept)
