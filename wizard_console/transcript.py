"""A session's transcript from its stored rows: who said what, and who produced each
system line (the system, a wizard in its place, or the system edited by a wizard)."""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any

from wizard_console.model import Line

_ORDER = {"participant": 0, "system": 1, "edited": 1, "wizard": 1, "error": 1}
"""At one instant a participant's line comes before the answer to it."""

_PLAIN_EVENTS = {
    "reminded": "reminder sent",
    "abandoned": "abandoned after a long silence",
    "resumed": "participant back after a silence",
    "auto_sent": "the held reply was sent by itself (auto-send)",
    "system_unavailable": "the system is failing",
    "system_available": "the system answers again",
    "system_call_retried": "system call retried after a restart",
    "message_after_time_limit": "message after the time limit",
}


def exchange_lines(rows: Iterable[tuple[Any, ...]]) -> list[Line]:
    """Rows of (id, turn, user_text, user_at, system_text, system_at, error, source,
    original_text, wizard) from ``exchanges``."""
    lines = []
    for xid, turn, user, user_at, text, at, error, source, original, wizard in rows:
        lines.append(Line(user_at, "participant", user, turn, key=f"x{xid}u"))
        if text is not None:
            who = source if source in ("edited", "wizard") else "system"
            lines.append(Line(at, who, text, turn, wizard, original, key=f"x{xid}s"))
        elif error is not None:
            lines.append(Line(at, "error", error, turn, key=f"x{xid}e"))
    return lines


def event_line(event_id: int, at: float, kind: str, raw: str) -> Line | None:
    """An event of the session as a line, or None for the ones the exchanges already show."""
    data: dict[str, Any] = json.loads(raw or "{}")
    key = f"e{event_id}"
    wizard = data.get("wizard")
    text = str(data.get("text") or "")
    turn = data.get("turn")
    match kind:
        case "wizard_message":
            return Line(at, "wizard", text, None, wizard, key=key)
        case "wizard_note":
            return Line(at, "note", text, turn, wizard, key=key)
        case "opening_line" | "closing_line":
            return Line(at, "system", text, key=key)
        case "message_while_waiting" | "message_while_paused":
            why = "paused" if kind.endswith("paused") else "a reply is waiting"
            return Line(at, "participant", f"{text}  (not passed on: {why})", key=key)
        case "reply_waiting":
            shown = f"reply held for a wizard: {text}" if text else "waiting for a wizard's reply"
            return Line(at, "event", shown, turn, key=key)
        case "ended_by_wizard":
            return Line(
                at, "end", f"ended by the wizard: {data.get('reason')}", None, wizard, key=key
            )
        case "judged":
            verdict = "success" if data.get("success") else "failure"
            return Line(at, "event", f"marked as {verdict}", None, wizard, key=key)
        case "paused" | "resumed_by_wizard" | "started_by_wizard":
            words = {"paused": "paused", "resumed_by_wizard": "resumed", "started_by_wizard": ""}
            shown = words[kind] or "session started"
            return Line(at, "event", shown, None, wizard, key=key)
        case "button_tapped" | "opened" | "held":
            return None
    return Line(at, "event", _PLAIN_EVENTS.get(kind, kind.replace("_", " ")), key=key)


def end_line(session_id: str, ended_at: float | None, reason: str | None) -> list[Line]:
    if ended_at is None:
        return []
    return [Line(ended_at, "end", f"session ended: {reason or '?'}", key=f"end:{session_id}")]


def ordered(lines: Iterable[Line], after: float | None = None) -> list[Line]:
    """In time order (a participant's line before the reply given at the same instant)."""
    kept = [line for line in lines if after is None or line.at > after]
    return sorted(kept, key=lambda line: (line.at, _ORDER.get(line.who, 2), line.key))
