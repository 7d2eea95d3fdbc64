"""What the pairwise section costs: Bradley–Terry with 1,000 rater-bootstrap rounds.

Usage::

    .venv/bin/python bench/pairwise.py [--votes 100000] [--systems 20] [--raters 2000]
        [--rounds 1000] [--repeat 3] [--ties half|davidson] [--json out.json]

Simulated votes (seeded): ``--systems`` systems with strengths spread over 3 log-units,
``--raters`` raters with a taste of their own, the pair of each vote drawn at random, one
in ten a tie. Timed: ``pairwise_section`` on the votes frame, the whole of it (counting,
the library fit, the sandwich, the bootstrap, ranks, win rates, agreement, sample size),
``--repeat`` times; the best and the median are printed with the machine's load average.
The target is under 10 s on 2 cores.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import time

import numpy as np
import pandas as pd

from analytics.statistics.pairwise import PairwiseOptions, pairwise_section

TARGET_S = 10.0


def simulated_votes(votes: int, systems: int, raters: int, seed: int = 1) -> pd.DataFrame:
    """Votes from known strengths with rater effects, as the votes frame."""
    rng = np.random.default_rng(seed)
    strength = np.linspace(1.5, -1.5, systems)
    taste = rng.normal(0, 0.3, size=(raters, systems))
    rater = rng.integers(0, raters, size=votes)
    first = rng.integers(0, systems, size=votes)
    second = (first + rng.integers(1, systems, size=votes)) % systems
    eta = strength[first] + taste[rater, first] - strength[second] - taste[rater, second] + 0.1
    winner = np.where(rng.random(votes) < 1 / (1 + np.exp(-eta)), "a", "b")
    winner = np.where(rng.random(votes) < 0.1, "tie", winner)
    names = np.array([f"system-{k:02d}" for k in range(systems)])
    return pd.DataFrame(
        {
            "vote_id": [f"v{k}" for k in range(votes)],
            "source": "side_by_side",
            "rater": [f"rater-{k:05d}" for k in rater],
            "rater_kind": "participant",
            "system_a": names[first],
            "system_b": names[second],
            "winner": winner,
            "strength": None,
            "question": "turn",
            "scenario": "bench",
            "session": None,
            "turn": None,
            "flagged": False,
            "flag_reason": None,
            "onboarding": False,
            "onboarding_correct": None,
            "time": pd.Timestamp("2026-11-27T00:00:00Z"),
        }
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--votes", type=int, default=100_000)
    parser.add_argument("--systems", type=int, default=20)
    parser.add_argument("--raters", type=int, default=2_000)
    parser.add_argument("--rounds", type=int, default=1_000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--ties", choices=("half", "davidson"), default="half")
    parser.add_argument("--json", help="write the measurements here as well")
    args = parser.parse_args()
    votes = simulated_votes(args.votes, args.systems, args.raters)
    options = PairwiseOptions(rounds=args.rounds, ties=args.ties)
    seconds = []
    for _ in range(args.repeat):
        start = time.perf_counter()
        found = pairwise_section(votes, options=options)
        seconds.append(time.perf_counter() - start)
    counts = found.counts.iloc[0]
    result = {
        "votes": args.votes,
        "systems": args.systems,
        "raters": args.raters,
        "rounds": args.rounds,
        "ties": args.ties,
        "converged_rounds": int(counts["converged_rounds"]),
        "best_s": min(seconds),
        "median_s": statistics.median(seconds),
        "runs_s": seconds,
        "load_average": os.getloadavg(),
        "cores": os.cpu_count(),
    }
    verdict = "under" if result["median_s"] < TARGET_S else "OVER"
    print(
        f"pairwise_section: {args.votes:,} votes, {args.systems} systems, {args.raters:,} "
        f"raters, {args.rounds:,} bootstrap rounds ({args.ties} ties): best "
        f"{result['best_s']:.2f} s, median {result['median_s']:.2f} s of {args.repeat} "
        f"({verdict} the {TARGET_S:.0f} s target); {result['converged_rounds']:,} rounds "
        f"converged; load average {', '.join(f'{x:.1f}' for x in result['load_average'])} "
        f"on {result['cores']} cores"
    )
    if args.json:
        with open(args.json, "w", encoding="utf-8") as out:
            json.dump(result, out, indent=1)


if __name__ == "__main__":
    main()
