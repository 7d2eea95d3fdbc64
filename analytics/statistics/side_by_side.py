"""Side-by-side sessions in the per-system tables.

A session of a ``side_by_side`` task puts every message to two systems at once, while its
stored system (``sessions.system_id``) is only the design's; the exchange the store keeps
shows both replies and the slower one's latency. Counting such a session, or its
exchanges, under that one system would credit it with both systems' replies. So system
reliability reads each side's own reply, error and latency from the turn's
``sides_replied`` event, and the per-system session tables (participation, completion,
end reasons) leave side-by-side sessions out: the report says how many, and their votes
are in the pairwise section.
"""

from __future__ import annotations

import json

import pandas as pd

from bot.core.vocabulary import EventKind

SIDE_BY_SIDE = "side_by_side"


def side_by_side(sessions: pd.DataFrame) -> pd.Series:
    """Which sessions are of a side-by-side task (a boolean per row of ``sessions``)."""
    if "scenario_kind" not in sessions.columns:
        return pd.Series(False, index=sessions.index)
    return sessions["scenario_kind"].astype(object) == SIDE_BY_SIDE


def one_system_sessions(sessions: pd.DataFrame) -> pd.DataFrame:
    """The sessions each of which met one system: what per-system session tables count."""
    return sessions[~side_by_side(sessions)]


def per_side_exchanges(
    exchanges: pd.DataFrame, events: pd.DataFrame, sessions: pd.DataFrame
) -> pd.DataFrame:
    """``exchanges`` with each side-by-side exchange replaced by one row per side: that
    system, its own reply (None when it failed), error and latency."""
    shared = set(sessions.loc[side_by_side(sessions), "session_id"].astype(object))
    if not shared:
        return exchanges
    replied = events[
        (events["kind"].astype(object) == EventKind.SIDES_REPLIED.value)
        & events["session_id"].astype(object).isin(shared)
    ]
    sides: dict[tuple[str, int], list[dict[str, object]]] = {}
    for session, data in zip(replied["session_id"].astype(object), replied["data"], strict=True):
        found = data if isinstance(data, dict) else json.loads(str(data))
        sides[(str(session), int(found["turn"]))] = list(found["replies"])
    mine = exchanges["session_id"].astype(object).isin(shared)
    rows: list[dict[str, object]] = []
    for record in exchanges[mine].to_dict("records"):
        exchange = {str(name): value for name, value in record.items()}
        for side in sides.get((str(exchange["session_id"]), int(exchange["turn"])), []):
            error = side.get("error")
            rows.append(
                {
                    **exchange,
                    "system_id": side["system"],
                    "system_text": None if error else side.get("text"),
                    "latency_ms": side.get("latency_ms"),
                    "error": error,
                    "source": None,
                    "original_text": None,
                }
            )
    kept = exchanges[~mine].astype({"system_id": object})
    if not rows:
        return kept
    return pd.concat([kept, pd.DataFrame(rows, columns=exchanges.columns)], ignore_index=True)


def left_out_note(sessions: pd.DataFrame) -> str | None:
    """The report's sentence on side-by-side sessions left out of per-system session tables."""
    n = int(side_by_side(sessions).sum())
    if not n:
        return None
    which = "session is" if n == 1 else "sessions are"
    return (
        f"{n} side-by-side {which} left out of the per-system session tables: each "
        "compared two systems, so neither system's row may count it. Each side's own "
        "replies and latency are in system reliability; the votes in Pairwise comparisons."
    )
