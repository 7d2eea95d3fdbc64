"""Stress replays of a language model with tools: the logged sessions of ``hmd-llm`` (played
through the real bot against ``ozlab serve-demo --openai``), perturbed, and replayed by
``ozlab stress run`` against the same server with the scenario's tools offered, so that a
turn the model ended by calling ``add_to_wishlist`` is reached again and compared."""

from __future__ import annotations

import asyncio
import json
import sqlite3
from pathlib import Path

import pytest

from bot.pilot.demo import play_study
from bot.store.sqlite import open_existing
from bot.store.stress_records import StressResult
from scenarios.loading import load_study
from tests.stress_support import ozlab
from tests.test_llm_tools_e2e import served_at, served_model

pytestmark = pytest.mark.slow


async def results(db: Path) -> list[StressResult]:
    store = await open_existing(db, read_only=True)
    try:
        return await store.stress_results()
    finally:
        await store.close()


def tool_endings(db: Path) -> dict[str, dict[str, object]]:
    """Each session a tool call ended, with what the bot logged of it."""
    with sqlite3.connect(db) as conn:
        rows = conn.execute(
            "SELECT session_id, data FROM events WHERE kind = 'task_reported'"
        ).fetchall()
    found = {s: json.loads(data) for s, data in rows}
    return {s: did["data"] for s, did in found.items() if did["event"] == "tool_success"}


def last_turns(db: Path) -> dict[str, int]:
    with sqlite3.connect(db) as conn:
        rows = conn.execute(
            "SELECT session_id, MAX(turn) FROM exchanges WHERE system_text IS NOT NULL"
            " GROUP BY session_id"
        ).fetchall()
    return dict(rows)


def test_a_replay_offers_the_scenario_s_tools_and_reaches_the_logged_tool_call(
    tmp_path: Path,
) -> None:
    server, url = served_model()
    try:
        db = tmp_path / "study.sqlite"
        bundle = served_at(load_study("hmd-llm"), url)
        asyncio.run(play_study(bundle, db, participants=6, seed=3, paced_systems=False))
        ended = tool_endings(db)
        assert ended, "the model ended some tasks by its tool call"
        made = ozlab("stress", "generate", "--db", str(db), "--types", "ST-1,ST-2,ST-3,ST-4",
                     "--per-type", "40", "--seed", "7")  # fmt: skip
        assert made.returncode == 0, made.stderr
        ran = ozlab("stress", "run", "--db", str(db), "--systems", "shop-llm")
        assert ran.returncode == 0, ran.stderr
    finally:
        server.kill()
        server.wait()
        assert server.stdout is not None
        server.stdout.close()
    last = last_turns(db)
    at_the_call = [
        r
        for r in asyncio.run(results(db))
        if r.test.perturbation.session_id in ended
        and r.test.perturbation.turn == last[r.test.perturbation.session_id]
    ]
    assert at_the_call, "stress tests on the turns a tool call ended"
    for result in at_the_call:
        logged = ended[result.test.perturbation.session_id]
        assert result.replay.applicable, result.replay.baseline
        assert dict(result.replay.baseline.events["tool_success"]) == logged
