"""Exchanges per second and added latency: ozlab against bare echo bots, one emulator setup.

Usage::

    .venv/bin/python bench/exchanges.py [--participants 200] [--messages 10] [--json out.json]

For each bot, a fresh :class:`~bot.pilot.emulator.BotApiEmulator` and the simulated participants
run in this process; the bot runs in a subprocess (``bench/ozlab_bot.py`` or
``bench/echo_bots.py``), so the two compete for the machine's cores as on a real host. All
traffic stays on 127.0.0.1.

Load: every participant is a closed loop, like a person: send a message, wait for the reply,
send the next, ``--messages`` times. ozlab's participants first consent (``/start``, "I
agree", the task brief): not measured. The dialogue phase starts for everyone at once.

Measuring window: from the moment every participant has had ``--warmup`` replies (warm-up)
to the moment the first participant has had all of its replies, so the full population is
in the loop throughout. In that window:

- exchanges/s: replies that reached the emulator per second;
- latency: from ``getUpdates`` handing the message to the bot (``delivery_times``) to the
  reply's ``sendMessage`` reaching the emulator (``sent_at``), minus the system's own time
  (timed inside the ozlab bot process; zero for echo bots), p50 and p99;
- CPU: the bot process's user+system CPU seconds (``/proc/<pid>/stat``) per 1000 exchanges;
  the share of a core used by the bot and by this load-generating process; how long the bot's
  main thread waited for a core (``/proc/<pid>/schedstat``); and the cores everything else on
  the machine used (``/proc/stat``), which should stay near 0 for figures to be comparable.

``--bots`` picks rows (ozlab, ozlab-demo, ptb-httpx, ptb-aiohttp, aiogram);
``--py-spy DIR`` records each bot's dialogue phase with py-spy (GIL-holding samples, collapsed
stacks); ``--profile-dir DIR`` runs the ozlab bots under cProfile. Every row is bounded:
``--turn-timeout`` per reply, ``--row-timeout`` per phase.
"""
# ruff: noqa: ASYNC109 - the helpers take ``timeout=`` like the emulator's own

from __future__ import annotations

import argparse
import asyncio
import bisect
import contextlib
import json
import os
import platform
import secrets
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import asdict, dataclass, field
from importlib.metadata import version
from pathlib import Path
from typing import Any

from bot.core.errors import OzlabError
from bot.core.privacy import Privacy
from bot.pilot.emulator import BotApiEmulator, Participant
from bot.store import Access, open_store
from bot.store.blocking import run_blocking

ROOT = Path(__file__).resolve().parent.parent
BENCH = Path(__file__).resolve().parent
TOKEN = "123456789:AAE-bench-token-for-ozlab-0123456789ab"
FIRST_USER_ID = 500_000_000
MESSAGES = (
    "hello",
    "adventure games for Linux",
    "tell me about 2",
    "what about cheaper ones",
    "compare 1 and 2",
    "show me RPG games for Windows",
    "help",
    "is the first one on Alex wishlist?",
    "strategy games under 20",
    "what is on my wishlist",
)
"""What participants type, in turn: the demo shop answers each with one text, no success."""
CLK_TCK = os.sysconf("SC_CLK_TCK")


@dataclass(frozen=True)
class BotSpec:
    """A bot under test: how to start its process, whether participants consent first."""

    key: str
    label: str
    command: Callable[[argparse.Namespace, Path, str, str], list[str]]
    ozlab: bool = False


def _ozlab(
    system: str, server: bool = False
) -> Callable[[argparse.Namespace, Path, str, str], list[str]]:
    def command(args: argparse.Namespace, tmp: Path, url: str, secret: str) -> list[str]:
        cmd = [
            sys.executable,
            str(BENCH / "ozlab_bot.py"),
            "--url",
            url,
            "--token",
            TOKEN,
            f"--secret={secret}",  # one form: a token_urlsafe secret may start with "-"
            "--db",
            _server_study(args, tmp) if server else str(tmp / "study.sqlite"),
            "--system",
            system,
            "--times",
            str(tmp / "system-times.json"),
        ]
        if args.profile_dir is not None:
            cmd += ["--profile", str(args.profile_dir / f"ozlab-{system}.prof")]
        return cmd

    return command


def _echo(kind: str) -> Callable[[argparse.Namespace, Path, str, str], list[str]]:
    def command(args: argparse.Namespace, tmp: Path, url: str, secret: str) -> list[str]:
        return [sys.executable, str(BENCH / "echo_bots.py"), kind, "--url", url, "--token", TOKEN]

    return command


def _server_study(args: argparse.Namespace, tmp: Path) -> str:
    """A study of its own on the PostgreSQL server for this row (named after its folder)."""
    return f"{args.postgresql}?study=bench_{tmp.parent.name.rsplit('-', 1)[-1].lower()}"


BOTS = (
    BotSpec("ozlab", "ozlab, instant system", _ozlab("instant"), ozlab=True),
    BotSpec(
        "ozlab-postgresql",
        "ozlab, instant, PostgreSQL",
        _ozlab("instant", server=True),
        ozlab=True,
    ),
    BotSpec("ozlab-demo", "ozlab, DemoShop v1", _ozlab("demo"), ozlab=True),
    BotSpec("ptb-httpx", "PTB echo, HTTPXRequest", _echo("ptb-httpx")),
    BotSpec("ptb-aiohttp", "PTB echo, AiohttpRequest", _echo("ptb-aiohttp")),
    BotSpec("aiogram", "aiogram echo", _echo("aiogram")),
)


@dataclass(frozen=True)
class Exchange:
    """One message and its reply, as the emulator saw them (``time.monotonic()``)."""

    user_id: int
    index: int
    update_id: int
    delivered: float
    replied: float


@dataclass
class Result:
    """One row of the table."""

    key: str
    label: str
    exchanges_per_s: float = 0.0
    p50_ms: float = 0.0
    p99_ms: float = 0.0
    mean_ms: float = 0.0
    bot_cpu_s_per_1000: float | None = None
    bot_cpu_share: float | None = None
    load_cpu_share: float | None = None
    bot_cpu_wait_share: float | None = None
    """Share of the window the bot's main thread was runnable but had no CPU."""
    other_cpu_share: float | None = None
    """Cores used by everything else on the machine during the window (should be ~0)."""
    window_s: float = 0.0
    window_exchanges: int = 0
    total_exchanges: int = 0
    dialogue_s: float = 0.0
    system_p50_ms: float = 0.0
    db_exchanges: int | None = None
    load_average: tuple[float, float, float] = (0.0, 0.0, 0.0)
    errors: list[str] = field(default_factory=list)


# --- CPU -------------------------------------------------------------------------------------


def process_cpu(pid: int) -> float | None:
    """User + system CPU seconds of ``pid`` (``None`` once it is gone)."""
    try:
        raw = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    fields = raw[raw.rfind(")") + 2 :].split()
    return (int(fields[11]) + int(fields[12])) / CLK_TCK


def run_queue_wait(pid: int) -> float:
    """Seconds the main thread of ``pid`` was runnable but waiting for a CPU (0 if unknown)."""
    try:
        return int(Path(f"/proc/{pid}/schedstat").read_text().split()[1]) / 1e9
    except (OSError, IndexError, ValueError):
        return 0.0


def machine_busy() -> float:
    """CPU seconds all cores of the machine have spent busy since boot (``/proc/stat``)."""
    try:
        with open("/proc/stat") as stat:
            fields = stat.readline().split()[1:]
    except OSError:
        return 0.0
    user, nice, system, _idle, _iowait, irq, softirq, steal = (int(f) for f in fields[:8])
    return (user + nice + system + irq + softirq + steal) / CLK_TCK


class CpuSampler:
    """Samples, every ``interval`` seconds: the bot's CPU seconds, this process's, the whole
    machine's, and how long the bot's main thread waited for a CPU."""

    def __init__(self, pid: int, interval: float = 0.02) -> None:
        self._pid = pid
        self._interval = interval
        self.times: list[float] = []
        self.values: list[tuple[float, ...]] = []  # bot CPU, own CPU, bot wait, machine
        self._task: asyncio.Task[None] | None = None

    def sample(self) -> None:
        """Take one sample now."""
        bot = process_cpu(self._pid)
        if bot is not None:
            self.times.append(time.monotonic())
            own, wait = time.process_time(), run_queue_wait(self._pid)
            self.values.append((bot, own, wait, machine_busy()))

    async def _run(self) -> None:
        while True:
            self.sample()
            await asyncio.sleep(self._interval)

    def start(self) -> None:
        """Start sampling in the background."""
        self._task = asyncio.create_task(self._run())

    async def stop(self) -> None:
        """Stop sampling, with a last sample."""
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
        self.sample()

    def at(self, moment: float) -> tuple[float, ...] | None:
        """The sampled values at ``moment``, interpolated; ``None`` outside the samples."""
        times = self.times
        if not times or moment < times[0] or moment > times[-1]:
            return None
        index = min(max(1, bisect.bisect_left(times, moment)), len(times) - 1)
        if len(times) == 1:
            return self.values[0]
        t0, t1 = times[index - 1], times[index]
        share = (moment - t0) / (t1 - t0) if t1 > t0 else 0.0
        return tuple(
            a + (b - a) * share
            for a, b in zip(self.values[index - 1], self.values[index], strict=True)
        )


# --- participants ------------------------------------------------------------------------


async def consent(p: Participant, timeout: float) -> None:
    """/start, "I agree", and the task brief: the participant stands in the dialogue."""
    await p.send_text("/start")
    await p.wait_for_text("Privacy agreement", timeout)
    await p.tap(text="I agree")
    await p.wait_for_text("Your task", timeout)
    p.mark_read()


async def converse(
    p: Participant,
    emulator: BotApiEmulator,
    messages: int,
    timeout: float,
    out: list[tuple[int, int, int, float]],
) -> None:
    """Closed loop: send a message, wait for the reply, ``messages`` times."""
    offset = p.user_id % len(MESSAGES)  # not everyone types the same thing at the same moment
    for index in range(messages):
        before = len(p.messages)
        update_id = await p.send_text(MESSAGES[(offset + index) % len(MESSAGES)])
        await p.wait_for(lambda q, n=before: len(q.messages) > n, timeout)
        out.append((p.user_id, index, update_id, p.messages[before].sent_at))


# --- one bot ---------------------------------------------------------------------------------


def percentile(values: Sequence[float], q: float) -> float:
    """Nearest-rank percentile of sorted ``values`` (``q`` in 0..100)."""
    if not values:
        return float("nan")
    rank = max(1, min(len(values), round(q / 100 * len(values) + 0.5)))
    return values[rank - 1]


async def _await_ready(process: asyncio.subprocess.Process, timeout: float) -> None:
    assert process.stdout is not None
    async with asyncio.timeout(timeout):
        while True:
            line = await process.stdout.readline()
            if not line:
                code = await process.wait()
                raise RuntimeError(f"the bot exited before it was ready (code {code})")
            if line.strip() == b"READY":
                return


async def _stop_process(
    process: asyncio.subprocess.Process,
    how: signal.Signals = signal.SIGTERM,
    timeout: float = 20.0,
) -> None:
    if process.returncode is None:
        with contextlib.suppress(ProcessLookupError):
            process.send_signal(how)
    try:
        await asyncio.wait_for(process.wait(), timeout)
    except TimeoutError:
        with contextlib.suppress(ProcessLookupError):
            process.kill()
        await process.wait()


async def _start_py_spy(
    args: argparse.Namespace, spec: BotSpec, pid: int
) -> asyncio.subprocess.Process | None:
    """``py-spy record`` on the bot during the dialogue phase (``--py-spy DIR``), as collapsed
    stacks in ``DIR/<bot>.txt`` (one ``frame;frame;... count`` line per stack)."""
    if args.py_spy is None:
        return None
    executable = shutil.which("py-spy") or str(Path(sys.executable).with_name("py-spy"))
    out = args.py_spy / f"{spec.key}.txt"
    return await asyncio.create_subprocess_exec(
        executable,
        "record",
        "--pid",
        str(pid),
        "--rate",
        "250",
        "--gil",  # only samples holding the GIL: Python CPU, not threads parked on a queue
        "--format",
        "raw",
        "--output",
        str(out),
        stdout=asyncio.subprocess.DEVNULL,
        stderr=asyncio.subprocess.DEVNULL,
    )


async def _bounded(awaitables: list[Awaitable[Any]], timeout: float) -> list[str]:
    """Run concurrently within ``timeout``; the failures as text."""
    tasks = [asyncio.ensure_future(a) for a in awaitables]
    done, pending = await asyncio.wait(tasks, timeout=timeout)
    for task in pending:
        task.cancel()
    await asyncio.gather(*pending, return_exceptions=True)
    errors = [f"{type(t.exception()).__name__}: {t.exception()}" for t in done if t.exception()]
    if pending:
        errors.append(f"{len(pending)} participants still busy after {timeout:g} s")
    return errors


async def run_one(spec: BotSpec, args: argparse.Namespace, tmp: Path) -> Result:
    """Start the bot, play the load, stop everything; the row for this bot."""
    result = Result(spec.key, spec.label, load_average=os.getloadavg())
    secret = secrets.token_urlsafe(32)
    log_path = tmp / "bot.log"
    async with BotApiEmulator(TOKEN) as emulator:
        with log_path.open("wb") as log:
            process = await asyncio.create_subprocess_exec(
                *spec.command(args, tmp, emulator.server_url, secret),
                cwd=ROOT,
                stdout=asyncio.subprocess.PIPE,
                stderr=log,
                env={**os.environ, "PYTHONPATH": str(ROOT)},
            )
        sampler = CpuSampler(process.pid)
        spy: asyncio.subprocess.Process | None = None
        done: list[tuple[int, int, int, float]] = []
        try:
            await _await_ready(process, 60)
            participants = [
                emulator.participant(FIRST_USER_ID + i, first_name=f"P{i}")
                for i in range(args.participants)
            ]
            if spec.ozlab:
                result.errors += await _bounded(
                    [consent(p, args.turn_timeout) for p in participants], args.row_timeout
                )
            spy = await _start_py_spy(args, spec, process.pid)
            sampler.start()
            started = time.monotonic()
            result.errors += await _bounded(
                [
                    converse(p, emulator, args.messages, args.turn_timeout, done)
                    for p in participants
                ],
                args.row_timeout,
            )
            result.dialogue_s = time.monotonic() - started
            await sampler.stop()
        finally:
            if spy is not None:
                await _stop_process(spy, signal.SIGINT)
            await _stop_process(process)
            if process.stdout is not None:
                await process.stdout.read()
        if process.returncode not in (0, -signal.SIGTERM):
            result.errors.append(f"bot exited with {process.returncode}; see {log_path}")
        exchanges = [
            Exchange(uid, index, update_id, emulator.delivery_times[update_id], replied)
            for uid, index, update_id, replied in done
        ]
    system_ms = _system_times(spec, tmp, secret, args.participants)
    if spec.ozlab:
        result.db_exchanges = _db_exchanges(
            _server_study(args, tmp) if spec.key == "ozlab-postgresql" else tmp / "study.sqlite"
        )
        if result.db_exchanges != len(exchanges):
            result.errors.append(
                f"{result.db_exchanges} exchanges in the database, {len(exchanges)} replies seen"
            )
    _summarize(result, exchanges, system_ms, sampler, args)
    return result


def _system_times(
    spec: BotSpec, tmp: Path, secret: str, participants: int
) -> dict[int, list[float]]:
    """user id -> the system's time per turn in ms (turn 1 first); empty for echo bots."""
    path = tmp / "system-times.json"
    if not spec.ozlab or not path.exists():
        return {}
    raw: dict[str, float] = json.loads(path.read_text())
    path.unlink()
    privacy = Privacy(secret)
    times: dict[int, list[float]] = {}
    for i in range(participants):
        uid = FIRST_USER_ID + i
        session = f"{privacy.pseudonym(uid)}-1"
        turns, turn = [], 1
        while f"{session}#{turn}" in raw:
            turns.append(raw[f"{session}#{turn}"])
            turn += 1
        times[uid] = turns
    return times


def _db_exchanges(db: Path | str) -> int | None:
    """Replies the store holds, read through the store (either backend)."""

    async def count() -> int:
        store = await open_store(db, access=Access.READ)
        try:
            return sum(s.exchanges or 0 for s in await store.sessions(count_exchanges=True))
        finally:
            await store.close()

    with contextlib.suppress(OzlabError):
        return run_blocking(count)
    return None


def _own_time(system_ms: dict[int, list[float]], exchange: Exchange) -> float:
    """The system's time for this exchange in ms (0 when not measured: echo bots)."""
    turns = system_ms.get(exchange.user_id, [])
    return turns[exchange.index] if exchange.index < len(turns) else 0.0


def _summarize(
    result: Result,
    exchanges: list[Exchange],
    system_ms: dict[int, list[float]],
    sampler: CpuSampler,
    args: argparse.Namespace,
) -> None:
    result.total_exchanges = len(exchanges)
    by_user: dict[int, list[Exchange]] = {}
    for exchange in exchanges:
        by_user.setdefault(exchange.user_id, []).append(exchange)
    complete = [sorted(x, key=lambda e: e.index) for x in by_user.values()]
    complete = [x for x in complete if len(x) == args.messages]
    if len(complete) < args.participants or args.messages <= args.warmup:
        result.errors.append("not every participant finished: window over all exchanges")
        replied = sorted(e.replied for e in exchanges)
        if len(replied) < 2:
            return
        start, end = replied[0], replied[-1]
    else:
        start = max(x[args.warmup - 1].replied for x in complete) if args.warmup else 0.0
        end = min(x[-1].replied for x in complete)
        if end <= start:
            result.errors.append("no moment with everyone in the loop: window after warm-up")
            start = min(x[args.warmup].replied for x in complete) if args.warmup else 0.0
            end = max(x[-1].replied for x in complete)
        start = max(start, min(e.delivered for e in exchanges))
    window = [e for e in exchanges if start < e.replied <= end]
    result.window_s = end - start
    result.window_exchanges = len(window)
    if result.window_s > 0:
        result.exchanges_per_s = len(window) / result.window_s
    own = [_own_time(system_ms, e) for e in window]
    latencies = sorted(
        (e.replied - e.delivered) * 1000 - s for e, s in zip(window, own, strict=True)
    )
    result.p50_ms = percentile(latencies, 50)
    result.p99_ms = percentile(latencies, 99)
    result.mean_ms = sum(latencies) / len(latencies) if latencies else float("nan")
    result.system_p50_ms = percentile(sorted(own), 50) if own else 0.0
    first, last = sampler.at(start), sampler.at(end)
    if first is not None and last is not None and window and result.window_s > 0:
        result.bot_cpu_s_per_1000 = (last[0] - first[0]) / len(window) * 1000
        result.bot_cpu_share = (last[0] - first[0]) / result.window_s
        result.load_cpu_share = (last[1] - first[1]) / result.window_s
        result.bot_cpu_wait_share = (last[2] - first[2]) / result.window_s
        machine = (last[3] - first[3]) / result.window_s
        result.other_cpu_share = max(0.0, machine - result.bot_cpu_share - result.load_cpu_share)


# --- the whole run ---------------------------------------------------------------------------


def _share(value: float | None) -> str:
    return f"{value:.0%}" if value is not None else "-"


def format_table(results: list[Result]) -> str:
    """A plain-text table of the results."""
    header = (
        f"{'bot':<26} {'exch/s':>7} {'p50 ms':>8} {'p99 ms':>8} {'CPU s/1k':>9}"
        f" {'bot CPU':>8} {'bot wait':>9} {'load CPU':>9} {'other':>6} {'window':>13}"
    )
    lines = [header, "-" * len(header)]
    for r in results:
        cpu = f"{r.bot_cpu_s_per_1000:.2f}" if r.bot_cpu_s_per_1000 is not None else "-"
        window = f"{r.window_exchanges}/{r.window_s:.1f}s"
        lines.append(
            f"{r.label:<26} {r.exchanges_per_s:>7.0f} {r.p50_ms:>8.1f} {r.p99_ms:>8.1f}"
            f" {cpu:>9} {_share(r.bot_cpu_share):>8} {_share(r.bot_cpu_wait_share):>9}"
            f" {_share(r.load_cpu_share):>9} {_share(r.other_cpu_share):>6} {window:>13}"
        )
        for error in r.errors:
            lines.append(f"  ! {error}")
    lines.append(
        "CPU s/1k: bot process CPU seconds per 1000 exchanges; bot CPU / load CPU: share of one"
        " core used by the bot / by the emulator and participants; bot wait: share of the"
        " window the bot's main thread was runnable but waiting for a core; other: cores used by"
        " other processes during the window (a busy machine makes every figure lower)."
    )
    return "\n".join(lines)


def _git_state() -> dict[str, Any]:
    """The commit measured, and how many files differ from it (others may be editing)."""

    def git(*argv: str) -> str:
        done = subprocess.run(["git", *argv], cwd=ROOT, capture_output=True, text=True, check=False)
        return done.stdout.strip()

    changed = [line for line in git("status", "--porcelain").splitlines() if line]
    return {"head": git("rev-parse", "HEAD"), "changed_files": len(changed)}


def _environment() -> dict[str, Any]:
    packages = ("python-telegram-bot", "aiogram", "aiohttp", "httpx", "aiosqlite", "pydantic")
    versions = {}
    for name in packages:
        with contextlib.suppress(Exception):
            versions[name] = version(name)
    return {
        "git": _git_state(),
        "python": platform.python_version(),
        "machine": platform.machine(),
        "cpus": os.cpu_count(),
        "affinity": len(os.sched_getaffinity(0)),
        "packages": versions,
    }


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--participants", type=int, default=200)
    parser.add_argument("--messages", type=int, default=10, help="dialogue messages each")
    parser.add_argument("--warmup", type=int, default=2, help="replies each before measuring")
    parser.add_argument("--json", type=Path, help="also write the results here")
    parser.add_argument(
        "--bots",
        default=",".join(b.key for b in BOTS),
        help=f"comma-separated subset of {', '.join(b.key for b in BOTS)}",
    )
    parser.add_argument("--turn-timeout", type=float, default=30.0, help="seconds per reply")
    parser.add_argument("--row-timeout", type=float, default=300.0, help="seconds per phase")
    parser.add_argument("--profile-dir", type=Path, help="run ozlab bots under cProfile")
    parser.add_argument(
        "--py-spy", type=Path, help="py-spy record each bot's dialogue phase into this folder"
    )
    parser.add_argument("--keep", action="store_true", help="keep the temporary directory")
    parser.add_argument(
        "--postgresql",
        metavar="URL",
        help="the database of the ozlab-postgresql row (default: a throw-away server on"
        " 127.0.0.1, started here as the tests start theirs)",
    )
    return parser


def _log_tail(row_dir: Path, lines: int = 3) -> list[str]:
    """The last lines of a bot's stderr, to say why it failed."""
    log = row_dir / "bot.log"
    if not log.exists():
        return []
    return log.read_text(errors="replace").strip().splitlines()[-lines:]


async def run_all(args: argparse.Namespace, wanted: list[str], tmp: Path) -> list[Result]:
    """Every selected bot in turn, each against its own emulator."""
    results = []
    for spec in BOTS:
        if spec.key in wanted:
            print(f"running {spec.label} ...", file=sys.stderr, flush=True)
            row_dir = tmp / spec.key  # a fresh database and logs for every bot
            row_dir.mkdir()
            try:
                results.append(await run_one(spec, args, row_dir))
            except Exception as error:  # one broken bot must not hide the other rows
                log = row_dir / "bot.log"
                tail = (
                    log.read_text(errors="replace").strip().splitlines()[-3:]
                    if log.exists()
                    else []
                )
                results.append(Result(spec.key, spec.label, errors=[str(error), *tail]))
    return results


def main(argv: list[str] | None = None) -> int:
    """Run the benchmark, print the table, optionally write JSON; 1 if a row had errors."""
    args = _parser().parse_args(argv)
    if args.messages < 1 or args.participants < 1 or args.warmup < 0:
        raise SystemExit("--messages and --participants must be positive, --warmup >= 0")
    wanted = [k.strip() for k in args.bots.split(",") if k.strip()]
    unknown = set(wanted) - {b.key for b in BOTS}
    if unknown:
        raise SystemExit(f"unknown bots: {', '.join(sorted(unknown))}")
    for folder in (args.profile_dir, args.py_spy):
        if folder is not None:
            folder.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix="ozlab-bench-"))
    server = None
    if "ozlab-postgresql" in wanted and args.postgresql is None:
        sys.path.insert(0, str(BENCH.parent))
        from tests.postgres_server import PostgresServer

        server = PostgresServer()
        args.postgresql = server.fresh_database()
    try:
        results = asyncio.run(run_all(args, wanted, tmp))
    finally:
        if server is not None:
            server.stop()
        if args.keep:
            print(f"kept {tmp}", file=sys.stderr)
        else:
            shutil.rmtree(tmp, ignore_errors=True)
    print(
        f"\n{args.participants} participants x {args.messages} messages, closed loop; "
        f"warm-up {args.warmup} replies each; {os.cpu_count()} CPUs, "
        f"load average before: {results[0].load_average[0]:.2f}\n"
        if results
        else ""
    )
    print(format_table(results))
    if args.json is not None:
        document = {
            "arguments": {k: str(v) if isinstance(v, Path) else v for k, v in vars(args).items()},
            "environment": _environment(),
            "results": [asdict(r) for r in results],
        }
        args.json.write_text(json.dumps(document, indent=2))
    return 1 if any(r.errors for r in results) else 0


if __name__ == "__main__":
    sys.exit(main())
