"""The study's PostgreSQL server restarted under a running bot (a minor-version update, a
failover, a reboot): the bot lives through it, says so in one warning, and goes on from what
the store keeps; the participants under way finish, nothing lost and nothing stored twice.
The participants and what is counted are the crash run's (``tests/crash_support.py``)."""

from __future__ import annotations

import asyncio
import os
import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from bot.core.errors import StoreError
from bot.pilot.emulator import BotApiEmulator
from bot.store.claims import claim
from tests.crash_support import (
    BACK,
    NOTICED,
    TOKEN,
    RestartSettings,
    logged_exceptions,
    run_restarts,
)
from tests.e2e_support import OzlabProcess, OzlabProcesses
from tests.postgres_server import PostgresServer

pytestmark = pytest.mark.slow

SEED = int(os.environ.get("OZLAB_CRASH_SEED", "1"))


@pytest.fixture
def server() -> Iterator[PostgresServer]:
    """A server of this test's own: restarting the shared one would cut the others off."""
    started = PostgresServer(fsync=False)
    try:
        yield started
    finally:
        started.stop()


async def test_a_restarted_server_stops_nothing_and_loses_nothing(
    tmp_path: Path, server: PostgresServer
) -> None:
    report = await run_restarts(RestartSettings(seed=SEED), tmp_path, server)
    context = "\n".join(
        [
            f"OZLAB_CRASH_SEED={SEED}",
            report.summary(),
            *report.outage_lines,
            *report.logged_exceptions,
        ]
    )
    assert report.problems() == [], context
    assert report.restarts == 3 and report.processes == 1, context  # the bot never exited
    assert report.sessions_completed == 4, context
    assert report.lost == [] and report.duplicated_rows == [] and report.unanswered == [], context
    # One warning as each outage begins (none lasted a minute, so none more), one line as
    # each ends.
    begun = [
        line for line in report.outage_lines if re.search(r"WARNING .*cannot be reached \(", line)
    ]
    ended = [line for line in report.outage_lines if "the study database reached again" in line]
    assert len(begun) == 3 and len(ended) == 3, context
    assert not [line for line in report.outage_lines if "still cannot be reached" in line]


async def test_a_bot_started_while_its_server_is_down_waits_for_it(
    tmp_path: Path, server: PostgresServer
) -> None:
    """A start during the server's reboot (the unit starts the bot at boot) waits, telling
    why, and runs once the server is back: no exit a supervisor must restart."""
    db = server.fresh_database()
    server.halt()
    async with BotApiEmulator(TOKEN) as emulator:
        ozlab = OzlabProcesses(emulator, tmp_path, db)
        try:
            bot = await ozlab.start(wait_ready=False)
            await bot.wait_for_log(NOTICED, timeout=60)
            assert bot.process.returncode is None, bot.stderr
            await asyncio.to_thread(server.resume)
            await bot.wait_for_log(BACK, timeout=60)
            await answers_then_stops(emulator, bot, 7_200_001)
        finally:
            await ozlab.close()
    assert logged_exceptions(bot.stderr) == [], bot.stderr


async def test_a_writer_that_took_the_study_during_the_outage_stops_the_bot(
    tmp_path: Path, server: PostgresServer
) -> None:
    """Back from the outage, the bot takes its writer's lock again before anything else: when
    another process took the study meanwhile, the bot ends with its line (status 5) rather
    than write beside it."""
    db = server.fresh_database()
    async with BotApiEmulator(TOKEN) as emulator:
        ozlab = OzlabProcesses(emulator, tmp_path, db)
        try:
            bot = await ozlab.start()
            await asyncio.to_thread(server.halt)
            await bot.wait_for_log(NOTICED, timeout=60)
            await asyncio.to_thread(server.resume)
            # the bot's next try is a second or more away: the other writer comes first
            with claim(db, "the other bot", "hmd"):
                assert await asyncio.wait_for(bot.finish(), 60) == StoreError.exit_code
        finally:
            await ozlab.close()
    last = bot.stderr.strip().splitlines()[-1]
    assert "is taken by another writer (ozlab writer: the other bot)" in last, bot.stderr
    assert "Traceback" not in bot.stderr, bot.stderr


async def test_a_writer_lock_dropped_with_its_session_is_taken_again(
    tmp_path: Path, server: PostgresServer
) -> None:
    """The server drops the lock's session alone (an administrator, an idle-session timeout):
    the bot, which would otherwise write without its lock, notices within seconds, takes it
    again and goes on."""
    db = server.fresh_database()
    holder = "SELECT pid FROM pg_stat_activity WHERE application_name = 'ozlab writer: ozlab run'"
    async with BotApiEmulator(TOKEN) as emulator:
        ozlab = OzlabProcesses(emulator, tmp_path, db)
        try:
            bot = await ozlab.start()
            [(first,)] = server.run_sql(holder)
            server.run_sql("SELECT pg_terminate_backend(%s)", (first,))
            await bot.wait_for_log(BACK, timeout=60)
            [(second,)] = server.run_sql(holder)
            assert second != first
            await answers_then_stops(emulator, bot, 7_200_002)
        finally:
            await ozlab.close()
    assert "the writer's lock on the study was lost with its connection" in bot.stderr
    assert logged_exceptions(bot.stderr) == [], bot.stderr


async def answers_then_stops(emulator: BotApiEmulator, bot: OzlabProcess, user_id: int) -> None:
    """A newcomer's /start is answered, and SIGTERM stops the bot cleanly."""
    p = emulator.participant(user_id)
    await p.send_text("/start")
    await p.wait_for_text("Privacy agreement", timeout=30)
    assert await bot.terminate() == 0, bot.stderr
