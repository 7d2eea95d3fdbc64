"""``ozlab export payments``: who to pay, and for how long, per recruitment platform id.

The store keeps each platform id sealed with the study secret; this is the one place it
is opened, with ``OZLAB_SECRET`` from the environment, and written to the researcher's
file only (never logged). A withdrawn participant is listed with the time they gave and
nothing else: their other rows are erased.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path

from bot.core.privacy import Privacy
from bot.core.researcher_files import private_file, write_rows
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
    """A CSV to ``out`` (its owner's only: the ids are people's), or to standard output."""
    if out is None:
        write_rows(sys.stdout, COLUMNS, rows)
        return
    with private_file(out) as handle:
        write_rows(handle, COLUMNS, rows)
