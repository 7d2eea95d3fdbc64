"""``ozlab export payments``: who to pay, and for how long, per recruitment platform id.

The store keeps each platform id sealed with the study secret; this is the one place it
is opened, with ``OZLAB_SECRET`` from the environment, and written to the researcher's
file only (never logged). A withdrawn participant is listed with the time they gave and
nothing else: their other rows are erased.
"""

from __future__ import annotations

import csv
import sys
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import TextIO

from bot.privacy import Privacy
from bot.store.model import PaymentRecord

COLUMNS = ("study", "platform", "platform_id", "status", "minutes", "arrived_at", "last_active_at")


def _iso(at: float) -> str:
    return datetime.fromtimestamp(at, UTC).isoformat(timespec="seconds")


def payment_rows(records: Sequence[PaymentRecord], privacy: Privacy) -> list[tuple[str, ...]]:
    """One row per platform id, ids opened; the minutes given, to the tenth."""
    return [
        (
            r.study_id,
            r.platform,
            privacy.unseal(r.platform_key),
            r.status.value,
            f"{r.seconds / 60:.1f}",
            _iso(r.arrived_at),
            _iso(r.last_at),
        )
        for r in records
    ]


def write_payments(rows: Sequence[tuple[str, ...]], out: Path | None) -> None:
    """A CSV to ``out``, or to standard output."""
    if out is None:
        _write(rows, sys.stdout)
        return
    with out.open("w", newline="", encoding="utf-8") as handle:
        _write(rows, handle)


def _write(rows: Sequence[tuple[str, ...]], handle: TextIO) -> None:
    writer = csv.writer(handle)
    writer.writerow(COLUMNS)
    writer.writerows(rows)
