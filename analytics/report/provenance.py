"""Where a report's numbers come from, so that a reader can reproduce them: the ozlab
version, the study definition's digest, the design with its seeds, the database schema,
the exclusions applied, and the smallest effect the sample could have detected.

The report is reproducible to the byte: the same database gives the same output in every
format. Its one clock reading, ``generated_at``, honours ``SOURCE_DATE_EPOCH`` (the
reproducible-builds convention), so two runs with it set are identical.
"""

from __future__ import annotations

import importlib.metadata
import os
from dataclasses import dataclass
from datetime import UTC, datetime

from analytics.data.loading import StudyData
from analytics.statistics import power
from analytics.statistics.quality import Exclusion
from bot.core.vocabulary import SessionState

_RANK_EFFICIENCY = (
    "The rank tests this report uses are about as sensitive as that parametric test "
    "(asymptotic relative efficiency 3/π ≈ 0.955 for normal data)."
)


@dataclass(frozen=True)
class Provenance:
    ozlab_version: str
    generated_at: str
    """ISO 8601 UTC, to the second; from ``SOURCE_DATE_EPOCH`` when it is set."""
    schema_version: int
    definitions: tuple[tuple[str, str], ...]
    """(study id, sha256 of its latest stored definition), as ``studies.digest``."""
    design: dict[str, object] | None
    """The study's design as declared: type, systems, seed, tasks per participant, order."""
    assignments: tuple[str, ...]
    """The assignment descriptions stored with the sessions (what the engine did)."""
    seeds: tuple[str, ...]
    """Every assignment's seed, stored with its sessions (the design's seed : participant)."""
    exclusions: str
    """In words: none, or who was left out and why."""
    excluded_participants: tuple[str, ...]
    detectable: str | None
    """The smallest effect the finished participants could have detected, in one sentence."""


def ozlab_version() -> str:
    try:
        return importlib.metadata.version("ozlab")
    except importlib.metadata.PackageNotFoundError:
        return "unknown (not installed)"


def generated_at() -> str:
    """Now, or ``SOURCE_DATE_EPOCH`` (seconds since 1970, UTC) when it is set."""
    epoch = os.environ.get("SOURCE_DATE_EPOCH", "").strip()
    moment = datetime.fromtimestamp(int(epoch), UTC) if epoch.isdigit() else datetime.now(UTC)
    return moment.isoformat(timespec="seconds").replace("+00:00", "Z")


def provenance(
    data: StudyData, exclusion: Exclusion | None, design: str, systems: tuple[str, ...]
) -> Provenance:
    """What a reader needs to reproduce the report of ``data`` (after any exclusion)."""
    sessions = data.sessions
    bundle = data.bundle
    declared: dict[str, object] | None = None
    if bundle is not None:
        chosen = bundle.study.design
        declared = {
            "type": chosen.type,
            "systems": chosen.systems,
            "seed": chosen.seed,
            "tasks_per_participant": chosen.tasks_per_participant,
            "order": chosen.order,
        }
    digests = tuple(
        (study_id, digest)
        for study_id, digest in sorted(data.definition_digests.items())
        if not data.bundles or study_id in data.bundles
    )
    return Provenance(
        ozlab_version=ozlab_version(),
        generated_at=generated_at(),
        schema_version=data.schema_version,
        definitions=digests,
        design=declared,
        assignments=tuple(sorted(set(sessions["design"].dropna().astype(str).tolist()))),
        seeds=tuple(sorted(set(sessions["seed"].dropna().astype(str).tolist()), key=_natural)),
        exclusions=_exclusions(exclusion),
        excluded_participants=() if exclusion is None else tuple(exclusion.participant_ids),
        detectable=_detectable(data, design, systems),
    )


def _natural(seed: str) -> tuple[tuple[int, str], ...]:
    """``0:2`` before ``0:10``: numbers compared as numbers."""
    return tuple([(int(p), "") if p.isdigit() else (-1, p) for p in seed.split(":")])


def _exclusions(exclusion: Exclusion | None) -> str:
    if exclusion is None:
        return "none: every participant is included (data-quality flags are reported, not applied)"
    kinds = ", ".join(exclusion.kinds) or "no kinds"
    return (
        f"{exclusion.excluded} of {exclusion.participants_before} participants excluded "
        f"(--exclude-flagged: {kinds})"
    )


def _detectable(data: StudyData, design: str, systems: tuple[str, ...]) -> str | None:
    """``analytics.statistics.power``'s sentence for the participants who finished a task, per
    system."""
    if not systems:
        return None
    sessions = data.sessions
    ended = sessions[sessions["state"].astype(object) == SessionState.ENDED.value]
    finished: dict[str, set[str]] = {system: set() for system in systems}
    for system, participant in zip(
        ended["system_id"].astype(str).tolist(),
        ended["participant_id"].astype(str).tolist(),
        strict=True,
    ):
        finished.setdefault(system, set()).add(participant)
    kind: power.DesignKind = "within" if design == "within" else "between"
    sizes = power.collected_sizes(finished, kind)
    found = power.smallest_detectable_effect(kind, sizes)
    sentence = found.sentence()
    if found.effect is None or len(systems) < 2:
        return sentence
    return f"{sentence} {_RANK_EFFICIENCY}"
