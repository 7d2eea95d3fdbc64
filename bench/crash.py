"""The crash test of ``tests/test_crash_e2e.py`` at full size: participants through whole
``hmd`` sessions while ``ozlab run`` is killed with SIGKILL at random moments and restarted
(see ``tests/crash_support.py`` for how the kills are placed and what is counted).

Usage::

    .venv/bin/python bench/crash.py [--sessions 60] [--kills 20] [--seed 1] [--webhook]

Prints sessions completed, kills, lost messages, duplicated rows, unanswered messages and the
duplicate messages participants saw (re-sent after a kill: what at-least-once delivery
allows), and exits 1 when anything but those duplicates is wrong.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:  # tests.crash_support lives in the repository, not the package
    sys.path.insert(0, str(ROOT))

from tests.crash_support import CrashSettings, run_crash  # noqa: E402


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sessions", type=int, default=60)
    parser.add_argument("--kills", type=int, default=20)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument(
        "--webhook", action="store_true", help="the bot gets its updates by webhook, not polling"
    )
    args = parser.parse_args()
    settings = CrashSettings(
        sessions=args.sessions, kills=args.kills, seed=args.seed, webhook=args.webhook
    )
    with tempfile.TemporaryDirectory(prefix="ozlab-crash-") as folder:
        report = asyncio.run(run_crash(settings, Path(folder)))
    print(report.summary())
    problems = report.problems()
    for problem in problems:
        print(f"PROBLEM {problem[:2000]}")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
