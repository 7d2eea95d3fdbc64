"""Linguistic stress tests end to end: logged sessions of the demo shop (played through the real bot
by simulated participants, the shops served by ``ozlab serve-demo`` and reached over HTTP),
ST-1 to ST-4 generated on them, replayed against shop-v1 and shop-v0, judged (automatically
and by a person through ``ozlab stress judge``), and reported; a run killed with SIGKILL
resumes without replaying a finished test (replays counted at the server)."""

from __future__ import annotations

import asyncio
import json
import re
import signal
from collections.abc import Iterator
from pathlib import Path

import pytest

from bot.store.sqlite import open_existing
from bot.store.stress_records import Judge, StressResult
from bot.stress.replay.judges import awaiting
from tests.command_line import ozlab_here
from tests.store_reads import read_tables
from tests.stress_support import OZLAB, Shops, copy_study, ozlab, start_shops

pytestmark = pytest.mark.slow

SPELLING = "ST-1,ST-2,ST-3,ST-4"


@pytest.fixture(scope="module")
def shops(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Shops]:
    yield from start_shops(tmp_path_factory.mktemp("shops"), participants=16)


async def results(db: Path) -> list[StressResult]:
    store = await open_existing(db, read_only=True)
    try:
        return await store.stress_results()
    finally:
        await store.close()


def generated(db: Path, per_type: int = 40) -> str:
    made = ozlab("stress", "generate", "--db", str(db), "--types", SPELLING,
                 "--per-type", str(per_type), "--seed", "7")  # fmt: skip
    assert made.returncode == 0, made.stderr
    return made.stdout


def _test_id(conversation: str) -> int | None:
    found = re.fullmatch(r"stress-(\d+)-[0-9a-f]+-[ab]", conversation)
    return int(found.group(1)) if found else None


async def test_the_weaker_shop_scores_lower_in_the_spelling_group(
    shops: Shops, tmp_path: Path
) -> None:
    db = copy_study(shops, tmp_path)
    live = await read_tables(db)  # the study as the bot left it
    said = generated(db)
    assert re.search(r"\d+ ST-1, \d+ ST-2, \d+ ST-3, \d+ ST-4", said), said
    ran = ozlab("stress", "run", "--db", str(db), "--concurrency", "16")
    assert ran.returncode == 0, ran.stderr
    assert "Replayed" in ran.stdout and re.search(r"\d+/\d+ replays", ran.stderr)

    # A person judges what the replays could not compare, at the terminal, from a script:
    # the shop answers the same words with the same reply, so a perturbed message that got
    # another answer (not understood, or understood as something else) was harmed.
    waiting = awaiting(await results(db), Judge.HUMAN)
    assert waiting, "shop-v0 misunderstands misspellings: a person has replies to judge"
    answers = "".join(
        "p\n" if r.replay.perturbed.texts == r.replay.baseline.texts else "f\n" for r in waiting
    )
    judged = ozlab("stress", "judge", "--db", str(db), "--as", "ann", stdin=answers)
    assert judged.returncode == 0, judged.stderr
    assert f"{len(waiting)} verdicts given" in judged.stdout
    assert "| unchanged" in judged.stdout and "| perturbed" in judged.stdout  # side by side
    assert awaiting(await results(db), Judge.HUMAN) == []
    again = ozlab("stress", "run", "--db", str(db))
    assert "Replayed 0 tests" in again.stdout  # the store is the record of what is done
    assert await read_tables(db) == live  # replays are new conversations: no live row changed

    # the reports are made in this process: what they say, not how a process ends
    report = await asyncio.to_thread(ozlab_here, "report", "--db", db, "--format", "json")
    assert report.returncode == 0, report.stderr
    stress = json.loads(report.stdout)["stress"]
    v0, v1 = stress["shop-v0"]["groups"]["spelling"], stress["shop-v1"]["groups"]["spelling"]
    assert v0["applied"] > 0 and v1["applied"] > 0
    assert v0["pass_rate"] < v1["pass_rate"]
    for system in stress.values():
        for rates in [system["overall"], *system["groups"].values(), *system["types"].values()]:
            assert set(rates) >= {"applied", "passed", "pass_rate", "ci_low", "ci_high"}
            if rates["applied"]:
                assert rates["ci_low"] <= rates["pass_rate"] <= rates["ci_high"]
    failure = stress["shop-v0"]["failures"][0]
    assert failure["original"] != failure["perturbed"] and failure["perturbed_reply"]

    untested = await asyncio.to_thread(
        ozlab_here, "report", "--db", shops.played, "--format", "json"
    )
    assert "stress" not in json.loads(untested.stdout)  # no section without stress tests

    page = tmp_path / "report.html"
    html = await asyncio.to_thread(
        ozlab_here, "report", "--db", db, "--format", "html", "--out", page
    )
    assert html.returncode == 0, html.stderr
    text = page.read_text()
    assert "Linguistic stress tests" in text and "average score on" in text
    assert 'alt="Stress-test pass rate per phenomenon and system' in text


async def test_a_killed_run_resumes_without_replaying_a_finished_test(
    shops: Shops, tmp_path: Path
) -> None:
    db = copy_study(shops, tmp_path)
    generated(db)
    already = len(shops.relay.calls())
    run = await asyncio.create_subprocess_exec(
        OZLAB, "stress", "run", "--db", str(db), "--concurrency", "2", "--rate", "40",
        stderr=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.DEVNULL,
    )  # fmt: skip
    assert run.stderr is not None
    try:
        async with asyncio.timeout(60):
            while True:  # until it reports a fifth of the way done
                line = (await run.stderr.readline()).decode()
                assert line, "the run ended before it could be killed"
                done, total = map(int, re.search(r"(\d+)/(\d+) replays", line).groups())  # type: ignore[union-attr]
                if done * 5 >= total:
                    break
    finally:
        run.send_signal(signal.SIGKILL)
        await run.wait()
    assert run.returncode == -signal.SIGKILL
    finished = {r.test.id for r in await results(db)}
    at_kill = len(shops.relay.calls())
    assert 0 < len(finished) < total

    resumed = ozlab("stress", "run", "--db", str(db), "--concurrency", "8")
    assert resumed.returncode == 0, resumed.stderr
    assert f"{len(finished)} done before" in resumed.stdout
    after = {_test_id(c) for c in shops.relay.calls()[at_kill:]} - {None}
    assert after and not after & finished  # no finished test reached a system again
    stored = await results(db)
    assert len(stored) == total == len({(r.test.id, r.replay.system_id) for r in stored})
    before_kill = {_test_id(c) for c in shops.relay.calls()[already:at_kill]} - {None}
    assert finished <= before_kill
