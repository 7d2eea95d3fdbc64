"""Time of the report's annotation section (``analytics.annotations.ratings.analyse``) on made-up
ratings the size of a large annotation study, with the shipped instruments.

    python bench/annotations.py                               # the defaults below
    python bench/annotations.py --conversations 100 --turns 10 --responses 200

- HRI CUES: ``--conversations`` conversations of ``--turns`` exchanges, each exchange and
  each conversation overall rated by three annotators (one more positive than the others);
- XRec: ``--responses`` system responses rated on 13 questions by two annotators, and by a
  third where they differ.

Every figure is computed as the report computes it: six ICC forms, alpha at each level with
its bootstrap interval, kappa, agreement, each annotator left out, adjudication, final values.
"""

from __future__ import annotations

import argparse
import resource
import sys
import time
from importlib.resources import files
from pathlib import Path

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from analytics.annotations.ratings import RATING_COLUMNS, analyse, item_scales
from scenarios.loading import load_questionnaire


def _row(
    job: str,
    level: str,
    target: str,
    session: str,
    turn: int | None,
    system: str,
    who: str,
    instrument: str,
    item: str,
    value: object,
    round_: str = "first",
) -> dict:
    return dict(
        zip(
            RATING_COLUMNS,
            (
                job,
                level,
                target,
                session,
                turn,
                system,
                "s",
                who,
                instrument,
                item,
                str(value),
                round_,
                "telegram",
                "2026-01-01T00:00:00Z",
            ),
            strict=True,
        )
    )


def hri_cues(conversations: int, turns: int, rng: np.random.Generator) -> list[dict]:
    rows = []
    for c in range(conversations):
        session, system = f"c{c:05d}-1", f"system-{c % 2}"
        base = rng.integers(2, 5)
        for turn in [*range(1, turns + 1), None]:
            truth = int(np.clip(base + rng.integers(-1, 2), 1, 5))
            for who in ("A1", "A2", "A3"):
                value = min(5, truth + int(who == "A1" and rng.random() < 0.5))
                if turn is None:
                    rows.append(
                        _row(
                            "hri-cues",
                            "session",
                            session,
                            session,
                            None,
                            system,
                            who,
                            "hri-cues-overall",
                            "hri-cues-overall.overall",
                            value,
                        )
                    )
                else:
                    rows.append(
                        _row(
                            "hri-cues",
                            "exchange",
                            f"{session}#{turn}",
                            session,
                            turn,
                            system,
                            who,
                            "hri-cues",
                            "hri-cues.exchange",
                            value,
                        )
                    )
    return rows


def xrec(responses: int, rng: np.random.Generator) -> list[dict]:
    items = [
        (f"xrec-exchange.q{k}", (0, 1) if k <= 3 else (1, 3 if k < 13 else 5)) for k in range(1, 14)
    ]
    rows = []
    for r in range(responses):
        session, turn, system = f"x{r // 5:05d}-1", r % 5 + 1, f"system-{r % 2}"
        target = f"{session}#{turn}"
        for item, (low, high) in items:
            first = int(rng.integers(low, high + 1))
            second = first if rng.random() < 0.7 else int(rng.integers(low, high + 1))
            for who, value in (("B1", first), ("B2", second)):
                rows.append(
                    _row(
                        "xrec",
                        "exchange",
                        target,
                        session,
                        turn,
                        system,
                        who,
                        "xrec-exchange",
                        item,
                        value,
                    )
                )
            if first != second:
                rows.append(
                    _row(
                        "xrec",
                        "exchange",
                        target,
                        session,
                        turn,
                        system,
                        "B3",
                        "xrec-exchange",
                        item,
                        first,
                        "adjudication",
                    )
                )
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--conversations", type=int, default=1000)
    parser.add_argument("--turns", type=int, default=20)
    parser.add_argument("--responses", type=int, default=2000)
    args = parser.parse_args()
    rng = np.random.default_rng(11)
    shelf = files("questionnaires") / "library"
    instruments = [
        load_questionnaire(Path(str(shelf / f"{n}.yaml")))
        for n in ("hri-cues", "hri-cues-overall", "xrec-exchange")
    ]
    scales = item_scales(instruments)
    for name, rows in (
        ("HRI CUES", hri_cues(args.conversations, args.turns, rng)),
        ("XRec", xrec(args.responses, rng)),
    ):
        frame = pd.DataFrame(rows, columns=RATING_COLUMNS)
        started = time.perf_counter()
        result = analyse(frame, scales, system_order=("system-0", "system-1"))
        seconds = time.perf_counter() - started
        assert result is not None
        print(
            f"{name}: {len(frame):,} ratings, {result.final_values.shape[0]:,} targets, "
            f"{len(result.reliability):,} reliability rows, "
            f"{len(result.leave_one_out):,} leave-one-out rows: {seconds:.1f} s"
        )
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"peak RSS {peak:.0f} MB")


if __name__ == "__main__":
    main()
