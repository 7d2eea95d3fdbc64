"""The issue's test of model judges, as written: ONE local OpenAI-compatible server plays a
judge with known behaviour (it agrees with a planted truth 80 % of the time, prefers the
first position 70 % of the time, returns garbage now and then and times out once). The HRI
CUES job, three simulated annotators who rate the truth, is judged by ``ozlab judge run``
killed halfway and run again; the HMD ACUTE job by the same server. The report finds the
planted agreement and the planted position bias within their intervals, and no request for
what was judged is ever sent twice."""

from __future__ import annotations

import asyncio
import hashlib
import json
import os
import re
import signal
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from bot.annotation.jobs import job_record, prepare_job
from bot.annotation.judging import Limits, run_judge
from bot.core.participants import ParticipantStatus
from bot.core.vocabulary import AnnotationLevel, Consent, SessionState, Stage
from bot.engine import effects as fx
from bot.store.definition import definition_json
from bot.store.model import ImportedRating, StepCommit
from bot.store.sqlite import open_store
from bot.systems.http_json import JsonClient
from scenarios.loading import load_study
from tests.annotating_support import json_report
from tests.fake_servers import FakeOpenAI, Mode
from tests.stress_support import OZLAB
from tests.test_judge_pairwise_report import judged_hmd, store_sessions

pytestmark = pytest.mark.slow  # whole commands in processes of their own

LIBRARY = Path(__file__).resolve().parents[1] / "scenarios" / "library"
PEOPLE = [f"p{n}" for n in range(1, 15)]  # 14 conversations of 5 exchanges: 70 exchanges
TURNS = 5
AGREES, FIRST = 0.80, 0.70  # the planted behaviour
GARBAGE = 13  # one question in 13 is first answered with a sentence


def planted(body: dict[str, Any]) -> str:
    """The judge: for a pair, the first shown 70 % of the time; for a rating, the true value
    (the exchange's turn; 3 for a whole conversation) 80 % of the time, else one off; a
    sentence for one question in 13 (a value when asked again). Each draw from the
    question's digest: repeatable, independent across questions."""
    user = body["messages"][1]["content"]
    draw = int(hashlib.sha256(user.encode()).hexdigest(), 16)
    if draw % GARBAGE == 0 and len(body["messages"]) == 2:
        return "Hard to say, it went fine."
    allowed = user.rsplit("Answer with one of: ", 1)[1].split(", ")
    if len(allowed) == 2:  # which speaker: a pair
        return "1" if (draw // GARBAGE) % 100 < FIRST * 100 else "2"
    true = 3 if "whole conversation" in user else int(re.findall(r"reply (\d)", user)[-1])
    if (draw // GARBAGE) % 100 < AGREES * 100:
        return str(true)
    return str(true + 1 if true < 5 else true - 1)


def judged_cues(folder: Path, url: str) -> Path:
    """The shipped HRI CUES study, its job's judge this server's (a 2-second timeout)."""
    (folder / "jobs").mkdir()
    job = (LIBRARY / "jobs" / "hri-cues.yaml").read_text()
    judge = f"judges:\n  - {{id: gpt-judge, url: '{url}', model: judge-m, seed: 3, timeout: 2}}\n"
    (folder / "jobs" / "hri-cues.yaml").write_text(job[: job.index("\njudges:\n")] + "\n" + judge)
    study = folder / "study.yaml"
    study.write_text((LIBRARY / "studies" / "hri-cues.yaml").read_text())
    return study


async def rated_truly(db: Path) -> None:
    """Conversations each in words of their own, every target rated by three annotators
    with its true value."""
    bundle = load_study("hri-cues")
    job = bundle.jobs["hri-cues"]
    store = await open_store(db)
    try:
        await store.record_definition("hri-cues", definition_json(bundle))
        for person in PEOPLE:
            sid = f"{person}-1"
            records: list[fx.Record] = [
                fx.RecordConsent(Consent.ACCEPTED),
                fx.OpenSession(sid, "hri-cues-chat", "companion", 0, "random", "1"),
            ]
            for turn in range(1, TURNS + 1):
                records += [
                    fx.RecordUserTurn(sid, turn, f"{person} says hello {turn}"),
                    fx.RecordSystemTurn(sid, turn, f"Nice to meet you {person}, reply {turn}", 2.0),
                ]
            records.append(fx.SetSessionState(sid, SessionState.ENDED))
            status = ParticipantStatus(Stage.FINISHED, 1.0)
            await store.commit_step(StepCommit("hri-cues", person, "{}", status, None, records))
        await prepare_job(store, bundle, job)
        targets = await store.annotation_targets("hri-cues")
        exchange, overall = [("hri-cues", "exchange")], [("hri-cues-overall", "overall")]
        ratings = [
            ImportedRating(0, t, person, instrument, f"{instrument}.{item}",
                           int(t.turn or 0) if t.level is AnnotationLevel.EXCHANGE else 3)
            for t in targets
            for person in ("A1", "A2", "A3")
            for instrument, item in (
                exchange if t.level is AnnotationLevel.EXCHANGE else overall
            )
        ]  # fmt: skip
        assert (await store.import_annotations(job_record(bundle, job), ratings)).written
    finally:
        await store.close()


async def ozlab(*args: str) -> tuple[int, str, str]:
    child = await asyncio.create_subprocess_exec(
        OZLAB, *args, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE
    )
    out, err = await asyncio.wait_for(child.communicate(), 120)
    assert child.returncode is not None
    return child.returncode, out.decode(), err.decode()


async def test_a_planted_judge_is_found_out_and_a_killed_run_never_asks_twice(
    tmp_path: Path,
) -> None:
    cues, hmd = tmp_path / "cues.sqlite", tmp_path / "hmd.sqlite"
    await rated_truly(cues)
    answered = 0

    def then_hold(body: dict[str, Any]) -> str:
        nonlocal answered
        answered += 1
        if answered == 20:
            server.behave(Mode.HOLD)  # the 21st call hangs: the run is killed meanwhile
        return planted(body)

    async with FakeOpenAI(reply=then_hold) as server:
        study = judged_cues(tmp_path, server.url)
        args = ("judge", "run", "--db", str(cues), "--job", "hri-cues", "--study", str(study),
                "--concurrency", "1", "--rate", "1000")  # fmt: skip
        child = await asyncio.create_subprocess_exec(
            OZLAB, *args, stdout=asyncio.subprocess.DEVNULL, stderr=asyncio.subprocess.DEVNULL
        )
        await server.wait_for_requests(21, timeout=60)
        os.kill(child.pid, signal.SIGKILL)
        await child.wait()
        server.release()
        server.behave(Mode.HOLD, times=1)  # the next call gets no answer in time
        status, out, err = await ozlab(*args)
        assert status == 0 and "1 calls failed" in out, (out, err)
        server.release()
        status, out, err = await ozlab(*args)  # the one that timed out, asked again
        assert status == 0 and "0 calls failed" in out, (out, err)
        # every request once, but the one the kill cut short and the one that timed out
        bodies = [json.dumps(r.json, sort_keys=True) for r in server.requests]
        cut_short, timed_out = bodies[20], bodies[21]
        twice = {body: n for body, n in Counter(bodies).items() if n > 1}
        assert twice == {b: 1 + n for b, n in Counter([cut_short, timed_out]).items()}
        status, out, _ = await ozlab(*args)
        assert status == 0 and "0 calls made" in out  # a rerun costs nothing

        bundle = judged_hmd(server.url)
        await store_sessions(hmd, bundle)
        store = await open_store(hmd)
        job = bundle.jobs["hmd-acute"]
        client = JsonClient()
        try:
            judged = await run_judge(
                store, bundle, job, job.judges[0], client, {}, limits=Limits(8, 1000.0)
            )
        finally:
            await client.close()
            await store.close()
        assert judged.retried > 0 and judged.unparseable == 0
    report = await json_report(cues, tmp_path / "cues.json")
    rows = {
        (r["level"], r["comparison"], r["with"], r["statistic"]): r
        for r in report["judges"]["agreement"]
    }
    share = rows[("exchange", "judge-adjudicated", "adjudicated", "percent_agreement")]
    assert share["targets"] == len(PEOPLE) * TURNS
    assert share["low"] <= AGREES <= share["high"] and abs(share["value"] - AGREES) < 0.1
    for annotator in ("A1", "A2", "A3"):
        mine = rows[("exchange", "judge-annotator", annotator, "percent_agreement")]
        assert mine["low"] <= AGREES <= mine["high"]
    assert rows[("exchange", "human-human", "A2", "percent_agreement")]["value"] == 1.0
    [verdict] = [v for v in report["judges"]["verdicts"] if v["level"] == "exchange"]
    assert verdict["verdict"].startswith("agrees with people less")
    [made] = report["judges"]["provenance"]
    assert made["failed"] == 0 and made["unparseable"] == 0  # the timeout was judged again
    report = await json_report(hmd, tmp_path / "hmd.json")
    position = [r for r in report["judges"]["position_bias"] if r["rater"] == "model:gpt-judge"]
    assert len(position) == 4  # ACUTE's four questions
    for r in position:
        assert r["first_wins_low"] <= FIRST <= r["first_wins_high"]
        # consistent only when the two orders name different positions: 2 x 0.7 x 0.3
        assert r["consistent_low"] <= 2 * FIRST * (1 - FIRST) <= r["consistent_high"]
