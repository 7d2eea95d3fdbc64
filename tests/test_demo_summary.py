"""The summary ``ozlab demo`` prints: a system that cannot report success itself, and whose
sessions nothing marked successful, is not measured there either (never 0 %)."""

from __future__ import annotations

from bot.pilot.summary import format_summary
from bot.store.model import SystemSummary
from scenarios.loading import load_study
from scenarios.systems import reports_success


def test_a_system_that_cannot_report_success_is_not_measured_never_zero() -> None:
    summaries = [
        SystemSummary("shop-v0", 4, 0, 4, 3.0, {}),
        SystemSummary("talker", 3, 0, 3, 10.0, {}),
        SystemSummary("tooled", 3, 2, 3, 3.0, {}),
    ]
    lines = format_summary(summaries, silent={"talker", "tooled"}).splitlines()
    rows = {line.split()[0]: line.split() for line in lines[1:] if line.split()}
    assert rows["shop-v0"][2:4] == ["0", "0%"]  # it could have said so: a measured 0 %
    assert rows["talker"][2:5] == ["-", "not", "measured"]
    assert rows["tooled"][2:4] == ["2", "67%"]  # its tool calls spoke
    assert lines[-1].startswith("not measured: ")


def test_which_systems_report_success_themselves() -> None:
    systems = {s.id: reports_success(s) for s in load_study("hmd-llm").study.systems}
    assert systems == {"shop-llm": False, "shop-v1": True}
