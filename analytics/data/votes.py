"""The votes frame: every pairwise judgement as one row, whatever gave it.

One contract between the store and the statistics (docs/arena.md): the columns of
``VOTE_COLUMNS`` in that order, ``system_a`` always the system shown (or met) first, the
winner said from its side; an ACUTE pair's ``session_a`` the conversation its annotator was
shown first (the pair's name, ``session``, need not say: each annotator has a side). The
statistics exclude flagged, onboarding and not-comparable rows from the fit and count them.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

# fmt: off
VOTE_COLUMNS = [
    "vote_id", "source", "rater", "rater_kind", "system_a", "system_b", "winner", "strength",
    "question", "scenario", "session", "session_a", "session_b", "turn", "flagged",
    "flag_reason", "onboarding", "onboarding_correct", "time",
]
"""The votes frame's columns, in order: words as ``str`` or None (objects), ``turn`` as
pandas' nullable ``Int64``, ``flagged`` and ``onboarding`` as ``bool``,
``onboarding_correct`` as nullable ``boolean``, ``time`` as UTC datetimes."""
_WORDS = {
    "vote_id": "vote_id", "source": "source", "rater": "rater", "rater_kind": "rater_kind",
    "system_a": "system_a", "system_b": "system_b", "winner": "winner",
    "strength": "strength", "question": "question", "scenario": "scenario_id",
    "session": "session_id", "session_a": "session_a", "session_b": "session_b",
    "flag_reason": "flag_reason",
}
"""Each word column of the frame and the snapshot column it comes from."""
# fmt: on


def no_votes() -> pd.DataFrame:
    """The votes frame of a study without pairwise judgements: no rows, every column."""
    return votes_frame(pd.DataFrame(columns=list(_WORDS.values()) + _OTHERS))


_OTHERS = ["turn", "onboarding", "onboarding_correct", "voted_at"]


def votes_frame(stored: pd.DataFrame) -> pd.DataFrame:
    """The snapshot's ``votes`` table (``SNAPSHOT_COLUMNS["votes"]``) as the votes frame."""
    rows = len(stored)

    def words(column: str) -> pd.Series:
        values = stored[column].astype(object).to_numpy() if rows else np.array([], object)
        return pd.Series(
            [None if v is None or (isinstance(v, float) and np.isnan(v)) else str(v)
             for v in values],
            dtype=object,
        )  # fmt: skip

    def numbers(column: str) -> pd.Series:
        return pd.to_numeric(stored[column].astype(object), errors="coerce").reset_index(drop=True)

    frame = {name: words(column) for name, column in _WORDS.items()}
    reasons = frame["flag_reason"]
    correct = numbers("onboarding_correct")
    return pd.DataFrame(
        {
            **{name: words for name, words in frame.items() if name != "flag_reason"},
            "turn": numbers("turn").astype("Int64"),
            "flagged": reasons.notna().astype(bool),
            "flag_reason": reasons,
            "onboarding": numbers("onboarding").fillna(0).astype(bool),
            "onboarding_correct": pd.array(
                [None if pd.isna(v) else bool(v) for v in correct], dtype="boolean"
            ),
            "time": pd.to_datetime(numbers("voted_at").astype(float), unit="s", utc=True),
        },
        columns=VOTE_COLUMNS,
    )
