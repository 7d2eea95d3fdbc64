"""Data-quality flags per participant, and the analysis without the flagged ones.

Flags (one row per participant and kind, with the evidence in ``detail``):

- ``attention_failed``: an instructed-response item (``attention:`` in the instrument) was
  answered otherwise.
- ``straight_lining``: every scale item of an answer set got the same answer although the
  instrument has reverse-worded items, so a reading participant would have varied. Attention
  items are left out (they instruct one answer); sets of fewer than three items are too short
  to tell; the scale's midpoint throughout is not flagged, as it does not contradict itself
  ("neutral" to a statement and to its reverse).
- ``too_fast``: at least ``too_fast_share`` of a participant's answers came sooner after the
  item was shown than a plausible reading time, ``base_s + per_char_s × len(item text)``:
  0.5 s to see and tap, plus 0.03 s per character, about 330 words a minute, the pace of
  skimming rather than reading (careful reading runs near 200–250). Free-text items are
  left out (typing takes longer anyway); so are exchange ratings, which sit beside the chat
  and may be tapped whenever.
- ``abandoned``: sessions left unfinished (state ``abandoned``).

Simulated participants (``ozlab demo``, ``ozlab pilot``: ``participants.simulated``) are not a
flag: the report names how many there are beside the flags, so that a demo's data are never
taken for people's, and excludes them only for a flag of theirs, never for being simulated.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, replace

import numpy as np
import pandas as pd

from analytics.data.grouping import group_key, sorted_groups
from analytics.data.loading import NUMERIC_TYPES, StudyData
from bot.core.vocabulary import AnswerStatus, Moment, SessionState

FLAG_KINDS = ("attention_failed", "straight_lining", "too_fast", "abandoned")
FLAG_COLUMNS = ["participant_id", "flag", "count", "out_of", "detail"]


@dataclass(frozen=True)
class ReadingTime:
    """The fastest plausible answer to an item: ``base_s + per_char_s`` per character."""

    base_s: float = 0.5
    per_char_s: float = 0.03
    too_fast_share: float = 0.5
    """A participant is flagged when at least this share of their answers were too fast."""

    def describe(self) -> str:
        return (
            f"answered sooner than {self.base_s:g} s + {self.per_char_s:g} s per character of "
            f"the item after it was shown, for at least {self.too_fast_share:.0%} of answers"
        )


READING = ReadingTime()
"""The default thresholds (documented in the module docstring)."""


def quality_flags(data: StudyData, reading: ReadingTime = READING) -> pd.DataFrame:
    """Every flag of every participant (see the module docstring), one row each."""
    frames = [
        _attention(data.responses),
        _straight_lining(data.responses, data.items),
        _too_fast(data.responses, data.items, reading),
        _abandoned(data.sessions),
    ]
    flags = (
        pd.concat([f for f in frames if len(f)], ignore_index=True)
        if any(len(f) for f in frames)
        else pd.DataFrame(columns=FLAG_COLUMNS)
    )
    flags = flags.astype({"participant_id": object, "flag": object})
    return flags.sort_values(["participant_id", "flag"]).reset_index(drop=True)[FLAG_COLUMNS]


def _attention(responses: pd.DataFrame) -> pd.DataFrame:
    checked = responses[responses["attention_ok"].notna()]
    failed = checked[checked["attention_ok"] == 0].astype({"item_id": object})
    if failed.empty:
        return pd.DataFrame(columns=FLAG_COLUMNS)
    out_of = checked.groupby("participant_id", observed=True).size()
    table = failed.groupby("participant_id", observed=True).size().rename("count").to_frame()
    times = failed.groupby(["participant_id", "item_id"], observed=True, sort=False).size()
    items = times.index.get_level_values("item_id")
    said = [f"{i} ×{n}" if n > 1 else str(i) for i, n in zip(items, times, strict=True)]
    table["detail"] = (
        pd.Series(said, index=times.index).groupby(level=0, observed=True).agg(", ".join)
    )
    table["out_of"] = out_of.reindex(table.index).to_numpy()
    table["detail"] = "failed " + table["detail"]
    return table.reset_index().assign(flag="attention_failed")


def _straight_lining(responses: pd.DataFrame, items: pd.DataFrame) -> pd.DataFrame:
    scale = responses.loc[
        _lined_candidates(responses, items),
        ["participant_id", "scope", "questionnaire_id", "value", "min", "max"],
    ]
    if scale.empty:
        return pd.DataFrame(columns=FLAG_COLUMNS)
    summary = _answer_sets(scale)
    summary = summary[summary["n"] >= 3]
    lined = summary[summary["same"] & ~summary["middle"]]
    if lined.empty:
        return pd.DataFrame(columns=FLAG_COLUMNS)
    out_of = summary["participant_id"].value_counts()
    # in plain Python: thousands of participants, a set or two each
    said: dict[str, list[str]] = {}
    for participant, q, s, v in zip(
        lined["participant_id"].tolist(), lined["questionnaire_id"].tolist(),
        lined["scope"].tolist(), lined["value"].tolist(),
        strict=True,
    ):  # fmt: skip
        said.setdefault(participant, []).append(f"{q} ({s}): all {v:g}")
    return pd.DataFrame(
        {
            "participant_id": list(said),
            "count": [len(sets) for sets in said.values()],
            "out_of": out_of.reindex(list(said)).to_numpy(),
            "detail": ["; ".join(sets) for sets in said.values()],
            "flag": "straight_lining",
        }
    )


def _lined_candidates(responses: pd.DataFrame, items: pd.DataFrame) -> pd.Series:
    """Answered scale items of instruments with reverse-worded items, attention items left
    out."""
    with_reverse = set(items.loc[items["reverse"].astype(bool), "questionnaire_id"])
    attention = items.loc[items["attention"].notna(), ["questionnaire_id", "item_id"]]
    attention_keys = set(zip(attention["questionnaire_id"], attention["item_id"], strict=True))
    chosen = (
        (responses["type"] == "scale")
        & (responses["status"] == AnswerStatus.ANSWERED.value)
        & responses["questionnaire_id"].isin(with_reverse)
    )
    maybe = chosen & responses["item_id"].isin({i for _, i in attention_keys})
    if maybe.any():
        asked = responses.loc[maybe, ["questionnaire_id", "item_id"]].astype(object)
        pairs = zip(asked["questionnaire_id"], asked["item_id"], strict=True)
        maybe[maybe] = np.array([k in attention_keys for k in pairs], dtype=bool)
        chosen &= ~maybe
    return chosen


def _answer_sets(scale: pd.DataFrame) -> pd.DataFrame:
    """One row per answer set (participant, scope, questionnaire; in that order): its
    keys, ``n`` answers, whether every answer is the ``same`` (NaN aside; its ``value``)
    and whether every one is the scale's ``middle``.

    Written with ``sorted_groups`` and ``reduceat`` rather than a ``groupby``: a large
    study's million answers made this the slowest of the flags."""
    keys = ["participant_id", "scope", "questionnaire_id"]
    order, starts = sorted_groups(group_key(scale, keys))
    value = scale["value"].to_numpy(dtype=float)[order]
    midpoint = ((scale["min"] + scale["max"]) / 2).to_numpy(dtype=float)[order]
    n = np.diff(np.r_[starts, len(order)])
    answered = np.add.reduceat(~np.isnan(value), starts)
    lowest = np.fmin.reduceat(value, starts)
    highest = np.fmax.reduceat(value, starts)
    sets = scale.iloc[order[starts]][keys].reset_index(drop=True)
    return sets.assign(
        n=n,
        same=(answered > 0) & (lowest == highest),
        value=lowest,
        middle=np.add.reduceat(value == midpoint, starts) == n,
    )


def reading_times(
    responses: pd.DataFrame, items: pd.DataFrame, reading: ReadingTime = READING
) -> pd.DataFrame:
    """Each closed answer's time from showing to answering, beside its plausible minimum."""
    asked = responses.loc[
        (responses["status"] == AnswerStatus.ANSWERED.value)
        & responses["type"].isin([*NUMERIC_TYPES, "choice", "multi_choice"])
        & (responses["moment"] != Moment.EXCHANGE.value)
        & responses["shown_at"].notna(),  # imported answers may have no timing
        ["participant_id", "scope", "questionnaire_id", "item_id", "shown_at", "answered_at"],
    ]
    with_length = items.assign(chars=items["text"].fillna("").str.len())
    length = with_length.set_index(["questionnaire_id", "item_id"])["chars"]
    keys = pd.MultiIndex.from_arrays([asked["questionnaire_id"], asked["item_id"]])
    chars = length.reindex(keys).fillna(0).to_numpy()
    frame = asked[["participant_id", "scope", "questionnaire_id", "item_id"]].copy()
    frame["seconds"] = (asked["answered_at"] - asked["shown_at"]).to_numpy()
    frame["minimum"] = reading.base_s + reading.per_char_s * chars
    frame["too_fast"] = frame["seconds"] < frame["minimum"]
    return frame


def _too_fast(responses: pd.DataFrame, items: pd.DataFrame, reading: ReadingTime) -> pd.DataFrame:
    times = reading_times(responses, items, reading)
    per = times.groupby("participant_id", observed=True)["too_fast"].agg(["sum", "size"])
    fast = per[(per["sum"] > 0) & (per["sum"] >= reading.too_fast_share * per["size"])]
    if fast.empty:
        return pd.DataFrame(columns=FLAG_COLUMNS)
    median = times[times["too_fast"]].groupby("participant_id", observed=True)["seconds"].median()
    table = pd.DataFrame(
        {"count": fast["sum"].astype(int), "out_of": fast["size"].astype(int)}, index=fast.index
    )
    table["detail"] = [
        f"{c} of {n} answers faster than reading time (median {median[p]:.1f} s)"
        for p, c, n in zip(table.index, table["count"], table["out_of"], strict=True)
    ]
    return table.reset_index().assign(flag="too_fast")


def _abandoned(sessions: pd.DataFrame) -> pd.DataFrame:
    state = sessions["state"].astype(object)
    per = sessions.assign(abandoned=state == SessionState.ABANDONED.value).groupby("participant_id")
    table = per["abandoned"].agg(["sum", "size"])
    table = table[table["sum"] > 0]
    if table.empty:
        return pd.DataFrame(columns=FLAG_COLUMNS)
    table = table.rename(columns={"sum": "count", "size": "out_of"}).astype(int)
    table["detail"] = [
        f"{c} of {n} sessions abandoned"
        for c, n in zip(table["count"], table["out_of"], strict=True)
    ]
    return table.reset_index().assign(flag="abandoned")


def simulated_participants(participants: pd.DataFrame) -> tuple[str, ...]:
    """The participants a simulation played (sorted): data of no person."""
    marked = participants["simulated"].fillna(0).astype(int) == 1
    return tuple(sorted(participants.loc[marked, "participant_id"].astype(str)))


def flagged_participants(flags: pd.DataFrame, simulated: Iterable[str] = ()) -> pd.DataFrame:
    """One row per flagged participant: their flags, in words, and whether a simulation
    played them. Gathered in plain Python: a large study has a thousand flagged
    participants, a thousand groups of one or two rows each."""
    if flags.empty:
        return pd.DataFrame(columns=["participant_id", "flags", "details", "simulated"])
    said: dict[str, tuple[list[str], list[str]]] = {}
    for participant, flag, detail in zip(
        flags["participant_id"].tolist(), flags["flag"].tolist(), flags["detail"].tolist(),
        strict=True,
    ):  # fmt: skip
        kinds, details = said.setdefault(participant, ([], []))
        kinds.append(flag)
        details.append(detail)
    people = sorted(said)
    table = pd.DataFrame(
        {
            "participant_id": people,
            "flags": [", ".join(said[p][0]) for p in people],
            "details": ["; ".join(said[p][1]) for p in people],
        }
    )
    table["simulated"] = table["participant_id"].astype(str).isin(set(simulated))
    return table


@dataclass(frozen=True)
class Exclusion:
    """How many participants were left out, and why (one participant may have several
    reasons, so ``by_flag`` may add up to more than ``excluded``)."""

    participants_before: int
    excluded: int
    by_flag: pd.DataFrame
    participant_ids: tuple[str, ...]
    kinds: tuple[str, ...]


def exclude_flagged(
    data: StudyData, flags: pd.DataFrame, kinds: Iterable[str] = FLAG_KINDS
) -> tuple[StudyData, Exclusion]:
    """The same study without every participant who has a flag of ``kinds``: all their
    sessions, exchanges, answers, events and votes go, not only the flagged ones."""
    kinds = tuple(kinds)
    chosen = flags[flags["flag"].isin(kinds)]
    gone = set(chosen["participant_id"].astype(str))
    by_flag = chosen.groupby("flag").agg(participants=("participant_id", "nunique"))
    by_flag = by_flag.reindex(list(kinds), fill_value=0).reset_index()

    def keep(frame: pd.DataFrame) -> pd.DataFrame:
        return frame[~frame["participant_id"].astype(object).isin(gone)].reset_index(drop=True)

    sessions = keep(data.sessions)
    theirs = (data.votes["rater_kind"] == "participant") & data.votes["rater"].isin(gone)
    studies = data.vote_studies
    if len(studies) == len(data.votes):
        studies = tuple(s for s, out in zip(studies, theirs, strict=True) if not out)
    annotated = data.annotations["session_id"]
    ours = annotated.isna() | annotated.isin(set(sessions["session_id"].astype(object)))
    kept = replace(
        data,
        annotations=data.annotations[ours | data.sessions.empty].reset_index(drop=True),
        sessions=sessions,
        exchanges=keep(data.exchanges),
        responses=keep(data.responses),
        events=keep(data.events),
        participants=keep(data.participants),
        votes=data.votes[~theirs].reset_index(drop=True),
        vote_studies=studies,
    )
    summary = Exclusion(
        participants_before=len(data.participants),
        excluded=len(gone),
        by_flag=by_flag,
        participant_ids=tuple(sorted(gone)),
        kinds=kinds,
    )
    return kept, summary
