"""The real ozlab bot in its own process, for ``bench/exchanges.py``.

It runs :func:`bot.runtime.app.run_bot` exactly as ``ozlab run`` does (same ``BotConfig`` defaults,
same logging set-up) on the shipped "hmd" study, with two changes a benchmark needs: the
scenario's exchange limit is raised so participants can keep talking, and the system under
test is either an instant one (so only ozlab's own overhead is measured), the demo shop, or
(``--system openai --system-url URL``) the study's systems rewritten as ``type: openai``
specs pointing at URL, built by ``build_systems`` as ``ozlab run`` builds them (the API key
is read from the ``OZLAB_BENCH_KEY`` variable when it is set; see ``bench/adapters.py``).
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
import os
import signal
import sys
import time
from pathlib import Path

from bot.core.conversation import Conversation, SystemReply
from bot.runtime.app import BotConfig, run_bot
from bot.runtime.logging import setup_logging
from bot.systems.base import System
from bot.systems.demo import DemoShop
from bot.systems.registry import build_systems
from scenarios.loading import load_study
from scenarios.models import StudyBundle
from scenarios.systems import OpenAISystem

MAX_EXCHANGES = 1000
KEY_ENV = "OZLAB_BENCH_KEY"
"""With ``--system openai``: the variable that holds the API key (none when unset)."""


class InstantSystem:
    """A system under test that answers at once: one short text, no events."""

    async def respond(self, conversation: Conversation) -> SystemReply:
        """Answer with the participant's message, prefixed."""
        return SystemReply((f"ok: {conversation.message}",))

    async def close(self) -> None:
        """Nothing to release."""


class TimedSystem:
    """Wraps a system and records each call's duration in ms by ``"<session>#<turn>"``."""

    def __init__(self, inner: System, times: dict[str, float] | None = None) -> None:
        self._inner = inner
        self.times: dict[str, float] = {} if times is None else times
        # ``close_systems`` closes the HTTP client of an adapter it finds as ``.client``.
        self.client = getattr(inner, "client", None)

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


def openai_spec(system_id: str, url: str, key_env: str | None = None) -> OpenAISystem:
    """An ``openai`` system as a study would name a local LLM server."""
    return OpenAISystem(
        type="openai",
        id=system_id,
        url=url,
        model="bench-instant",
        api_key_env=key_env,
        system_prompt="You are a video-game shop assistant. The participant's task: {brief}",
        temperature=0.7,
        max_tokens=256,
    )


def bench_bundle(
    max_exchanges: int = MAX_EXCHANGES,
    openai_url: str | None = None,
    study_id: str = "hmd",
    text_replies: bool = False,
) -> StudyBundle:
    """A shipped study ("hmd" unless named) with every scenario's exchange limit raised; with
    ``openai_url``, every system of the study becomes an ``openai`` one (same ids); with
    ``text_replies``, no task speaks its replies (what a voice note costs is then measured
    apart from what speaking the replies costs)."""
    bundle = load_study(study_id)
    scenarios = {}
    for sid, scenario in bundle.scenarios.items():
        update: dict[str, object] = {"max_exchanges": max_exchanges}
        if text_replies:
            media = {"system_returns": (), "text_beside": False}
            update["media"] = scenario.media.model_copy(update=media)
        scenarios[sid] = scenario.model_copy(update=update)
    bundle = bundle.model_copy(update={"scenarios": scenarios})
    if openai_url is not None:
        key_env = KEY_ENV if os.environ.get(KEY_ENV) else None
        specs = tuple(openai_spec(s.id, openai_url, key_env) for s in bundle.study.systems)
        study = bundle.study.model_copy(update={"systems": specs})
        bundle = bundle.model_copy(update={"study": study})
    return bundle


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--url", required=True, help="emulator base, http://127.0.0.1:PORT")
    parser.add_argument("--token", required=True)
    parser.add_argument("--secret", required=True)
    parser.add_argument("--db", required=True, help="a SQLite file or a postgresql:// URL")
    parser.add_argument("--system", choices=("instant", "demo", "openai"), default="instant")
    parser.add_argument("--system-url", help="with --system openai: the server's base address")
    parser.add_argument("--times", type=Path, help="write the system's call times (JSON) here")
    parser.add_argument("--profile", type=Path, help="run under cProfile, write stats here")
    parser.add_argument("--poll-timeout", type=int, default=5)
    parser.add_argument("--study", default="hmd", help="a shipped study's id (default: hmd)")
    parser.add_argument(
        "--text-replies", action="store_true", help="no task speaks its replies (see bench_bundle)"
    )
    parser.add_argument("--max-exchanges", type=int, default=MAX_EXCHANGES)
    return parser


async def _serve(args: argparse.Namespace, bundle: StudyBundle, systems: dict[str, System]) -> None:
    config = BotConfig(
        db=args.db,
        token=args.token,
        secret=args.secret,
        bot_api_url=args.url,
        poll_timeout=args.poll_timeout,
        pacing=None,  # the emulator has no flood limits: measure ozlab, not Telegram's pace
    )
    stop, ready = asyncio.Event(), asyncio.Event()
    loop = asyncio.get_running_loop()
    for signum in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(signum, stop.set)

    async def announce() -> None:
        await ready.wait()
        print("READY", flush=True)

    announcing = asyncio.create_task(announce())
    try:
        await run_bot(bundle, config, stop=stop, ready=ready, systems=systems)
    finally:
        announcing.cancel()


def main(argv: list[str] | None = None) -> int:
    """Run the bot until signalled; 0 on a clean stop."""
    args = _parser().parse_args(argv)
    setup_logging(logging.INFO, [args.token, args.secret])  # as ``ozlab run`` does
    if args.system == "openai":
        if not args.system_url:
            raise SystemExit("--system openai needs --system-url")
        bundle = bench_bundle(args.max_exchanges, args.system_url, args.study, args.text_replies)
        # One adapter per system id sharing one JsonClient, as ``run_bot`` builds them.
        built = build_systems(bundle.study.systems, env=os.environ)
        times: dict[str, float] = {}
        systems: dict[str, System] = {sid: TimedSystem(s, times) for sid, s in built.items()}
    else:
        bundle = bench_bundle(args.max_exchanges, None, args.study, args.text_replies)
        inner: System = InstantSystem() if args.system == "instant" else DemoShop("v1")
        # Every system id of the study maps to the same system, whatever the assignment draws.
        shared = TimedSystem(inner)
        times = shared.times
        systems = {spec.id: shared for spec in bundle.study.systems}
    profiler = cProfile.Profile() if args.profile else None
    if profiler is not None:
        profiler.enable()
    try:
        asyncio.run(_serve(args, bundle, systems))
    finally:
        if profiler is not None:
            profiler.disable()
            profiler.dump_stats(str(args.profile))
        if args.times is not None:
            args.times.write_text(json.dumps(times))
    return 0


if __name__ == "__main__":
    sys.exit(main())
