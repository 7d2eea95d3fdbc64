"""A model judge rates a job's targets against a local OpenAI-compatible server: every
target rated once, an answer that is not one of the item's values asked once more and, if
still not, counted as unparseable and never stored as a rating; every call kept by its
exact request, so a rerun or a resumed run asks nothing twice; the judge is never given
the annotators' targets."""

from __future__ import annotations

import io
import re
import sqlite3
from collections.abc import AsyncIterator
from contextlib import closing
from pathlib import Path
from typing import Any, TextIO

import pytest

from bot.annotation.judging import JudgeRun, Limits, judge_annotator, run_judge
from bot.core.vocabulary import FlagReason, Origin, RaterKind, Winner
from bot.engine.annotating.judging import choices_of, parse
from bot.store.interface import StudyStore
from bot.store.sqlite import open_store
from bot.systems.http_json import JsonClient
from questionnaires.models import ScaleItem
from scenarios.jobs import Judge
from scenarios.loading import load_study
from scenarios.models import StudyBundle
from tests.annotation_support import store_study
from tests.fake_servers import FakeOpenAI, Mode

SESSIONS = [("p1-1", "companion", 3), ("p2-1", "companion", 2)]
# targets: 5 exchanges and 2 conversations; items: one scale item per exchange, one scale
# item (and a free-text rationale the judge is not asked) per conversation


def judged_bundle(url: str, timeout: float = 60.0) -> StudyBundle:
    bundle = load_study("hri-cues")
    judge = Judge(id="gpt-judge", url=url, model="judge-m", temperature=0, seed=11, timeout=timeout)
    job = bundle.jobs["hri-cues"].model_copy(update={"judges": (judge,)})
    return bundle.model_copy(update={"jobs": {**bundle.jobs, "hri-cues": job}})


def judge_says(body: dict[str, Any]) -> str:
    """A judge with known behaviour: '4' for every exchange, except that it first rambles
    about reply 2 (then answers '2' when told) and never gives a value about reply 3."""
    user = body["messages"][1]["content"]
    retried = len(body["messages"]) > 2
    last = re.findall(r"reply (\d)", user)[-1]
    if "whole conversation" in user:
        return "5"
    if last == "2":
        return "2" if retried else "I would say a 2, mostly"
    if last == "3":
        return "between 3 and 4"
    return " 4\n"


@pytest.fixture
async def judged(tmp_path: Path) -> AsyncIterator[tuple[StudyStore, FakeOpenAI, Path]]:
    db = tmp_path / "cues.sqlite"
    store = await open_store(db, lambda: 100.0)
    await store_study(store, "hri-cues", "hri-cues-chat", SESSIONS)
    async with FakeOpenAI(reply=judge_says) as server:
        yield store, server, db
    await store.close()


async def judge_once(
    store: StudyStore,
    server: FakeOpenAI,
    db: Path,
    limit: int | None = None,
    answer_within: float = 60.0,
    out: TextIO | None = None,
) -> JudgeRun:
    bundle = judged_bundle(server.url, answer_within)
    job = bundle.jobs["hri-cues"]
    client = JsonClient()
    try:
        return await run_judge(
            store,
            bundle,
            job,
            job.judges[0],
            client,
            {},
            limits=Limits(concurrency=3, per_second=1000),
            limit=limit,
            out=out,
            clock=lambda: 200.0,
        )
    finally:
        await client.close()


async def test_without_a_terminal_the_progress_is_a_few_whole_lines(
    judged: tuple[StudyStore, FakeOpenAI, Path],
) -> None:
    """A log file or a pipe gets plain lines now and then, never a bar redrawn per target."""
    store, server, db = judged
    log = io.StringIO()  # not a terminal
    await judge_once(store, server, db, out=log)
    written = log.getvalue()
    assert "\r" not in written and written.endswith("\n")
    lines = written.splitlines()
    assert 1 <= len(lines) <= 11
    assert all(re.match(r"\[[#.]{30}\] \d/7 targets", line) for line in lines), lines
    assert "7/7 targets" in lines[-1]


def test_only_a_value_of_the_item_is_an_answer() -> None:
    item = ScaleItem(
        type="scale", id="q", text="How?", min=1, max=3, labels={1: "a", 2: "b", 3: "c"}
    )
    choices = choices_of(item)
    assert parse(" 2\n", choices) == choices[1]
    for said in ("2.", "2 (b)", "b", "I'd say 2", "", "4", "1 or 2"):
        assert parse(said, choices) is None, said


async def test_a_judge_rates_every_target_and_never_keeps_an_unparseable_answer(
    judged: tuple[StudyStore, FakeOpenAI, Path],
) -> None:
    store, server, db = judged
    run = await judge_once(store, server, db)
    assert run.targets == 7
    # about reply 2 (twice) and reply 3 the first answer was no value: asked again; the
    # answer about reply 3 stayed no value
    assert (run.retried, run.unparseable, run.failed) == (3, 1, 0)
    ratings = [r for r in await store.annotation_ratings() if r.annotator == "model:gpt-judge"]
    assert {r.origin for r in ratings} == {Origin.MODEL.value}
    by_target = {(r.target, r.item_id): r.value for r in ratings}
    assert by_target == {
        ("p1-1#1", "hri-cues.exchange"): "4",
        ("p1-1#2", "hri-cues.exchange"): "2",
        ("p2-1#1", "hri-cues.exchange"): "4",
        ("p2-1#2", "hri-cues.exchange"): "2",
        ("p1-1", "hri-cues-overall.overall"): "5",
        ("p2-1", "hri-cues-overall.overall"): "5",
    }  # p1-1#3 unparseable twice: no rating
    # what was asked: the item's wording, its values and labels, the brief
    asked = server.requests[0].json
    assert asked["model"] == "judge-m" and asked["seed"] == 11 and asked["temperature"] == 0
    assert "Guidelines:" in asked["messages"][0]["content"]
    assert "Answer with one of: 1, 2, 3, 4, 5" in asked["messages"][1]["content"]
    # provenance of every judgement, in the study's database, and no file beside it
    made = await store.judgements()
    [cost] = await store.judge_costs()
    assert not db.with_name(db.name + ".judges").exists()
    assert len(made) == 7 and {p.job for p in made} == {"hri-cues"}
    assert {(p.model, p.host, p.temperature, p.seed, p.at) for p in made} == {
        ("judge-m", "127.0.0.1", 0.0, 11, 200.0)
    }
    assert len({p.prompt_hash for p in made}) == 1
    assert [p.target for p in made if p.outcome == "unparseable"] == ["p1-1#3"]
    assert cost.judge == "gpt-judge" and cost.calls == len(server.requests) == run.calls
    # a judge rates beside the annotators: never planned any of their targets
    state = await store.annotation_state("hri-cues")
    assert state is not None
    assert judge_annotator(judged_bundle("http://x").jobs["hri-cues"].judges[0]) not in {
        a.annotator_id for a in state.annotators
    }


async def test_a_rerun_asks_nothing_again_and_a_partial_run_resumes(
    judged: tuple[StudyStore, FakeOpenAI, Path],
) -> None:
    store, server, db = judged
    first = await judge_once(store, server, db, limit=2)
    assert first.targets == 2
    asked = len(server.requests)
    second = await judge_once(store, server, db)
    assert (second.skipped, second.targets) == (2, 5)
    whole = len(server.requests)
    assert whole > asked
    # the unparseable target is asked again, from the kept calls only: no call reaches the server
    third = await judge_once(store, server, db)
    assert len(server.requests) == whole
    assert (third.targets, third.calls, third.cached, third.unparseable) == (1, 0, 2, 1)
    ratings = [r for r in await store.annotation_ratings() if r.annotator == "model:gpt-judge"]
    assert len(ratings) == 6  # each once


async def test_a_judge_that_times_out_is_counted_and_asked_again_next_run(
    judged: tuple[StudyStore, FakeOpenAI, Path],
) -> None:
    store, server, db = judged
    server.behave(Mode.STATUS, status=500, times=1)
    run = await judge_once(store, server, db)
    assert run.failed == 1
    before = len(await store.annotation_ratings())
    again = await judge_once(store, server, db)
    assert again.failed == 0
    assert len(await store.annotation_ratings()) == before + 1


async def test_a_call_never_answered_in_time_fails_and_is_asked_again_next_run(
    judged: tuple[StudyStore, FakeOpenAI, Path],
) -> None:
    store, server, db = judged
    server.behave(Mode.HOLD, times=1)  # the first call gets no answer until released
    run = await judge_once(store, server, db, answer_within=0.5)
    server.release()
    assert (run.targets, run.failed) == (7, 1)
    made = await store.judgements()
    [failed] = [j for j in made if j.outcome == "failed"]
    assert "0.5" in failed.said or "time" in failed.said.lower()
    again = await judge_once(store, server, db)
    # the target that failed, asked of the server, and the unparseable one, from the store
    assert (again.targets, again.failed, again.calls, again.cached) == (2, 0, 1, 2)
    assert {j.outcome for j in await store.judgements()} == {"rated", "unparseable"}


def pair_judge(body: dict[str, Any]) -> str:
    """A judge with a planted position bias: it prefers the longer conversation for
    engagingness (the same verdict in both orders, or the first when both are as long), and
    always the first speaker for everything else (a verdict that flips with the order)."""
    user = body["messages"][1]["content"]
    if "long conversation" not in user:
        return "1"
    first, second = (user.count(f"Speaker {side}: ") for side in (1, 2))
    return "2" if second > first else "1"


async def test_a_pair_is_judged_in_both_orders_and_a_flipped_verdict_is_no_win(
    tmp_path: Path,
) -> None:
    db = tmp_path / "hmd.sqlite"
    store = await open_store(db, lambda: 100.0)
    await store_study(store, "hmd", "hmd-gift", [("a-1", "shop-v1", 3), ("b-1", "shop-v0", 2)])
    bundle = load_study("hmd")
    async with FakeOpenAI(reply=pair_judge) as server:
        judge = Judge(id="gpt-judge", url=server.url, model="judge-m")
        job = bundle.jobs["hmd-acute"].model_copy(update={"judges": (judge,)})
        client = JsonClient()
        try:
            unpaced = Limits(concurrency=3, per_second=1000)  # the pacing is not tested here
            run = await run_judge(store, bundle, job, judge, client, {}, limits=unpaced)
            calls = len(server.requests)
            again = await run_judge(store, bundle, job, judge, client, {}, limits=unpaced)
        finally:
            await client.close()
    votes = [v for _, v in await store.votes() if v.rater == "model:gpt-judge"]
    await store.close()
    assert run.targets == 1 and calls == 8  # four questions, two orders
    assert again.skipped == 1 and len(server.requests) == calls
    assert run.inconsistent == 3
    assert {v.rater_kind for v in votes} == {RaterKind.MODEL}
    by = {(v.question, v.system_a): v for v in votes}
    assert len(by) == 8
    # engagingness: the longer conversation (shop-v1's) in both orders: one win, counted once
    kept = [v for v in votes if v.flag_reason is FlagReason.MODEL_VERDICT]
    [win] = kept
    assert win.question == "engagingness"
    assert (win.system_a if win.winner is Winner.A else win.system_b) == "shop-v1"
    repeat = [v for v in votes if v.question == "engagingness" and v is not win]
    assert [v.flag_reason for v in repeat] == [FlagReason.SWAPPED_REPEAT]
    # the rest flipped with the order: inconsistent, never a win
    others = [v for v in votes if v.question != "engagingness"]
    assert len(others) == 6 and {v.flag_reason for v in others} == {FlagReason.INCONSISTENT}


async def test_a_judges_words_are_made_storable_where_they_come_in(tmp_path: Path) -> None:
    """A model's answer is outside text: a NUL or a lone surrogate in it becomes U+FFFD before
    the call is kept, on SQLite as on a server, and a rerun finds the call it kept."""
    db = tmp_path / "cues.sqlite"
    store = await open_store(db, lambda: 100.0)
    await store_study(store, "hri-cues", "hri-cues-chat", SESSIONS)
    try:
        async with FakeOpenAI(reply="a \x00 4 \ud83d") as server:
            run = await judge_once(store, server, db)
            assert run.unparseable == 7 and run.failed == 0
            with closing(sqlite3.connect(db)) as conn:
                answers = {row[0] for row in conn.execute("SELECT answer FROM judge_calls")}
            assert answers == {"a \ufffd 4 \ufffd"}
            again = await judge_once(store, server, db)
            assert again.calls == 0 and again.cached > 0
    finally:
        await store.close()
