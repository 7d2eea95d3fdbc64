"""The plain progress bar: redrawn in place on a terminal, and where the output is a log
file or a pipe, a whole line now and then (about every tenth of the way), never one per step."""

from __future__ import annotations

import io

from bot.core.progress import ProgressBar


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_a_thousand_steps_make_a_few_lines_in_a_log() -> None:
    log = io.StringIO()
    bar = ProgressBar(1000, log, "targets")
    for _ in range(1000):
        bar.advance()
    bar.close()
    lines = log.getvalue().splitlines()
    assert "\r" not in log.getvalue()
    assert 2 <= len(lines) <= 11
    assert lines[-1].startswith(f"[{'#' * 30}] 1000/1000 targets")


def test_on_a_terminal_the_bar_is_redrawn_in_place_and_ends_its_line() -> None:
    screen = Terminal()
    bar = ProgressBar(3, screen, "replays")
    for outcome in ("done", "done", "failed"):
        bar.advance(outcome)
    bar.close()
    written = screen.getvalue()
    assert written.startswith("\r[") and written.endswith("\n")
    assert written.count("\n") == 1
    assert "3/3 replays" in written and "(2 done, 1 failed)" in written
