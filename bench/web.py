"""``ozlab web``'s figures with 200 live sessions and 10 signed-in viewers: how soon a
participant's message is on a viewer's page, how fast a page is served, what the idle
page costs, and whether the bot's exchanges per second change while the page is served.

Usage::

    .venv/bin/python bench/web.py [--sessions 200] [--viewers 10] [--messages 5] [--idle 10]

The Bot API emulator and the simulated participants run in this process; the real bot runs
in its own (``bench/ozlab_bot.py``, the demo shop as the system), and so does the page (the
real ``ozlab web`` command). Each viewer is an aiohttp client signed in with its own account
(made by ``ozlab web users add``), holding the live sessions table and one session's live
transcript open (server-sent events) and asking for a page every ``--page-every`` seconds,
as a person clicking around. All clocks are ``time.monotonic``.

1. participant → viewer's page: from the participant's ``sendMessage`` to the line arriving
   in the viewer's live transcript (one watched session per viewer);
2. a page served: the sessions page and the studies overview, as the viewers ask;
3. the page's CPU while idle: the ``ozlab web`` process's user+system CPU seconds
   (``/proc/<pid>/stat``) over ``--idle`` seconds, every viewer still connected;
4. the bot's exchanges per second, every participant chatting without a pause to think,
   in rounds without the page and with it (A, B, A, B …), as the same closed loop.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import re
import secrets
import signal
import statistics
import sys
import tempfile
import time
from pathlib import Path

import aiohttp

BENCH = Path(__file__).resolve().parent
ROOT = BENCH.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(BENCH))

from wizard_latency import (  # noqa: E402 - beside this file
    TOKEN,
    bounded,
    consent,
    process_cpu,
    report,
)

from bot.core.privacy import Privacy  # noqa: E402
from bot.pilot.emulator import BotApiEmulator, Participant  # noqa: E402

FIRST_USER_ID = 610_000_000
PASSWORD = "a bench password, long enough"
WORDS = ("adventure games for Linux", "tell me about 2", "cheaper ones", "RPG games")


async def ozlab(*arguments: str) -> str:
    """``ozlab ARGUMENTS`` in a process of its own; what it printed."""
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "bot.cli",
        *arguments,
        stdout=asyncio.subprocess.PIPE,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        cwd=ROOT,
    )
    out, _ = await process.communicate()
    if process.returncode != 0:
        raise RuntimeError(f"ozlab {' '.join(arguments)}: status {process.returncode}")
    return out.decode()


class Viewer:
    """A signed-in browser, as far as the server can tell: cookies, forms, live events."""

    def __init__(self, base: str, name: str) -> None:
        self.base, self.name = base, name
        self.http = aiohttp.ClientSession(cookie_jar=aiohttp.CookieJar(unsafe=True))
        self.seen: dict[str, float] = {}  # text -> when it arrived on this page
        self.pages: list[float] = []  # seconds each page took
        self.tasks: list[asyncio.Task[None]] = []

    async def welcome(self, link: str) -> None:
        page = await (await self.http.get(link)).text()
        token = re.search(r'name="csrf_token" value="([^"]+)"', page)
        assert token is not None
        form = {"csrf_token": token.group(1), "name": self.name, "password": PASSWORD}
        form["token"] = link.split("token=")[1].split("&")[0]
        answer = await self.http.post(f"{self.base}/welcome", data=form, headers=self._origin())
        assert answer.status == 200 and str(answer.url) == f"{self.base}/", answer.status

    def _origin(self) -> dict[str, str]:
        return {"Origin": self.base}

    def watch(self, session: str) -> None:
        self.tasks += [
            asyncio.create_task(self._events("/s/study/events")),
            asyncio.create_task(self._events(f"/s/study/session/{session}/events")),
        ]

    async def _events(self, path: str) -> None:
        async with self.http.get(
            self.base + path, headers={"Accept": "text/event-stream"}, timeout=None
        ) as stream:
            async for raw in stream.content:
                now = time.monotonic()
                line = raw.decode()
                if line.startswith("data:"):
                    for text in re.findall(r'<span class="text">([^<]*)</span>', line):
                        self.seen.setdefault(text, now)

    def browse(self, every: float) -> None:
        self.tasks.append(asyncio.create_task(self._browse(every)))

    async def _browse(self, every: float) -> None:
        while True:
            for path in ("/s/study/", "/"):
                started = time.monotonic()
                async with self.http.get(self.base + path) as page:
                    await page.read()
                    assert page.status == 200, page.status
                self.pages.append(time.monotonic() - started)
                await asyncio.sleep(every)

    async def close(self) -> None:
        for task in self.tasks:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError, aiohttp.ClientError):
                await task
        await self.http.close()


async def run(args: argparse.Namespace, tmp: Path) -> None:
    db = tmp / "study.sqlite"
    secret = secrets.token_urlsafe(32)
    privacy = Privacy(secret)
    async with BotApiEmulator(TOKEN) as emulator:
        log = (tmp / "bot.log").open("wb")
        bot = await asyncio.create_subprocess_exec(
            sys.executable,
            str(BENCH / "ozlab_bot.py"),
            *("--url", emulator.server_url, "--token", TOKEN, "--secret", secret),
            *("--db", str(db), "--system", "demo"),
            cwd=ROOT,
            stdout=asyncio.subprocess.PIPE,
            stderr=log,
            env={**os.environ, "PYTHONPATH": str(ROOT)},
        )
        web: asyncio.subprocess.Process | None = None
        viewers: list[Viewer] = []
        try:
            assert bot.stdout is not None
            async with asyncio.timeout(60):
                while (await bot.stdout.readline()).strip() != b"READY":
                    pass
            people = [emulator.participant(FIRST_USER_ID + i) for i in range(args.sessions)]
            await bounded([consent(p, 60) for p in people], 300)
            print(f"{len(people)} live sessions, the demo shop answering")
            without: list[float] = []
            with_page: list[float] = []
            await chat_and_note(people, args.messages, "warm-up")
            watchers = people[: args.viewers]  # each viewer watches one of them
            sessions = [f"{privacy.pseudonym(p.user_id)}-1" for p in watchers]
            links = [
                (await ozlab("web", "users", "add", f"viewer{i}", "--db", str(db))).split()[-1]
                for i in range(args.viewers)
            ]
            for round_ in range(args.rounds):
                alone = await chat_and_note(people, args.messages, f"A{round_}")
                without.append(len(alone) / alone.took)
                web, base = await start_web(db)
                viewers = [Viewer(base, f"viewer{i}") for i in range(args.viewers)]
                for viewer, link in zip(viewers, links, strict=True):
                    await viewer.welcome(link.replace("http://127.0.0.1:8765", base))
                for viewer, session in zip(viewers, sessions, strict=True):
                    viewer.watch(session)
                    viewer.browse(args.page_every)
                await asyncio.sleep(1.0)  # every stream open
                texts = await chat_and_note(people, args.messages, f"B{round_}")
                with_page.append(len(texts) / texts.took)
                await asyncio.sleep(1.5)  # the last lines on their way
                if round_ == args.rounds - 1:
                    latency = arrivals(viewers, texts, [p.user_id for p in watchers])
                    print(report("participant message -> on a viewer's page", latency))
                    pages = [s for v in viewers for s in v.pages]
                    print(report("a page served (sessions, overview)", pages))
                    for viewer in viewers:
                        viewer.tasks[-1].cancel()  # stop clicking; the streams stay open
                    await asyncio.sleep(2.0)
                    before, started = process_cpu(web.pid), time.monotonic()
                    await asyncio.sleep(args.idle)
                    share = (process_cpu(web.pid) - before) / (time.monotonic() - started)
                    print(
                        f"ozlab web idle, {len(viewers)} viewers connected, {args.idle:g} s:"
                        f" {share * 100:.1f} % of one core"
                    )
                for viewer in viewers:
                    await viewer.close()
                viewers = []
                await stop(web)
                web = None
            a, b = statistics.mean(without), statistics.mean(with_page)
            print(
                "exchanges/s without the page: "
                + ", ".join(f"{x:.0f}" for x in without)
                + f" (mean {a:.0f}); with it: "
                + ", ".join(f"{x:.0f}" for x in with_page)
                + f" (mean {b:.0f}); {100 * (b - a) / a:+.1f} %"
            )
        finally:
            for viewer in viewers:
                await viewer.close()
            if web is not None:
                await stop(web)
            if bot.returncode is None:
                bot.send_signal(signal.SIGTERM)
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(bot.wait(), 20)
            if bot.returncode is None:
                bot.kill()
                await bot.wait()
            log.close()


class Sent(dict[str, tuple[int, float]]):
    """text -> (participant, when sent); ``took`` the round's seconds."""

    took = 0.0


async def chat_and_note(people: list[Participant], messages: int, tag: str) -> Sent:
    sent = Sent()

    async def chat(p: Participant) -> None:
        for k in range(messages):
            text = f"{WORDS[(p.user_id + k) % len(WORDS)]} ({tag} {p.user_id % 10_000}-{k})"
            before = len(p.messages)
            sent[text] = (p.user_id, time.monotonic())
            await p.send_text(text)
            await p.wait_for(lambda q, n=before: len(q.messages) > n, 60)

    started = time.monotonic()
    await bounded([chat(p) for p in people], 600)
    sent.took = time.monotonic() - started
    return sent


async def start_web(db: Path) -> tuple[asyncio.subprocess.Process, str]:
    web = await asyncio.create_subprocess_exec(
        sys.executable,
        *("-m", "bot.cli", "web", "--db", str(db), "--port", "0"),
        stdout=asyncio.subprocess.PIPE,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        cwd=ROOT,
    )
    assert web.stdout is not None
    first = (await asyncio.wait_for(web.stdout.readline(), 30)).decode()
    found = re.search(r" at (http://\S+?)/$", first.strip())
    if found is None:
        raise RuntimeError(f"ozlab web did not start: {first!r}")
    return web, found.group(1)


async def stop(web: asyncio.subprocess.Process) -> None:
    if web.returncode is None:
        web.send_signal(signal.SIGTERM)
    await asyncio.wait_for(web.wait(), 20)


def arrivals(viewers: list[Viewer], sent: Sent, watched: list[int]) -> list[float]:
    """For each watched participant's messages: the seconds from sending to the page of
    the viewer who watches them."""
    viewer_of = dict(zip(watched, viewers, strict=True))
    found = []
    for text, (user, at) in sent.items():
        viewer = viewer_of.get(user)
        if viewer is None:
            continue
        if text not in viewer.seen:
            raise RuntimeError(f"{text!r} never reached {viewer.name}'s page")
        found.append(viewer.seen[text] - at)
    return found


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sessions", type=int, default=200)
    parser.add_argument("--viewers", type=int, default=10)
    parser.add_argument("--messages", type=int, default=5, help="per participant and round")
    parser.add_argument("--rounds", type=int, default=3, help="rounds without and with the page")
    parser.add_argument("--page-every", type=float, default=1.0, help="seconds between pages")
    parser.add_argument("--idle", type=float, default=10.0, help="seconds of idle CPU")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="ozlab-web-bench-") as tmp:
        asyncio.run(run(args, Path(tmp)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
