"""Unattended running: random and malformed updates from many chats (every kind of message, forged
and stale buttons, edits, groups, channels, other bots, member updates, redelivered update ids)
while simulated participants play the whole ``hmd`` study, against the real bot logging as
``ozlab run`` does. What is counted, and what "answered" means, is in ``tests/fuzz_support.py``;
``bench/fuzz.py`` runs the same at 10,000 updates.

The seed is fixed so that the suite is repeatable; ``OZLAB_FUZZ_SEED=<n>`` tries another. A
failure prints the seed and how to run it again.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.annotating_support import stored
from tests.fuzz_support import (
    CONTENT_KINDS,
    MALFORMED_KINDS,
    FuzzSettings,
    run_fuzz,
    shortfall,
)
from tests.postgres_server import PostgresServer

SEED = int(os.environ.get("OZLAB_FUZZ_SEED", "20261"))


@pytest.mark.slow
async def test_fuzzed_updates_amid_whole_sessions(tmp_path: Path) -> None:
    report = await run_fuzz(FuzzSettings(updates=600, players=6, seed=SEED), tmp_path)
    again = f"OZLAB_FUZZ_SEED={SEED} pytest {Path(__file__).name} or bench/fuzz.py --seed {SEED}"
    context = f"seed {SEED} (again: {again})\n{report.summary()}"
    assert report.problems() == [], context
    assert report.updates_sent >= 600, context
    kinds = report.by_kind
    covered = [f"content:{k}" for k in CONTENT_KINDS] + [f"malformed:{m}" for m in MALFORMED_KINDS]
    covered += ["text", "command", "edited", "tap", "group", "other_bot", "my_chat_member"]
    covered += ["redelivered", "blocked", "barrier"]
    assert [k for k in covered if not kinds[k]] == [], context
    assert any(k.startswith("channel:") for k in kinds), context
    assert report.answerable > 200 and kinds["tap"] > 50, context
    assert report.players_completed == 6, context


@pytest.mark.slow
async def test_fuzzed_updates_on_a_postgresql_server(
    tmp_path: Path, postgres: PostgresServer
) -> None:
    """The same at a smaller size with the study on a server: every update answered once,
    nothing leaked into the server's data files."""
    db = postgres.fresh_database()
    settings = FuzzSettings(updates=200, players=3, seed=SEED)
    report = await run_fuzz(settings, tmp_path, db, lambda: postgres.stored_bytes(db))
    context = f"seed {SEED}\n{report.summary()}"
    assert report.problems() == [], context
    assert report.players_completed == 3 and report.by_kind["redelivered"], context


@pytest.mark.slow
async def test_fuzzed_updates_to_annotators_amid_their_rating(tmp_path: Path) -> None:
    """Annotators' chats get the same forged, stale, odd and redelivered updates."""
    settings = FuzzSettings(updates=300, players=2, seed=SEED, study="hri-cues", annotators=4)
    report = await run_fuzz(settings, tmp_path)
    again = f"OZLAB_FUZZ_SEED={SEED} pytest {Path(__file__).name}"
    context = f"seed {SEED} (again: {again})\n{report.summary()}"
    assert report.problems() == [], context
    assert report.by_kind["annotator"] == 4, context
    assert report.by_kind["tap"] > 20, context
    ratings = await stored(tmp_path / "fuzz.sqlite", lambda s: s.annotation_ratings())
    assert ratings, context  # the annotators' taps reached their items


@pytest.mark.parametrize(
    ("written", "sent", "missing"),
    [
        ([1.0, 2.0], [1.5, 1.6], 1),  # as many answers as messages, both before the second
        ([1.0, 1.55], [1.5, 1.6], 0),
        ([1.0, 1.0], [1.5, 1.6], 0),
        ([1.0, 2.0, 3.0], [3.5], 2),
        ([3.0, 1.0], [0.5, 3.5, 2.0], 0),
        ([], [1.0], 0),
    ],
)
def test_the_answer_check_pairs_each_message_with_a_later_answer(
    written: list[float], sent: list[float], missing: int
) -> None:
    """A bot message answers one message at most, and only one written before it."""
    assert shortfall(written, sent) == missing
