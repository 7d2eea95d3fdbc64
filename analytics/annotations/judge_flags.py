"""The targets a model judge rated whose text addresses the judge (``addresses_judge``):
the participants' and systems' words it read, matched against the stated patterns of
``bot.engine.annotating.injection``. Computed from the stored conversations whenever the
report or the export is made, so both show the same flags, for judgements made before this
check existed too, and a pattern added later reaches every study read again.

The text of a target is what the judge read of it: an exchange's conversation up to that
exchange (with the participant's next message when the job shows it), a conversation
whole, a pair's two conversations whole."""

from __future__ import annotations

from collections.abc import Iterable

import pandas as pd

from analytics.data.loading import StudyData
from bot.core.vocabulary import FlagReason
from bot.engine.annotating.injection import addresses_judge
from bot.engine.annotating.pairs import pair_sessions

FLAG_COLUMNS = ["job", "level", "target", "flag_reason", "patterns"]
"""One flagged target: where (job, level, target), why (``FlagReason``), and the names of
the patterns its text matched (comma-separated)."""

_Said = dict[str, list[tuple[int, str, str]]]
"""Session id -> (turn, the participant's message, the system's reply), in turn order."""


def judge_flags(data: StudyData) -> pd.DataFrame:
    """Every target a judge rated or voted on whose text addresses the judge (no rows: none
    does, or no judge judged)."""
    targets = _judged(data)
    if not targets:
        return pd.DataFrame(columns=FLAG_COLUMNS)
    said = _conversations(data.exchanges)
    matched: dict[str, tuple[str, ...]] = {}  # an exchange's words are read by many targets
    rows = []
    for job, level, target in sorted(targets):
        found: list[str] = []
        for text in _read(data, said, job, level, target):
            if text not in matched:
                matched[text] = addresses_judge(text)
            found += [name for name in matched[text] if name not in found]
        if found:
            rows.append(
                {
                    "job": job,
                    "level": level,
                    "target": target,
                    "flag_reason": FlagReason.ADDRESSES_JUDGE.value,
                    "patterns": ", ".join(found),
                }
            )
    return pd.DataFrame(rows, columns=FLAG_COLUMNS)


def flagged_keys(flags: pd.DataFrame) -> set[tuple[str, str, str]]:
    """(job, level, target) of each flagged target."""
    return set(
        zip(
            flags["job"].astype(str),
            flags["level"].astype(str),
            flags["target"].astype(str),
            strict=True,
        )
    )


def _judged(data: StudyData) -> set[tuple[str, str, str]]:
    found: set[tuple[str, str, str]] = set()
    ratings = data.annotations
    if not ratings.empty:
        models = ratings[ratings["origin"].astype(str) == "model"]
        found |= set(
            zip(
                models["job"].astype(str),
                models["level"].astype(str),
                models["target"].astype(str),
                strict=True,
            )
        )
    jobs = {job for bundle in data.bundles.values() for job in bundle.jobs}
    found |= {(j.job, j.level, j.target) for j in data.judgements if j.job in jobs}
    return found


def _conversations(exchanges: pd.DataFrame) -> _Said:
    said: _Said = {}
    if exchanges.empty:
        return said
    for session, turn, user, system in zip(
        exchanges["session_id"].astype(str),
        exchanges["turn"],
        exchanges["user_text"].astype(object),
        exchanges["system_text"].astype(object),
        strict=True,
    ):
        said.setdefault(session, []).append((int(turn), _text(user), _text(system)))
    for turns in said.values():
        turns.sort()
    return said


def _text(value: object) -> str:
    return value if isinstance(value, str) else ""


def _with_next(data: StudyData, job: str) -> bool:
    for bundle in data.bundles.values():
        found = bundle.jobs.get(job)
        if found is not None:
            return found.with_next_message
    return False


def _read(data: StudyData, said: _Said, job: str, level: str, target: str) -> Iterable[str]:
    """The participants' and systems' words the judge read of the target."""
    if level == "pair":
        sessions = pair_sessions(target) or ()
        for session in sessions:
            for _, user, system in said.get(session, []):
                yield from (user, system)
        return
    if level == "exchange" and "#" in target:
        session, _, at = target.rpartition("#")
        if not at.isdigit():
            return
        upto = int(at)
        for turn, user, system in said.get(session, []):
            if turn <= upto:
                yield from (user, system)
            elif turn == upto + 1 and _with_next(data, job):
                yield user
        return
    for _, user, system in said.get(target, []):
        yield from (user, system)
