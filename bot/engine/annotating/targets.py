"""The targets of an annotation job, built from the stored sessions: pure, no I/O.

A session the job chooses gives one exchange target per turn the system answered
(``SESSION#TURN``) when the job rates exchanges, and one session target (``SESSION``) after
them when it rates sessions. Each target keeps the session's system and scenario, so that
nothing is pooled across them. Only ended sessions are rated (a live one is still growing).
Targets once stored stay: building again only adds what is new, after what exists. A
pairwise job's targets are pairs of sessions (``bot.engine.annotating.pairs``).
"""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence

from bot.core.annotation import AnnotatableSession, AnnotationTarget
from bot.core.vocabulary import AnnotationLevel, SessionState
from bot.engine.annotating.pairs import SystemPair, build_pairs, pair_sessions
from scenarios.jobs import AnnotationJob

RATED_STATES = (SessionState.ENDED,)


def exchange_target(session_id: str, turn: int) -> str:
    return f"{session_id}#{turn}"


def _chosen(
    job: AnnotationJob, study_id: str, sessions: Sequence[AnnotatableSession], taken: set[str]
) -> list[AnnotatableSession]:
    choice = job.sessions
    studies = choice.studies or (study_id,)
    fitting = [
        s
        for s in sessions
        if s.study_id in studies
        and s.state in RATED_STATES
        and (not choice.systems or s.system in choice.systems)
        and (not choice.scenarios or s.scenario in choice.scenarios)
    ]
    if choice.sample is None:
        return fitting
    return stratified_sample(fitting, choice.sample.n, choice.sample.seed, taken)


def stratified_sample(
    sessions: Sequence[AnnotatableSession], n: int, seed: int, taken: set[str]
) -> list[AnnotatableSession]:
    """``n`` sessions (or all, when fewer), each system's share proportional to its
    sessions (largest remainders), drawn with ``seed``; sessions ``taken`` already stay in
    the sample and count towards it."""
    kept = [s for s in sessions if s.session_id in taken]
    wanted = min(n, len(sessions)) - len(kept)
    if wanted <= 0:
        return kept
    by_system: dict[str, list[AnnotatableSession]] = {}
    for s in sorted(sessions, key=lambda s: s.session_id):
        by_system.setdefault(s.system, []).append(s)
    total = len(sessions)
    target = min(n, total)
    quotas = {system: target * len(group) / total for system, group in by_system.items()}
    shares = {system: int(q) for system, q in quotas.items()}
    rest = target - sum(shares.values())
    for system in sorted(quotas, key=lambda k: (-(quotas[k] - shares[k]), k))[:rest]:
        shares[system] += 1
    chosen = list(kept)
    rng = random.Random(seed)
    for system in sorted(by_system):
        group = by_system[system]
        have = [s for s in group if s.session_id in taken]
        pool = [s for s in group if s.session_id not in taken]
        more = max(0, min(shares[system] - len(have), len(pool)))
        chosen += rng.sample(pool, more)
    order = {s.session_id: n for n, s in enumerate(sessions)}
    return sorted(chosen, key=lambda s: order[s.session_id])


def build_targets(
    job: AnnotationJob,
    study_id: str,
    sessions: Sequence[AnnotatableSession],
    existing: Sequence[AnnotationTarget] = (),
    votes: Mapping[SystemPair, tuple[int, int]] | None = None,
    pending: Mapping[SystemPair, int] | None = None,
) -> list[AnnotationTarget]:
    """The targets to add (those not in ``existing``), positioned after them, in the order
    the sessions started and, within one, exchange by exchange, then the session. A
    pairwise job's: its pairs (``votes`` and ``pending`` steer adaptive selection)."""
    have = {t.key for t in existing}
    taken = {t.session_id for t in existing if t.session_id is not None}
    if job.kind == "pairwise":
        paired = {s for t in existing for s in pair_sessions(t.target) or ()}
        chosen = _chosen(job, study_id, sessions, paired)
        return build_pairs(job, chosen, existing, votes, pending)
    position = max((t.position for t in existing), default=-1) + 1
    added: list[AnnotationTarget] = []
    for session in _chosen(job, study_id, sessions, taken):
        wanted: list[tuple[str, AnnotationLevel, int | None]] = []
        if job.rate.exchange:
            wanted += [
                (exchange_target(session.session_id, turn), AnnotationLevel.EXCHANGE, turn)
                for turn in session.turns
            ]
        if job.rate.session and session.turns:
            wanted.append((session.session_id, AnnotationLevel.SESSION, None))
        for name, level, turn in wanted:
            if (job.id, name, level) in have:
                continue
            added.append(
                AnnotationTarget(
                    job=job.id,
                    target=name,
                    level=level,
                    position=position,
                    session_id=session.session_id,
                    turn=turn,
                    system=session.system,
                    scenario=session.scenario,
                )
            )
            position += 1
    return added
