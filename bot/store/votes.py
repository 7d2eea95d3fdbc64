"""Pairwise votes as rows, inside the writer's transaction or a read.

A vote is written once under its stable id: the same id again changes nothing (the bot's
step and an import alike), so a vote can never be counted twice.
"""

from __future__ import annotations

from collections.abc import Sequence

from bot.core.vocabulary import FlagReason, Origin, RaterKind, Strength, VoteSource, Winner
from bot.core.votes import Vote
from bot.store.annotator_erasure import erased_pseudonyms
from bot.store.model import VotesImported
from bot.store.sql import Queries, Sql

COLUMNS = (
    "id", "study_id", "source", "rater", "rater_kind", "system_a", "system_b", "winner",
    "strength", "question", "scenario_id", "session_id", "turn", "session_a", "session_b",
    "flag_reason", "onboarding", "expected", "onboarding_correct", "job", "origin", "voted_at",
)  # fmt: skip
_INSERT = (
    f"INSERT INTO votes ({', '.join(COLUMNS)}) VALUES ({', '.join('?' * len(COLUMNS))})"
    " ON CONFLICT (id) DO NOTHING"
)


def row(study_id: str, vote: Vote, origin: Origin, now: float) -> tuple[object, ...]:
    correct = vote.correct()
    return (
        vote.vote_id,
        study_id,
        vote.source.value,
        vote.rater,
        vote.rater_kind.value,
        vote.system_a,
        vote.system_b,
        vote.winner.value,
        None if vote.strength is None else vote.strength.value,
        vote.question,
        vote.scenario_id,
        vote.session_id,
        vote.turn,
        vote.session_a,
        vote.session_b,
        None if vote.flag_reason is None else vote.flag_reason.value,
        int(vote.onboarding),
        None if vote.expected is None else vote.expected.value,
        None if correct is None else int(correct),
        vote.job,
        origin.value,
        now if vote.at is None else vote.at,
    )


def insert(conn: Sql, study_id: str, vote: Vote, origin: Origin, now: float) -> bool:
    """Keep ``vote``; False when a vote of that id is kept already."""
    return bool(conn.execute(_INSERT, row(study_id, vote, origin, now)).rowcount)


def record(conn: Sql, study_id: str, votes: Sequence[Vote], origin: Origin, now: float) -> int:
    """Every vote of ``votes``; how many were new."""
    return sum(insert(conn, study_id, vote, origin, now) for vote in votes)


def stored(conn: Queries) -> list[tuple[str, Vote]]:
    """Every vote with its study, in the order given."""
    found = conn.execute(f"SELECT {', '.join(COLUMNS)} FROM votes ORDER BY voted_at, id")
    return [(str(r[1]), _vote(r)) for r in found]


def _vote(r: Sequence[object]) -> Vote:
    def text(value: object) -> str | None:
        return None if value is None else str(value)

    return Vote(
        vote_id=str(r[0]),
        source=VoteSource(str(r[2])),
        rater=str(r[3]),
        rater_kind=RaterKind(str(r[4])),
        system_a=str(r[5]),
        system_b=str(r[6]),
        winner=Winner(str(r[7])),
        strength=None if r[8] is None else Strength(str(r[8])),
        question=str(r[9]),
        scenario_id=text(r[10]),
        session_id=text(r[11]),
        turn=None if r[12] is None else int(str(r[12])),
        session_a=text(r[13]),
        session_b=text(r[14]),
        flag_reason=None if r[15] is None else FlagReason(str(r[15])),
        onboarding=bool(r[16]),
        expected=None if r[17] is None else Winner(str(r[17])),
        onboarding_correct=None if r[18] is None else bool(r[18]),
        job=text(r[19]),
        at=float(str(r[21])),
    )


def import_votes(
    conn: Sql, study_id: str, votes: Sequence[tuple[int, Vote]], now: float, *, dry_run: bool
) -> VotesImported:
    """Votes from a file (with their lines), all or none: when a vote id is kept already,
    or by a rater the erasure ledger names, or on a dry run, nothing is written."""
    gone = erased_pseudonyms(conn, list({vote.rater for _, vote in votes}))
    if gone:
        return VotesImported(0, (), tuple(line for line, vote in votes if vote.rater in gone))
    duplicates = tuple(
        line
        for line, vote in votes
        if conn.execute("SELECT 1 FROM votes WHERE id = ?", (vote.vote_id,)).fetchone()
    )
    if duplicates:
        return VotesImported(0, duplicates)
    if dry_run:
        return VotesImported(len(votes), ())
    return VotesImported(record(conn, study_id, [v for _, v in votes], Origin.IMPORT, now), ())
