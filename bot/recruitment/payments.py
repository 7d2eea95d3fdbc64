"""``ozlab export payments``: who to pay, and for how long, per recruitment platform id (a
participant's, or an annotator's of a job recruiting on a platform: its ``job``).

The store keeps each platform id sealed with the study secret; this is the one place it
is opened, with ``OZLAB_SECRET`` from the environment, and written to the researcher's
file only (never logged). A withdrawn participant is listed with the time they gave and
nothing else: their other rows are erased.
"""

from __future__ import annotations

import sys
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from pathlib import Path

from bot.core.privacy import Privacy
from bot.core.researcher_files import private_file, write_rows
from bot.recruitment.bonuses import bonuses_paid
from bot.store.model import MoneyStep, PaymentRecord

COLUMNS = (
    "study",
    "platform",
    "platform_id",
    "status",
    "minutes",
    "arrived_at",
    "last_active_at",
    "submission_id",
    "platform_status",
    "approved_at",
    "bonus",
    "bonus_paid_at",
    "bonus_bulk_ids",
    "job",
)


def _iso(at: float | None) -> str:
    return "" if at is None else datetime.fromtimestamp(at, UTC).isoformat(timespec="seconds")


def payment_rows(
    records: Sequence[PaymentRecord],
    privacy: Privacy,
    steps: Sequence[MoneyStep] = (),
    job_studies: Mapping[str, str] | None = None,
) -> list[tuple[str, ...]]:
    """One row per platform id, ids opened; the minutes given, to the tenth; what the
    platform said of the submission (``ozlab prolific``) and the bonuses the money path
    knows paid (their sum, the last time, the bulk ids). ``job_studies``: the platform
    study of each recruiting job, whose bonuses are its annotators' (one person may be a
    participant and an annotator: each row gets the bonuses of its own platform study)."""
    studies = job_studies or {}
    jobs = set(studies.values())
    participants = bonuses_paid([s for s in steps if s.platform_study not in jobs], privacy)
    annotators = {
        job: bonuses_paid([s for s in steps if s.platform_study == study], privacy)
        for job, study in studies.items()
    }
    rows: list[tuple[str, ...]] = []
    for r in records:
        pid = privacy.unseal(r.platform_key)
        paid = participants if r.job is None else annotators.get(r.job, {})
        bonuses = paid.get(pid, [])
        rows.append(
            (
                r.study_id,
                r.platform,
                pid,
                r.status.value,
                f"{r.seconds / 60:.1f}",
                _iso(r.arrived_at),
                _iso(r.last_at),
                privacy.unseal(r.submission_key) if r.submission_key else "",
                r.platform_status or "",
                _iso(r.approved_at),
                f"{sum(b.cents for b in bonuses) / 100:.2f}" if bonuses else "",
                _iso(max((b.at for b in bonuses if b.at is not None), default=None)),
                ";".join(b.bulk_id for b in bonuses if b.bulk_id),
                r.job or "",
            )
        )
    return rows


def write_payments(rows: Sequence[tuple[str, ...]], out: Path | None) -> None:
    """A CSV to ``out`` (its owner's only: the ids are people's), or to standard output."""
    if out is None:
        write_rows(sys.stdout, COLUMNS, rows)
        return
    with private_file(out) as handle:
        write_rows(handle, COLUMNS, rows)
