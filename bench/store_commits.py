"""The study store on its own, without the bot or Telegram: what an exchange costs the store.

Usage::

    .venv/bin/python bench/store_commits.py [--participants 200] [--messages 40] [--runs 5]

Every participant is a task that, per message, does what the bot does for one exchange: the
update is remembered, the step is committed with it, the delivery is marked (not awaited),
and every tenth time the pending updates are read. All run at once, so the group-commit
writer batches them as it does in the bot. Prints exchanges/s and the process's CPU seconds
per 1000 exchanges for each run, in a fresh file in a temporary folder each time.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:  # run from a checkout: measure that checkout's store
    sys.path.insert(0, str(ROOT))

from bot.core.participants import ParticipantStatus  # noqa: E402
from bot.core.vocabulary import EventKind, Stage  # noqa: E402
from bot.engine import effects as fx  # noqa: E402
from bot.store.model import StepCommit  # noqa: E402
from bot.store.sqlite import open_store  # noqa: E402

UPDATE = json.dumps({"message": {"text": "adventure games for Linux"}})


async def one_run(participants: int, messages: int) -> dict[str, float]:
    with tempfile.TemporaryDirectory(prefix="ozlab-store-bench-") as folder:
        store = await open_store(Path(folder) / "study.sqlite")
        update_ids = iter(range(1, participants * messages + 1))

        async def participant(number: int) -> None:
            who = f"p{number}"
            for n in range(messages):
                update_id = next(update_ids)
                await store.remember_updates([(update_id, UPDATE)])
                await store.commit_step(
                    StepCommit(
                        "bench",
                        who,
                        json.dumps({"n": n}),
                        ParticipantStatus(Stage.DIALOGUE, float(n)),
                        None,
                        [fx.RecordEvent(EventKind.REMINDED, None, {"n": n})],
                        update_id=update_id,
                    )
                )
                store.delivered(who)
                if n % 10 == 0:
                    await store.pending_updates()

        try:
            cpu, wall = time.process_time(), time.perf_counter()
            await asyncio.gather(*(participant(p) for p in range(participants)))
            cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
        finally:
            await store.close()
    exchanges = participants * messages
    return {"exchanges_per_s": exchanges / wall, "cpu_s_per_1000": cpu / exchanges * 1000}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--participants", type=int, default=200)
    parser.add_argument("--messages", type=int, default=40)
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    for _ in range(args.runs):
        found = asyncio.run(one_run(args.participants, args.messages))
        print(
            f"{found['exchanges_per_s']:8.0f} exch/s  {found['cpu_s_per_1000']:.4f} CPU s/1k",
            flush=True,
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
