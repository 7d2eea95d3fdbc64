"""What the HTTP adapters cost: per call over a bare aiohttp POST, and for the whole bot.

Usage::

    .venv/bin/python bench/adapters.py [--calls 3000] [--json out.json]

Two parts, both against the same minimal server that answers every protocol instantly
(fixed bytes, no work: ``--serve`` runs it), in its own process, on 127.0.0.1 only:

1. **Per call** (``micro``), for each adapter (``openai``, ``rasa``, ``http``): ``--calls``
   pairs of calls, each pair one *direct* call and one adapter ``respond()``, in a random
   order per pair (interleaved, so drift and noise hit both alike), after ``--warmup`` pairs
   that are not measured. The direct call is what one would write by hand: JSON-encode the
   same body, POST it with the same headers through an ``aiohttp.ClientSession`` with the same
   pooling as :class:`~bot.systems.http_json.JsonClient` (one keep-alive connection here,
   calls being sequential), read the body, ``json.loads`` it, take the text. The adapter is
   built by ``build_systems`` from a study spec, as the bot builds it. Reported: p50/p99 of
   each, and the overhead (adapter minus direct) at p50 and p99, with a bootstrap 95 %
   interval of the p50 overhead, and the cores other processes used meanwhile (should be ~0).
   ``--server in-process`` runs the server in this event loop instead, and ``--pin same|split``
   puts client and server on one core or on two, to see whether it matters (the absolute
   latencies move with it; the overhead hardly does).
2. **The bot** (``bot``): ``bench/exchanges.py``'s closed loop (``--participants`` x
   ``--messages``, each bot in its own process against the Bot API emulator) for two rows:
   the existing "ozlab, instant system" (an in-process system that answers at once) and
   ozlab with the study's systems rewritten as ``type: openai`` pointing at the instant
   server (``bench/ozlab_bot.py --system openai``). The openai row's latency is *not* reduced
   by the system's time (unlike the instant row, whose system takes microseconds), so the
   difference between the rows is what the adapter, loopback HTTP and the server add; the
   call time as timed inside the bot is shown apart, and the server's CPU too (on a small
   machine the server competes with the bot for cores). ``--rounds`` repeats both rows,
   alternating.

Bounded: ``--phase-timeout`` for the per-call part, ``bench/exchanges.py``'s ``--turn-timeout``
and ``--row-timeout`` for each bot row, and the server stops by itself after ``--lifetime``.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import random
import shutil
import signal
import statistics
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import aiohttp
from aiohttp import web

HERE = Path(__file__).resolve()
BENCH = HERE.parent
ROOT = BENCH.parent
if str(BENCH) not in sys.path:  # ``exchanges`` and ``ozlab_bot`` live beside this file
    sys.path.insert(0, str(BENCH))

import exchanges  # noqa: E402
from ozlab_bot import KEY_ENV, openai_spec  # noqa: E402

from bot.core.conversation import Conversation  # noqa: E402
from bot.systems.base import System, Turn  # noqa: E402
from bot.systems.http_json import JsonClient  # noqa: E402
from bot.systems.registry import build_systems, close_systems  # noqa: E402
from scenarios.loading import load_study  # noqa: E402
from scenarios.systems import HttpSystem, RasaSystem, SystemSpec  # noqa: E402

BENCH_KEY = "sk-bench-0123456789abcdefghijklmnop"
"""A made-up API key: the openai adapter sends it (and redacts it) as with a hosted API."""
USER_AGENT = "ozlab (human evaluation of dialogue systems)"
REPLY = "Lantern Road is an adventure game that runs on Linux; it costs 14.99."
OPENAI_PATH = "/v1/chat/completions"
RASA_PATH = "/webhooks/rest/webhook"
HTTP_PATH = "/chat"


# --- the instant server ------------------------------------------------------------------


def instant_app() -> web.Application:
    """Answers each protocol with fixed bytes, after reading the request's body."""
    completion = {
        "id": "chatcmpl-bench",
        "object": "chat.completion",
        "created": 1700000000,
        "model": "bench-instant",
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": REPLY},
                "finish_reason": "stop",
            }
        ],
        "usage": {"prompt_tokens": 120, "completion_tokens": 18, "total_tokens": 138},
    }
    bodies = {
        OPENAI_PATH: completion,
        RASA_PATH: [{"recipient_id": "bench", "text": REPLY}],
        HTTP_PATH: {"text": REPLY},
    }
    app = web.Application()
    for path, answer in bodies.items():
        raw = json.dumps(answer).encode()

        async def handle(request: web.Request, raw: bytes = raw) -> web.Response:
            await request.read()
            return web.Response(body=raw, content_type="application/json")

        app.router.add_post(path, handle)
    return app


@contextlib.asynccontextmanager
async def serving_here():
    """The instant server in this process's event loop; yields its base address."""
    runner = web.AppRunner(instant_app(), access_log=None, shutdown_timeout=0.1)
    await runner.setup()
    try:
        site = web.TCPSite(runner, "127.0.0.1", 0)
        await site.start()
        yield f"http://127.0.0.1:{runner.addresses[0][1]}"
    finally:
        await runner.cleanup()


async def _serve_forever(lifetime: float) -> None:
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for signum in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(signum, stop.set)
    async with serving_here() as url:
        print(f"URL {url}", flush=True)
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(stop.wait(), lifetime)


@dataclass
class Server:
    """The instant server: its address, and its process when it has one of its own."""

    url: str
    process: asyncio.subprocess.Process | None = None
    cpu_mark: float | None = None

    def cpu(self) -> float | None:
        """The server process's CPU seconds so far (``None`` in-process)."""
        return exchanges.process_cpu(self.process.pid) if self.process is not None else None


@contextlib.asynccontextmanager
async def instant_server(where: str, lifetime: float, cpu: int | None = None):
    """The instant server in its own process (``where="process"``, on core ``cpu`` if
    given) or in this one."""
    if where == "in-process":
        async with serving_here() as url:
            yield Server(url)
        return
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        str(HERE),
        "--serve",
        "--lifetime",
        str(lifetime),
        stdout=asyncio.subprocess.PIPE,
        cwd=ROOT,
    )
    try:
        assert process.stdout is not None
        async with asyncio.timeout(30):
            line = (await process.stdout.readline()).decode().strip()
        if not line.startswith("URL "):
            raise RuntimeError(f"the instant server did not start (it said {line!r})")
        if cpu is not None:
            os.sched_setaffinity(process.pid, {cpu})
        yield Server(line.removeprefix("URL "), process)
    finally:
        await exchanges._stop_process(process, timeout=5.0)


# --- part 1: per call ----------------------------------------------------------------------


def conversation() -> Conversation:
    """A call in the middle of a session: the hmd brief, 4 finished exchanges, a message."""
    scenario = load_study("hmd").scenarios["hmd-gift"]
    history = tuple(
        Turn(user, f"Here is what I found for '{user}': Lantern Road, Paper Kingdoms.")
        for user in exchanges.MESSAGES[:4]
    )
    return Conversation(
        session_id="Xq3b9TzK0pLm-1",
        scenario_id=scenario.id,
        brief=scenario.brief,
        history=history,
        message=exchanges.MESSAGES[4],
        system_prompt=scenario.system_prompt,
    )


@dataclass(frozen=True)
class Case:
    """One adapter: its study spec, and what a hand-written call sends and reads."""

    key: str
    spec: Callable[[str], SystemSpec]
    path: str
    payload: Callable[[System, Conversation], Any]
    text: Callable[[Any], str]
    headers: dict[str, str] = field(default_factory=dict)


CASES = (
    Case(
        "openai",
        lambda url: openai_spec("llm", url, KEY_ENV),
        OPENAI_PATH,
        lambda system, conv: system.request(conv),  # type: ignore[attr-defined]
        lambda answer: answer["choices"][0]["message"]["content"].strip(),
        {"Authorization": f"Bearer {BENCH_KEY}"},
    ),
    Case(
        "rasa",
        lambda url: RasaSystem(type="rasa", id="rasa", url=url),
        RASA_PATH,
        lambda system, conv: {"sender": conv.session_id, "message": conv.message},
        lambda answer: answer[0]["text"],
    ),
    Case(
        "http",
        lambda url: HttpSystem(type="http", id="service", url=url + HTTP_PATH),
        HTTP_PATH,
        lambda system, conv: system.request(conv),  # type: ignore[attr-defined]
        lambda answer: answer["text"],
    ),
)


@dataclass
class CallResult:
    """One adapter's row: latencies in microseconds."""

    adapter: str
    calls: int
    direct_p50_us: float
    direct_p99_us: float
    adapter_p50_us: float
    adapter_p99_us: float
    overhead_p50_us: float
    overhead_p99_us: float
    overhead_p50_ci_us: tuple[float, float]
    overhead_mean_us: float
    request_bytes: int
    other_cpu_share: float | None = None
    """Cores used by other processes while measuring (neither this one nor the server)."""


def _percentile(values: list[float], q: float) -> float:
    return exchanges.percentile(sorted(values), q)


def _bootstrap_p50_diff(
    direct: list[float], adapter: list[float], rng: random.Random, rounds: int = 400
) -> tuple[float, float]:
    """A 95 % percentile-bootstrap interval of p50(adapter) - p50(direct)."""
    diffs = []
    n = len(direct)
    for _ in range(rounds):
        a = sorted(adapter[rng.randrange(n)] for _ in range(n))
        d = sorted(direct[rng.randrange(n)] for _ in range(n))
        diffs.append(a[n // 2] - d[n // 2])
    diffs.sort()
    return diffs[int(0.025 * rounds)], diffs[int(0.975 * rounds) - 1]


async def measure_case(case: Case, server: Server, args: argparse.Namespace) -> CallResult:
    """Interleaved direct and adapter calls against the server; latencies per call."""
    url = server.url
    systems = build_systems([case.spec(url)], env={KEY_ENV: BENCH_KEY}, client=JsonClient())
    (system,) = systems.values()
    conv = conversation()
    payload = case.payload(system, conv)
    endpoint = url + case.path
    headers = {"Content-Type": "application/json", "Accept": "application/json", **case.headers}
    session = aiohttp.ClientSession(  # the same pooling and timeouts as JsonClient's session
        connector=aiohttp.TCPConnector(limit=256, limit_per_host=0),
        timeout=aiohttp.ClientTimeout(total=None, sock_connect=None, sock_read=None),
        headers={"User-Agent": USER_AGENT},
        cookie_jar=aiohttp.DummyCookieJar(),
    )

    async def direct() -> str:
        body = json.dumps(payload, ensure_ascii=False).encode("utf-8")
        async with session.post(endpoint, data=body, headers=headers) as response:
            response.raise_for_status()
            answer = json.loads(await response.read())
        return case.text(answer)

    async def adapter() -> str:
        return (await system.respond(conv)).texts[0]

    rng = random.Random(args.seed)
    times: dict[str, list[float]] = {"direct": [], "adapter": []}
    calls: dict[str, Callable[[], Awaitable[str]]] = {"direct": direct, "adapter": adapter}
    try:
        for text in (await direct(), await adapter()):
            if text != REPLY:
                raise RuntimeError(f"{case.key}: unexpected reply {text!r}")
        mark: tuple[float, ...] = ()
        for pair in range(args.warmup + args.calls):
            if pair == args.warmup:
                mark = (time.monotonic(), exchanges.machine_busy(), time.process_time())
                server.cpu_mark = server.cpu()
            order = ["direct", "adapter"] if rng.random() < 0.5 else ["adapter", "direct"]
            for name in order:
                started = time.perf_counter_ns()
                await calls[name]()
                elapsed = (time.perf_counter_ns() - started) / 1000
                if pair >= args.warmup:
                    times[name].append(elapsed)
        other = _other_cores(mark, server)
    finally:
        await session.close()
        await close_systems(systems)
    d, a = times["direct"], times["adapter"]
    return CallResult(
        adapter=case.key,
        calls=args.calls,
        direct_p50_us=_percentile(d, 50),
        direct_p99_us=_percentile(d, 99),
        adapter_p50_us=_percentile(a, 50),
        adapter_p99_us=_percentile(a, 99),
        overhead_p50_us=_percentile(a, 50) - _percentile(d, 50),
        overhead_p99_us=_percentile(a, 99) - _percentile(d, 99),
        overhead_p50_ci_us=_bootstrap_p50_diff(d, a, rng),
        overhead_mean_us=sum(a) / len(a) - sum(d) / len(d),
        request_bytes=len(json.dumps(payload, ensure_ascii=False).encode("utf-8")),
        other_cpu_share=other,
    )


def _other_cores(mark: tuple[float, ...], server: Server) -> float | None:
    """Cores used since ``mark`` by every process but this one and the server."""
    if not mark or server.process is None:
        return None
    started, busy, own = mark
    elapsed = time.monotonic() - started
    server_cpu = server.cpu()
    if elapsed <= 0 or server_cpu is None or server.cpu_mark is None:
        return None
    used = exchanges.machine_busy() - busy - (time.process_time() - own)
    return max(0.0, (used - (server_cpu - server.cpu_mark)) / elapsed)


async def run_micro(args: argparse.Namespace) -> tuple[list[CallResult], dict[str, float]]:
    """Every adapter against one instant server; also the server's CPU per call."""
    cores = sorted(os.sched_getaffinity(0))
    server_cpu = None
    if args.pin != "none" and args.server == "process":
        server_cpu = cores[0] if args.pin == "same" or len(cores) < 2 else cores[1]
        os.sched_setaffinity(0, {cores[0]})  # this process (the client) on the first core
    try:
        return await _run_micro(args, server_cpu)
    finally:
        os.sched_setaffinity(0, cores)


async def _run_micro(
    args: argparse.Namespace, server_cpu: int | None
) -> tuple[list[CallResult], dict[str, float]]:
    results = []
    async with instant_server(args.server, args.lifetime, server_cpu) as server:
        cpu_before = server.cpu()
        async with asyncio.timeout(args.phase_timeout):
            for case in CASES:
                if case.key in args.adapters:
                    print(f"per call: {case.key} ...", file=sys.stderr, flush=True)
                    results.append(await measure_case(case, server, args))
        cpu_after = server.cpu()
    extra: dict[str, float] = {}
    if cpu_before is not None and cpu_after is not None and results:
        served = len(results) * 2 * (args.calls + args.warmup + 1)
        extra["server_cpu_us_per_call"] = (cpu_after - cpu_before) / served * 1e6
    return results, extra


def format_micro(results: list[CallResult], args: argparse.Namespace) -> str:
    header = (
        f"{'adapter':<8} {'direct p50':>11} {'p99':>8} {'adapter p50':>12} {'p99':>8}"
        f" {'overhead p50':>13} {'(95% CI)':>14} {'p99':>8} {'mean':>7} {'req B':>6}"
        f" {'other':>6}"
    )
    lines = [header, "-" * len(header)]
    for r in results:
        low, high = r.overhead_p50_ci_us
        lines.append(
            f"{r.adapter:<8} {r.direct_p50_us:>11.0f} {r.direct_p99_us:>8.0f}"
            f" {r.adapter_p50_us:>12.0f} {r.adapter_p99_us:>8.0f}"
            f" {r.overhead_p50_us:>+13.0f} {f'{low:+.0f}..{high:+.0f}':>14}"
            f" {r.overhead_p99_us:>+8.0f} {r.overhead_mean_us:>+7.0f} {r.request_bytes:>6}"
            f" {exchanges._share(r.other_cpu_share):>6}"
        )
    lines.append(
        f"microseconds per call, {args.calls} interleaved pairs after {args.warmup} warm-up"
        f" pairs, one call at a time; server: {args.server}, pinned: {args.pin}. overhead ="
        " adapter - direct at the same percentile; mean = difference of the means;"
        " req B = request body bytes; other = cores used by other processes meanwhile."
    )
    return "\n".join(lines)


# --- part 2: the bot --------------------------------------------------------------------


CALL_TIMES = "call-times.json"


def _ozlab_openai(url: str) -> Callable[[argparse.Namespace, Path, str, str], list[str]]:
    def command(args: argparse.Namespace, tmp: Path, api: str, secret: str) -> list[str]:
        base = exchanges._ozlab("openai")(args, tmp, api, secret)
        # Another file than exchanges.py's "system-times.json": its latency is not reduced
        # by the call's time, so the adapter's cost stays in it; the call times are read here.
        at = base.index("--times")
        base[at + 1] = str(tmp / CALL_TIMES)
        return [*base, "--system-url", url]

    return command


@dataclass
class BotRow:
    """A row of bench/exchanges.py, plus the system call as the bot timed it."""

    result: exchanges.Result
    round: int
    call_p50_ms: float | None = None
    call_p99_ms: float | None = None
    server_cpu_s_per_1000: float | None = None
    server_cpu_share: float | None = None


async def run_bots(args: argparse.Namespace, tmp: Path) -> list[BotRow]:
    """The instant row and the openai row, alternating, ``--rounds`` times."""
    ex_args = exchanges._parser().parse_args(
        [
            "--participants",
            str(args.participants),
            "--messages",
            str(args.messages),
            "--warmup",
            str(args.bot_warmup),
            "--turn-timeout",
            str(args.turn_timeout),
            "--row-timeout",
            str(args.row_timeout),
        ]
    )
    rows: list[BotRow] = []
    os.environ[KEY_ENV] = BENCH_KEY  # the bot process inherits it: the adapter sends a key
    async with instant_server("process", args.lifetime) as server:
        specs = [
            next(b for b in exchanges.BOTS if b.key == "ozlab"),
            exchanges.BotSpec(
                "ozlab-openai", "ozlab, openai adapter", _ozlab_openai(server.url), ozlab=True
            ),
        ]
        for number in range(1, args.rounds + 1):
            for spec in specs:
                print(f"bot: {spec.label}, round {number} ...", file=sys.stderr, flush=True)
                row_dir = tmp / f"{spec.key}-{number}"
                row_dir.mkdir()
                cpu_before = server.cpu()
                try:
                    result = await exchanges.run_one(spec, ex_args, row_dir)
                except Exception as error:  # one broken row must not hide the others
                    tail = exchanges._log_tail(row_dir)
                    result = exchanges.Result(spec.key, spec.label, errors=[str(error), *tail])
                row = BotRow(result, number)
                cpu_after = server.cpu()
                path = row_dir / CALL_TIMES
                if spec.key == "ozlab-openai" and path.exists():
                    calls = sorted(json.loads(path.read_text()).values())
                    if calls:
                        row.call_p50_ms = _percentile(calls, 50)
                        row.call_p99_ms = _percentile(calls, 99)
                    if cpu_before is not None and cpu_after is not None and calls:
                        row.server_cpu_s_per_1000 = (cpu_after - cpu_before) / len(calls) * 1000
                        if result.dialogue_s > 0:
                            row.server_cpu_share = (cpu_after - cpu_before) / result.dialogue_s
                rows.append(row)
    return rows


def _opt(value: float | None, fmt: str) -> str:
    return format(value, fmt) if value is not None else "-"


def format_bots(rows: list[BotRow], args: argparse.Namespace) -> str:
    header = (
        f"{'bot':<24} {'rnd':>3} {'exch/s':>7} {'p50 ms':>7} {'p99 ms':>7} {'CPU s/1k':>9}"
        f" {'bot CPU':>8} {'wait':>5} {'load':>5} {'other':>6} {'call p50':>9} {'p99':>6}"
        f" {'srv s/1k':>9} {'srv CPU':>8} {'window':>12}"
    )
    lines = [header, "-" * len(header)]
    for row in rows:
        r = row.result
        lines.append(
            f"{r.label:<24} {row.round:>3} {r.exchanges_per_s:>7.0f} {r.p50_ms:>7.1f}"
            f" {r.p99_ms:>7.1f} {_opt(r.bot_cpu_s_per_1000, '.2f'):>9}"
            f" {exchanges._share(r.bot_cpu_share):>8} {exchanges._share(r.bot_cpu_wait_share):>5}"
            f" {exchanges._share(r.load_cpu_share):>5} {exchanges._share(r.other_cpu_share):>6}"
            f" {_opt(row.call_p50_ms, '.2f'):>9} {_opt(row.call_p99_ms, '.1f'):>6}"
            f" {_opt(row.server_cpu_s_per_1000, '.3f'):>9}"
            f" {exchanges._share(row.server_cpu_share):>8}"
            f" {f'{r.window_exchanges}/{r.window_s:.1f}s':>12}"
        )
        for error in r.errors:
            lines.append(f"  ! {error}")
    if args.rounds > 1:
        lines.append("median over rounds:")
        for label in dict.fromkeys(row.result.label for row in rows):
            mine = [r for r in rows if r.result.label == label and not r.result.errors]
            if not mine:
                continue
            cpu = [r.result.bot_cpu_s_per_1000 for r in mine if r.result.bot_cpu_s_per_1000]
            lines.append(
                f"  {label:<22} {statistics.median(r.result.exchanges_per_s for r in mine):>7.0f}"
                f" exch/s, p50 {statistics.median(r.result.p50_ms for r in mine):.1f} ms,"
                f" p99 {statistics.median(r.result.p99_ms for r in mine):.1f} ms,"
                f" CPU {statistics.median(cpu) if cpu else float('nan'):.2f} s/1k"
                f" ({len(mine)} rounds)"
            )
    lines.append(
        f"{args.participants} participants x {args.messages} messages, closed loop, warm-up"
        f" {args.bot_warmup} replies each. p50/p99: added latency (getUpdates hands the message"
        " over -> the reply reaches the emulator); the instant row subtracts its system's time"
        " (microseconds), the openai row does not. call p50/p99: respond() of the openai"
        " adapter as timed in the bot (ms, all calls). srv: the instant server's CPU s per 1000"
        " calls and its share of a core over the dialogue phase; 'other' includes it."
    )
    return "\n".join(lines)


# --- the whole run ---------------------------------------------------------------------------


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--calls", type=int, default=3000, help="measured pairs per adapter")
    parser.add_argument("--warmup", type=int, default=300, help="unmeasured pairs first")
    parser.add_argument(
        "--adapters", default="openai,rasa,http", help="comma-separated subset of the adapters"
    )
    parser.add_argument("--server", choices=("process", "in-process"), default="process")
    parser.add_argument(
        "--pin",
        choices=("none", "split", "same"),
        default="none",
        help="per-call part: client and server on two cores (split), one core (same) or free",
    )
    parser.add_argument("--parts", default="micro,bot", help="micro, bot or both")
    parser.add_argument("--participants", type=int, default=200)
    parser.add_argument("--messages", type=int, default=10)
    parser.add_argument("--bot-warmup", type=int, default=2, help="replies each, not measured")
    parser.add_argument("--rounds", type=int, default=1, help="bot rows, alternating")
    parser.add_argument("--turn-timeout", type=float, default=30.0)
    parser.add_argument("--row-timeout", type=float, default=300.0)
    parser.add_argument("--phase-timeout", type=float, default=600.0, help="per-call part")
    parser.add_argument("--lifetime", type=float, default=3600.0, help="server stops after")
    parser.add_argument("--seed", type=int, default=4)
    parser.add_argument("--json", type=Path, help="also write the results here")
    parser.add_argument("--serve", action="store_true", help=argparse.SUPPRESS)
    return parser


def main(argv: list[str] | None = None) -> int:
    """Run the selected parts, print the tables, optionally write JSON; 1 on errors."""
    args = _parser().parse_args(argv)
    if args.serve:
        asyncio.run(_serve_forever(args.lifetime))
        return 0
    args.adapters = [a.strip() for a in args.adapters.split(",") if a.strip()]
    parts = {p.strip() for p in args.parts.split(",") if p.strip()}
    if unknown := set(args.adapters) - {c.key for c in CASES}:
        raise SystemExit(f"unknown adapters: {', '.join(sorted(unknown))}")
    if unknown := parts - {"micro", "bot"}:
        raise SystemExit(f"unknown parts: {', '.join(sorted(unknown))}")
    if args.calls < 10 or args.warmup < 0 or args.rounds < 1:
        raise SystemExit("--calls must be at least 10, --warmup >= 0, --rounds >= 1")
    print(f"{os.cpu_count()} CPUs, load average before: {os.getloadavg()[0]:.2f}", file=sys.stderr)
    document: dict[str, Any] = {
        "arguments": {k: str(v) if isinstance(v, Path) else v for k, v in vars(args).items()},
        "environment": exchanges._environment(),
        "load_average_before": os.getloadavg(),
    }
    failed = False
    if "micro" in parts:
        micro, extra = asyncio.run(run_micro(args))
        print("\n" + format_micro(micro, args))
        if "server_cpu_us_per_call" in extra:
            print(f"server CPU per call: {extra['server_cpu_us_per_call']:.0f} us")
        document["micro"] = [asdict(r) for r in micro]
        document["micro_server"] = extra
    if "bot" in parts:
        tmp = Path(tempfile.mkdtemp(prefix="ozlab-bench-adapters-"))
        try:
            rows = asyncio.run(run_bots(args, tmp))
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
        print("\n" + format_bots(rows, args))
        document["bot"] = [{**asdict(row), "result": asdict(row.result)} for row in rows]
        failed = any(row.result.errors for row in rows)
    document["load_average_after"] = os.getloadavg()
    if args.json is not None:
        args.json.write_text(json.dumps(document, indent=2))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
