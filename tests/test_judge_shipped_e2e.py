"""The shipped HRI CUES job with three simulated annotators and its one judge, as a
researcher runs it: ``ozlab demo --study hri-cues --annotators 3`` plays participants and
then the job's three annotators through the real bot on the emulator, the demo model served
by ``ozlab serve-demo --openai`` and named by ``OZLAB_JUDGE_URL`` rates every target
(``ozlab judge run``), and the report's judges section sets the judge beside the people.
The demo model plays a judge that answers one of each question's values."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from bot.core.vocabulary import AnnotationLevel
from bot.store.sqlite import open_store
from bot.systems.http_json import JsonClient
from bot.systems.served_model import model_app
from tests.command_line import environment
from tests.fake_servers import serving
from tests.test_llm_tools_e2e import ozlab, served_model

pytestmark = pytest.mark.slow  # whole commands in processes of their own

VALUES = {"1", "2", "3", "4", "5"}
RATED = {
    "hri-cues.exchange": AnnotationLevel.EXCHANGE,
    "hri-cues-overall.overall": AnnotationLevel.SESSION,
}


async def rated_by_three(db: Path) -> int:
    """Every target of the job rated on its scale by each of three simulated annotators,
    who did not all agree; the number of targets."""
    store = await open_store(db)
    try:
        targets = await store.annotation_targets("hri-cues")
        ratings = [r for r in await store.annotation_ratings() if r.item_id in RATED]
        annotators = await store.annotators("hri-cues")
    finally:
        await store.close()
    people = {r.annotator for r in ratings}
    assert len(people) == 3 and people == {a.annotator_id for a in annotators if a.simulated}
    for person in people:
        theirs = {(r.target, r.level) for r in ratings if r.annotator == person}
        assert theirs == {(t.target, t.level) for t in targets}
    values: dict[tuple[str, str], set[str]] = {(r.target, r.item_id): set() for r in ratings}
    for r in ratings:
        values[(r.target, r.item_id)].add(r.value)
    assert {r.value for r in ratings} <= VALUES
    assert any(len(v) > 1 for v in values.values()) and any(len(v) == 1 for v in values.values())
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
    env = environment()
    ozlab("demo", "--study", "hri-cues", "--participants", "2", "--annotators", "3", "--db", db,
          cwd=tmp_path, env=env)  # fmt: skip
    targets = asyncio.run(rated_by_three(db))
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
    people = [
        r["value"]
        for r in judges["agreement"]
        if (r["level"], r["comparison"], r["statistic"])
        == ("exchange", "human-human", "kappa_linear")
    ]
    assert (
        len(people) == 3 and min(people) < 1 and max(people) > 0.3
    )  # three pairs: neither perfect nor random
