"""Which source decides each system's task success, and the success it decides.

A study may learn whether a task succeeded from several places; for each system the first
of these that has something to say decides, in this order of preference:

1. ``system``: the system's own events (``task_success`` from an http, Python, Rasa or
   demo system): a system that can report them and did not has failed the task;
2. ``tools``: the scenario's tools, for a language model that called any of them (a call
   of a tool that ``ends_task`` is a success);
3. ``participant``: the participant's answer to the study's ``success_item`` (a yes/no item
   asked after the task): yes is a success;
4. ``wizard``: a wizard's judgement from the console.

A system none of them speaks for is "not measured": its success rate is unknown, never 0.
A model judge reading transcripts is not among the sources yet.
"""

from __future__ import annotations

import json
from collections.abc import Mapping

import numpy as np
import pandas as pd

from bot.core.vocabulary import EventKind
from scenarios.models import StudyBundle
from scenarios.systems import HttpSystem, OpenAISystem, WizardSystem

SOURCES = ("system", "tools", "participant", "wizard")
LABELS = {
    "system": "the system's own events",
    "tools": "tool calls",
    "participant": "the participant's answer",
    "wizard": "a wizard's judgement",
    None: "not measured",
}
SOURCE_COLUMNS = ["system_id", "source", "decided_by", "sessions_decided"]


def _silent_systems(bundles: Mapping[str, StudyBundle]) -> set[str]:
    """Systems that cannot report task success themselves: an ``openai`` model, a
    wizard-only system, an http service whose answer maps no events. Every other system
    (and one whose definition is not stored) reports success when it sees it."""
    found = set()
    for bundle in bundles.values():
        for spec in bundle.study.systems:
            if isinstance(spec, OpenAISystem | WizardSystem) or (
                isinstance(spec, HttpSystem) and spec.response.events is None
            ):
                found.add(spec.id)
    return found


def _success_items(bundles: Mapping[str, StudyBundle]) -> set[str]:
    return {b.study.success_item for b in bundles.values() if b.study.success_item}


def _event_data(value: object) -> dict[str, object]:
    try:
        parsed = json.loads(str(value))
    except ValueError:
        return {}
    return parsed if isinstance(parsed, dict) else {}


def decide(
    sessions: pd.DataFrame,
    events: pd.DataFrame,
    responses: pd.DataFrame,
    bundles: Mapping[str, StudyBundle],
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The sessions with ``success`` as the deciding source has it (NaN where none
    decided) and ``success_measured``; and per system, the source that decided."""
    kinds = events["kind"].astype(object)
    by_session = events["session_id"].astype(object)
    reported = events[kinds == EventKind.TASK_REPORTED.value]
    system_reported = {
        s
        for s, data in zip(reported["session_id"].astype(object), reported["data"], strict=True)
        if _event_data(data).get("event") == "task_success"
    }
    tool_sessions = set(by_session[kinds == EventKind.TOOL_CALLED.value])
    judged_rows = events[kinds == EventKind.JUDGED.value]
    judged = {
        str(s): bool(_event_data(data).get("success"))
        for s, data in zip(
            judged_rows["session_id"].astype(object), judged_rows["data"], strict=True
        )
    }
    items = _success_items(bundles)
    answers: dict[str, bool] = {}
    if items and len(responses):
        said = responses[
            responses["item_id"].astype(object).isin(items) & responses["value"].notna()
        ]
        for session, answer in zip(said["session_id"].astype(object), said["value"], strict=True):
            answers[str(session)] = float(answer) == 1.0
    silent = _silent_systems(bundles)

    success = sessions["success"].astype(float)
    decided: list[float] = []
    measured: list[bool] = []
    index: list[object] = []
    rows = []
    for system, group in sessions.groupby(sessions["system_id"].astype(object), sort=True):
        ids = [str(s) for s in group["session_id"].astype(object)]
        source: str | None = None
        if system not in silent or system_reported.intersection(ids):
            source = "system"
        elif tool_sessions.intersection(ids):
            source = "tools"
        elif answers.keys() & set(ids):
            source = "participant"
        elif judged.keys() & set(ids):
            source = "wizard"
        own = success.loc[group.index].tolist()
        for position, session in enumerate(ids):
            if source in ("system", "tools"):
                value: float | None = own[position]
            elif source == "participant":
                value = float(answers[session]) if session in answers else None
            elif source == "wizard":
                value = float(judged[session]) if session in judged else None
            else:
                value = None
            decided.append(np.nan if value is None else value)
            measured.append(value is not None or source in ("system", "tools"))
        index += list(group.index)
        count = sum(measured[len(measured) - len(ids) :])
        rows.append((system, source, LABELS[source], count))
    table = pd.DataFrame(rows, columns=SOURCE_COLUMNS).astype({"system_id": object})
    decided_success = pd.Series(decided, index=index, dtype=float).reindex(sessions.index)
    was_measured = pd.Series(measured, index=index, dtype=bool).reindex(sessions.index)
    return sessions.assign(
        success=decided_success, success_measured=was_measured.fillna(False).astype(bool)
    ), table
