"""How reliably each system answered: failed exchanges apart from real ones, errors by
kind, timeouts, reply latency, periods of unavailability, and replies a wizard wrote.

A failed exchange (the system erred or did not answer in time) is not a turn of the
dialogue the participant judged, so the report counts it apart. The store keeps a failure
as the sentence the runner logged (``exchanges.error``); its kind is read from the fixed
wording the runner and the adapters use ("no reply within 10 s", "… answered HTTP 503 …",
"cannot connect to …"), and anything else is kept under its own first words.

Unavailability comes from the events the engine records when a system starts failing
(``system_unavailable``) and answers again (``system_available``): a period that has not
ended by the last record is reported as ongoing, without a duration.
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass

import numpy as np
import pandas as pd

from bot.core.vocabulary import EventKind, ReplySource

TIMEOUT = "timeout"
_TIMEOUT = re.compile(r"^(no (reply|answer)\b.*\bwithin\b|time(d)?[ -]?out\b)", re.IGNORECASE)
_MALFORMED = (
    r"not JSON|not valid HTTP|not a list|not a completion|not a reply|not an object|"
    r"without choices|no title or payload|more than the limit|bytes \(the limit\)"
)
_KINDS: tuple[tuple[re.Pattern[str], str], ...] = (
    (re.compile(r"answered HTTP (\d{3})"), r"HTTP \1"),
    (re.compile(r"cannot connect to", re.IGNORECASE), "cannot connect"),
    (re.compile(r"closed the connection|connection .* (broke|failed)", re.I), "connection lost"),
    (re.compile(r"empty reply|sent no message|no text", re.IGNORECASE), "empty reply"),
    (re.compile(_MALFORMED, re.IGNORECASE), "malformed answer"),
    (re.compile(r"shutting down", re.IGNORECASE), "bot shutting down"),
)
_EXCEPTION = re.compile(r"^([A-Z][A-Za-z0-9_]*(Error|Exception|Failure|Timeout)): ")
BY_SYSTEM_COLUMNS = [
    "system_id", "exchanges", "replied", "failed", "errors", "timeouts", "failed_share",
    "latency_n", "latency_p50_ms", "latency_p95_ms", "latency_max_ms", "wizard_written",
    "wizard_edited", "unavailable_periods", "unavailable_s", "unavailable_ongoing",
]  # fmt: skip
ERROR_COLUMNS = ["system_id", "kind", "count", "example"]
PERIOD_COLUMNS = ["system_id", "start", "end", "duration_s", "ongoing", "failures"]


@dataclass(frozen=True)
class SystemReliability:
    by_system: pd.DataFrame
    """One row per system: exchanges, real replies, failures, latency, wizard replies."""
    errors: pd.DataFrame
    """Failures by system and kind (timeouts included), with one message as example."""
    periods: pd.DataFrame
    """Each period a system counted as unavailable: start, end, duration (epoch seconds)."""


def failure_kind(error: str) -> str:
    """``timeout``, ``HTTP 503``, ``cannot connect``, … or the exception's name."""
    text = str(error).strip()
    text = re.sub(r"^(SystemFailure|SystemTimeout): ", "", text)
    if _TIMEOUT.search(text):
        return TIMEOUT
    for pattern, kind in _KINDS:
        found = pattern.search(text)
        if found:
            return found.expand(kind)
    named = _EXCEPTION.match(text)
    if named:
        return named.group(1)
    words = text.split()
    return " ".join(words[:4]) + ("…" if len(words) > 4 else "") if words else "unknown"


def system_reliability(
    exchanges: pd.DataFrame,
    events: pd.DataFrame,
    sessions: pd.DataFrame,
    *,
    has_source: bool = True,
) -> SystemReliability:
    """Every table of the section, per system (see the module docstring).

    Counted over boolean arrays, a system at a time, rather than over each system's rows
    taken out of the frame: a large study has a hundred thousand exchanges."""
    frame = exchanges[exchanges["system_id"].notna()]
    failed = frame["error"].notna().to_numpy()
    kinds = frame.loc[failed, "error"].astype(object).map(failure_kind)
    timeout = np.zeros(len(frame), dtype=bool)
    timeout[failed] = (kinds == TIMEOUT).to_numpy()
    replied = ~failed & frame["system_text"].notna().to_numpy()
    latency_ms = frame["latency_ms"].to_numpy(dtype=float)
    source = frame["source"] if has_source else pd.Series(None, index=frame.index, dtype=object)
    written = (source == ReplySource.WIZARD.value).to_numpy(dtype=bool, na_value=False)
    edited = (source == ReplySource.EDITED.value).to_numpy(dtype=bool, na_value=False)
    periods = unavailable_periods(events, sessions)
    codes, systems = pd.factorize(frame["system_id"].astype(str), sort=True)
    rows = []
    for code, system in enumerate(systems):
        mine = codes == code
        latency = latency_ms[mine & replied]
        latency = latency[~np.isnan(latency)]
        n, n_failed, timeouts = int(mine.sum()), int(failed[mine].sum()), int(timeout[mine].sum())
        own = periods[periods["system_id"] == system]
        rows.append(
            {
                "system_id": system,
                "exchanges": n,
                "replied": int(replied[mine].sum()),
                "failed": n_failed,
                "errors": n_failed - timeouts,
                "timeouts": timeouts,
                "failed_share": n_failed / n,
                "latency_n": len(latency),
                # numpy's default percentile is R's type 7, the one quantile() uses.
                "latency_p50_ms": float(np.percentile(latency, 50)) if len(latency) else math.nan,
                "latency_p95_ms": float(np.percentile(latency, 95)) if len(latency) else math.nan,
                "latency_max_ms": float(latency.max()) if len(latency) else math.nan,
                "wizard_written": int(written[mine].sum()),
                "wizard_edited": int(edited[mine].sum()),
                "unavailable_periods": len(own),
                "unavailable_s": float(own["duration_s"].sum()) if len(own) else 0.0,
                "unavailable_ongoing": bool(own["ongoing"].any()),
            }
        )
    by_system = pd.DataFrame(rows, columns=BY_SYSTEM_COLUMNS)
    failures = frame.loc[failed, ["system_id", "error"]].astype({"system_id": object})
    errors = _errors(failures.assign(kind=kinds))
    return SystemReliability(by_system, errors, periods)


def _errors(failed: pd.DataFrame) -> pd.DataFrame:
    if failed.empty:
        return pd.DataFrame(columns=ERROR_COLUMNS)
    table = failed.groupby(["system_id", "kind"], sort=True).agg(
        count=("kind", "size"), example=("error", "first")
    )
    table = table.reset_index().sort_values(
        ["system_id", "count", "kind"], ascending=[True, False, True], kind="stable"
    )
    return table[ERROR_COLUMNS].astype({"example": object}).reset_index(drop=True)


def unavailable_periods(events: pd.DataFrame, sessions: pd.DataFrame) -> pd.DataFrame:
    """Each ``system_unavailable`` paired with the next ``system_available`` of that system
    (named in the event's data, else the system of the event's session)."""
    kinds = (EventKind.SYSTEM_UNAVAILABLE.value, EventKind.SYSTEM_AVAILABLE.value)
    health = events[events["kind"].astype(object).isin(kinds)]
    if health.empty:
        return pd.DataFrame(columns=PERIOD_COLUMNS)
    known = sessions[["session_id", "system_id"]].astype(object)
    by_session = dict(zip(known["session_id"], known["system_id"], strict=True))
    rows: list[dict[str, object]] = []
    open_periods: dict[str, dict[str, object]] = {}
    ordered = health.sort_values(["at", "event_id"], kind="stable")
    for at, kind, data, session in zip(
        ordered["at"], ordered["kind"].astype(object), ordered["data"], ordered["session_id"],
        strict=True,
    ):  # fmt: skip
        details = event_data(data)
        system = details.get("system") or by_session.get(session)
        if system is None:
            continue
        system = str(system)
        if kind == EventKind.SYSTEM_UNAVAILABLE.value:
            if system not in open_periods:
                failures = details.get("failures")
                open_periods[system] = {"system_id": system, "start": float(at),
                                        "failures": failures}  # fmt: skip
        elif system in open_periods:
            period = open_periods.pop(system)
            start = float(period["start"])  # type: ignore[arg-type]
            rows.append({**period, "end": float(at), "duration_s": float(at) - start,
                         "ongoing": False})  # fmt: skip
    for period in open_periods.values():
        rows.append({**period, "end": math.nan, "duration_s": math.nan, "ongoing": True})
    table = pd.DataFrame(rows, columns=PERIOD_COLUMNS)
    table["failures"] = pd.to_numeric(table["failures"], errors="coerce")
    return table.sort_values(["system_id", "start"], kind="stable").reset_index(drop=True)


def event_data(value: object) -> dict[str, object]:
    """An event's ``data`` as a dict (stored as JSON text); empty where it is none."""
    if isinstance(value, dict):
        return value
    try:
        parsed = json.loads(str(value))
    except ValueError:
        return {}
    return parsed if isinstance(parsed, dict) else {}
