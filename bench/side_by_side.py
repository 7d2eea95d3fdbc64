"""What a side-by-side (Arena-style) turn costs: the slower of its two systems, not the sum.

Usage::

    .venv/bin/python bench/side_by_side.py [--turns 4] [--rounds 5] [--fast 0.5] [--slow 1.0]

The real bot on the local Bot API emulator, in this process, with two local HTTP systems on
127.0.0.1 that answer after a delay this script sets before each participant. A turn is
timed from the participant's message to what ends it on the participant's screen: the
system's reply (one system, the HMD study with an ``http`` system) or the ballot "Which
reply is better?" after both replies (the arena study, two ``http`` systems). Four
conditions, one participant each per round, in a random order per round (so drift and
other processes' load hit all alike), ``--turns`` turns each:

- one system answering at once: what one turn costs today (the bot's own work);
- one system answering after ``--slow`` seconds;
- side by side, both answering at once: what the second system and the ballot add;
- side by side, one answering after ``--fast`` and the other after ``--slow`` seconds.

The issue's target: a side-by-side turn costs no more than the slower of its two systems
plus what one turn costs today, i.e. the last condition's median is at most ``--slow`` plus
the first condition's median. Printed in milliseconds (medians): the side-by-side turn beyond
the slower system and beyond that target; what a one-system turn costs beyond its system's
delay (the bot's own work on a turn that waited); what the second reply and the ballot add
when both answer at once; and what asking the systems one after the other would cost.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import secrets
import statistics
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from aiohttp import web

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bot.pilot.emulated import emulated_study  # noqa: E402
from bot.pilot.emulator import BotApiEmulator, Participant  # noqa: E402
from scenarios.loading import load_study  # noqa: E402
from scenarios.models import StudyBundle  # noqa: E402
from scenarios.systems import HttpSystem  # noqa: E402

BALLOT = "Which reply is better?"
FIRST_USER_ID = 700_000_000
WAIT = 30.0
"""Seconds any one step may take before the run stops with an error (never waits forever)."""


class SlowSystem:
    """A homemade JSON service on 127.0.0.1 that answers after ``delay`` seconds."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.delay = 0.0
        self._runner: web.AppRunner | None = None
        self.endpoint = ""

    async def start(self) -> None:
        app = web.Application()
        app.router.add_post("/chat", self._answer)
        self._runner = web.AppRunner(app, access_log=None)
        await self._runner.setup()
        site = web.TCPSite(self._runner, "127.0.0.1", 0)
        await site.start()
        port = self._runner.addresses[0][1]
        self.endpoint = f"http://127.0.0.1:{port}/chat"

    async def stop(self) -> None:
        if self._runner is not None:
            await self._runner.cleanup()

    async def _answer(self, request: web.Request) -> web.Response:
        body = await request.json()
        await asyncio.sleep(self.delay)  # the system thinking: what the bench is about
        return web.json_response({"text": f"{self.name} says: {body['message']}"})


def with_http(bundle: StudyBundle, *systems: SlowSystem) -> StudyBundle:
    """``bundle`` with its systems replaced by ``http`` systems pointing at ``systems``."""
    specs = tuple(
        HttpSystem(type="http", id=s.name, url=s.endpoint, timeout=WAIT, retries=0) for s in systems
    )
    study = bundle.study.model_copy(update={"systems": specs})
    return bundle.model_copy(update={"study": study})


@dataclass
class Condition:
    name: str
    side_by_side: bool
    delays: tuple[float, float]
    turns: list[float]


async def consent(p: Participant) -> None:
    await p.send_text("/start")
    await p.wait_for(lambda q: any("I agree" in m.buttons for m in q.messages), WAIT)
    await p.tap(text="I agree")
    await p.wait_for_text("Your task", WAIT)


def count(p: Participant, text: str) -> int:
    return sum(text in m.text for m in p.messages)


async def one_turn(p: Participant, n: int, side_by_side: bool) -> float:
    """Seconds from the message to the reply (one system) or the ballot (side by side);
    after a ballot the participant votes (untimed), as a participant would."""
    marker = BALLOT if side_by_side else f": turn {n} please"
    before = count(p, marker)
    started = time.perf_counter()
    await p.send_text(f"turn {n} please")
    await p.wait_for(lambda q: count(q, marker) > before, WAIT)
    took = time.perf_counter() - started
    if side_by_side:
        ballot = next(m for m in reversed(p.messages) if "A is better" in m.buttons)
        votes = count(p, "Your vote")
        await p.tap(text="A is better", message_id=ballot.message_id)
        await p.wait_for(lambda q: count(q, "Your vote") > votes, WAIT)
    return took


async def play(emulator: BotApiEmulator, user: int, condition: Condition, turns: int) -> None:
    p = emulator.participant(user, first_name="Bench")
    await consent(p)
    for n in range(1, turns + 1):
        condition.turns.append(await one_turn(p, n, condition.side_by_side))


async def run(args: argparse.Namespace, folder: Path) -> list[Condition]:
    one, other = SlowSystem("shop-v1"), SlowSystem("shop-v0")
    await one.start()
    await other.start()
    fast, slow = args.fast, args.slow
    conditions = [
        Condition("one system, at once", False, (0.0, 0.0), []),
        Condition(f"one system, {slow:g} s", False, (slow, 0.0), []),
        Condition("side by side, both at once", True, (0.0, 0.0), []),
        Condition(f"side by side, {fast:g} s and {slow:g} s", True, (fast, slow), []),
    ]
    single = with_http(load_study("hmd"), one)
    arena = with_http(load_study("arena"), one, other)
    secret = secrets.token_hex(16)
    rng = random.Random(args.seed)
    user = FIRST_USER_ID
    try:
        async with (
            emulated_study(single, folder / "one.sqlite", secret=secret) as alone,
            emulated_study(arena, folder / "arena.sqlite", secret=secret) as both,
        ):
            for _ in range(args.rounds):
                order = list(conditions)
                rng.shuffle(order)
                for condition in order:
                    one.delay, other.delay = condition.delays
                    user += 1
                    emulator = both if condition.side_by_side else alone
                    await play(emulator, user, condition, args.turns)
    finally:
        await one.stop()
        await other.stop()
    return conditions


def quantile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def summary(conditions: list[Condition], fast: float, slow: float) -> dict[str, Any]:
    rows = [
        {
            "condition": c.name,
            "delays_s": list(c.delays) if c.side_by_side else [c.delays[0]],
            "turns": len(c.turns),
            "median_s": statistics.median(c.turns),
            "p10_s": quantile(c.turns, 0.1),
            "p90_s": quantile(c.turns, 0.9),
        }
        for c in conditions
    ]
    today = rows[0]["median_s"]
    side = rows[3]["median_s"]
    return {
        "rows": rows,
        "one_turn_today_s": today,
        "slower_system_s": slow,
        "target_s": slow + today,
        "side_by_side_s": side,
        "side_by_side_over_slower_s": side - slow,
        "one_system_over_its_delay_s": rows[1]["median_s"] - slow,
        "side_by_side_at_once_over_one_s": rows[2]["median_s"] - today,
        "sequential_s": fast + slow + today,
        "over_target_s": side - (slow + today),
    }


def print_summary(found: dict[str, Any]) -> None:
    print(f"{'condition':<34} {'turns':>5} {'median':>8} {'p10':>8} {'p90':>8}")
    for r in found["rows"]:
        print(
            f"{r['condition']:<34} {r['turns']:>5} {r['median_s']:>7.3f}s "
            f"{r['p10_s']:>7.3f}s {r['p90_s']:>7.3f}s"
        )
    ms = {k: 1000 * v for k, v in found.items() if k.endswith("_s")}
    print(
        f"""
one turn today (one system answering at once)      {ms["one_turn_today_s"]:8.1f} ms
the slower system's delay                          {ms["slower_system_s"]:8.1f} ms
target: the slower system + one turn today         {ms["target_s"]:8.1f} ms
side-by-side turn                                  {ms["side_by_side_s"]:8.1f} ms
  beyond the slower system                         {ms["side_by_side_over_slower_s"]:8.1f} ms
  beyond the target                                {ms["over_target_s"]:8.1f} ms
one system: beyond its own delay                   {ms["one_system_over_its_delay_s"]:8.1f} ms
side by side at once: beyond one system at once    {ms["side_by_side_at_once_over_one_s"]:8.1f} ms
the systems asked one after the other would take   {ms["sequential_s"]:8.1f} ms"""
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--turns", type=int, default=4, help="turns per participant (max 4)")
    parser.add_argument("--rounds", type=int, default=5, help="participants per condition")
    parser.add_argument("--fast", type=float, default=0.5, help="the faster system's delay, s")
    parser.add_argument("--slow", type=float, default=1.0, help="the slower system's delay, s")
    parser.add_argument("--seed", type=int, default=1, help="the order of the conditions")
    parser.add_argument("--json", type=Path, help="also write the figures to this file")
    args = parser.parse_args(argv)
    if not 1 <= args.turns <= 4:  # the arena's scenario ends at its fifth exchange
        parser.error("--turns must be 1 to 4")
    if not 0 <= args.fast <= args.slow:
        parser.error("--fast must be between 0 and --slow")
    with tempfile.TemporaryDirectory(prefix="ozlab-side-by-side-") as folder:
        conditions = asyncio.run(run(args, Path(folder)))
    found = summary(conditions, args.fast, args.slow)
    print_summary(found)
    if args.json:
        args.json.write_text(json.dumps(found, indent=1) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
