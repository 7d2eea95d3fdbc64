"""What one finished target costs the bot in the annotators' flow: the store writes it,
plans the job again (``bot.annotation.jobs.assign``: the whole job's state read, planned,
applied) and reads the annotator's next target, on a real SQLite file of the given size;
then what the bot's clock costs when it plans the job because silent annotators dropped out.

    python bench/annotating.py                                  # 25 conversations of 27
    python bench/annotating.py --conversations 200 --turns 30

HRI CUES's shipped job (three annotators, every exchange and each conversation overall);
the figures are the median and the worst of ``--targets`` finished targets.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bot.annotation.invitations import invite_annotators
from bot.annotation.jobs import assign, assign_on_the_clock
from bot.store.definition import definition_json
from bot.store.interface import StudyStore
from bot.store.sqlite import open_store
from scenarios.jobs import AnnotationJob
from scenarios.loading import load_study
from scenarios.models import StudyBundle
from tests.annotation_support import store_conversations


async def run(conversations: int, turns: int, targets: int) -> None:
    bundle = load_study("hri-cues")
    job = bundle.jobs["hri-cues"]
    with tempfile.TemporaryDirectory() as directory:
        store = await open_store(Path(directory) / "bench.sqlite")
        try:
            await store.record_definition("hri-cues", definition_json(bundle))
            sessions = [(f"p{i}-1", "companion", turns) for i in range(conversations)]
            await store_conversations(store, "hri-cues", "hri-cues-chat", sessions)
            invited = await invite_annotators(store, None, "hri-cues", 3)
            _, annotator = await store.claim_annotator(invited.annotators[0][1], "c-bench")
            assert annotator is not None
            who = annotator.annotator_id
            took: list[float] = []
            for _ in range(targets):
                task = await store.next_annotation_target(who)
                if task is None:
                    break
                target, level = task.target.target, task.target.level
                started = time.perf_counter()
                for item in bundle.questionnaire(job.rate.exchange[0]).items:
                    await store.record_annotation(
                        who, job.id, target, level, "hri-cues", item.id, 4
                    )
                await store.finish_annotation_target(who, job.id, target, level)
                await assign(store, bundle, job, time.time())
                await store.next_annotation_target(who)
                took.append((time.perf_counter() - started) * 1000)
            looks = await _on_the_clock(store, bundle, job)
        finally:
            await store.close()
    print(
        f"{conversations} conversations x {turns} exchanges, 3 annotators "
        f"({invited.targets} targets): one finished target (rating, finish, planning, next) "
        f"median {statistics.median(took):.1f} ms, worst {max(took):.1f} ms "
        f"over {len(took)} targets"
    )
    released, quiet = looks
    print(
        f"on the clock: a look with nothing due median {statistics.median(quiet):.1f} ms; "
        f"every silent annotator's open targets released {released:.1f} ms"
    )


async def _on_the_clock(
    store: StudyStore, bundle: StudyBundle, job: AnnotationJob
) -> tuple[float, list[float]]:
    """What the bot's clock costs (``AnnotationRunner.on_clock``): the job planned again and
    its next drop-out read, when nobody's deadline has passed (ten times), then once when
    every annotator's has (all their open targets released)."""

    async def look(now: float) -> float:
        started = time.perf_counter()
        await assign_on_the_clock(store, bundle, job, now)
        return (time.perf_counter() - started) * 1000

    quiet = [await look(time.time()) for _ in range(10)]
    released = await look(time.time() + 2 * (job.drop_out_after or 0.0) + 1)
    return released, quiet


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--conversations", type=int, default=25)
    parser.add_argument("--turns", type=int, default=27)
    parser.add_argument("--targets", type=int, default=40)
    args = parser.parse_args()
    asyncio.run(run(args.conversations, args.turns, args.targets))


if __name__ == "__main__":
    main()
