"""Example conversations: a few complete transcripts per system, with the ratings each
exchange got beside its turn, since reviewers ask what the conversations looked like.

Which ones: per system, up to ``PER_SYSTEM`` sessions (the study file's
``examples.per_system``) that ended (not abandoned) with at least one exchange. The sessions
the study file marks (``examples.sessions``) come first; the rest are drawn with a generator
seeded by the study's design seed (0 when it has none) from the sessions sorted by id (of the
marked scenarios only, ``examples.scenarios``, when the study names some), so that the same
database always shows the same conversations and a reader cannot suspect they were picked to
flatter a system. The section says which were marked and which drawn.
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from typing import Any

import numpy as np
import pandas as pd

from analytics.data.loading import StudyData
from analytics.report import document as d
from analytics.report.document import Block, Heading, Paragraph
from scenarios.models import Examples

PER_SYSTEM = 2
COLUMNS = (
    "system_id", "session_id", "participant_id", "scenario_id", "end_reason", "turn",
    "user_text", "system_text", "source", "error", "ratings", "marked",
)  # fmt: skip
"""One row per exchange of a chosen conversation; ``ratings`` as ``{item: answer}``;
``marked``: the study file named the session (else it was drawn)."""


def example_conversations(
    data: StudyData, systems: Sequence[str], marks: Examples | None = None
) -> pd.DataFrame:
    """The chosen conversations' exchanges, system by system in ``systems``' order;
    ``marks``: the study file's choices (none: the defaults, drawn from every scenario)."""
    marks = marks or Examples(per_system=PER_SYSTEM)
    sessions, exchanges = data.sessions, data.exchanges
    if sessions.empty or exchanges.empty:
        return pd.DataFrame(columns=list(COLUMNS))
    # the columns used: each filter and sort below would copy every other one too
    sessions = sessions[
        ["session_id", "participant_id", "system_id", "scenario_id", "state", "end_reason", "seed"]
    ]
    exchanges = exchanges[["session_id", "turn", "user_text", "system_text", "source", "error"]]
    ids = sessions["session_id"].astype(str)
    # as objects: pandas tests a column of Arrow strings against each name of a set in turn
    talked = ids.astype(object).isin({str(s) for s in exchanges["session_id"].unique()})
    is_marked = ids.isin(set(marks.sessions))
    drawn_from = sessions[(sessions["state"].astype(str) == "ended") & talked & ~is_marked]
    if marks.scenarios:
        drawn_from = drawn_from[drawn_from["scenario_id"].astype(str).isin(set(marks.scenarios))]
    seeds = pd.to_numeric(sessions["seed"], errors="coerce").dropna()
    generator = np.random.default_rng(int(seeds.iloc[0]) if len(seeds) else 0)
    chosen: list[tuple[str, dict[Hashable, Any], bool]] = []
    for system in systems:
        of_system = sessions["system_id"].astype(str) == system
        named = sessions[of_system & is_marked & talked]
        order = {s: i for i, s in enumerate(marks.sessions)}
        named = named.sort_values("session_id", key=lambda c: c.astype(str).map(order))
        marked = named.head(marks.per_system).to_dict("records")
        chosen += [(system, session, True) for session in marked]
        room = marks.per_system - len(marked)
        mine = drawn_from[drawn_from["system_id"].astype(str) == system].sort_values("session_id")
        if mine.empty or room <= 0:
            continue
        picked = generator.choice(len(mine), size=min(room, len(mine)), replace=False)
        drawn = mine.iloc[sorted(picked)].to_dict("records")
        chosen += [(system, session, False) for session in drawn]
    shown = {str(session["session_id"]) for _, session, _ in chosen}
    # the chosen conversations' answers only: a large study has a million others
    responses = data.responses
    ratings = _ratings(responses[responses["session_id"].isin(list(shown))])
    rows: list[dict[str, Any]] = []
    for system, session, was_marked in chosen:
        turns = exchanges[exchanges["session_id"] == session["session_id"]].sort_values("turn")
        for turn in turns.to_dict("records"):
            rows.append(
                {
                    "system_id": system,
                    "session_id": session["session_id"],
                    "participant_id": session["participant_id"],
                    "scenario_id": session["scenario_id"],
                    "end_reason": session["end_reason"],
                    "turn": int(turn["turn"]),
                    "user_text": turn["user_text"],
                    "system_text": turn["system_text"],
                    "source": turn["source"],
                    "error": turn["error"],
                    "ratings": ratings.get((str(session["session_id"]), int(turn["turn"])), {}),
                    "marked": was_marked,
                }
            )
    return pd.DataFrame(rows, columns=list(COLUMNS))


def _ratings(responses: pd.DataFrame) -> dict[tuple[str, int], dict[str, str]]:
    """Each exchange's answers by item, as shown: the value and its label."""
    rated = responses[responses["turn"].notna() & responses["session_id"].notna()]
    columns = ["session_id", "turn", "questionnaire_id", "item_id", "value", "label", "text"]
    found: dict[tuple[str, int], dict[str, str]] = {}
    for r in rated.filter(columns).sort_values(["questionnaire_id", "item_id"]).to_dict("records"):
        shown = "" if d.missing(r["value"]) else _number(r["value"])
        if not shown and not d.missing(r.get("label")):
            shown = str(r["label"])
        if not shown and not d.missing(r.get("text")):
            shown = str(r["text"])
        key = (str(r["session_id"]), int(r["turn"]))
        found.setdefault(key, {})[str(r["item_id"])] = shown
    return found


def _number(value: object) -> str:
    try:
        number = float(value)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return str(value)
    return str(int(number)) if number.is_integer() else str(number)


def short_item(item: str) -> str:
    """``q1`` for ``synthetic-exchange.q1``: the instrument is said once, in the legend."""
    return item.rsplit(".", 1)[-1]


def example_blocks(
    examples: pd.DataFrame,
    codebook: pd.DataFrame,
    limit: int | None = None,
    marks: Examples | None = None,
) -> list[Block]:
    """The section: one table per conversation, a turn a row; nothing without examples.
    ``codebook`` gives the rated items' wording for the legend; ``marks`` the study file's
    choices, said in the method."""
    if examples.empty:
        return []
    rated_items = list(dict.fromkeys(i for r in examples["ratings"] for i in r))
    wording = dict(zip(codebook["item_id"].astype(str), codebook["text"], strict=True))
    blocks: list[Block] = [
        Heading("Example conversations"),
        Paragraph(_how_chosen(examples, marks or Examples(per_system=PER_SYSTEM)), "method"),
    ]
    rated = bool(rated_items)
    if rated:
        legend = "; ".join(
            f"{short_item(i)} = {i}" + ("" if d.missing(wording.get(i)) else f" “{wording[i]}”")
            for i in rated_items
        )
        blocks.append(Paragraph(f"Ratings of an exchange: {legend}.", "method"))
    for (system, session), turns in examples.groupby(["system_id", "session_id"], sort=False):
        first = turns.iloc[0]
        ended = "" if d.missing(first["end_reason"]) else f", {first['end_reason']}"
        ended += ", marked by the study" if bool(first.get("marked")) else ""
        blocks.append(
            Heading(
                f"{system}: {first['participant_id']} in {first['scenario_id']} "
                f"({d.plural(len(turns), 'exchange')}{ended})",
                3,
            )
        )
        rows = [
            (str(t["turn"]), _cut(t["user_text"], limit), _said(t, limit),
             " · ".join(f"{short_item(i)} {answer}" for i, answer in t["ratings"].items())
             or d.DASH)
            for t in turns.to_dict("records")
        ]  # fmt: skip
        columns = ("Turn", "Participant", "System", "Ratings of the exchange")
        keep = 4 if rated else 3  # a study that rates no exchange gets no empty column
        blocks.append(
            d.table(
                columns[:keep],
                (row[:keep] for row in rows),
                caption=f"Session {session}",
                numeric=(True, False, False, False)[:keep],
            )
        )
    return blocks


def _how_chosen(examples: pd.DataFrame, marks: Examples) -> str:
    """Which conversations were marked by the study file and which drawn, and a marked
    one the database does not show (a typo, or a session without exchanges)."""
    drawn = "that ended, chosen at random with the study's seed (the same ones on every run)"
    if marks.scenarios:
        drawn += f", from the scenarios the study marks ({', '.join(marks.scenarios)})"
    words = f"Up to {marks.per_system} conversations per system"
    shown = set(examples["session_id"].astype(str))
    if marks.sessions:
        marked = [s for s in marks.sessions if s in shown]
        words += (
            f": {d.plural(len(marked), 'conversation')} the study marks "
            f"({', '.join(marked) or 'none found'}), the others {drawn}"
        )
    else:
        words += f" {drawn}"
    words += ", shown whole; each exchange's ratings beside its turn."
    unseen = [s for s in marks.sessions if s not in shown]
    if unseen:
        words += (
            f" Marked but not shown: {', '.join(unseen)} (not in this database, without "
            "exchanges, or beyond the number per system)."
        )
    return words


def _cut(text: object, limit: int | None) -> str:
    """The words on one line (a table cell); a terminal gets the start of a long reply."""
    if d.missing(text):
        return ""
    return " ".join(str(text).split()) if limit is None else d.shorten(text, 300)


def _said(turn: dict[Any, Any], limit: int | None) -> str:
    if not d.missing(turn["error"]):
        return f"(no reply: {turn['error']})"
    said = _cut(turn["system_text"], limit)
    source = str(turn["source"]) if not d.missing(turn["source"]) else "system"
    if source == "edited":
        return f"{said} [edited by a wizard]"
    if source == "wizard":
        return f"{said} [written by a wizard]"
    return said
