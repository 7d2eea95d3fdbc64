"""A process that commits steps and says so after each one: killed with SIGKILL by the
contract suite, it must leave every step it announced in the store.

    python -m tests.store_contract.writer URL STEPS
"""

from __future__ import annotations

import asyncio
import sys

from bot.core.participants import ParticipantStatus
from bot.core.vocabulary import EventKind, Stage
from bot.engine import effects as fx
from bot.store.model import StepCommit
from tests.store_contract.backends import open_backend


async def main(url: str, steps: int) -> None:
    store = await open_backend(url)
    for n in range(steps):
        status = ParticipantStatus(Stage.DIALOGUE, float(n))
        await store.commit_step(
            StepCommit(
                "s",
                f"p{n}",
                "{}",
                status,
                None,
                [fx.RecordEvent(EventKind.REMINDED, None, {"n": n})],
            )
        )
        print(f"committed {n}", flush=True)
    print("idle", flush=True)
    await asyncio.Event().wait()  # until killed


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1], int(sys.argv[2])))
