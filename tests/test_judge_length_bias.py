"""Length bias of pairwise judging: an ACUTE job judged through a local OpenAI-compatible
server playing a judge that picks the conversation that says more 80 % of the time, and
people's votes on the same pairs planted without regard to length: the report finds the
judge's preference within its interval and people's near one half, in every format."""

from __future__ import annotations

import hashlib
import io
import re
from pathlib import Path
from typing import Any

import pytest

from analytics.data.loading import load_study_data
from analytics.report.numbers import build_report
from analytics.report.present import document
from analytics.report.present_judges import judges_from_study, judges_json, judges_lines
from analytics.report.render_html import render_html
from analytics.report.render_md import render_markdown
from analytics.report.render_terminal import render_terminal
from analytics.report.render_tex import write_latex
from bot.annotation.judging import Limits, run_judge
from bot.core.participants import ParticipantStatus
from bot.core.vocabulary import Consent, Origin, SessionState, Stage
from bot.engine import effects as fx
from bot.engine.annotating.acute import pair_questions, pair_votes
from bot.store.definition import definition_json
from bot.store.interface import StudyStore
from bot.store.model import StepCommit
from bot.store.sqlite import open_store
from bot.systems.http_json import JsonClient
from scenarios.jobs import Judge
from scenarios.loading import load_study
from scenarios.models import StudyBundle
from tests.fake_servers import FakeOpenAI

pytestmark = pytest.mark.slow  # the whole report, in every format

SAID = {f"p{n}": f"Moss Hollow, for p{n}." + " Truly." * ((n * 7) % 13) for n in range(1, 41)}
"""Each person's conversation: one reply, of a planted length."""


def draw(*parts: str) -> int:
    return int(hashlib.sha256("|".join(parts).encode()).hexdigest(), 16) % 100


def prefers_longer(body: dict[str, Any]) -> str:
    """The conversation that says more, for 80 % of the pairs and questions (the same in
    both orders), else the other."""
    user = body["messages"][1]["content"]
    first, second = re.findall(r"from (p\d+)\?", user)
    [asked] = re.findall(r"Question: (.*)", user)
    longer, shorter = sorted((first, second), key=lambda p: (-len(SAID[p]), p))
    chosen = longer if draw(*sorted((first, second)), asked) < 80 else shorter
    return "1" if chosen == first else "2"


def judged_hmd(url: str) -> StudyBundle:
    bundle = load_study("hmd")
    judge = Judge(id="gpt-judge", url=url, model="judge-m", timeout=10)
    job = bundle.jobs["hmd-acute"].model_copy(update={"judges": (judge,)})
    return bundle.model_copy(update={"jobs": {**bundle.jobs, "hmd-acute": job}})


async def judged_and_voted(store: StudyStore) -> None:
    """The conversations, the judge's verdicts on every pair, then two annotators' votes on
    each pair, drawn blind to length."""
    async with FakeOpenAI(reply=prefers_longer) as server:
        bundle = judged_hmd(server.url)
        await store.record_definition("hmd", definition_json(bundle))
        for person, reply in SAID.items():
            sid, system = f"{person}-1", "shop-v1" if int(person[1:]) % 2 else "shop-v0"
            records: list[fx.Record] = [
                fx.RecordConsent(Consent.ACCEPTED),
                fx.OpenSession(sid, "hmd-gift", system, 0, "random", "1"),
                fx.RecordUserTurn(sid, 1, f"A gift for Alex, from {person}?"),
                fx.RecordSystemTurn(sid, 1, reply, 3.0),
                fx.SetSessionState(sid, SessionState.ENDED),
            ]
            status = ParticipantStatus(Stage.FINISHED, 1.0)
            await store.commit_step(StepCommit("hmd", person, "{}", status, None, records))
        job = bundle.jobs["hmd-acute"]
        client = JsonClient()
        try:
            run = await run_judge(
                store, bundle, job, job.judges[0], client, {}, limits=Limits(8, 1000)
            )
        finally:
            await client.close()
    assert run.unparseable == 0 and run.failed == 0 and run.inconsistent == 0
    # three annotators vote on every pair the judge judged, by a draw blind to length
    questions = pair_questions(bundle.questionnaires[q] for q in job.rate.pair)
    people = []
    for task, _ in await store.judge_tasks(job.id, "model:gpt-judge"):
        for annotator in ("A1", "A2", "A3"):
            answers = {
                item: (
                    asked.first if draw(annotator, task.target.target, item) < 50 else asked.second
                )
                for item, asked in questions.items()
            }
            people += pair_votes(job, questions, task, annotator, answers)
    await store.record_votes("hmd", people, origin=Origin.IMPORT)


async def test_a_judge_preferring_the_longer_conversation_is_found(tmp_path: Path) -> None:
    db = tmp_path / "hmd.sqlite"
    store = await open_store(db)
    try:
        await judged_and_voted(store)
    finally:
        await store.close()
    data = load_study_data(db)
    section = judges_from_study(data)
    assert section is not None
    rows = judges_json(section)["pair_length_bias"]
    judge = [r for r in rows if r["rater"] == "model:gpt-judge"]
    theirs = [r for r in rows if r["rater"] == "people"]
    assert {r["question"] for r in judge} == {r["question"] for r in theirs} and len(judge) == 4
    for r in judge:
        assert (r["source"], r["job"]) == ("acute", "hmd-acute")
        assert r["low"] <= 0.8 <= r["high"], r
        assert r["rho"] > 0 and r["rho_low"] > 0, r
    for r in theirs:  # three votes a pair: a share nearer one half than one vote's
        assert r["low"] <= 0.5 <= r["high"], r
    shares = [r["share_longer"] for r in judge]
    assert abs(sum(shares) / 4 - 0.8) < 0.1
    assert abs(sum(r["share_longer"] for r in theirs) / 4 - 0.5) < 0.1
    assert abs(sum(r["rho"] for r in theirs) / 4) < 0.15
    # a judge votes twice a pair (both orders); people three times (three annotators)
    assert all(r["verdicts"] == 2 * r["pairs"] for r in judge)
    assert all(r["verdicts"] == 3 * r["pairs"] for r in theirs)
    lines = "\n".join(judges_lines(section))
    assert "model:gpt-judge on engagingness (ACUTE hmd-acute): the side that said more won" in lines
    assert "people on engagingness (ACUTE hmd-acute): the side that said more won" in lines
    # every format's judges section says it, beside the method
    made = build_report(data)
    blocks = document(made)
    line = "model:gpt-judge on knowledge (ACUTE hmd-acute): the side that said more won"
    assert line in render_html(made, blocks) and line in render_markdown(blocks)
    shown = io.StringIO()
    render_terminal(blocks, shown, width=400)
    assert line in shown.getvalue()
    [main, *_] = write_latex(blocks, tmp_path / "report.tex", lambda _: [], _write, _folder)
    assert "the side that said more won" in main.read_text()
    assert "Length bias of pairs" in render_markdown(blocks)


def _write(path: Path, content: str | bytes) -> Path:
    if isinstance(content, bytes):
        path.write_bytes(content)
    else:
        path.write_text(content)
    return path


def _folder(path: Path) -> Path:
    path.mkdir(exist_ok=True)
    return path
