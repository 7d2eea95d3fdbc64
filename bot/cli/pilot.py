"""``ozlab pilot``: simulated participants a language model drives, then where it breaks."""

from __future__ import annotations

import argparse
import asyncio
import logging
import os

from bot.cli.flags import STUDY_FILE, participants, scratch_db
from bot.core.errors import SystemSetupError

NAME = "pilot"


def add(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    pilot = commands.add_parser(
        NAME,
        help="pilot a study with simulated participants a language model drives, then see "
        "where it breaks: ozlab report --pilot",
    )
    pilot.add_argument("study", help=STUDY_FILE)
    participants(pilot, default=20, help="how many simulated participants (default 20)")
    scratch_db(pilot, "ozlab-pilot.sqlite", "the pilot's database, replaced")
    pilot.add_argument("--seed", type=int, default=1)
    pilot.add_argument(
        "--simulator",
        choices=("openai", "scripted"),
        default="openai",
        help="openai: a language model on an OpenAI-compatible server plays each participant; "
        "scripted: the scenarios' simulation: blocks (as ozlab demo)",
    )
    pilot.add_argument("--simulator-url", help="the server, e.g. http://127.0.0.1:8000 (vLLM)")
    pilot.add_argument("--simulator-model", default="default", help="the model name it serves")
    pilot.add_argument("--simulator-key-env", help="environment variable with its API key")


def run(args: argparse.Namespace) -> int:
    simulator = None
    if args.simulator == "openai":
        if not args.simulator_url:
            raise SystemSetupError(
                "--simulator openai needs --simulator-url (an OpenAI-compatible server, e.g. "
                "http://127.0.0.1:8000 for vLLM or http://127.0.0.1:11434 for Ollama)"
            )
        from pydantic import ValidationError

        from bot.pilot.pilot_run import simulator_spec

        try:
            simulator = simulator_spec(
                args.simulator_url, args.simulator_model, args.simulator_key_env
            )
        except ValidationError as error:
            first = error.errors()[0]
            raise SystemSetupError(f"--simulator-url: {first['msg']}") from None
    from scenarios.loading import adapters_beside, load_study

    adapters_beside(args.study)
    bundle = load_study(args.study)
    from bot.pilot.demo import clear_demo_database
    from bot.pilot.pilot_run import pilot_study
    from bot.runtime.logging import setup_logging
    from bot.store.claims import claim
    from bot.store.opening import locate

    setup_logging(logging.WARNING, [])
    place = locate(args.db)
    study = place.study_or(bundle.study.id)
    with claim(args.db, "ozlab pilot", study) as writer:  # held from before the replacing
        clear_demo_database(args.db, study)
        played = asyncio.run(
            pilot_study(
                bundle,
                args.db,
                participants=args.participants,
                seed=args.seed,
                simulator=simulator,
                env=os.environ,
                writer=writer,
            )
        )
    finished = sum(p.finished for p in played)
    print(f"Study {bundle.study.id!r}: {len(played)} simulated participants, {finished} finished")
    print(f"Database: {place.shown}")
    print(f"Where it breaks: ozlab report --db {args.db} --pilot")
    return 0
