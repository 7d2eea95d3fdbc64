"""The short summary that ``ozlab demo`` prints: read from the store, no pandas.

The full report with statistics belongs to ``analytics``; this one only shows at a glance
that a study ran and that its systems differ: per system its sessions and answers (a
side-by-side session under the pair it met, since it met both at once), and the votes counted
per source and pair of systems.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Collection, Iterable, Sequence
from dataclasses import dataclass, field

from bot.core.vocabulary import VoteSource, Winner
from bot.core.votes import Vote
from bot.store import Access, open_store
from bot.store.blocking import run_blocking
from bot.store.model import SystemSummary
from bot.store.opening import Database

__all__ = ["Summary", "SystemSummary", "VoteTally", "format_summary", "summarize", "tally"]

_SOURCES = {
    VoteSource.SIDE_BY_SIDE: "side by side",
    VoteSource.PREFERENCE: "preference",
    VoteSource.ACUTE: "ACUTE-Eval",
}


@dataclass
class VoteTally:
    """The votes of one source between two systems, as given (no model)."""

    source: VoteSource
    systems: tuple[str, str]
    preferred: Counter[str] = field(default_factory=Counter)
    ties: int = 0
    both_bad: int = 0
    not_comparable: int = 0

    @property
    def votes(self) -> int:
        return sum(self.preferred.values()) + self.ties + self.both_bad + self.not_comparable


@dataclass(frozen=True)
class Summary:
    systems: list[SystemSummary]
    votes: list[VoteTally]


def summarize(db: Database, study: str | None = None) -> Summary:
    """Per system and per pair voted on, from the database (read only)."""
    return run_blocking(lambda: _summarize(db, study))


async def _summarize(db: Database, study: str | None) -> Summary:
    store = await open_store(db, access=Access.READ, study=study)
    try:
        systems = await store.system_summaries()
        votes = [vote for _, vote in await store.votes()]
    finally:
        await store.close()
    return Summary(systems, tally(votes))


def tally(votes: Iterable[Vote]) -> list[VoteTally]:
    """Votes per source and pair of systems; onboarding pairs and flagged votes (a system
    named itself) are left out, as the ranking leaves them out."""
    found: dict[tuple[VoteSource, tuple[str, str]], VoteTally] = {}
    for vote in votes:
        if vote.onboarding or vote.flagged or vote.system_a == vote.system_b:
            continue
        pair = (min(vote.system_a, vote.system_b), max(vote.system_a, vote.system_b))
        key = (vote.source, pair)
        tallied = found.setdefault(key, VoteTally(vote.source, pair))
        if vote.winner in (Winner.A, Winner.B):
            tallied.preferred[vote.system_a if vote.winner is Winner.A else vote.system_b] += 1
        elif vote.winner is Winner.TIE:
            tallied.ties += 1
        elif vote.winner is Winner.BOTH_BAD:
            tallied.both_bad += 1
        else:
            tallied.not_comparable += 1
    return [found[key] for key in sorted(found)]


NOT_MEASURED = (
    "not measured: the system cannot report success itself and no session of it was marked"
    " successful; `ozlab report` says which source decides (tool calls, the participant's"
    " answer, a wizard, a model judge)"
)


def format_summary(found: Summary, silent: Collection[str] = ()) -> str:
    """The tables; ``silent``: the systems that cannot report success themselves, shown as
    not measured rather than 0 % where none of their sessions succeeded."""
    if not found.systems:
        return "No sessions in this database yet."
    rows = _system_rows(found.systems, silent)
    parts = [_table(rows)]
    if any(row[3] == "not measured" for row in rows):
        parts[0] += "\n" + NOT_MEASURED
    if any(s.side_by_side for s in found.systems):
        parts.append(
            "A row 'a + b' is side-by-side sessions: each met both systems at once, and a\n"
            "side-by-side task has no success of its own (-); its votes are below."
        )
    if found.votes:
        parts.append(
            "Votes as given (onboarding pairs and flagged votes left out; the report ranks\n"
            "the systems):\n" + _table(_vote_rows(found.votes))
        )
    return "\n\n".join(parts)


def _system_rows(summaries: Sequence[SystemSummary], silent: Collection[str]) -> list[list[str]]:
    items = list(dict.fromkeys(i for s in summaries for i in s.item_means))
    rows = [["system", "sessions", "completed", "rate", "exchanges", *items]]
    for s in summaries:
        if s.side_by_side:
            done = ["-", "-"]
        elif s.succeeded == 0 and s.system_id in silent:
            done = ["-", "not measured"]
        else:
            done = [str(s.succeeded), f"{s.completion_rate:.0%}"]
        rows.append(
            [
                s.system_id,
                str(s.sessions),
                *done,
                f"{s.mean_exchanges:.1f}",
                *(f"{s.item_means[i]:.2f}" if i in s.item_means else "-" for i in items),
            ]
        )
    return rows


def _vote_rows(tallies: Sequence[VoteTally]) -> list[list[str]]:
    rows = [["source", "systems", "votes", "preferred", "ties", "both bad", "not comparable"]]
    for t in tallies:
        preferred = ", ".join(
            f"{system} {t.preferred[system]}"
            for system in sorted(t.systems, key=lambda s: (-t.preferred[s], s))
        )
        rows.append(
            [
                _SOURCES[t.source],
                " + ".join(t.systems),
                str(t.votes),
                preferred,
                str(t.ties),
                str(t.both_bad),
                str(t.not_comparable),
            ]
        )
    return rows


def _table(rows: list[list[str]]) -> str:
    widths = [max(len(row[c]) for row in rows) for c in range(len(rows[0]))]
    return "\n".join(
        "  ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=True)).rstrip()
        for row in rows
    )
