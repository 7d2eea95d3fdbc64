"""Which source decides each system's task success, in the order of preference, and
"not measured" (never 0 %) for a system none speaks for."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

from analytics.report.present import _success_rows as success_rows
from analytics.report.present_headline import _success_rows as at_a_glance
from analytics.report.present_success import NOT_MEASURED, not_measured
from analytics.statistics.completion import completion
from analytics.statistics.success_sources import decide
from scenarios.loading import load_study
from scenarios.models import Scenario, Study, StudyBundle, Texts
from scenarios.yaml_lines import StudyError

SYSTEMS = (
    {"type": "demo", "id": "shop"},
    {"type": "openai", "id": "tools", "url": "http://127.0.0.1:9", "model": "m"},
    {"type": "openai", "id": "asked", "url": "http://127.0.0.1:9", "model": "m"},
    {"type": "wizard", "id": "woz"},
    {"type": "openai", "id": "silent", "url": "http://127.0.0.1:9", "model": "m"},
)


def bundle() -> StudyBundle:
    study = Study(
        id="s",
        title="S",
        texts=Texts(welcome="Hi", consent="Agree", declined="Bye"),
        systems=SYSTEMS,
        scenarios=("task",),
        success_item="after.done",
    )
    scenario = Scenario(id="task", title="T", brief="Do it.")
    return StudyBundle(study=study, scenarios={"task": scenario}, questionnaires={})


def frames() -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame]:
    # (session, system, success as the bot stored it)
    rows = [
        ("a1", "shop", 1), ("a2", "shop", 0),
        ("b1", "tools", 1), ("b2", "tools", 0), ("b3", "tools", 0),
        ("c1", "asked", 0), ("c2", "asked", 0), ("c3", "asked", 0),
        ("d1", "woz", 1), ("d2", "woz", 0),
        ("e1", "silent", 0), ("e2", "silent", 0),
    ]  # fmt: skip
    sessions = pd.DataFrame(
        {
            "session_id": [r[0] for r in rows],
            "participant_id": [f"p{r[0]}" for r in rows],
            "study_id": "s",
            "scenario_id": "task",
            "scenario_kind": "dialogue",
            "system_id": [r[1] for r in rows],
            "state": "ended",
            "started_at": 0.0,
            "ended_at": 60.0,
            "duration_s": 60.0,
            "expected_duration_s": float("nan"),
            "success": [r[2] for r in rows],
            "correct": float("nan"),
            "n_exchanges": 3,
            "n_failed_replies": 0,
        }
    )
    events = pd.DataFrame(
        [
            ("a1", "task_reported", {"event": "task_success", "data": {}}),
            ("b1", "tool_called", {"tool": "add", "arguments": {}}),
            ("b1", "task_reported", {"event": "tool_success", "data": {}}),
            ("b2", "tool_called", {"tool": "search", "arguments": {}}),
            ("d1", "judged", {"success": True}),
            ("d2", "judged", {"success": False}),
            ("e1", "judged", {"success": True}),  # the participant's answer comes first
        ],
        columns=["session_id", "kind", "data"],
    ).assign(data=lambda f: f["data"].map(json.dumps))
    responses = pd.DataFrame(
        [("c1", "after.done", 1), ("c2", "after.done", 0), ("e1", "after.other", 1)],
        columns=["session_id", "item_id", "value"],
    )
    return sessions, events, responses


def test_each_system_is_decided_by_the_first_source_that_speaks_for_it() -> None:
    sessions, events, responses = frames()
    decided, sources = decide(sessions, events, responses, {"s": bundle()})
    assert sources.to_dict("records") == [
        {"system_id": "asked", "source": "participant",
         "decided_by": "the participant's answer", "sessions_decided": 2},
        {"system_id": "shop", "source": "system",
         "decided_by": "the system's own events", "sessions_decided": 2},
        {"system_id": "silent", "source": "wizard",
         "decided_by": "a wizard's judgement", "sessions_decided": 1},
        {"system_id": "tools", "source": "tools", "decided_by": "tool calls",
         "sessions_decided": 3},
        {"system_id": "woz", "source": "wizard",
         "decided_by": "a wizard's judgement", "sessions_decided": 2},
    ]  # fmt: skip
    table = completion(decided).set_index("system_id")
    assert table.loc["shop", ["successes", "success_n"]].tolist() == [1, 2]
    assert table.loc["tools", ["successes", "success_n"]].tolist() == [1, 3]
    assert table.loc["asked", ["successes", "success_n", "n"]].tolist() == [1, 2, 3]
    assert table.loc["asked", "success_rate"] == 0.5
    assert table.loc["woz", "success_rate"] == 0.5
    assert table.loc["silent", ["successes", "success_n"]].tolist() == [1, 1]


def test_a_system_nothing_speaks_for_is_not_measured_never_zero() -> None:
    sessions, events, responses = frames()
    events = events[events["session_id"] != "e1"]
    decided, sources = decide(sessions, events, responses, {"s": bundle()})
    silent = sources.set_index("system_id").loc["silent"]
    assert pd.isna(silent["source"]) and silent["decided_by"] == NOT_MEASURED
    row = completion(decided).set_index("system_id").loc["silent"]
    assert row["n"] == 2 and row["success_n"] == 0 and pd.isna(row["success_rate"])
    assert not_measured({**row.to_dict()})


def test_done_correctly_is_judged_only_where_a_system_or_its_tools_decided() -> None:
    """``success_if`` tests what a system reported doing: where a participant or a wizard
    decided, the bot's "not done correctly" (nothing was reported) is not a measurement."""
    sessions, events, responses = frames()
    sessions = sessions.assign(correct=[1, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0])
    decided, _ = decide(sessions, events, responses, {"s": bundle()})
    table = completion(decided).set_index("system_id")
    assert table.loc["shop", ["correct", "correct_n"]].tolist() == [1, 2]
    assert table.loc["tools", ["correct", "correct_n"]].tolist() == [1, 3]
    for system in ("asked", "woz", "silent"):
        assert table.loc[system, "correct_n"] == 0 and pd.isna(table.loc[system, "correct_rate"])


def test_without_a_stored_definition_every_system_reports_as_before() -> None:
    sessions, events, responses = frames()
    decided, sources = decide(sessions, events, responses, {})
    assert set(sources["source"]) == {"system"}
    assert decided["success"].tolist() == sessions["success"].astype(float).tolist()


STUDY = """\
id: s
title: S
texts: {welcome: Hi, consent: Do you agree, declined: Bye}
systems: [{type: demo, id: shop}]
scenarios: [task]
success_item: SUCCESS
"""
TASK = "id: task\ntitle: T\nbrief: Do it.\npost_task: [after]\n"
AFTER = """\
id: after
title: After the task
items:
  - {type: yes_no, id: after.done, text: "Did you do the task?"}
  - {type: text, id: after.why, text: "Why?"}
"""


def write(folder: Path, item: str) -> Path:
    (folder / "scenarios").mkdir(parents=True)
    (folder / "questionnaires").mkdir()
    (folder / "scenarios" / "task.yaml").write_text(TASK)
    (folder / "questionnaires" / "after.yaml").write_text(AFTER)
    study = folder / "study.yaml"
    study.write_text(STUDY.replace("SUCCESS", item))
    return study


def test_the_success_item_must_be_a_yes_no_item_asked_after_a_task(tmp_path: Path) -> None:
    assert load_study(write(tmp_path / "ok", "after.done")).study.success_item == "after.done"
    with pytest.raises(StudyError) as raised:
        load_study(write(tmp_path / "text", "after.why"))
    assert "study.yaml:6: success_item: 'after.why' is a text item" in str(raised.value)
    with pytest.raises(StudyError) as raised:
        load_study(write(tmp_path / "none", "after.nope"))
    assert "no yes/no item 'after.nope' in a questionnaire asked after a task" in str(raised.value)


def test_the_table_at_a_glance_says_not_measured_as_the_success_table_does() -> None:
    """One wording for an unknown success rate in every table, never a dash in one of them."""
    sessions, events, responses = frames()
    events = events[events["session_id"] != "e1"]
    decided, _ = decide(sessions, events, responses, {"s": bundle()})
    table = completion(decided)
    systems = [s["id"] for s in SYSTEMS]
    [glance] = at_a_glance(table, systems, None)
    cells = dict(zip(systems, glance[1:], strict=False))
    assert cells["silent"] == NOT_MEASURED
    assert cells["shop"].endswith(", n = 2")
    [silent] = [row for row in success_rows(table, ["system_id"]) if row[0] == "silent"]
    assert silent[-2:] == (NOT_MEASURED, NOT_MEASURED)
