"""Sessions and transcript lines as text: the same words in the console and the plain
commands, short enough for an 80-column terminal."""

from __future__ import annotations

import time
from collections.abc import Sequence

from bot.desk.model import FLAGS, Line, LiveSession
from bot.engine.assignment import CellProgress

ALERT_WORDS = {
    "error": "system error",
    "waiting": "reply waiting",
    "silent": "silent",
    "gated": "gated",
    "paused": "paused",
}
LEGEND = "  ".join(f"{flag} {ALERT_WORDS[alert]}" for alert, flag in FLAGS.items())
SHORT_STATES = {"questionnaire": "survey", "assigning": "assign.", "ineligible": "inelig."}
WHO = {
    "participant": "participant",
    "system": "system",
    "wizard": "wizard",
    "edited": "edited",
    "error": "error",
    "note": "note",
    "end": "end",
    "event": "·",
}


def duration(seconds: float | None) -> str:
    """``45s``, ``12m``, ``3h``, ``2d``: whole units, so the table changes rarely."""
    if seconds is None:
        return "–"
    seconds = max(0, int(seconds))
    for unit, size in (("d", 86400), ("h", 3600), ("m", 60)):
        if seconds >= size * (2 if unit != "m" else 1):
            return f"{seconds // size}{unit}"
    return f"{seconds}s"


def of_limit(used: str, limit: str | None) -> str:
    return f"{used}/{limit}" if limit is not None else used


def exchanges(s: LiveSession) -> str:
    limit = str(s.exchange_limit) if s.exchange_limit is not None else None
    return of_limit(str(s.exchanges), limit)


def elapsed(s: LiveSession, now: float | None = None) -> str:
    """Time used of the limit; with ``now``, redrawn from the start (the console redraws
    every row at one instant per second, not each at its own)."""
    limit = duration(s.time_limit) if s.time_limit is not None else None
    used = now - s.started_at if now is not None and s.started_at is not None else s.elapsed
    return of_limit(duration(used), limit)


def since_last(s: LiveSession, now: float | None = None) -> str:
    if now is not None and s.last_at is not None:
        return duration(now - s.last_at)
    return duration(s.since_last_message)


def short_id(session_id: str, width: int = 9) -> str:
    """The pseudonym's start and the task number: ``p3f9a2c-1``."""
    participant, _, task = session_id.rpartition("-")
    keep = max(1, width - len(task) - 1)
    return f"{participant[:keep]}-{task}" if participant else session_id[:width]


def clip(text: str | None, width: int) -> str:
    text = text or "–"
    return text if len(text) <= width else text[: width - 1] + "…"


def alerts(s: LiveSession) -> str:
    return ", ".join(ALERT_WORDS[a] for a in s.alerts)


def session_line(s: LiveSession) -> str:
    """One session per line for scripts: the id first, then tab-free ``key=value`` words."""
    words = [
        s.session_id,
        s.state,
        f"study={s.study}",
        f"scenario={s.scenario or '-'}",
        f"system={s.system or '-'}",
        f"exchanges={exchanges(s)}",
        f"time={elapsed(s)}",
        f"last={duration(s.since_last_message)}",
    ]
    if s.alerts:
        words.append("alerts=" + ",".join(s.alerts))
    return " ".join(words)


def clock(at: float) -> str:
    return time.strftime("%H:%M:%S", time.localtime(at))


def who(line: Line) -> str:
    """Who produced the line, with the wizard's name where a wizard did."""
    name = WHO.get(line.who, line.who)
    return f"{name}·{line.wizard}" if line.wizard and line.who != "event" else name


def cells(progress: Sequence[CellProgress]) -> str:
    """A quota's progress for the status bar: ``quota sys0 3/10 +2, sys1 10/10 full``
    (completed of the quota, + those under way)."""
    shown = [
        f"{clip(c.cell, 16)} {c.completed}/{c.quota}"
        + (f" +{c.under_way}" if c.under_way else "")
        + (" full" if c.full else "")
        for c in progress
    ]
    return "quota " + ", ".join(shown)
