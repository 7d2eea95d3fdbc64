"""The pairwise votes in ``ozlab export``: one row per vote (battle), with the system on
each side, the rater's pseudonym, the scenario, the question and the time, and whether the
report's fit uses it.

Only a study with votes has this file, as only such a study has the report's pairwise
section. Text cells are neutralised in CSV as every table's (``analytics.io.export``).
"""

from __future__ import annotations

import pandas as pd

from analytics.data.loading import StudyData
from analytics.io.export import Column, Table, timed_columns
from bot.core.vocabulary import FlagReason

_YES_NO = {1: "yes", 0: "no"}
VOTES = [
    Column("vote_id", "string", "the vote's stable id"),
    Column("study_id", "string", "the study the vote belongs to"),
    Column(
        "source",
        "string",
        "side_by_side (a participant's vote on one turn, Arena-style), preference (a "
        "preference item after meeting both systems) or acute (an annotator's pair)",
    ),
    Column(
        "question",
        "string",
        "what was asked: turn for side by side, the preference item's id, or the ACUTE "
        "question (engagingness, humanness, …)",
    ),
    Column("rater", "string", "pseudonym of the participant or annotator who voted"),
    Column("rater_kind", "string", "participant or annotator"),
    Column("scenario_id", "string", "the scenario compared (empty: none)"),
    Column(
        "session_id",
        "string",
        "the session (side by side, preference) or the pair (ACUTE: its name, not the order "
        "shown, which session_a and session_b give)",
    ),
    Column(
        "session_a",
        "string",
        "ACUTE: the conversation shown first to this annotator, of side A (empty: not a pair)",
    ),
    Column("session_b", "string", "ACUTE: the conversation shown second, of side B"),
    Column("turn", "integer", "the exchange voted on (side by side), from 1"),
    Column("system_a", "string", "the system on side A: shown first, on the left, or met first"),
    Column("system_b", "string", "the system on side B: shown second, or met second"),
    Column(
        "winner",
        "string",
        "a (side A better), b (side B better), tie, both_bad, or not_comparable (a side failed)",
    ),
    Column("winner_system", "string", "the system preferred (empty: no side was preferred)"),
    Column("strength", "string", "much or slightly (preference items with strength; empty: none)"),
    Column("flagged", "integer", "kept out of the fit: 1 yes, 0 no", _YES_NO),
    Column(
        "flag_reason",
        "string",
        "why it is kept out of the fit (empty: it is not)",
        {reason.value: reason.meaning for reason in FlagReason},
    ),
    Column("onboarding", "integer", "an ACUTE onboarding pair with a known answer", _YES_NO),
    Column(
        "onboarding_correct",
        "integer",
        "for onboarding pairs: the annotator chose the known answer",
        _YES_NO,
    ),
    Column(
        "in_fit",
        "integer",
        "the report's Bradley–Terry fit uses the vote by default (not flagged, not "
        "onboarding, a, b or tie, two different systems)",
        _YES_NO,
    ),
    *timed_columns("voted_at", "when the vote was given"),
]


def vote_tables(data: StudyData) -> dict[str, Table]:
    """``votes``; nothing for a study without votes."""
    votes = data.votes
    if votes.empty:
        return {}
    winner = votes["winner"].astype(object)
    chosen = votes["system_a"].astype(object).where(winner == "a")
    chosen = chosen.where(winner != "b", votes["system_b"].astype(object))
    studies = list(data.vote_studies) if len(data.vote_studies) == len(votes) else None
    times = pd.to_datetime(votes["time"], utc=True)
    seconds = (times - pd.Timestamp(0, tz="UTC")) / pd.Timedelta(seconds=1)
    frame = pd.DataFrame(
        {
            "vote_id": votes["vote_id"],
            "study_id": studies,
            "source": votes["source"],
            "question": votes["question"],
            "rater": votes["rater"],
            "rater_kind": votes["rater_kind"],
            "scenario_id": votes["scenario"],
            "session_id": votes["session"],
            "session_a": votes["session_a"],
            "session_b": votes["session_b"],
            "turn": votes["turn"],
            "system_a": votes["system_a"],
            "system_b": votes["system_b"],
            "winner": winner,
            "winner_system": chosen,
            "strength": votes["strength"],
            "flagged": votes["flagged"].astype(bool).astype(int),
            "flag_reason": votes["flag_reason"],
            "onboarding": votes["onboarding"].astype(bool).astype(int),
            "onboarding_correct": votes["onboarding_correct"].astype("boolean").astype("Int64"),
            "in_fit": (
                ~votes["flagged"].astype(bool)
                & ~votes["onboarding"].astype(bool)
                & winner.isin(["a", "b", "tie"])
                & (votes["system_a"] != votes["system_b"])
            ).astype(int),
            "voted_at": seconds,
            "voted_at_iso": times.dt.floor("s"),
        }
    )
    frame = frame.sort_values(["voted_at", "vote_id"], kind="stable").reset_index(drop=True)
    return {"votes": Table(frame, VOTES)}
