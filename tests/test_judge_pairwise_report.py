"""An ACUTE-Eval job judged by a model with a planted position bias, through a local
OpenAI-compatible server that also answers garbage now and then and fails once: the report
finds the bias within its interval, and the people's pairwise fit never counts the judge."""

from __future__ import annotations

import asyncio
import hashlib
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from bot.annotation.judging import Limits, run_judge
from bot.core.participants import ParticipantStatus
from bot.core.vocabulary import Consent, FlagReason, SessionState, Stage, Winner
from bot.engine import effects as fx
from bot.store.definition import definition_json
from bot.store.model import StepCommit
from bot.store.sqlite import open_store
from bot.systems.http_json import JsonClient
from scenarios.jobs import Judge
from scenarios.loading import load_study
from scenarios.models import StudyBundle
from tests.annotating_support import json_report
from tests.command_line import ozlab_here
from tests.fake_servers import FakeOpenAI, Mode

pytestmark = pytest.mark.slow  # a whole report
UNPACED = Limits(8, 1000.0)  # the local server has no rate limit: the pacing is not tested here

SESSIONS = [(f"p{n}-1", "shop-v1" if n % 2 else "shop-v0") for n in range(1, 41)]


def judged_hmd(url: str) -> StudyBundle:
    """The HMD study with a judge of the ACUTE job, of the family (``shop``) its file says
    shop-v1 is of (shop-v0: another)."""
    bundle = load_study("hmd")
    systems = tuple(
        s.model_copy(update={"family": "shop" if s.id == "shop-v1" else "other"})
        for s in bundle.study.systems
    )
    judge = Judge(id="gpt-judge", url=url, model="judge-m", timeout=5, family="shop")
    job = bundle.jobs["hmd-acute"].model_copy(update={"judges": (judge,)})
    return bundle.model_copy(
        update={
            "study": bundle.study.model_copy(update={"systems": systems}),
            "jobs": {**bundle.jobs, "hmd-acute": job},
        }
    )


async def store_sessions(db: Path, bundle: StudyBundle | None = None) -> None:
    """The HMD study and its conversations, each in words of its own."""
    store = await open_store(db)
    await store.record_definition("hmd", definition_json(bundle or load_study("hmd")))
    for sid, system in SESSIONS:
        person = sid.rsplit("-", 1)[0]
        records: list[fx.Record] = [
            fx.RecordConsent(Consent.ACCEPTED),
            fx.OpenSession(sid, "hmd-gift", system, 0, "random", "1"),
            fx.RecordUserTurn(sid, 1, f"A gift for Alex, from {person}?"),
            fx.RecordSystemTurn(sid, 1, f"Moss Hollow, says {system} to {person}.", 3.0),
            fx.SetSessionState(sid, SessionState.ENDED),
        ]
        status = ParticipantStatus(Stage.FINISHED, 1.0)
        await store.commit_step(StepCommit("hmd", person, "{}", status, None, records))
    await store.close()


def biased(body: dict[str, Any]) -> str:
    """The first speaker 70 % of the time (drawn from the question's digest), and a
    sentence instead of a value for one question in 13 (a value when asked again)."""
    user = body["messages"][1]["content"]
    draw = int(hashlib.sha256(user.encode()).hexdigest(), 16)
    if draw % 13 == 0 and len(body["messages"]) == 2:
        return "Speaker 1, clearly."
    return "1" if draw % 100 < 70 else "2"


async def test_the_planted_position_bias_is_found(tmp_path: Path) -> None:
    db = tmp_path / "hmd.sqlite"
    async with FakeOpenAI(reply=biased) as server:
        bundle = judged_hmd(server.url)
        await store_sessions(db, bundle)
        store = await open_store(db)
        job = bundle.jobs["hmd-acute"]
        [judge] = job.judges
        server.behave(Mode.STATUS, status=504, times=1)  # one call fails
        client = JsonClient()
        try:
            first = await run_judge(store, bundle, job, judge, client, {}, limits=UNPACED)
            second = await run_judge(store, bundle, job, judge, client, {}, limits=UNPACED)
        finally:
            await client.close()
        voted = [v for _, v in await store.votes()]
        await store.close()
    assert first.failed == 1 and first.retried > 0 and first.unparseable == 0
    assert second.targets == 1 and second.failed == 0  # the failed pair, judged again
    report = await json_report(db, tmp_path / "report.json")
    rows = [r for r in report["judges"]["position_bias"] if r["rater"] == "model:gpt-judge"]
    assert len(rows) == 4  # ACUTE's four questions
    verdicts = sum(r["verdicts"] for r in rows)
    first_wins = sum(r["first_wins"] for r in rows) / verdicts
    assert abs(first_wins - 0.7) < 0.08
    for r in rows:
        assert r["first_wins_low"] <= 0.7 <= r["first_wins_high"]
        # consistent only when the two orders name different positions: 2 x 0.7 x 0.3
        assert r["consistent_low"] <= 0.42 <= r["consistent_high"]
    # the people's fit counts no vote of the judge (there are none of people's)
    pairwise = report["pairwise"]
    assert {(q["votes"], q["flagged"], q["fitted"]) for q in pairwise["questions"]} == {(40, 40, 0)}
    # each flag named and counted, in the JSON and in the words of the report
    markdown = await asyncio.to_thread(
        ozlab_here, "report", "--db", db, "--format", "md", "--out", tmp_path / "report.md"
    )
    assert markdown.returncode == 0, markdown.stderr
    said = (tmp_path / "report.md").read_text(encoding="utf-8").replace("\\_", "_")
    assert "another flag" not in said
    for q in pairwise["questions"]:
        mine = [v for v in voted if v.question == q["question"]]
        by_reason = Counter(str(v.flag_reason) for v in mine)
        assert q["flag_reasons"] == dict(by_reason) and sum(by_reason.values()) == 40
        assert set(by_reason) >= {"model_verdict", "inconsistent"}
        named = "; ".join(
            f"{q['flag_reasons'][r.value]} {r.value}: {r.meaning}"
            for r in FlagReason
            if r.value in q["flag_reasons"]
        )
        assert f"left out: 40 flagged ({named})" in said
    # its own family's share of its consistent verdicts, per question, with no people's to
    # compare with
    kept = [v for v in voted if v.flag_reason is FlagReason.MODEL_VERDICT]
    found = {r["item"]: r for r in report["judges"]["self_preference"]}
    assert set(found) == {r["question"] for r in rows}
    for question, r in found.items():
        mine = [v for v in kept if v.question == question]
        won = sum((v.system_a if v.winner is Winner.A else v.system_b) == "shop-v1" for v in mine)
        assert (r["family"], r["own_systems"], r["n_own"], r["n_other"]) == (
            "shop", "shop-v1", len(mine), 0,
        )  # fmt: skip
        assert r["judge_own"] == pytest.approx(won / len(mine))
        assert r["people_own"] is None and r["self_preference"] is None
