"""The one reader of a study's stored definition: definitions every earlier ozlab stored
read with today's defaults, unreadable ones read as an empty study, and a definition this
ozlab no longer validates refused in one line by the commands that need all of it."""

from __future__ import annotations

import asyncio
import json
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from bot.store.definition import definition_json
from bot.store.sqlite import open_store
from scenarios.loading import load_study
from scenarios.models import Study, StudyBundle, Timing
from scenarios.stored import (
    LANGUAGE,
    REMINDER_AFTER,
    StoredDefinition,
    UnreadableDefinition,
    read_definition,
    read_definitions,
)
from tests.stress_support import ozlab

pytestmark = pytest.mark.slow  # whole commands, reports or renderings: make test, not make check

EARLIER = Path(__file__).parent / "fixtures" / "schema5-main.sqlite"


def same_as_bundle(stored: StoredDefinition, bundle: StudyBundle) -> None:
    study = bundle.study
    assert stored.language == study.language
    assert stored.retention == study.retention
    assert stored.withdrawals_by_system is study.withdrawals_by_system
    assert stored.reminder_after == study.timing.reminder_after
    assert [(s.id, s.type) for s in stored.systems] == [(s.id, s.type) for s in study.systems]
    assert set(stored.scenarios) == set(bundle.scenarios)
    for scenario_id, scenario in bundle.scenarios.items():
        mine = stored.scenarios[scenario_id]
        assert (mine.brief, mine.system_prompt) == (scenario.brief, scenario.system_prompt)
        assert (mine.max_exchanges, mine.time_limit) == (
            scenario.max_exchanges,
            scenario.time_limit,
        )
    assert set(stored.questionnaires) == set(bundle.questionnaires)
    for q_id, questionnaire in bundle.questionnaires.items():
        items = [item["id"] for item in stored.questionnaires[q_id]["items"]]
        assert items == [item.id for item in questionnaire.items]


def test_the_definitions_an_earlier_ozlab_stored_read_as_their_study() -> None:
    with sqlite3.connect(f"file:{EARLIER}?mode=ro", uri=True) as conn:
        stored = dict(conn.execute("SELECT study_id, definition FROM studies").fetchall())
    read = read_definitions(stored)
    assert set(read) == {"hmd", "xrec", "e2e-nlg"}
    for study_id, definition in read.items():
        assert definition.study_id == study_id
        assert definition.systems and definition.scenarios and definition.questionnaires
        same_as_bundle(definition, definition.bundle())


@pytest.mark.parametrize("study", ["hmd", "xrec", "e2e-nlg", "hri-cues", "idial"])
def test_a_definition_the_bot_stores_today_reads_as_its_study(study: str) -> None:
    bundle = load_study(study)
    stored = read_definition(study, definition_json(bundle))
    same_as_bundle(stored, bundle)


def test_fields_an_earlier_ozlab_did_not_store_read_as_todays_defaults() -> None:
    bundle = load_study("hmd")
    study = bundle.study.model_copy(
        update={"retention": 86400.0, "withdrawals_by_system": True, "language": "it"}
    )
    full = json.loads(definition_json(bundle.model_copy(update={"study": study})))
    assert read_definition("hmd", json.dumps(full)).retention == 86400.0
    for later in ("retention", "withdrawals_by_system", "language", "stress_model", "timing"):
        del full["study"][later]
    stored = read_definition("hmd", json.dumps(full))
    assert stored.retention is Study.model_fields["retention"].default is None
    assert stored.withdrawals_by_system is Study.model_fields["withdrawals_by_system"].default
    assert stored.language == Study.model_fields["language"].default == LANGUAGE
    assert stored.stress_model is Study.model_fields["stress_model"].default is None
    assert stored.reminder_after == Timing.model_fields["reminder_after"].default == REMINDER_AFTER
    assert [s.id for s in stored.systems] == [s.id for s in bundle.study.systems]


@pytest.mark.parametrize(
    "raw",
    [
        None,
        "",
        "not json",
        "[1, 2]",
        '{"v": 1}',
        '{"study": null, "scenarios": null, "questionnaires": 3}',
        '{"study": {"systems": {"id": "a"}, "retention": "90d", "timing": [],'
        ' "withdrawals_by_system": "yes", "language": 7, "stress_model": "m"},'
        ' "scenarios": {"t1": "a task", "t2": {"brief": null, "max_exchanges": true,'
        ' "time_limit": "5m"}}}',
    ],
)
def test_an_unreadable_definition_reads_as_an_empty_study(raw: str | None) -> None:
    stored = read_definition("s", raw)
    assert stored.study_id == "s"
    assert (stored.language, stored.retention, stored.withdrawals_by_system) == (
        LANGUAGE,
        None,
        False,
    )
    assert stored.reminder_after == REMINDER_AFTER and stored.stress_model is None
    assert stored.systems == () and not stored.questionnaires
    assert all(
        (s.brief, s.system_prompt, s.max_exchanges, s.time_limit) == ("", None, None, None)
        for s in stored.scenarios.values()
    )


def test_a_system_without_an_id_is_kept_for_the_replay_to_refuse() -> None:
    stored = read_definition("s", '{"study": {"systems": [{"type": "demo"}, 3]}}')
    assert [(s.id, s.type, dict(s.settings)) for s in stored.systems] == [
        ("", "demo", {"type": "demo"})
    ]


def with_a_setting_since_removed(study: str) -> str:
    """The definition of ``study`` as an ozlab with one more study setting stored it."""
    definition: dict[str, Any] = json.loads(definition_json(load_study(study)))
    definition["study"]["hint_after"] = 30
    return json.dumps(definition)


def test_a_definition_this_ozlab_cannot_validate_is_refused_in_one_line() -> None:
    stored = read_definition("hmd", with_a_setting_since_removed("hmd"))
    assert [s.id for s in stored.systems] == [s.id for s in load_study("hmd").study.systems]
    with pytest.raises(UnreadableDefinition) as refused:
        stored.bundle()
    message = str(refused.value)
    assert "\n" not in message and refused.value.problems == 1
    assert "'hmd'" in message and "study.hint_after: Extra inputs are not permitted" in message


async def database_with(db: Path, study_id: str, definition: str) -> Path:
    store = await open_store(db)
    try:
        await store.record_definition(study_id, definition)
    finally:
        await store.close()
    return db


async def test_commands_that_need_the_whole_study_refuse_an_unreadable_one_in_one_line(
    tmp_path: Path,
) -> None:
    db = await database_with(tmp_path / "d.sqlite", "hmd", with_a_setting_since_removed("hmd"))
    answers = tmp_path / "answers.csv"
    answers.write_text("participant_id,questionnaire_id,item_id,value\nP001,hmd,q1,4\n")
    for args in (
        ("import", "responses", "--db", str(db), "--dry-run", str(answers)),
        ("import", "annotations", "--db", str(db), "--instrument", "x", str(answers)),
        ("invite", "--db", str(db), "--annotators", "1", "--job", "j", "--bot", "study_bot"),
    ):
        done = await asyncio.to_thread(ozlab, *args)
        assert "Traceback" not in done.stderr, args
        assert done.returncode == UnreadableDefinition.exit_code, (args, done.stderr)
        assert done.stderr.strip().count("\n") == 0, done.stderr
        assert "hint_after" in done.stderr and "--study" in done.stderr


async def test_erasing_the_expired_passes_over_an_unreadable_definition(tmp_path: Path) -> None:
    db = await database_with(tmp_path / "d.sqlite", "s", '{"study": null}')
    done = await asyncio.to_thread(ozlab, "erase", "--db", str(db), "--expired")
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stderr


async def test_analytics_reads_an_unreadable_study_s_items_as_stored(tmp_path: Path) -> None:
    from analytics.data.loading import load_study_data

    db = await database_with(tmp_path / "d.sqlite", "hmd", with_a_setting_since_removed("hmd"))
    data = await asyncio.to_thread(load_study_data, db)
    assert data.bundles == {}
    assert any(
        "definition of study 'hmd' does not validate" in note and "(1 problems)" in note
        for note in data.notes
    )
    hmd = load_study("hmd")
    assert set(data.items["questionnaire_id"]) == set(hmd.questionnaires)
