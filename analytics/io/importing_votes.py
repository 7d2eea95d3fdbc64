"""``ozlab import votes FILE.csv``: pairwise judgements made elsewhere (another arena, a
spreadsheet of ACUTE answers, an earlier study's export) added to the study's votes.

The columns are the votes frame's (docs/arena.md): ``vote_id``, ``source``, ``rater``,
``system_a``, ``system_b``, ``winner`` and ``question`` are needed; ``rater_kind`` (by
default: annotator for ``acute``, else participant), ``strength``, ``scenario``,
``session``, ``turn``, ``flagged``, ``flag_reason``, ``onboarding``, ``onboarding_correct``
and ``time`` (Unix seconds or ISO 8601; without: the import's) may be given. Any other
column is refused: a misspelt one would otherwise be lost. Every row is checked as the bot
checks its own votes (the systems are the study's, a session stored is the rater's, the
words are the vocabulary's, the rater and the session not erased: the erasure ledger keeps
them out) and every problem told with its line and field; then all are written through the
store in one transaction, or none.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol, TypeVar

from analytics.io.import_rows import (
    Problem,
    csv_file,
    erased,
    kept_out,
    moment,
    not_a_pseudonym,
    whole_number,
)
from analytics.io.importing import _study, on_store
from bot.core.researcher_files import restored
from bot.core.vocabulary import FlagReason, RaterKind, Strength, VoteSource, Winner
from bot.core.votes import Vote
from bot.store.interface import Imports, OperatorTasks, PairwiseVotes, StudyDefinitions
from scenarios.models import StudyBundle

__all__ = ["VotesResult", "import_votes"]

REQUIRED = ("vote_id", "source", "rater", "system_a", "system_b", "winner", "question")
OPTIONAL = (
    "rater_kind", "strength", "scenario", "session", "turn", "flagged", "flag_reason",
    "onboarding", "onboarding_correct", "time",
)  # fmt: skip
_JUDGE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._:-]{0,63}$")
E = TypeVar("E", VoteSource, RaterKind, Winner, Strength, FlagReason)
_TRUE, _FALSE = ("true", "1", "yes"), ("false", "0", "no", "")


@dataclass(frozen=True)
class VotesResult:
    study_id: str | None
    votes: int
    raters: int
    problems: tuple[Problem, ...]


def import_votes(
    file: Path | str,
    db: Path | str,
    *,
    study: str | None = None,
    dry_run: bool = False,
    clock: Callable[[], float] = time.time,
) -> VotesResult:
    """Check every row of ``file`` and, when all are right, add them to ``db`` at once."""
    raw = Path(file).read_bytes()
    return on_store(db, study, clock, lambda store, now: _run(store, raw, study, dry_run, now))


class VotingStore(Imports, PairwiseVotes, StudyDefinitions, OperatorTasks, Protocol):
    """The roles an import of votes uses: the study and sessions it is checked against,
    and the votes."""


def _failed(study_id: str | None, line: int, message: str) -> VotesResult:
    return VotesResult(study_id, 0, 0, (Problem(line, message),))


async def _run(
    store: VotingStore, raw: bytes, study: str | None, dry_run: bool, now: float
) -> VotesResult:
    bundle, loaded, problem = await _study(store, study)
    if bundle is None:
        return _failed(None, 0, problem)
    if loaded:
        return _failed(None, 0, "the database holds no definition of that study: run it first")
    study_id = bundle.study.id
    reader = csv_file(raw)
    if isinstance(reader, str):
        return _failed(study_id, 0, reader)
    header = list(reader.fieldnames or [])
    missing = [c for c in REQUIRED if c not in header]
    if missing:
        return _failed(study_id, 1, f"missing column(s): {', '.join(missing)}")
    unknown = [h for h in header if h not in (*REQUIRED, *OPTIONAL)]
    if unknown:
        allowed = ", ".join((*REQUIRED, *OPTIONAL))
        return _failed(study_id, 1, f"unknown column(s): {', '.join(unknown)} (allowed: {allowed})")
    context = await store.import_context(study_id)
    ledger = await erased(store)
    checker = _Rows(bundle, context.sessions, now)
    problems: list[Problem] = []
    votes: list[tuple[int, Vote]] = []
    first: dict[str, int] = {}
    line = 1
    for read in reader:
        start, line = line + 1, reader.line_num
        row = {k: restored(v) if isinstance(v, str) else "" for k, v in read.items()}
        if not any(v.strip() for v in row.values()):
            continue
        refused = kept_out(ledger, row, "rater", "session")
        if refused is not None:
            problems.append(Problem(start, refused))
            continue
        found, vote = checker.check(row)
        if vote is not None:
            if vote.vote_id in first:
                found.append(f"vote_id: {vote.vote_id!r} is already on line {first[vote.vote_id]}")
            first.setdefault(vote.vote_id, start)
        problems += [Problem(start, message) for message in found]
        if vote is not None and not found:
            votes.append((start, vote))
    if not votes and not problems:
        problems.append(Problem(0, "the file has no votes"))
    if problems:
        return VotesResult(study_id, 0, 0, tuple(problems))
    outcome = await store.import_votes(study_id, votes, dry_run=dry_run)
    if outcome.erased:
        gone = "rater: erased (the erasure ledger names them): never imported again"
        return VotesResult(study_id, 0, 0, tuple(Problem(n, gone) for n in outcome.erased))
    if outcome.duplicates:
        kept = "vote_id: this vote is already in the database"
        return VotesResult(study_id, 0, 0, tuple(Problem(n, kept) for n in outcome.duplicates))
    return VotesResult(study_id, outcome.votes, len({v.rater for _, v in votes}), ())


class _Rows:
    """Checks rows one by one against the study's systems and the stored sessions."""

    def __init__(
        self, bundle: StudyBundle, sessions: Mapping[str, tuple[str, str]], now: float
    ) -> None:
        self.sessions, self.now = sessions, now
        self.systems = {s.id for s in bundle.study.systems} | {s for _, s in sessions.values()}

    def check(self, row: Mapping[str, str]) -> tuple[list[str], Vote | None]:
        def get(name: str) -> str:
            return (row.get(name) or "").strip()

        empty = [f"{name}: empty" for name in REQUIRED if not get(name)]
        if empty:
            return empty, None
        problems: list[str] = []

        def word(name: str, kind: type[E], default: str = "") -> E | None:
            raw = get(name) or default
            if not raw:
                return None
            try:
                return kind(raw)
            except ValueError:
                known = ", ".join(member.value for member in kind)
                problems.append(f"{name}: {raw!r} is not one of {known}")
                return None

        source = word("source", VoteSource)
        default_kind = RaterKind.ANNOTATOR if source is VoteSource.ACUTE else RaterKind.PARTICIPANT
        kind = word("rater_kind", RaterKind, default_kind.value)
        winner = word("winner", Winner)
        strength = word("strength", Strength)
        reason = word("flag_reason", FlagReason)
        rater = get("rater")
        if kind is RaterKind.MODEL:
            # A judge is named by its id (no person's name to keep out), and its votes are
            # kept apart from people's fit whatever the file says.
            if not _JUDGE.match(rater):
                problems.append(f"rater: {rater!r} is no judge's id (letters, digits, . _ : -)")
            if get("flagged") and get("flagged").lower() in _FALSE:
                problems.append("flagged: a model's vote is never counted among people's")
            reason = reason or FlagReason.MODEL_VERDICT
        elif problem := not_a_pseudonym("rater:", rater, "P017"):
            problems.append(problem)
        a, b = get("system_a"), get("system_b")
        for name, system in (("system_a", a), ("system_b", b)):
            if system not in self.systems:
                known = ", ".join(sorted(self.systems))
                problems.append(f"{name}: no system {system!r} in this study ({known})")
        if a == b:
            problems.append("system_b: the same system as system_a: a vote compares two")
        session = get("session") or None
        if session is not None and session in self.sessions and kind is RaterKind.PARTICIPANT:
            owner, _ = self.sessions[session]
            if owner != rater:
                problems.append(f"session: {session!r} belongs to another participant")
        turn = whole_number(get("turn"), "turn", problems)
        flagged = _flag(get("flagged"), "flagged", problems)
        if flagged and reason is None and not get("flag_reason"):
            problems.append("flag_reason: a flagged vote says why")
        if get("flagged") and not flagged and reason is not None:
            problems.append("flagged: false, but flag_reason is given")
        onboarding = _flag(get("onboarding"), "onboarding", problems)
        correct_raw = get("onboarding_correct")
        correct = _flag(correct_raw, "onboarding_correct", problems) if correct_raw else None
        if correct is not None and not onboarding:
            problems.append("onboarding_correct: given for a vote that is not onboarding")
        if strength is not None and winner not in (Winner.A, Winner.B):
            problems.append("strength: only a vote for a or b has a strength")
        at = moment(get("time"), "time", problems)
        if problems or source is None or kind is None or winner is None:
            return problems, None
        return [], Vote(
            vote_id=get("vote_id"), source=source, rater=rater, rater_kind=kind, system_a=a,
            system_b=b, winner=winner, question=get("question"), strength=strength,
            scenario_id=get("scenario") or None, session_id=session, turn=turn,
            flag_reason=reason, onboarding=onboarding, onboarding_correct=correct,
            at=self.now if at is None else at,
        )  # fmt: skip


def _flag(raw: str, name: str, problems: list[str]) -> bool:
    if raw.lower() in _TRUE:
        return True
    if raw.lower() not in _FALSE:
        problems.append(f"{name}: {raw!r} is neither true nor false")
    return False
