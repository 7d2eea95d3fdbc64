"""How fast ``ozlab stress run`` replays: replays a second against a local HTTP system that
answers at once, and against one that takes 200 ms a reply.

Usage::

    .venv/bin/python bench/stress.py [--tests 3000] [--slow-tests 1200] [--concurrency 32]
                                     [--json out.json]

The system is a minimal aiohttp server in its own process on 127.0.0.1 (``--serve``), the
``http`` adapter's default protocol, answering ``{"text": "ok"}`` after ``--delay`` seconds.
The study database is made through the store: one logged session per test (a one-line
dialogue, so each replay is two calls: unchanged and perturbed), one ST-2 test each, the
study's system an ``http`` spec pointing at the server, as ``ozlab stress run`` reads it.
The run is the real ``run_stress_tests`` (store writes included), timed from start to the
last stored replay. Targets: at least 300 replays a second against the instant
system with concurrency 32 on 2 cores, and at least 0.9 x concurrency / 0.2 s against the
200 ms one.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from aiohttp import web

HERE = Path(__file__).resolve()
sys.path.insert(0, str(HERE.parents[1]))

from bot.core.participants import ParticipantStatus  # noqa: E402
from bot.core.phenomena import StressType  # noqa: E402
from bot.core.stress import Perturbation, Source  # noqa: E402
from bot.core.vocabulary import Consent, Stage  # noqa: E402
from bot.engine import effects as fx  # noqa: E402
from bot.store.model import StepCommit  # noqa: E402
from bot.store.sqlite import open_store  # noqa: E402
from bot.store.stress_records import Review  # noqa: E402
from bot.stress.replay.dialogue import stored_study  # noqa: E402
from bot.stress.replay.runner import Limits, run_stress_tests  # noqa: E402
from bot.systems.registry import build_systems, close_systems  # noqa: E402


async def serve(delay: float) -> None:
    async def answer(request: web.Request) -> web.Response:
        await request.read()
        if delay:
            await asyncio.sleep(delay)
        return web.json_response({"text": "ok"})

    app = web.Application()
    app.router.add_post("/", answer)
    runner = web.AppRunner(app, access_log=None)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0, backlog=1024)
    await site.start()
    print(f"http://127.0.0.1:{runner.addresses[0][1]}/", flush=True)
    await asyncio.sleep(3600)


async def make_study(db: Path, url: str, tests: int) -> None:
    store = await open_store(db)
    definition = {
        "study": {"systems": [{"type": "http", "id": "sys", "url": url, "timeout": 30}]},
        "scenarios": {"task": {"id": "task", "brief": "Find a game"}},
    }
    await store.record_definition("bench", json.dumps(definition))
    steps = [
        StepCommit(
            "bench",
            f"p{n}",
            "{}",
            ParticipantStatus(Stage.DIALOGUE, 1.0),
            None,
            [
                fx.RecordConsent(Consent.ACCEPTED),
                fx.OpenSession(f"p{n}-1", "task", "sys", 0, "random", "1"),
                fx.RecordUserTurn(f"p{n}-1", 1, "adventure games for linux"),
                fx.RecordSystemTurn(f"p{n}-1", 1, "ok", 1.0),
            ],
        )
        for n in range(tests)
    ]
    await asyncio.gather(*(store.commit_step(s) for s in steps))
    made = [
        Perturbation(
            u.session_id,
            u.turn,
            StressType.ST_2,
            u.text,
            "adventrue games for linux",
            Source.GENERATED,
        )
        for u in await store.stress_utterances()
    ]
    await store.add_stress_tests(made, Review.ACCEPTED)
    await store.close()


async def replay(db: Path, concurrency: int) -> tuple[int, float]:
    store = await open_store(db)
    try:
        study = stored_study(await store.latest_definitions())
        systems = build_systems(study.systems.values(), env={})
        try:
            started = time.perf_counter()
            summary = await run_stress_tests(
                store, systems, study.scenarios, default=Limits(concurrency, None, 30.0)
            )
            elapsed = time.perf_counter() - started
        finally:
            await close_systems(systems)
    finally:
        await store.close()
    return summary.replayed, elapsed


def row(name: str, delay: float, tests: int, concurrency: int) -> dict[str, float]:
    server = subprocess.Popen(
        [sys.executable, str(HERE), "--serve", str(delay)], stdout=subprocess.PIPE, text=True
    )
    try:
        assert server.stdout is not None
        url = server.stdout.readline().strip()
        with tempfile.TemporaryDirectory() as folder:
            db = Path(folder) / "bench.sqlite"
            asyncio.run(make_study(db, url, tests))
            cpu = os.times()
            replayed, elapsed = asyncio.run(replay(db, concurrency))
            used = os.times()
    finally:
        server.kill()
        server.wait()
    rate = replayed / elapsed
    cores = ((used.user - cpu.user) + (used.system - cpu.system)) / elapsed
    print(f"{name}: {replayed} replays in {elapsed:.2f} s = {rate:.0f} replays/s"
          f" ({2 * rate:.0f} calls/s; the runner used {cores:.2f} cores)")  # fmt: skip
    return {"replays": replayed, "seconds": elapsed, "replays_per_second": rate, "cores": cores}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--tests", type=int, default=3000)
    parser.add_argument("--slow-tests", type=int, default=1200)
    parser.add_argument("--concurrency", type=int, default=32)
    parser.add_argument("--json", type=Path)
    parser.add_argument("--serve", type=float, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.serve is not None:
        asyncio.run(serve(args.serve))
        return 0
    c = args.concurrency
    instant = row("instant system", 0.0, args.tests, c)
    slow = row("200 ms system", 0.2, args.slow_tests, c)
    target = 0.9 * c / 0.2
    fast_ok = instant["replays_per_second"] >= 300
    slow_ok = slow["replays_per_second"] >= target
    print(
        f"targets: instant >= 300/s ({'met' if fast_ok else 'MISSED'});"
        f" 200 ms >= {target:.0f}/s ({'met' if slow_ok else 'MISSED'})"
    )
    if args.json:
        found = {"instant": instant, "slow_200ms": slow, "concurrency": c}
        args.json.write_text(json.dumps(found, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
