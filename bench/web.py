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
   in rounds without the page and with it (A, B, A, B … A), as the same closed loop; each
   B set against the A before and the A after it (the rates drift down as sessions grow).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import re
import secrets
import signal
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

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

    async def sign_in(self) -> None:
        page = await (await self.http.get(f"{self.base}/signin")).text()
        token = re.search(r'name="csrf_token" value="([^"]+)"', page)
        assert token is not None
        form = {"csrf_token": token.group(1), "name": self.name, "password": PASSWORD}
        answer = await self.http.post(f"{self.base}/signin", data=form, headers=self._origin())
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
            names = [f"viewer{i}" for i in range(args.viewers)]
            links = [
                (await ozlab("web", "users", "add", name, "--db", str(db))).split()[-1]
                for name in names
            ]
            for round_ in range(args.rounds):
                alone = await chat_and_note(people, args.messages, f"A{round_}")
                without.append(len(alone) / alone.took)
                web, base = await start_web(db)
                plan = [
                    {
                        "name": f"viewer{i}",
                        "session": session,
                        "link": links[i] if not round_ else None,
                    }
                    for i, session in enumerate(sessions)
                ]
                eyes = await start_viewers(base, plan, args.page_every)
                await asyncio.sleep(2.0)  # the page's process started, every stream open
                busy, busy_from = process_cpu(web.pid), time.monotonic()
                texts = await chat_and_note(people, args.messages, f"B{round_}")
                with_page.append(len(texts) / texts.took)
                busy = (process_cpu(web.pid) - busy) / (time.monotonic() - busy_from)
                print(f"round {round_}: ozlab web used {busy * 100:.0f} % of one core meanwhile")
                await asyncio.sleep(1.5)  # the last lines on their way
                share = None
                if round_ == args.rounds - 1:
                    assert eyes.stdin is not None
                    eyes.stdin.write(b"idle\n")  # stop clicking; the streams stay open
                    await asyncio.sleep(2.0)
                    before, started = process_cpu(web.pid), time.monotonic()
                    await asyncio.sleep(args.idle)
                    share = (process_cpu(web.pid) - before) / (time.monotonic() - started)
                seen = await stop_viewers(eyes)
                if share is not None:
                    latency = arrivals(
                        seen,
                        texts,
                        dict(
                            zip(
                                [p.user_id for p in watchers],
                                [v["name"] for v in plan],
                                strict=True,
                            )
                        ),
                    )
                    print(report("participant message -> on a viewer's page", latency))
                    print(report("a page served (sessions, overview)", seen["pages"]))
                    print(
                        f"ozlab web idle, {len(plan)} viewers connected, {args.idle:g} s:"
                        f" {share * 100:.1f} % of one core"
                    )
                await stop(web)
                web = None
            # a round without the page after the last: each round with it is set against the
            # rounds without it just before and just after (a session's turns cost more as it
            # grows, so every rate drifts down, and B always after A would read as the page's)
            alone = await chat_and_note(people, args.messages, f"A{args.rounds}")
            without.append(len(alone) / alone.took)
            ratios = [b / statistics.mean(without[i : i + 2]) for i, b in enumerate(with_page)]
            print(
                "exchanges/s without the page: "
                + ", ".join(f"{x:.0f}" for x in without)
                + "; with it: "
                + ", ".join(f"{x:.0f}" for x in with_page)
                + "; each with the page over the two without it around it: "
                + ", ".join(f"{100 * (r - 1):+.1f} %" for r in ratios)
                + f" (median {100 * (statistics.median(ratios) - 1):+.1f} %)"
            )
        finally:
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


def arrivals(seen: dict[str, Any], sent: Sent, viewer_of: dict[int, str]) -> list[float]:
    """For each watched participant's messages: the seconds from sending to the page of
    the viewer who watches them."""
    found = []
    for text, (user, at) in sent.items():
        name = viewer_of.get(user)
        if name is None:
            continue
        arrived = seen["seen"][name].get(text)
        if arrived is None:
            raise RuntimeError(f"{text!r} never reached {name}'s page")
        found.append(arrived - at)
    return found


# --- the viewers, in a process of their own (a browser is not the bench's event loop) -------


async def start_viewers(
    base: str, plan: list[dict[str, Any]], every: float
) -> asyncio.subprocess.Process:
    eyes = await asyncio.create_subprocess_exec(
        sys.executable,
        __file__,
        "--as-viewers",
        json.dumps({"base": base, "plan": plan, "every": every}),
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        cwd=ROOT,
    )
    assert eyes.stdout is not None
    ready = await asyncio.wait_for(eyes.stdout.readline(), 60)
    if ready.strip() != b"READY":
        raise RuntimeError(f"the viewers did not start: {ready!r}")
    return eyes


async def stop_viewers(eyes: asyncio.subprocess.Process) -> dict[str, Any]:
    assert eyes.stdin is not None
    eyes.stdin.close()
    out, _ = await asyncio.wait_for(eyes.communicate(), 60)
    found: dict[str, Any] = json.loads(out)
    return found


async def as_viewers(config: dict[str, Any]) -> None:
    """The viewers' process: sign each in, hold their streams open and click around until
    ``idle`` (stop clicking) and the end of standard input; then what they saw, as JSON."""
    base = config["base"]
    viewers = [Viewer(base, v["name"]) for v in config["plan"]]
    for viewer, planned in zip(viewers, config["plan"], strict=True):
        if planned["link"]:
            await viewer.welcome(planned["link"].replace("http://127.0.0.1:8765", base))
        else:
            await viewer.sign_in()
        viewer.watch(planned["session"])
        viewer.browse(config["every"])
    print("READY", flush=True)
    reader = asyncio.StreamReader()
    loop = asyncio.get_running_loop()
    await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), sys.stdin)
    while line := await reader.readline():
        if line.strip() == b"idle":
            for viewer in viewers:
                viewer.tasks[-1].cancel()
    for viewer in viewers:
        await viewer.close()
    seen = {v.name: v.seen for v in viewers}
    print(json.dumps({"seen": seen, "pages": [s for v in viewers for s in v.pages]}))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sessions", type=int, default=200)
    parser.add_argument("--viewers", type=int, default=10)
    parser.add_argument("--messages", type=int, default=5, help="per participant and round")
    parser.add_argument("--rounds", type=int, default=3, help="rounds without and with the page")
    parser.add_argument("--page-every", type=float, default=1.0, help="seconds between pages")
    parser.add_argument("--idle", type=float, default=10.0, help="seconds of idle CPU")
    parser.add_argument("--as-viewers", help=argparse.SUPPRESS)  # the viewers' own process
    args = parser.parse_args()
    if args.as_viewers:
        asyncio.run(as_viewers(json.loads(args.as_viewers)))
        return 0
    with tempfile.TemporaryDirectory(prefix="ozlab-web-bench-") as tmp:
        asyncio.run(run(args, Path(tmp)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
