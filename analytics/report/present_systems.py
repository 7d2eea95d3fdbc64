"""The system reliability section and the provenance section, as blocks."""

from __future__ import annotations

from datetime import UTC, datetime

from analytics.report import document as d
from analytics.report.document import Block, Bullets, Heading, Paragraph
from analytics.report.numbers import Report


def _ms(value: object) -> str:
    return d.DASH if d.missing(value) else d.seconds(float(value) / 1000)  # type: ignore[arg-type]


def _when(epoch: object) -> str:
    if d.missing(epoch):
        return d.DASH
    return datetime.fromtimestamp(float(epoch), UTC).strftime("%Y-%m-%d %H:%M:%S UTC")  # type: ignore[arg-type]


def reliability_blocks(report: Report) -> list[Block]:
    """Per system: failed exchanges (errors, timeouts) apart from real ones, latency,
    unavailability, replies a wizard wrote."""
    health = report.system_reliability
    blocks: list[Block] = [Heading("System reliability")]
    if health.by_system.empty:
        blocks.append(Paragraph("No exchange with a system yet.", "note"))
        return blocks
    blocks.append(
        Paragraph(
            "Every exchange the participant started: replied (a real exchange) or failed (the "
            "system erred, or did not reply in time). Latency of the replies as percentiles "
            "(R's default quantile, type 7). A system is unavailable from the failure that "
            "made it count as down (system_unavailable) to its next reply (system_available).",
            "method",
        )
    )
    rows = [
        (
            r["system_id"],
            d.count(r["exchanges"]),
            d.count(r["replied"]),
            d.share_of(r["failed"], r["exchanges"]),
            d.count(r["errors"]),
            d.count(r["timeouts"]),
            _ms(r["latency_p50_ms"]),
            _ms(r["latency_p95_ms"]),
            _ms(r["latency_max_ms"]),
            _unavailable(r),
            d.count(r["wizard_written"]),
        )
        for r in health.by_system.to_dict("records")
    ]
    columns = (
        "System", "Exchanges", "Replied", "Failed", "Errors", "Timeouts", "p50", "p95", "max",
        "Unavailable", "By wizard",
    )  # fmt: skip
    blocks.append(
        d.table(
            columns,
            rows,
            caption="Exchanges, failures and reply latency (p50, p95, max) per system",
            numeric=(False, *[True] * 8, False, True),
        )
    )
    if len(health.errors):
        blocks.append(
            d.table(
                ("System", "Failure", "Count", "Example"),
                [
                    (r["system_id"], r["kind"], d.count(r["count"]), d.shorten(r["example"], 90))
                    for r in health.errors.to_dict("records")
                ],
                caption="Failures by kind",
                numeric=(False, False, True, False),
                group_by=0,
            )
        )
    if len(health.periods):
        blocks.append(
            d.table(
                ("System", "Unavailable from", "until", "For"),
                [
                    (
                        r["system_id"],
                        _when(r["start"]),
                        "still unavailable at the last record" if r["ongoing"] else _when(r["end"]),
                        d.DASH if r["ongoing"] else d.seconds(r["duration_s"]),
                    )
                    for r in health.periods.to_dict("records")
                ],
                caption="Periods of unavailability",
                numeric=(False, False, False, True),
                group_by=0,
            )
        )
    return blocks


def _unavailable(row: dict) -> str:
    """``never``, or ``2× (2.0 min), 1 ongoing``: periods, their total, one still open."""
    periods = int(row["unavailable_periods"])
    if not periods:
        return "never"
    total = f" ({d.seconds(row['unavailable_s'])})" if row["unavailable_s"] else ""
    return f"{periods}×{total}" + (", 1 ongoing" if row["unavailable_ongoing"] else "")


def provenance_blocks(report: Report, source: str | None) -> list[Block]:
    """What a reader needs to reproduce the report."""
    made = report.provenance
    digests = "; ".join(f"{study} sha256 {digest}" for study, digest in made.definitions)
    design = made.design
    if design is None:
        declared = "not stored in the database"
    else:
        each = design["tasks_per_participant"]
        declared = (
            f"{design['type']} assignment, systems {design['systems']} subjects, seed "
            f"{design['seed']}, {'all' if each is None else each} tasks per participant in "
            f"{design['order']} order"
        )
    seeds = made.seeds
    shown = ", ".join(seeds[:3]) + (", …" if len(seeds) > 3 else "")
    lines = [
        f"ozlab version: {made.ozlab_version}",
        f"Database: {source or d.DASH} (schema version {made.schema_version})",
        f"Study definition: {digests or 'not stored in the database'}",
        f"Design: {declared}",
        f"Assignments as stored with the sessions: {', '.join(made.assignments) or d.DASH}; "
        f"{d.plural(len(seeds), 'seed')} (the design's seed : participant), e.g. "
        f"{shown or d.DASH}; every seed is in the JSON report and the export",
        f"Exclusions: {made.exclusions}",
        f"Generated: {made.generated_at} (from SOURCE_DATE_EPOCH when set: the same database "
        "then gives the same bytes in every format)",
    ]
    if made.detectable:
        lines.append(f"Sensitivity: {made.detectable}")
    if report.judges is not None:
        from analytics.report.present_judges import provenance_lines

        lines += provenance_lines(report.judges)
    return [Heading("Provenance"), Bullets(tuple(lines))]
