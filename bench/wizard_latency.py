"""The wizard console's figures with 200 live sessions: how fast it sees, how fast it acts,
and what it costs while nothing happens.

Usage::

    .venv/bin/python bench/wizard_latency.py [--sessions 200] [--messages 5] [--idle 10]

The Bot API emulator and the simulated participants run in this process; the real bot runs
in its own process (``bench/ozlab_bot.py``: ``ozlab run``'s defaults, the demo shop as the
system, the command poll every 0.2 s); the console is the real ``Desk`` (and, for the idle
figure, the real Textual console in a pseudo-terminal). A console is a process of its own,
so each polling desk runs in a thread with its own event loop, never behind the
participants' one. All clocks are ``time.monotonic``.

1. participant → console: from ``getUpdates`` handing a participant's message to the bot
   (the emulator's ``delivery_times``) to the message being readable by a desk polling
   every 0.25 s as the console does (``live_sessions``, then ``transcript`` of what changed);
2. wizard → participant, ``say``: from the command row committed to the ``sendMessage``
   reaching the emulator (``sent_at``); all sessions chat meanwhile;
3. wizard → participant, a held reply sent as is: the study is gated, every participant
   writes once, a wizard desk approves each reply as soon as it sees it waiting: from the
   ``reply`` command committed to the reply's ``sendMessage``;
4. the console's CPU while idle: ``python -m wizard_console`` (what ``ozlab wizard`` runs)
   in an 80×24 pseudo-terminal beside the 200 idle sessions, its user+system CPU seconds
   (``/proc/<pid>/stat``) over ``--idle`` seconds.
"""
# ruff: noqa: ASYNC109 - the helpers take ``timeout=`` like the emulator's own

from __future__ import annotations

import argparse
import asyncio
import contextlib
import fcntl
import os
import random
import secrets
import shutil
import signal
import struct
import subprocess
import sys
import tempfile
import termios
import threading
import time
from collections.abc import Awaitable, Callable, Sequence
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bot.core.privacy import Privacy  # noqa: E402
from bot.core.vocabulary import CommandOutcome  # noqa: E402
from bot.desk.desk import Desk  # noqa: E402
from bot.pilot.emulator import BotApiEmulator, Participant  # noqa: E402

TOKEN = "123456789:AAE-bench-token-for-ozlab-0123456789ab"
FIRST_USER_ID = 600_000_000
WORDS = ("adventure games for Linux", "tell me about 2", "cheaper ones", "RPG games", "help")
SAY = "[wizard] "
CLK_TCK = os.sysconf("SC_CLK_TCK")


def process_cpu(pid: int) -> float:
    raw = Path(f"/proc/{pid}/stat").read_text()
    fields = raw[raw.rfind(")") + 2 :].split()
    return (int(fields[11]) + int(fields[12])) / CLK_TCK


def percentile(values: Sequence[float], q: float) -> float:
    """Nearest-rank percentile (``q`` in 0..100)."""
    ordered = sorted(values)
    if not ordered:
        return float("nan")
    return ordered[max(1, min(len(ordered), round(q / 100 * len(ordered) + 0.5))) - 1]


def report(name: str, seconds: Sequence[float]) -> str:
    ms = [s * 1000 for s in seconds]
    return (
        f"{name:<48} n={len(ms):>5}  p50={percentile(ms, 50):7.1f} ms  "
        f"p99={percentile(ms, 99):7.1f} ms  max={max(ms, default=float('nan')):7.1f} ms"
    )


# --- the console's eyes: a desk polling as the console does -----------------------------------


class DeskThread(threading.Thread):
    """A desk of its own, in a thread with its own event loop, calling ``poll`` every
    ``interval`` seconds as the console does until :meth:`stop`."""

    def __init__(
        self,
        db: Path,
        wizard: str,
        poll: Callable[[Desk], Awaitable[None]],
        interval: float = 0.25,
    ) -> None:
        super().__init__(daemon=True, name=f"desk-{wizard}")
        self.db, self.wizard, self.poll, self.interval = db, wizard, poll, interval
        self.polls: list[float] = []  # seconds each poll took
        self.error: BaseException | None = None
        self._halt = threading.Event()

    def run(self) -> None:
        try:
            asyncio.run(self._polling())
        except BaseException as error:  # handed to the caller by stop()
            self.error = error

    async def _polling(self) -> None:
        async with await Desk.open(self.db, self.wizard) as desk:
            while not self._halt.is_set():
                started = time.monotonic()
                await self.poll(desk)
                self.polls.append(time.monotonic() - started)
                await asyncio.sleep(max(0.0, self.interval - (time.monotonic() - started)))

    def stop(self) -> None:
        """Stop after the poll under way; a poll's failure is raised here."""
        self._halt.set()
        self.join()
        if self.error is not None:
            raise self.error


class Watcher:
    """The console's eyes: notes when each participant line first became readable."""

    def __init__(self) -> None:
        self.seen: dict[str, float] = {}  # participant text -> first readable
        self._turns: dict[str, int] = {}
        self._after: dict[str, float] = {}

    async def poll(self, desk: Desk) -> None:
        """What the console does each time: the sessions, then what changed in them."""
        for s in await desk.live_sessions():
            if self._turns.get(s.session_id) == s.turn:
                continue
            self._turns[s.session_id] = s.turn
            lines = await desk.transcript(s.session_id, after=self._after.get(s.session_id))
            now = time.monotonic()
            for line in lines:
                if line.who == "participant":
                    self.seen.setdefault(line.text, now)
                self._after[s.session_id] = max(self._after.get(s.session_id, 0), line.at)
        await desk.waiting_replies()


# --- participants ------------------------------------------------------------------------------


async def consent(p: Participant, timeout: float) -> None:
    await p.send_text("/start")
    await p.wait_for_text("Privacy agreement", timeout)
    await p.tap(text="I agree")
    await p.wait_for_text("Your task", timeout)
    p.mark_read()


def _system_reply_after(n: int) -> Any:
    def check(q: Participant) -> bool:
        return any(not m.text.startswith(SAY) for m in q.messages[n:])

    return check


async def chat(
    p: Participant, messages: int, think: float, timeout: float, sent: dict[str, int]
) -> None:
    """Closed loop with a pause to think: write, wait for the system's reply, again."""
    for k in range(messages):
        await asyncio.sleep(random.uniform(0, 2 * think))
        text = f"{WORDS[(p.user_id + k) % len(WORDS)]} ({p.user_id % 10_000}-{k})"
        before = len(p.messages)
        sent[text] = await p.send_text(text)
        await p.wait_for(_system_reply_after(before), timeout)


async def bounded(awaitables: list[Awaitable[Any]], timeout: float) -> None:
    tasks = [asyncio.ensure_future(a) for a in awaitables]
    done, pending = await asyncio.wait(tasks, timeout=timeout)
    for task in pending:
        task.cancel()
    failed = [t.exception() for t in done if t.exception()]
    if pending or failed:
        raise RuntimeError(f"{len(pending)} still busy, {len(failed)} failed: {failed[:3]}")


# --- the wizard's hands --------------------------------------------------------------------------


async def says(desk: Desk, sessions: list[str], every: float) -> dict[str, float]:
    """One ``say`` per session, spread out; text -> when its command row was committed."""
    written: dict[str, float] = {}
    for index, session in enumerate(sessions):
        text = f"{SAY}hello {index}"
        await desk.command("say", session, text=text)
        written[text] = time.monotonic()
        await asyncio.sleep(every)
    return written


class Approver:
    """A wizard who sends every waiting reply as is as soon as the console shows it."""

    def __init__(self) -> None:
        self.approved: dict[str, float] = {}  # session -> when its command row was committed

    async def poll(self, desk: Desk) -> None:
        for w in await desk.waiting_replies():
            if w.session_id not in self.approved:
                await desk.command("reply", w.session_id, action="approve")
                self.approved[w.session_id] = time.monotonic()


def sent_at(participants: Sequence[Participant], text: str) -> float | None:
    for p in participants:
        for m in p.messages:
            if m.text == text:
                return m.sent_at
    return None


# --- the console in a pseudo-terminal ----------------------------------------------------------


def console_idle_cpu(db: Path, seconds: float, warmup: float = 4.0) -> tuple[float, str]:
    """CPU share of ``python -m wizard_console`` in an 80×24 pty over ``seconds``."""
    master, slave = os.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 24, 80, 0, 0))
    env = {**os.environ, "TERM": "xterm-256color", "PYTHONPATH": str(ROOT), "COLUMNS": "80"}
    env["LINES"] = "24"
    process = subprocess.Popen(
        [sys.executable, "-m", "wizard_console", "--db", str(db), "--as", "bench"],
        stdin=slave,
        stdout=slave,
        stderr=slave,
        cwd=ROOT,
        env=env,
        start_new_session=True,
    )
    os.close(slave)
    screen = bytearray()

    def drain() -> None:  # a terminal reads what the app writes, or the app blocks
        with contextlib.suppress(OSError):
            while chunk := os.read(master, 65536):
                screen.extend(chunk[-4096:])

    reader = threading.Thread(target=drain, daemon=True)
    reader.start()
    try:
        time.sleep(warmup)
        if process.poll() is not None:
            raise RuntimeError(f"the console exited: {bytes(screen)[-500:]!r}")
        before, started = process_cpu(process.pid), time.monotonic()
        time.sleep(seconds)
        used = process_cpu(process.pid) - before
        share = used / (time.monotonic() - started)
        os.write(master, b"q")
        try:
            process.wait(10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
        os.close(master)
    return share, f"exit {process.returncode}"


# --- the run -----------------------------------------------------------------------------------


async def run(args: argparse.Namespace, tmp: Path) -> None:
    db = tmp / "study.sqlite"
    secret = secrets.token_urlsafe(32)
    finished = False
    async with BotApiEmulator(TOKEN) as emulator:
        log = (tmp / "bot.log").open("wb")
        bot = await asyncio.create_subprocess_exec(
            sys.executable,
            str(ROOT / "bench" / "ozlab_bot.py"),
            "--url",
            emulator.server_url,
            "--token",
            TOKEN,
            "--secret",
            secret,
            "--db",
            str(db),
            "--system",
            "demo",
            cwd=ROOT,
            stdout=asyncio.subprocess.PIPE,
            stderr=log,
            env={**os.environ, "PYTHONPATH": str(ROOT)},
        )
        try:
            assert bot.stdout is not None
            async with asyncio.timeout(60):
                while (await bot.stdout.readline()).strip() != b"READY":
                    pass
            people = [emulator.participant(FIRST_USER_ID + i) for i in range(args.sessions)]
            await bounded([consent(p, 60) for p in people], 300)
            async with await Desk.open(db, "bench") as desk:
                await measure(args, desk, db, emulator, people, secret)
            share, how = await asyncio.to_thread(console_idle_cpu, db, args.idle)
            print(
                f"console idle, {len(people)} live sessions, {args.idle:g} s in an 80x24 pty:"
                f" {share * 100:.1f} % of one core ({how})"
            )
            finished = True
        finally:
            if bot.returncode is None:
                bot.send_signal(signal.SIGTERM)
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(bot.wait(), 20)
            if bot.returncode is None:
                bot.kill()
                await bot.wait()
            log.close()
    if finished and args.keep is not None:
        keep(db, args.keep)


async def measure(
    args: argparse.Namespace,
    desk: Desk,
    db: Path,
    emulator: BotApiEmulator,
    people: list[Participant],
    secret: str,
) -> None:
    """The three latencies, printed as they are measured."""
    sessions = [s.session_id for s in await desk.live_sessions(state="dialogue")]
    print(f"{len(sessions)} live sessions; the bot polls commands every 0.2 s")
    watcher = Watcher()
    eyes = DeskThread(db, "watcher", watcher.poll)
    eyes.start()
    sent: dict[str, int] = {}
    chatting = bounded([chat(p, args.messages, args.think, 60, sent) for p in people], 600)
    said, _ = await asyncio.gather(
        says(desk, random.sample(sessions, len(sessions)), args.say_every), chatting
    )
    await emulator.wait_until(lambda e: all(sent_at(people, t) for t in said), 60)
    async with asyncio.timeout(10):  # the console's last poll may still be due
        while not all(t in watcher.seen for t in sent):  # noqa: ASYNC110 - a thread polls
            await asyncio.sleep(0.05)
    seen = [watcher.seen[t] - emulator.delivery_times[u] for t, u in sent.items()]
    print(report("participant message -> readable in the console", seen))
    says_ms = [sent_at(people, t) - at for t, at in said.items()]  # type: ignore[operator]
    print(report("wizard say (row written) -> sendMessage", says_ms))

    await applied(desk, await desk.gate("study:hmd", True))
    approver = Approver()
    hands = DeskThread(db, "wizard", approver.poll)
    hands.start()
    counts = {p.user_id: len(p.messages) for p in people}
    for p in people:
        await p.send_text(f"one more question ({p.user_id % 10_000})")
    await bounded([p.wait_for(_system_reply_after(counts[p.user_id]), 60) for p in people], 120)
    hands.stop()
    privacy = Privacy(secret)
    replies = [
        p.messages[counts[p.user_id]].sent_at
        - approver.approved[f"{privacy.pseudonym(p.user_id)}-1"]
        for p in people
    ]
    print(report("wizard 'send as is' (row written) -> sendMessage", replies))
    await applied(desk, await desk.gate("study:hmd", False))
    eyes.stop()
    print(report(f"one console poll of {len(sessions)} sessions (desk)", eyes.polls))


async def applied(desk: Desk, command_id: int) -> None:
    """Wait until the bot applied the command: the figures after it assume it was."""
    outcome = await desk.wait(command_id, 10)
    if outcome is not CommandOutcome.APPLIED:
        raise RuntimeError(f"command #{command_id}: {outcome or 'not applied within 10 s'}")


def keep(db: Path, to: Path) -> None:
    """Copy the study database once every process let go of it: the last connection to
    close checkpoints the write-ahead log, and a log left behind is copied beside it."""
    shutil.copyfile(db, to)
    wal = db.with_name(db.name + "-wal")
    if wal.exists():
        shutil.copyfile(wal, to.with_name(to.name + "-wal"))
    print(f"the study database is kept at {to}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sessions", type=int, default=200)
    parser.add_argument("--messages", type=int, default=5, help="per participant")
    parser.add_argument("--think", type=float, default=1.0, help="mean pause, seconds")
    parser.add_argument("--say-every", type=float, default=0.02, help="seconds between says")
    parser.add_argument("--idle", type=float, default=10.0, help="seconds of idle CPU")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--keep", type=Path, help="copy the study database here at the end")
    args = parser.parse_args()
    random.seed(args.seed)
    with tempfile.TemporaryDirectory(prefix="ozlab-wizard-bench-") as tmp:
        asyncio.run(run(args, Path(tmp)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
