"""The study's PostgreSQL server restarted under a running bot (a minor-version update, a
failover, a reboot): the bot lives through it, says so in one warning, and goes on from what
the store keeps; the participants under way finish, nothing lost and nothing stored twice.
The participants and what is counted are the crash run's (``tests/crash_support.py``)."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.crash_support import RestartSettings, run_restarts
from tests.postgres_server import PostgresServer

pytestmark = pytest.mark.slow


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
    report = await run_restarts(RestartSettings(), tmp_path, server)
    context = "\n".join([report.summary(), *report.outage_lines])
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
