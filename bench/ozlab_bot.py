"""The real ozlab bot in its own process, for ``bench/exchanges.py``.

It runs :func:`bot.app.run_bot` exactly as ``ozlab run`` does (same ``BotConfig`` defaults,
same logging set-up) on the shipped "hmd" study, with two changes a benchmark needs: the
scenario's exchange limit is raised so participants can keep talking, and the system under
test is either an instant one (so only ozlab's own overhead is measured) or the demo shop.
Every call to the system is timed inside this process and written to ``--times`` at exit,
so the benchmark can subtract the system's own time from the latency.

Prints ``READY`` on stdout once it polls; stops cleanly on SIGTERM or SIGINT.
"""

from __future__ import annotations

import argparse
import asyncio
import cProfile
import json
import logging
import signal
import sys
import time
from pathlib import Path

from bot.app import BotConfig, run_bot
from bot.logging_setup import setup_logging
from bot.systems.base import Conversation, System, SystemReply
from bot.systems.demo import DemoShop
from scenarios.loading import load_study
from scenarios.models import StudyBundle

MAX_EXCHANGES = 1000


class InstantSystem:
    """A system under test that answers at once: one short text, no events."""

    async def respond(self, conversation: Conversation) -> SystemReply:
        """Answer with the participant's message, prefixed."""
        return SystemReply((f"ok: {conversation.message}",))

    async def close(self) -> None:
        """Nothing to release."""


class TimedSystem:
    """Wraps a system and records each call's duration in ms by ``"<session>#<turn>"``."""

    def __init__(self, inner: System) -> None:
        self._inner = inner
        self.times: dict[str, float] = {}

    async def respond(self, conversation: Conversation) -> SystemReply:
        """Call the wrapped system and time it."""
        started = time.perf_counter()
        try:
            return await self._inner.respond(conversation)
        finally:
            key = f"{conversation.session_id}#{len(conversation.history) + 1}"
            self.times[key] = (time.perf_counter() - started) * 1000

    async def close(self) -> None:
        """Close the wrapped system."""
        await self._inner.close()


def bench_bundle(max_exchanges: int = MAX_EXCHANGES) -> StudyBundle:
    """The shipped "hmd" study with every scenario's exchange limit raised."""
    bundle = load_study("hmd")
    scenarios = {
        sid: scenario.model_copy(update={"max_exchanges": max_exchanges})
        for sid, scenario in bundle.scenarios.items()
    }
    return bundle.model_copy(update={"scenarios": scenarios})


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--url", required=True, help="emulator base, http://127.0.0.1:PORT")
    parser.add_argument("--token", required=True)
    parser.add_argument("--secret", required=True)
    parser.add_argument("--db", type=Path, required=True)
    parser.add_argument("--system", choices=("instant", "demo"), default="instant")
    parser.add_argument("--times", type=Path, help="write the system's call times (JSON) here")
    parser.add_argument("--profile", type=Path, help="run under cProfile, write stats here")
    parser.add_argument("--poll-timeout", type=int, default=5)
    return parser


async def _serve(args: argparse.Namespace, system: TimedSystem) -> None:
    bundle = bench_bundle()
    config = BotConfig(
        db=args.db,
        token=args.token,
        secret=args.secret,
        bot_api_url=args.url,
        poll_timeout=args.poll_timeout,
    )
    stop, ready = asyncio.Event(), asyncio.Event()
    loop = asyncio.get_running_loop()
    for signum in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(signum, stop.set)

    async def announce() -> None:
        await ready.wait()
        print("READY", flush=True)

    announcing = asyncio.create_task(announce())
    # Every system id of the study maps to the same system, whatever the assignment draws.
    systems = {spec.id: system for spec in bundle.study.systems}
    try:
        await run_bot(bundle, config, stop=stop, ready=ready, systems=systems)
    finally:
        announcing.cancel()


def main(argv: list[str] | None = None) -> int:
    """Run the bot until signalled; 0 on a clean stop."""
    args = _parser().parse_args(argv)
    setup_logging(logging.INFO, [args.token, args.secret])  # as ``ozlab run`` does
    inner: System = InstantSystem() if args.system == "instant" else DemoShop("v1")
    system = TimedSystem(inner)
    profiler = cProfile.Profile() if args.profile else None
    if profiler is not None:
        profiler.enable()
    try:
        asyncio.run(_serve(args, system))
    finally:
        if profiler is not None:
            profiler.disable()
            profiler.dump_stats(str(args.profile))
        if args.times is not None:
            args.times.write_text(json.dumps(system.times))
    return 0


if __name__ == "__main__":
    sys.exit(main())
