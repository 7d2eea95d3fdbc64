"""The shipped HRI CUES job with three simulated annotators and its one judge, as a
researcher runs it: the demo model served by ``ozlab serve-demo --openai`` and named by
``OZLAB_JUDGE_URL``, ``ozlab judge run`` on the study's database, and the report's judges
section. The demo model plays a judge that answers one of each question's values."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from bot.annotation.jobs import job_record, prepare_job
from bot.core.vocabulary import AnnotationLevel
from bot.store.model import ImportedRating
from bot.store.sqlite import open_store
from bot.systems.http_json import JsonClient
from bot.systems.served_model import model_app
from scenarios.loading import load_study
from tests.annotation_support import store_study
from tests.command_line import environment
from tests.fake_servers import serving
from tests.test_llm_tools_e2e import ozlab, served_model

pytestmark = pytest.mark.slow  # whole commands in processes of their own

SESSIONS = [(f"p{n}-1", "companion", 3) for n in range(1, 5)]  # 12 exchanges, 4 sessions
VALUES = {"1", "2", "3", "4", "5"}


async def rated_by_three(db: Path) -> int:
    """The shipped study (its job with its judge, as stored by the bot) and every target
    rated by three simulated annotators; the number of targets."""
    bundle = load_study("hri-cues")
    job = bundle.jobs["hri-cues"]
    store = await open_store(db)
    try:
        await store_study(store, "hri-cues", "hri-cues-chat", SESSIONS)
        await prepare_job(store, bundle, job)
        targets = await store.annotation_targets("hri-cues")
        ratings = [
            ImportedRating(
                line=0,
                target=t,
                annotator=person,
                instrument_id=instrument,
                item_id=f"{instrument}.{item}",
                value=1 + (t.turn or 0) % 5 if person == "A3" else 3,
            )
            for t in targets
            for person in ("A1", "A2", "A3")
            for instrument, item in (
                [("hri-cues", "exchange")]
                if t.level is AnnotationLevel.EXCHANGE
                else [("hri-cues-overall", "overall")]
            )
        ]
        assert (await store.import_annotations(job_record(bundle, job), ratings)).written
    finally:
        await store.close()
    return len(targets)


async def test_the_demo_model_answers_a_judge_s_question_with_one_of_its_values() -> None:
    question = "Reply 1: hi\n\nQuestion: Enjoyment?\nValues:\n1 = low\n5 = high\n"
    async with serving(model_app()) as url:
        client = JsonClient()
        try:
            said = []
            for ending in ("Answer with one of: 1, 2, 3, 4, 5", "Answer with one of: PASS, FAIL"):
                for _ in range(2):
                    body = {
                        "model": "ozlab-demo-shop-v1",
                        "messages": [
                            {"role": "system", "content": "You rate conversations."},
                            {"role": "user", "content": question + ending},
                        ],
                    }
                    answer = await client.post(f"{url}/v1/chat/completions", body, timeout=10)
                    said.append(answer["choices"][0]["message"]["content"])
        finally:
            await client.close()
    assert said[0] == said[1] in VALUES and said[2] == said[3] in {"PASS", "FAIL"}


def test_the_shipped_job_s_judge_rates_through_serve_demo_and_the_report(
    tmp_path: Path,
) -> None:
    db = tmp_path / "cues.sqlite"
    targets = asyncio.run(rated_by_three(db))
    env = environment()
    checked = ozlab("check", "hri-cues", cwd=tmp_path, env=env)  # no server needed to check
    assert checked.startswith("OK: study 'hri-cues'")
    server, url = served_model()
    try:
        said = ozlab("judge", "run", "--db", db, "--job", "hri-cues", cwd=tmp_path,
                     env={**env, "OZLAB_JUDGE_URL": url})  # fmt: skip
    finally:
        server.kill()
        server.wait()
        assert server.stdout is not None
        server.stdout.close()
    assert f"{targets} targets judged (0 judged before), {targets} ratings kept" in said
    assert "0 answers unparseable after a retry (0 retried), 0 calls failed" in said
    report = json.loads(ozlab("report", "--db", db, "--format", "json", cwd=tmp_path, env=env))
    judges = report["judges"]
    [made] = judges["provenance"]
    assert (made["judge"], made["model"], made["host"], made["seed"]) == (
        "gpt-judge", "ozlab-demo-shop-v1", "127.0.0.1", 7,
    )  # fmt: skip
    assert (made["rated"], made["unparseable"], made["failed"]) == (targets, 0, 0)
    levels = {(v["level"], v["judge"]) for v in judges["verdicts"]}
    assert levels == {("exchange", "model:gpt-judge"), ("session", "model:gpt-judge")}
    agreement = {(r["level"], r["comparison"]) for r in judges["agreement"]}
    assert ("exchange", "judge-adjudicated") in agreement
    assert ("exchange", "human-human") in agreement
