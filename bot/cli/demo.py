"""``ozlab demo``: play a study offline with simulated participants (and simulated annotators
of its ACUTE-Eval jobs), then its summary."""

from __future__ import annotations

import argparse
import asyncio
import logging
import os
import sys
import time
from typing import TYPE_CHECKING

from bot.cli.arguments import some
from bot.cli.flags import STUDY_FILE, participants, scratch_db

if TYPE_CHECKING:
    from bot.pilot.simulation.play import Played

NAME = "demo"


def add(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    demo = commands.add_parser(NAME, help="play a study offline with simulated participants")
    participants(demo, default=12, help="how many simulated participants (default 12)")
    scratch_db(demo, "ozlab-demo.sqlite", "the demo's database, replaced")
    demo.add_argument("--study", default="hmd", help=f"{STUDY_FILE} (default hmd)")
    demo.add_argument("--seed", type=int, default=1)
    demo.add_argument(
        "--annotators",
        type=some,
        default=4,
        help="simulated annotators of each annotation job the study names (rating and"
        " ACUTE-Eval pairwise jobs), after the participants (default 4; 0: none)",
    )


def run(args: argparse.Namespace) -> int:
    from scenarios.loading import adapters_beside, load_study

    adapters_beside(args.study)
    bundle = load_study(args.study)
    from bot.pilot.demo import clear_demo_database, play_study, servers_answer
    from bot.pilot.simulation.annotating import simulated_jobs
    from bot.pilot.summary import format_summary, summarize
    from bot.runtime.logging import setup_logging
    from bot.store.claims import claim
    from bot.store.opening import locate

    setup_logging(logging.WARNING, [])
    asyncio.run(servers_answer(bundle, os.environ))
    place = locate(args.db)
    study = place.study_or(bundle.study.id)
    with claim(args.db, "ozlab demo", study) as writer:  # held from before the replacing
        clear_demo_database(args.db, study)

        async def play() -> list[Played]:
            print(f"Playing {bundle.study.id!r} with {args.participants} simulated participants")
            sys.stdout.flush()
            return await play_study(
                bundle,
                args.db,
                participants=args.participants,
                seed=args.seed,
                writer=writer,
                annotators=args.annotators,
            )

        started = time.perf_counter()
        played = asyncio.run(play())
        elapsed = time.perf_counter() - started
    jobs = [job.id for job in simulated_jobs(bundle)] if args.annotators else []
    annotators = f" and {args.annotators} simulated annotators of {', '.join(jobs)}" if jobs else ""
    print(
        f"Study {bundle.study.id!r}: {len(played)} simulated participants{annotators}"
        f" in {elapsed:.1f} s\n"
    )
    from scenarios.systems import reports_success

    silent = {s.id for s in bundle.study.systems if not reports_success(s)}
    print(format_summary(summarize(args.db, study), silent))
    print(f"\nDatabase: {place.shown}")
    return 0
