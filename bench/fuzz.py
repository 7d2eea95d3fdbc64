"""The fuzz of ``tests/test_fuzz_e2e.py`` at full size: random and malformed updates from many
chats while simulated participants play the ``hmd`` study (see ``tests/fuzz_support.py`` for
what is sent, counted and checked).

Usage::

    .venv/bin/python bench/fuzz.py [--updates 10000] [--players 6] [--seed 1]

Prints the counts (updates sent, unhandled exceptions, internal errors, unanswered messages,
participants completed, integrity, leaks found) and exits 1 when any should-be-zero count is
not zero.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:  # tests.fuzz_support lives in the repository, not the package
    sys.path.insert(0, str(ROOT))

from tests.fuzz_support import FuzzSettings, run_fuzz  # noqa: E402


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--updates", type=int, default=10_000)
    parser.add_argument("--players", type=int, default=6)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--chats", type=int, default=0, help="private fuzz chats (0: auto)")
    args = parser.parse_args()
    settings = FuzzSettings(args.updates, args.players, args.seed, args.chats, timeout=300)
    with tempfile.TemporaryDirectory(prefix="ozlab-fuzz-") as folder:
        report = asyncio.run(run_fuzz(settings, Path(folder)))
    print(report.summary())
    problems = report.problems()
    for problem in problems:
        print(f"PROBLEM {problem[:2000]}")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
