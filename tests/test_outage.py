"""An outage of an hour is told in one warning line a minute, however often the bot tries,
and its end in one line (on a clock the test turns, with the pauses the bot keeps)."""

from __future__ import annotations

import itertools
import logging

import pytest
from telegram.error import NetworkError, TimedOut

from bot.telegram.outage import LONGEST_PAUSE, Outage, pause


def test_pauses_double_up_to_half_a_minute() -> None:
    assert [pause(n) for n in range(1, 9)] == [1, 2, 4, 8, 16, 30, 30, 30]
    assert max(pause(n) for n in range(1, 1000)) == LONGEST_PAUSE


def test_an_hour_without_network_is_one_warning_a_minute(caplog: pytest.LogCaptureFixture) -> None:
    now = [1000.0]
    outage = Outage(clock=lambda: now[0])
    caplog.set_level(logging.INFO, logger="bot.telegram.outage")
    tries = 0
    while now[0] < 1000.0 + 3600:
        outage.failed(NetworkError("aiohttp.ClientConnectorError: Cannot connect") if tries % 2
                      else TimedOut("Timed out"))  # fmt: skip
        tries += 1
        now[0] += pause(outage.failures)
    outage.over()
    warnings = [r for r in caplog.records if r.levelno == logging.WARNING]
    assert tries > 100
    assert 55 <= len(warnings) <= 61  # the first at once, then one a minute at most
    assert warnings[0].getMessage().startswith("Telegram cannot be reached (Timed out): ")
    assert warnings[-1].getMessage().startswith("Telegram still cannot be reached after ")
    [back] = [r for r in caplog.records if r.levelno == logging.INFO]
    assert back.getMessage() == (
        f"Telegram reached again after {now[0] - 1000:.0f} s (failed tries: {tries})"
    )


def test_the_warnings_are_a_minute_apart(caplog: pytest.LogCaptureFixture) -> None:
    now = [0.0]
    told: list[float] = []
    outage = Outage(clock=lambda: now[0])
    caplog.set_level(logging.WARNING, logger="bot.telegram.outage")
    for _ in range(200):
        before = len(caplog.records)
        outage.failed(NetworkError("Bad Gateway"))
        if len(caplog.records) > before:
            told.append(now[0])
        now[0] += pause(outage.failures)
    assert all(b - a >= 60 for a, b in itertools.pairwise(told))
    assert told[0] == 0.0


def test_a_new_outage_after_the_network_came_back_is_told_at_once(
    caplog: pytest.LogCaptureFixture,
) -> None:
    now = [0.0]
    outage = Outage(clock=lambda: now[0])
    caplog.set_level(logging.INFO, logger="bot.telegram.outage")
    outage.failed(NetworkError("down"))
    now[0] += 5
    outage.over()
    outage.over()  # a call that worked while nothing was wrong says nothing
    now[0] += 5
    outage.failed(NetworkError("down again"))
    said = [(r.levelname, r.getMessage().split(" (")[0]) for r in caplog.records]
    assert said == [
        ("WARNING", "Telegram cannot be reached"),
        ("INFO", "Telegram reached again after 5 s"),
        ("WARNING", "Telegram cannot be reached"),
    ]
    assert outage.failures == 1
