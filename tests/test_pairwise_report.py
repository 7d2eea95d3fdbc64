"""The report's pairwise section: in every format, the same bytes on every run, every number
in the JSON with its method, figures drawn, and absent for a study without votes."""

from __future__ import annotations

import io
import json
from dataclasses import replace
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from analytics.data.loading import StudyData, load_study_data
from analytics.data.synthetic import write_synthetic_study
from analytics.report.figures import write_report_figures
from analytics.report.numbers import Report, build_report
from analytics.report.present import document
from analytics.report.render_html import render_html
from analytics.report.render_json import render_json
from analytics.report.render_md import render_markdown
from analytics.report.render_terminal import render_terminal
from analytics.statistics.pairwise import PairwiseOptions, pairwise_section
from tests.test_pairwise_statistics import votes_frame

pytestmark = pytest.mark.slow  # whole reports and renderings: make test, not make check

SCORE_KEYS = {
    "question", "system", "anchor", "log_strength", "elo", "boot_low", "boot_high",
    "sandwich_low", "sandwich_high", "se_sandwich", "rank", "rank_worst", "comparisons",
}  # fmt: skip


@pytest.fixture(scope="module")
def study(tmp_path_factory: pytest.TempPathFactory) -> StudyData:
    db = tmp_path_factory.mktemp("paired") / "study.sqlite"
    write_synthetic_study(db, sessions=12, responses_per_session=6, seed=5, systems=3)
    return load_study_data(db)


def arena_votes(systems: list[str], seed: int = 3) -> pd.DataFrame:
    """Side-by-side votes where the first system is clearly best and the last worst, and a
    few ACUTE votes with onboarding pairs; one rater's pseudonym is markup."""
    rng = np.random.default_rng(seed)
    strength = dict(zip(systems, np.linspace(1.0, -1.0, len(systems)), strict=True))
    rows = []
    for rater in range(25):
        name = "<b>r0</b>" if rater == 0 else f"p{rater:02d}"
        for _ in range(10):
            a, b = rng.choice(systems, size=2, replace=False)
            eta = strength[a] - strength[b] + 0.2
            u = rng.random()
            winner = (
                "tie" if u < 0.1
                else "both_bad" if u < 0.13
                else "a" if rng.random() < 1 / (1 + np.exp(-eta)) else "b"
            )  # fmt: skip
            rows.append((name, a, b, winner))
    votes = votes_frame(pd.DataFrame(rows, columns=["rater", "system_a", "system_b", "winner"]))
    acute = votes_frame(
        pd.DataFrame(
            [("ann", systems[0], systems[1], "a")] * 3 + [("ann", systems[1], systems[0], "a")],
            columns=["rater", "system_a", "system_b", "winner"],
        ),
        source="acute",
        rater_kind="annotator",
        question="engagingness",
        onboarding=[True, True, False, False],
        onboarding_correct=[True, False, None, None],
    )
    return pd.concat([votes, acute], ignore_index=True)


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


def _with_votes(study: StudyData) -> Report:
    report = build_report(study)
    systems = list(report.study.systems)
    found = pairwise_section(arena_votes(systems), tuple(systems), PairwiseOptions(rounds=200))
    return replace(report, pairwise=found)


def test_the_section_in_every_format_and_the_same_bytes_twice(
    study: StudyData, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "1767225600")
    made = _with_votes(study)
    first, second = _formats(made), _formats(_with_votes(study))
    assert first == second
    for fmt in ("md", "html", "terminal"):
        text = first[fmt]
        assert "Pairwise comparisons" in text, fmt
        assert "Shown first" in text and "sandwich" in text, fmt
        # headed by what the raters were asked, the id beside it
        assert "Question: Which reply is better? (side by side, each turn) (turn)" in text, fmt
        assert "Question: engagingness" in text, fmt  # imported votes: no wording known
        assert "Onboarding" in text and "Sample size" in text, fmt
    assert "<b>r0</b>" not in first["html"] and "&lt;b&gt;r0&lt;/b&gt;" in first["html"]
    assert 'id="pairwise-forest-turn"' in first["html"]
    assert 'id="pairwise-heatmap-turn"' in first["html"]
    section = json.loads(first["json"])["pairwise"]
    assert set(section["methods"]) >= {"model", "scale", "bootstrap", "sandwich", "rank",
                                       "shown_first", "sample_size", "agreement"}  # fmt: skip
    assert section["options"]["rounds"] == 200 and section["options"]["seed"] == 0
    scores = [r for r in section["scores"] if r["question"] == "turn"]
    assert all(set(r) >= SCORE_KEYS for r in scores)
    systems = list(json.loads(first["json"])["study"]["systems"])
    ranked = [r["system"] for r in sorted(scores, key=lambda r: -r["elo"])]
    assert ranked[0] == systems[0] and ranked[-1] == systems[-1]
    turn = next(q for q in section["questions"] if q["question"] == "turn")
    assert turn["both_bad"] > 0 and turn["fitted"] == turn["votes"] - turn["both_bad"]
    assert {r["parameter"] for r in section["parameters"]} == {"shown_first"}
    onboarding = {r["rater"]: r for r in section["onboarding"]}
    assert onboarding["ann"]["rate"] == 0.5 and onboarding["ann"]["passed"] is False
    assert section["sample_size"] and section["win_rates"] and section["pairs"]
    written = write_report_figures(made, tmp_path / "figures")
    for name in ("pairwise-forest-turn", "pairwise-heatmap-turn"):
        assert tmp_path / "figures" / f"{name}.svg" in written
        assert (tmp_path / "figures" / f"{name}.txt").read_text().strip()


def test_no_votes_no_section(study: StudyData, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "1767225600")
    report = build_report(study)
    assert report.pairwise is None
    formats = _formats(report)
    assert "pairwise" not in json.loads(formats["json"])
    assert all("Pairwise comparisons" not in formats[f] for f in ("md", "html", "terminal"))
