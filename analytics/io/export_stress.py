"""The linguistic stress tests in ``ozlab export``: one row per test and system replayed,
with every judge's verdict beside the one the report counts.

Only a study with replayed stress tests has this file, as only such a study has the report's
stress section. Utterances and replies are participants' and systems' words: a CSV
neutralises them as every other text cell.
"""

from __future__ import annotations

import pandas as pd

from analytics.data.loading import StudyData
from analytics.io.export import Column, Table, timed_columns
from analytics.report.stress import counted_as
from bot.store.stress_records import Judge, StressResult

_JUDGES = {Judge.AUTO: "replay", Judge.HUMAN: "person", Judge.LLM: "model"}
STRESS_RESULTS = [
    Column("test_id", "integer", "the stress test (ozlab stress list shows it)"),
    Column("system_id", "string", "the system the test was replayed to"),
    Column("stress_type", "string", "the phenomenon: IDIAL's ST-1 … ST-11"),
    Column("phenomenon", "string", "the phenomenon in words"),
    Column("group", "string", "the phenomenon's group: spelling, lexical or syntactic"),
    Column("session_id", "string", "the logged session whose utterance was changed"),
    Column("turn", "integer", "the exchange changed: its place in the session, from 1"),
    Column("original", "string", "the participant's utterance as logged"),
    Column("perturbed", "string", "the utterance as changed by the phenomenon"),
    Column("change", "string", "what changed, in words"),
    Column(
        "source",
        "string",
        "who made the test: generated (offline), proposed (a language model, a person "
        "accepted it) or authored (a person)",
    ),
    Column(
        "ad_hoc",
        "integer",
        "1: a person's own text where no logged utterance fitted",
        {1: "ad hoc", 0: "logged"},
    ),
    Column(
        "applicable",
        "integer",
        "1: the unchanged replay reached the logged behaviour, so the test can be judged",
        {1: "applicable", 0: "not applicable"},
    ),
    Column(
        "result",
        "string",
        "how the report counts it: passed, failed, unsure, awaiting (no verdict yet) or "
        "not_applicable; pass rates are passed / (passed + failed)",
    ),
    Column(
        "verdict_by",
        "string",
        "whose verdict counts: replay (the replay's own comparison), else person, else model",
    ),
    *(
        column
        for judge, name in _JUDGES.items()
        for column in (
            Column(
                f"{name}_verdict",
                "string",
                f"the {name}'s verdict: pass, fail, unsure, not_applicable (empty: not judged)",
            ),
            Column(
                f"{name}_judged_by",
                "string",
                "who judged: a person's pseudonym, or the model"
                if judge is not Judge.AUTO
                else "empty: the replay judges itself",
            ),
            Column(f"{name}_reason", "string", f"why, as the {name} said it"),
        )
    ),
    Column("unchanged_reply", "string", "what the system said to the unchanged utterance"),
    Column("unchanged_error", "string", "how the system failed on the unchanged utterance"),
    Column("perturbed_reply", "string", "what the system said to the changed utterance"),
    Column("perturbed_error", "string", "how the system failed on the changed utterance"),
    *timed_columns("replayed_at", "when the replay finished"),
]


def stress_tables(data: StudyData) -> dict[str, Table]:
    """``stress_results``; nothing for a study whose stress tests were never replayed."""
    if not data.stress:
        return {}
    rows = [_row(result) for result in sorted(data.stress, key=_order)]
    frame = pd.DataFrame(rows, columns=[c.name for c in STRESS_RESULTS[:-1]])
    seconds = pd.to_numeric(frame["replayed_at"], errors="coerce").astype(float)
    frame["replayed_at_iso"] = pd.to_datetime(seconds, unit="s", utc=True).dt.floor("s")
    return {"stress_results": Table(frame, STRESS_RESULTS)}


def _order(result: StressResult) -> tuple[int, str]:
    return result.test.id, result.replay.system_id


def _row(result: StressResult) -> dict[str, object]:
    perturbation = result.test.perturbation
    replay = result.replay
    counting = next(
        (judge for judge in (Judge.AUTO, Judge.HUMAN, Judge.LLM) if result.by(judge)), None
    )
    row: dict[str, object] = {
        "test_id": result.test.id,
        "system_id": replay.system_id,
        "stress_type": perturbation.stress_type.value,
        "phenomenon": perturbation.stress_type.title,
        "group": perturbation.stress_type.group.value,
        "session_id": perturbation.session_id,
        "turn": perturbation.turn,
        "original": perturbation.original,
        "perturbed": perturbation.perturbed,
        "change": perturbation.change or None,
        "source": perturbation.source.value,
        "ad_hoc": int(perturbation.ad_hoc),
        "applicable": int(replay.applicable),
        "result": counted_as(result),
        "verdict_by": None if counting is None else _JUDGES[counting],
    }
    for judge, name in _JUDGES.items():
        found = result.by(judge)
        row[f"{name}_verdict"] = None if found is None else found.verdict.value
        row[f"{name}_judged_by"] = (found.judged_by or None) if found else None
        row[f"{name}_reason"] = (found.reason or None) if found else None
    row |= {
        "unchanged_reply": "\n\n".join(replay.baseline.texts) or None,
        "unchanged_error": replay.baseline.error,
        "perturbed_reply": "\n\n".join(replay.perturbed.texts) or None,
        "perturbed_error": replay.perturbed.error,
        "replayed_at": replay.finished_at,
    }
    return row
