"""The HRI CUES job with three simulated annotators and one model judge, end to end: the
judge rates through a local OpenAI-compatible server, ``ozlab report --format json`` gives
the judges section (agreement with each annotator and with the adjudicated value, people's
agreement with each other, the judge as one more rater, provenance), and the people's own
annotation section never counts the judge."""

from __future__ import annotations

import asyncio
import io
import re
from pathlib import Path
from typing import Any

import pytest

from analytics.data.loading import load_study_data
from analytics.report.document import Table
from analytics.report.numbers import build_report
from analytics.report.present import document
from analytics.report.render_html import render_html
from analytics.report.render_terminal import render_terminal
from analytics.report.render_tex import table_latex
from bot.annotation.jobs import job_record, prepare_job
from bot.annotation.judging import Limits, run_judge
from bot.core.vocabulary import AnnotationLevel
from bot.store.model import ImportedRating
from bot.store.sqlite import open_store
from bot.systems.http_json import JsonClient
from tests.annotating_support import json_report
from tests.annotation_support import store_study
from tests.command_line import ozlab_here
from tests.fake_servers import FakeOpenAI
from tests.test_judge_run import judged_bundle

pytestmark = pytest.mark.slow  # a whole report
UNPACED = Limits(8, 1000.0)  # the local server has no rate limit: the pacing is not tested here

SESSIONS = [(f"p{n}-1", "companion", 4) for n in range(1, 7)]  # 24 exchanges, 6 sessions


def truth(level: AnnotationLevel, turn: int | None) -> int:
    return 3 if level is AnnotationLevel.SESSION else int(turn or 1)


def judge_says(body: dict[str, Any]) -> str:
    """The true value, but '1' for every fourth exchange: 75 % of exchanges right."""
    user = body["messages"][1]["content"]
    if "whole conversation" in user:
        return "3"
    turn = int(re.findall(r"reply (\d)", user)[-1])
    return "1" if turn == 4 else str(turn)


async def test_the_report_sets_the_judge_beside_three_annotators(tmp_path: Path) -> None:
    db = tmp_path / "cues.sqlite"
    store = await open_store(db)
    await store_study(store, "hri-cues", "hri-cues-chat", SESSIONS)
    async with FakeOpenAI(reply=judge_says) as server:
        bundle = judged_bundle(server.url)
        job = bundle.jobs["hri-cues"]
        await prepare_job(store, bundle, job)
        targets = await store.annotation_targets("hri-cues")
        simulated = [
            ImportedRating(
                line=0,
                target=t,
                annotator=person,
                instrument_id=instrument,
                item_id=f"{instrument}.{item}",
                # A3 misses by one on the second exchanges
                value=truth(t.level, t.turn) + (1 if person == "A3" and t.turn == 2 else 0),
            )
            for t in targets
            for person in ("A1", "A2", "A3")
            for instrument, item in (
                [("hri-cues", "exchange")]
                if t.level is AnnotationLevel.EXCHANGE
                else [("hri-cues-overall", "overall")]
            )
        ]
        outcome = await store.import_annotations(job_record(bundle, job), simulated)
        assert outcome.written
        client = JsonClient()
        try:
            run = await run_judge(store, bundle, job, job.judges[0], client, {}, limits=UNPACED)
        finally:
            await client.close()
        await store.close()
    assert run.targets == 30 and run.unparseable == 0
    report = await json_report(db, tmp_path / "report.json")
    # people's section: three annotators, never the judge
    people = [r for r in report["reliability"] if r["job"] == "hri-cues"]
    assert people and {r["n_annotators"] for r in people if r["statistic"] == "ICC2"} == {3}
    # ... and beside each of its figures the same with the judge as a fourth rater
    for row in people:
        beside = row["with_judges"]
        assert beside is not None and beside["raters"] == "people + model gpt-judge", row
        assert beside["n_annotators"] == row["n_annotators"] + 1
    [icc] = [r for r in people if r["statistic"] == "ICC2" and r["level"] == "exchange"]
    assert icc["with_judges"]["value"] < icc["value"]  # the judge misses every fourth
    judges = report["judges"]
    rows = {
        (r["level"], r["comparison"], r["with"], r["statistic"]): r for r in judges["agreement"]
    }
    share = rows[("exchange", "judge-adjudicated", "adjudicated", "percent_agreement")]
    assert share["value"] == pytest.approx(0.75) and share["targets"] == 24
    assert share["low"] <= 0.75 <= share["high"]
    assert rows[("exchange", "human-human", "A2", "kappa_linear")]["value"] == 1.0
    [verdict] = [v for v in judges["verdicts"] if v["level"] == "exchange"]
    assert verdict["judge"] == "model:gpt-judge"
    assert verdict["verdict"].startswith("agrees with people less")
    # the judge as one more rater in the reliability tables
    icc = [r for r in judges["reliability_with_judges"] if r["statistic"] == "ICC2"]
    assert icc and {r["n_annotators"] for r in icc} == {4}
    ppi = [r for r in judges["prediction_powered"] if r["level"] == "exchange"]
    assert ppi == []  # people rated every target the judge rated: nothing to add
    [made] = judges["provenance"]
    assert (made["model"], made["host"], made["seed"], made["rated"]) == (
        "judge-m", "127.0.0.1", 11, 30,
    )  # fmt: skip
    assert made["calls"] == 30 and made["prompt_tokens"] == 30 and len(made["prompt_hash"]) == 12
    # and for people to read: each verdict, and where the judgements came from
    done = await asyncio.to_thread(
        ozlab_here, "report", "--db", db, "--format", "md", "--out", tmp_path / "report.md"
    )
    assert done.returncode == 0, done.stderr
    text = (tmp_path / "report.md").read_text()
    assert "## Model judges" in text
    annotations = text[text.index("## Annotations") : text.index("## Model judges")]
    assert "| Raters |" in annotations and "a row of raters 'people + model'" in annotations
    icc_rows = [line for line in annotations.splitlines() if "ICC(2,1)" in line]
    assert [r.split("|")[4].strip() for r in icc_rows[:2]] == ["people", "people + model gpt-judge"]
    # every format shows the same marked rows
    made = build_report(load_study_data(db))
    blocks = document(made)
    html = render_html(made, blocks)
    assert "people + model gpt-judge" in html[html.index("Annotations") :]
    shown = io.StringIO()
    render_terminal(blocks, shown, width=240)
    assert "people + model gpt-judge" in shown.getvalue()
    tables = [b for b in blocks if isinstance(b, Table) and "Raters" in b.columns]
    assert len(tables) == 2 and all("people + model" in table_latex(t) for t in tables)
    assert "model:gpt-judge on hri-cues.exchange (exchange): kappa with annotators" in text
    provenance = text[text.index("## Provenance") :]
    [line] = [line for line in provenance.splitlines() if "Model judge" in line]
    assert line.startswith("- Model judge gpt-judge (hri-cues): judge-m at 127.0.0.1,")
    assert "30 rated, 0 unparseable, 0 failed; 30 calls, tokens 30 in, 30 out" in line
