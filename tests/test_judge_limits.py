"""``ozlab judge run --concurrency N --rate R`` (``Limits``) against a local judge server
that records when each request arrived and how many were open at once: never more than N
calls open (and N reached), and call starts about 1/R seconds apart on average."""

from __future__ import annotations

import asyncio
from pathlib import Path

from aiohttp import web

from bot.annotation.judging import JudgeRun, Limits, run_judge
from bot.store.interface import StudyStore
from bot.store.sqlite import open_store
from bot.systems.http_json import JsonClient
from tests.annotation_support import store_study
from tests.fake_servers import serving
from tests.test_judge_run import judged_bundle

SESSIONS = [("p1-1", "companion", 4), ("p2-1", "companion", 4)]
CALLS = 10  # 8 exchanges and 2 conversations, each one scale item the judge answers


class Counted:
    """A judge that records each request's arrival (the event loop's clock) and the most
    requests open at once, answering each after ``delay`` seconds (a slow server: calls
    pile up unless the client holds them back)."""

    def __init__(self, delay: float) -> None:
        self.delay = delay
        self.arrived: list[float] = []
        self.open = 0
        self.most = 0

    async def handle(self, request: web.Request) -> web.Response:
        body = await request.json()
        self.arrived.append(asyncio.get_running_loop().time())
        self.open += 1
        self.most = max(self.most, self.open)
        try:
            await asyncio.sleep(self.delay)
        finally:
            self.open -= 1  # closed before the client can read the answer
        said = "5" if "whole conversation" in body["messages"][1]["content"] else "4"
        return web.json_response({"choices": [{"message": {"content": said}}]})


async def judged_with(tmp_path: Path, server: Counted, limits: Limits) -> asyncio.Task[JudgeRun]:
    """A judge run started against ``server`` (the caller awaits it)."""
    store = await open_store(tmp_path / "cues.sqlite", lambda: 100.0)
    await store_study(store, "hri-cues", "hri-cues-chat", SESSIONS)
    app = web.Application()
    app.router.add_post("/v1/chat/completions", server.handle)
    return asyncio.create_task(_run(store, app, limits))


async def _run(store: StudyStore, app: web.Application, limits: Limits) -> JudgeRun:
    async with serving(app) as url:
        bundle = judged_bundle(url)
        job = bundle.jobs["hri-cues"]
        client = JsonClient()
        try:
            return await run_judge(store, bundle, job, job.judges[0], client, {}, limits=limits)
        finally:
            await client.close()
            await store.close()


async def test_no_more_calls_are_open_than_the_concurrency(tmp_path: Path) -> None:
    server = Counted(delay=0.15)  # 10 calls, two at a time: 0.75 s
    run = await judged_with(tmp_path, server, Limits(concurrency=2, per_second=1000))
    done = await asyncio.wait_for(run, 20)
    assert (done.calls, done.rated, len(server.arrived)) == (CALLS, CALLS, CALLS)
    assert server.most == 2


async def test_call_starts_are_spaced_by_the_rate(tmp_path: Path) -> None:
    rate = 8.0  # 10 calls: 9 gaps of 0.125 s
    server = Counted(delay=0)
    run = await judged_with(tmp_path, server, Limits(concurrency=8, per_second=rate))
    done = await asyncio.wait_for(run, 20)
    assert done.calls == CALLS and len(server.arrived) == CALLS
    mean_gap = (server.arrived[-1] - server.arrived[0]) / (CALLS - 1)
    assert 0.95 / rate <= mean_gap <= 1.3 / rate, mean_gap
