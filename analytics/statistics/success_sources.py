"""Which source decides each system's task success, and the success it decides.

A study may learn whether a task succeeded from several places; for each system the first
of these that has something to say decides, in this order of preference:

1. ``system``: the system's own events (``task_success`` from an http, Python, Rasa or
   demo system): a system that can report them and did not has failed the task;
2. ``tools``: the scenario's tools, for a language model that called any of them (a call
   of a tool that ``ends_task`` is a success);
3. ``participant``: the participant's answer to the study's ``success_item`` (a yes/no item
   asked after the task): yes is a success;
4. ``wizard``: a wizard's judgement from the console;
5. ``judge``: the study's ``success_judge``, a model reading the transcript against the
   scenario's ``success_criterion`` (``ozlab judge run --success``); a verdict it could not
   give (unparseable, a failed call) leaves its session unmeasured, never a success.

A system none of them speaks for is "not measured": its success rate is unknown, never 0.
Whether a task was done correctly (the scenario's ``success_if``) is a test of what a system
or its tools reported doing, so it is kept only for systems those two sources decided.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd

from bot.core.vocabulary import EventKind
from bot.engine.annotating.success import SUCCESS_ITEM, SUCCESS_JOB, verdict
from bot.store.model import JudgeCost, JudgementRecord
from scenarios.models import StudyBundle
from scenarios.systems import reports_success

SOURCES = ("system", "tools", "participant", "wizard", "judge")
LABELS = {
    "system": "the system's own events",
    "tools": "tool calls",
    "participant": "the participant's answer",
    "wizard": "a wizard's judgement",
    "judge": "a model judge",
    None: "not measured",
}
SOURCE_COLUMNS = ["system_id", "source", "decided_by", "sessions_decided"]
JUDGE_COLUMNS = [
    "judge", "model", "host", "prompt_hash", "temperature", "seed", "first_at", "last_at",
    "judged", "successes", "failures", "unparseable", "failed", "calls", "prompt_tokens",
    "completion_tokens",
]  # fmt: skip


def _silent_systems(bundles: Mapping[str, StudyBundle]) -> set[str]:
    """Systems that cannot report task success themselves (``reports_success``); every
    other system (and one whose definition is not stored) reports success when it sees it."""
    return {
        spec.id
        for bundle in bundles.values()
        for spec in bundle.study.systems
        if not reports_success(spec)
    }


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
    judgements: Sequence[JudgementRecord] = (),
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
    by_judge: dict[str, bool | None] = {}
    for bundle in bundles.values():
        by_judge |= _verdicts(bundle, judgements)

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
        elif any(by_judge.get(i) is not None for i in ids):
            source = "judge"
        own = success.loc[group.index].tolist()
        for position, session in enumerate(ids):
            if source in ("system", "tools"):
                value: float | None = own[position]
            elif source == "participant":
                value = float(answers[session]) if session in answers else None
            elif source == "wizard":
                value = float(judged[session]) if session in judged else None
            elif source == "judge":
                verdict = by_judge.get(session)
                value = None if verdict is None else float(verdict)
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
    result = sessions.assign(
        success=decided_success, success_measured=was_measured.fillna(False).astype(bool)
    )
    if "correct" in result.columns:
        # success_if tests what a system reported doing: where nothing it reported decided,
        # the bot's "not done correctly" measured nothing.
        reporting = set(table.loc[table["source"].isin(("system", "tools")), "system_id"])
        reported_by = result["system_id"].astype(object).isin(reporting)
        result["correct"] = pd.to_numeric(result["correct"], errors="coerce").where(reported_by)
    return result, table


def judge_provenance(
    bundles: Mapping[str, StudyBundle],
    judgements: Sequence[JudgementRecord],
    costs: Sequence[JudgeCost] = (),
) -> pd.DataFrame:
    """Per study success judge and setting (model, host, prompt, temperature, seed): the
    conversations it judged, its verdicts and the verdicts it could not give, when, and the
    calls and tokens of its id (a job judge of the same id shares them)."""
    named = {b.study.success_judge.id for b in bundles.values() if b.study.success_judge}
    groups: dict[tuple[str, str, str, str, float, int | None], list[JudgementRecord]] = {}
    for j in judgements:
        if j.job == SUCCESS_JOB and j.judge in named:
            key = (j.judge, j.model, j.host, j.prompt_hash, j.temperature, j.seed)
            groups.setdefault(key, []).append(j)
    spent = {c.judge: c for c in costs}
    rows = []
    for setting, part in sorted(groups.items(), key=lambda kv: str(kv[0])):
        said = [verdict(j.outcome, j.said) for j in part]
        cost = spent.get(setting[0])
        rows.append(
            (
                *setting,
                _when(min(j.at for j in part)),
                _when(max(j.at for j in part)),
                len(part),
                said.count(True),
                said.count(False),
                sum(j.outcome == "unparseable" for j in part),
                sum(j.outcome == "failed" for j in part),
                None if cost is None else cost.calls,
                None if cost is None else cost.prompt_tokens,
                None if cost is None else cost.completion_tokens,
            )
        )
    return pd.DataFrame(rows, columns=JUDGE_COLUMNS)


def _when(at: float) -> str:
    """A verdict's time to the second, in UTC (ISO 8601)."""
    return pd.to_datetime(at, unit="s", utc=True).floor("s").isoformat()


def _verdicts(bundle: StudyBundle, judgements: Sequence[JudgementRecord]) -> dict[str, bool | None]:
    """Session → the study's success judge's verdict (None: judged, no verdict); another
    judge's verdicts decide nothing."""
    judge = bundle.study.success_judge
    if judge is None:
        return {}
    return {
        j.target: verdict(j.outcome, j.said)
        for j in judgements
        if j.job == SUCCESS_JOB and j.judge == judge.id and j.item_id == SUCCESS_ITEM
    }
