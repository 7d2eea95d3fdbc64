"""The stress tests' end-to-end setting: the demo shop served by ``ozlab serve-demo`` (v1
and v0, two processes), a counting relay in front of them (so a test can tell how often a
replay reached a system), and a study database of logged sessions played through the real
bot by simulated participants, its systems ``http`` adapters pointed at the relay.

The relay lives in a thread of its own, so that it serves while a test runs ``ozlab``
commands in subprocesses or in its own event loop.
"""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import subprocess
import sys
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import aiohttp
from aiohttp import web

from bot.pilot.demo import play_study
from scenarios.loading import load_study
from tests.adapter_studies import spec, with_systems
from tests.e2e_support import PROJECT_ROOT

OZLAB = str(Path(sys.executable).with_name("ozlab"))


def ozlab(
    *args: str, stdin: str | None = None, timeout: float = 120
) -> subprocess.CompletedProcess[str]:
    """``ozlab ARGS`` as a researcher runs it."""
    return subprocess.run(
        [OZLAB, *args],
        input=stdin,
        capture_output=True,
        text=True,
        timeout=timeout,
        cwd=PROJECT_ROOT,
        check=False,
    )


def serve_demo(variant: str) -> tuple[subprocess.Popen[str], str]:
    """``ozlab serve-demo --port 0``; the process and the address it printed."""
    process = subprocess.Popen(
        [OZLAB, "serve-demo", "--port", "0", "--variant", variant],
        stdout=subprocess.PIPE,
        text=True,
        cwd=PROJECT_ROOT,
    )
    assert process.stdout is not None
    for line in process.stdout:  # the first lines say where it listens
        if "answers POST" in line:
            return process, line.split("answers POST ", 1)[1].split(" ")[0]
    process.kill()
    raise RuntimeError(f"ozlab serve-demo {variant} did not start")


@dataclass
class Relay:
    """Forwards ``POST /<variant>`` to that shop and keeps every conversation id seen."""

    upstream: dict[str, str]
    seen: list[str] = field(default_factory=list)
    url: str = ""
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def calls(self) -> list[str]:
        with self._lock:
            return list(self.seen)

    async def _forward(self, request: web.Request) -> web.Response:
        body = await request.read()
        with self._lock:
            self.seen.append(str(json.loads(body).get("session_id", "")))
        target = self.upstream[request.match_info["variant"]]
        async with self._client.post(
            target, data=body, headers={"Content-Type": "application/json"}
        ) as answer:
            return web.Response(
                body=await answer.read(), status=answer.status, content_type="application/json"
            )

    def start(self) -> None:
        ready = threading.Event()

        async def main() -> None:
            self._client = aiohttp.ClientSession()
            app = web.Application()
            app.router.add_post("/{variant}", self._forward)
            runner = web.AppRunner(app, access_log=None, shutdown_timeout=0.1)
            await runner.setup()
            site = web.TCPSite(runner, "127.0.0.1", 0)
            await site.start()
            self.url = f"http://127.0.0.1:{runner.addresses[0][1]}"
            self._loop = asyncio.get_running_loop()
            self._stop = asyncio.Event()
            ready.set()
            await self._stop.wait()
            await runner.cleanup()
            await self._client.close()

        self._thread = threading.Thread(target=lambda: asyncio.run(main()), daemon=True)
        self._thread.start()
        assert ready.wait(10), "the relay did not start"

    def stop(self) -> None:
        self._loop.call_soon_threadsafe(self._stop.set)  # from the relay's own thread
        self._thread.join(10)


@dataclass
class Shops:
    relay: Relay
    played: Path  # the logged study: copy it before writing to it
    processes: list[subprocess.Popen[str]]


def start_shops(folder: Path, participants: int = 8) -> Iterator[Shops]:
    processes: list[subprocess.Popen[str]] = []
    relay: Relay | None = None
    try:
        upstream = {}
        for variant in ("v1", "v0"):
            process, url = serve_demo(variant)
            processes.append(process)
            upstream[variant] = url
        relay = Relay(upstream)
        relay.start()
        mapping = {
            "text": None,
            "messages": "messages",
            "events": "events",
            "event_data": "event_data",
        }
        bundle = with_systems(
            load_study("hmd"),
            spec("http", f"{relay.url}/v1", id="shop-v1", timeout=10.0, response=mapping),
            spec("http", f"{relay.url}/v0", id="shop-v0", timeout=10.0, response=mapping),
        )
        played = folder / "played.sqlite"
        asyncio.run(play_study(bundle, played, participants=participants, seed=3))
        yield Shops(relay, played, processes)
    finally:
        if relay is not None:
            relay.stop()
        for process in processes:
            process.kill()
            process.wait()
            if process.stdout is not None:
                process.stdout.close()


def copy_study(shops: Shops, target: Path) -> Path:
    """A fresh copy of the logged study (tests write their stress tables into it)."""
    db = target / "study.sqlite"
    shutil.copy(shops.played, db)
    return db


def environment() -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": str(PROJECT_ROOT)}
