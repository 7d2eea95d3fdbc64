"""A session's transcript from its stored rows: who said what (a voice note or photo as
``[voice 0:07] its words``, ``[photo 1280×960] its caption``), and who produced each
system line (the system, a wizard in its place, or the system edited by a wizard), in the
order the store committed them (the order the participant saw them)."""

from __future__ import annotations

import json
import math
from collections.abc import Mapping

from bot.core.annotation import TranscriptExchange
from bot.core.vocabulary import EventKind, ReplySource
from bot.desk.model import Line
from bot.store.model import Transcript, TranscriptEvent

_PLAIN_EVENTS = {
    EventKind.REMINDED: "reminder sent",
    EventKind.ABANDONED: "abandoned after a long silence",
    EventKind.RESUMED: "participant back after a silence",
    EventKind.AUTO_SENT: "the held reply was sent by itself (auto-send)",
    EventKind.SYSTEM_UNAVAILABLE: "the system is failing",
    EventKind.SYSTEM_AVAILABLE: "the system answers again",
    EventKind.SYSTEM_CALL_RETRIED: "system call retried after a restart",
    EventKind.MESSAGE_AFTER_TIME_LIMIT: "message after the time limit",
}
_HIDDEN = {EventKind.BUTTON_TAPPED, EventKind.HELD, "opened"}
"""Events the exchanges already show, or that say nothing to a wizard."""
_WIZARD_EVENTS = {
    EventKind.PAUSED: "paused",
    EventKind.RESUMED_BY_WIZARD: "resumed",
    EventKind.STARTED_BY_WIZARD: "session started",
}

Ordered = tuple[float, float, int, Line]
"""(sequence, time, rank, line): lines committed before the sequence existed keep time order."""


def lines(transcript: Transcript, after: float | None = None) -> list[Line]:
    """Every line of the transcript in commit order; with ``after``, only the later ones."""
    found: list[Ordered] = []
    for exchange in transcript.exchanges:
        found += _exchange_lines(exchange)
    for event in transcript.events:
        line = event_line(event)
        if line is not None:
            found.append((_seq(event.seq), event.at, 1, line))
    if transcript.ended_at is not None:
        reason = transcript.end_reason or "?"
        end = Line(
            transcript.ended_at,
            "end",
            f"session ended: {reason}",
            key=f"end:{transcript.session_id}",
        )
        found.append((_seq(transcript.end_seq), transcript.ended_at, 2, end))
    found.sort(key=lambda o: (o[0], o[1], o[2], o[3].key))
    return [o[3] for o in found if after is None or o[3].at > after]


def _seq(seq: int | None) -> float:
    return math.inf if seq is None else seq


def _exchange_lines(x: TranscriptExchange) -> list[Ordered]:
    key = f"x{x.exchange_id}"
    said = x.user_text if x.file is None else f"{x.file.label()} {x.user_text}".rstrip()
    found = [(_seq(x.user_seq), x.user_at, 0, Line(x.user_at, "participant", said,
              x.turn, key=f"{key}u"))]  # fmt: skip
    at = x.system_at if x.system_at is not None else x.user_at
    if x.system_text is not None:
        who = x.source.value if x.source in (ReplySource.EDITED, ReplySource.WIZARD) else "system"
        line = Line(at, who, x.system_text, x.turn, x.wizard, x.original_text, key=f"{key}s")
        found.append((_seq(x.system_seq), at, 1, line))
    elif x.error is not None:
        found.append((_seq(x.system_seq), at, 1, Line(at, "error", x.error, x.turn, key=f"{key}e")))
    return found


def event_line(event: TranscriptEvent) -> Line | None:
    """An event of the session as a line, or None for the ones the exchanges already show."""
    data, kind, at, key = event.data, event.kind, event.at, f"e{event.event_id}"
    wizard = _text(data.get("wizard")) or None
    text = _text(data.get("text"))
    turn = data.get("turn")
    turn = turn if isinstance(turn, int) else None
    if kind in _HIDDEN:
        return None
    if kind == EventKind.WIZARD_MESSAGE:
        return Line(at, "wizard", text, None, wizard, key=key)
    if kind == EventKind.WIZARD_NOTE:
        return Line(at, "note", text, turn, wizard, key=key)
    if kind in (EventKind.OPENING_LINE, EventKind.CLOSING_LINE):
        return Line(at, "system", text, key=key)
    if kind in (EventKind.MESSAGE_WHILE_WAITING, EventKind.MESSAGE_WHILE_PAUSED):
        why = "paused" if kind == EventKind.MESSAGE_WHILE_PAUSED else "a reply is waiting"
        return Line(at, "participant", f"{text}  (not passed on: {why})", key=key)
    if kind == EventKind.REPLY_WAITING:
        shown = f"reply held for a wizard: {text}" if text else "waiting for a wizard's reply"
        return Line(at, "event", shown, turn, key=key)
    if kind == EventKind.ENDED_BY_WIZARD:
        reason = _text(data.get("reason"))
        return Line(at, "end", f"ended by the wizard: {reason}", None, wizard, key=key)
    if kind == EventKind.TOOL_CALLED:
        return Line(at, "event", tool_call_text(data), turn, key=key)
    if kind == EventKind.JUDGED:
        verdict = "success" if data.get("success") else "failure"
        return Line(at, "event", f"marked as {verdict}", None, wizard, key=key)
    if isinstance(kind, EventKind) and kind in _WIZARD_EVENTS:
        return Line(at, "event", _WIZARD_EVENTS[kind], None, wizard, key=key)
    plain = _PLAIN_EVENTS.get(kind) if isinstance(kind, EventKind) else None
    return Line(at, "event", plain or str(kind).replace("_", " "), key=key)


def tool_call_text(data: Mapping[str, object]) -> str:
    """``tool add_to_wishlist {"game": "Lantern Road"} → Added.``: a model's call and what
    it was told (its error, for a bad call)."""
    arguments = json.dumps(data.get("arguments", {}), ensure_ascii=False, default=str)
    error = data.get("error")
    said = f"error: {_text(error)}" if error is not None else _text(data.get("result"))
    return f"tool {_text(data.get('tool'))} {arguments} → {said}"


def _text(value: object) -> str:
    return "" if value is None else str(value)
