"""The report in reading order, the same in every format: the systems compared first (every
measure with each system's value, its test and effect), then completion, the questionnaires
in detail, data quality and provenance; figures titled with the items' wording, not ids."""

from __future__ import annotations

import asyncio
import json
import re
from dataclasses import replace
from pathlib import Path

import pandas as pd
import pytest

from analytics.data.loading import load_study_data
from analytics.report import figures
from analytics.report.document import Figure, Heading, Table
from analytics.report.numbers import Report, build_report
from analytics.report.present import document
from analytics.report.stress import stress_section
from analytics.statistics.pairwise import PairwiseOptions, pairwise_section
from bot.cli import analytics_main as main
from bot.core.phenomena import StressType
from bot.store.stress_records import Verdict
from tests.report_study import write_report_study
from tests.test_pairwise_report import arena_votes
from tests.test_report_fits_terminal import _result as stressed

pytestmark = pytest.mark.slow  # whole reports in every format: make test, not make check

SECTIONS = [
    "Systems compared", "Participation", "Task completion", "System reliability",
    "Wizard involvement", "Questionnaires", "Comments", "Example conversations", "Data quality",
    "Provenance",
]  # fmt: skip


@pytest.fixture(scope="module")
def study_db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    db = tmp_path_factory.mktemp("order") / "study.sqlite"
    asyncio.run(write_report_study(db, ("alpha", "beta")))
    return db


@pytest.fixture(scope="module")
def report(study_db: Path) -> Report:
    return build_report(load_study_data(study_db))


def test_the_systems_compared_come_first_with_every_measure_at_a_glance(report: Report) -> None:
    blocks = document(report)
    sections = [b.text for b in blocks if isinstance(b, Heading) and b.level == 2]
    assert sections == SECTIONS
    glance = next(b for b in blocks if isinstance(b, Table) and "at a glance" in (b.caption or ""))
    assert glance.columns == ("Measure", "alpha", "beta", "Test", "Result")
    rows = {row[0]: row for row in glance.rows}
    success = rows["Task success (system reported)"]
    assert re.fullmatch(r"\d+% \(\d+%–\d+%\), n = \d+", success[1])  # rate with its interval
    # an item in its wording, a construct by name; each system's mean (SD); test and effect
    trust = rows["trust (post, construct)"]
    assert re.fullmatch(r"\d\.\d\d \(\d\.\d\d\)", trust[1]) and trust[3] == "Mann–Whitney U"
    assert "rank-biserial r = " in trust[4]
    again = rows["Would you use it again?"]
    assert again[1].endswith("% yes, n = 12") and "odds ratio" in again[4]
    assert not [name for name in rows if name.startswith("post.")]  # no ids for items


def test_every_format_shows_the_same_order(study_db: Path, tmp_path: Path) -> None:
    found = {}
    for suffix in ("txt", "md", "html", "json"):
        out = tmp_path / f"report.{suffix}"
        assert main(["report", "--db", str(study_db), "--out", str(out)]) == 0
        found[suffix] = out.read_text(encoding="utf-8")

    def order(text: str, marks: list[str]) -> list[int]:
        return [text.index(mark) for mark in marks]

    md = order(found["md"], [f"\n## {s}\n" for s in SECTIONS])
    html = order(found["html"], [f">{s}</h2>" for s in SECTIONS])
    txt = order(found["txt"], [f"\n{s} ─" for s in SECTIONS])
    assert md == sorted(md) and html == sorted(html) and txt == sorted(txt)
    keys = list(json.loads(found["json"]))
    sections = ["comparisons", "participation", "completion", "system_reliability", "wizard",
                "questionnaires", "comments", "examples", "quality", "provenance"]  # fmt: skip
    assert [k for k in keys if k in sections] == sections


def test_figures_are_titled_with_the_items_wording(report: Report) -> None:
    blocks = [b for b in document(report) if isinstance(b, Figure) and b.kind == "likert"]
    titles = []
    for block in blocks:
        for chart in figures.charts(report, block):
            for axes in chart.figure.axes:
                titles += [t.get_text() for t in axes.texts] + [axes.get_title(loc="left")]
    assert "The assistant was easy to talk to." in titles
    assert "I had to repeat myself a lot. (R)" in titles
    assert not [t for t in titles if "post." in t]


def test_pairwise_ranking_and_stress_figures_are_titled_in_words(report: Report) -> None:
    """A side-by-side vote's figures say what the ballot asks; a preference item's (its
    question is the item's id) and an ACUTE question's (the id without the instrument's
    prefix) give the item's wording; the stress chart names each phenomenon; the ranking
    section draws no figure of its own. No title, caption or axis carries an item's id."""
    systems = list(report.study.systems)
    turns = arena_votes(systems)
    turns = turns[turns["source"] == "side_by_side"]
    votes = pd.concat(
        [turns, turns.assign(question="post.trust1"), turns.assign(question="ease1")],
        ignore_index=True,
    ).assign(vote_id=lambda f: [f"v{k}" for k in range(len(f))])
    pairwise = pairwise_section(votes, tuple(systems), PairwiseOptions(rounds=50))
    stress = stress_section(
        [
            stressed(1, systems[0], StressType.ST_2, Verdict.PASS),
            stressed(2, systems[1], StressType.ST_2, Verdict.FAIL),
        ]
    )
    shown = replace(report, pairwise=pairwise, stress=stress)
    blocks = [
        b
        for b in document(shown)
        if isinstance(b, Figure) and b.kind.startswith(("pairwise_", "stress", "ranking"))
    ]
    captions = [b.caption for b in blocks]
    for wording in (
        "Which reply is better? (side by side, each turn)",
        "I trust the order is right.",
        "The assistant was easy to talk to.",
    ):
        assert f"Bradley–Terry scores with intervals: {wording}" in captions
        assert f"Win rates: {wording}" in captions
    assert "stress" in [b.kind for b in blocks]
    titles = list(captions)
    for block in blocks:
        for chart in figures.charts(shown, block):
            titles.append(chart.caption)
            for axes in chart.figure.axes:
                titles += [t.get_text() for t in axes.texts] + [axes.get_title(loc="left")]
                titles += [t.get_text() for t in axes.get_yticklabels()]
    ids = {"trust1", "ease1", "post.trust1", "post.ease1"}
    assert not [t for t in titles if set(re.findall(r"[\w.]+", t)) & ids or t.endswith(": turn")]
    assert "ST-2 " + StressType.ST_2.title in titles


def test_questionnaire_figures_are_captioned_with_the_questionnaires_title(report: Report) -> None:
    """A figure names the questionnaire as participants saw it, never by its id."""
    captions = {
        b.caption
        for b in document(report)
        if isinstance(b, Figure) and b.kind in ("likert", "proportions", "by_turn")
    }
    titles = report.questionnaires.titles
    assert captions and titles
    assert all(c.split(":")[0] in titles.values() for c in captions), captions
    assert not [c for c in captions if c.split(":")[0] in titles], captions


def test_an_instruments_heading_names_its_title_beside_its_id(report: Report) -> None:
    """The detail of each questionnaire is headed as its figures are captioned: by the title
    participants saw, with the id the study file and the export use beside it."""
    titles = report.questionnaires.titles
    headings = [b.text for b in document(report) if isinstance(b, Heading) and b.level == 3]
    assert titles
    for q_id, title in titles.items():
        assert f"{title} ({q_id})" in headings, headings
