"""The examples a study marks: a study file names sessions to show, or the scenarios the
drawn examples come from (checked with file, line and field); the report shows the marked
ones first under their systems, draws the rest with the seed, and says which is which."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from analytics.data.selecting import load_study as load_study_data
from analytics.data.synthetic import synthetic_bundle, write_synthetic_study
from analytics.report.examples import example_conversations
from bot.cli import analytics_main as main
from bot.store.definition import definition_json
from bot.store.sqlite import open_store
from scenarios.loading import StudyError, load_study
from scenarios.models import Examples
from tests.test_pairwise_choices import arena_with, line_of

SYSTEMS = ["system-a", "system-b"]


@pytest.fixture(scope="module")
def study_db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    db = tmp_path_factory.mktemp("marks") / "study.sqlite"
    write_synthetic_study(db, sessions=40, responses_per_session=6, seed=5, systems=2)
    return db


def _candidates(study_db: Path) -> tuple[list[str], list[str]]:
    """Sessions of system-a that ended and have exchanges, sorted; the same of system-b."""
    data = load_study_data(study_db)
    talked = set(data.exchanges["session_id"].astype(str))
    ended = data.sessions[
        (data.sessions["state"] == "ended") & data.sessions["session_id"].isin(talked)
    ]
    return tuple(  # type: ignore[return-value]
        sorted(ended.loc[ended["system_id"] == s, "session_id"].astype(str)) for s in SYSTEMS
    )


def test_marked_sessions_come_first_and_the_rest_are_drawn(study_db: Path) -> None:
    a, _ = _candidates(study_db)
    data = load_study_data(study_db)
    marks = Examples(sessions=(a[-1], "nope-1"), per_system=2)
    chosen = example_conversations(data, SYSTEMS, marks)
    per = chosen.drop_duplicates("session_id")
    mine = per[per["system_id"] == "system-a"]
    assert mine["session_id"].iloc[0] == a[-1] and list(mine["marked"]) == [True, False]
    assert list(per.loc[per["system_id"] == "system-b", "marked"]) == [False, False]
    scenario = str(data.sessions["scenario_id"].iloc[0])
    only = example_conversations(data, SYSTEMS, Examples(scenarios=(scenario,), per_system=3))
    assert set(only["scenario_id"]) == {scenario}
    assert only.drop_duplicates("session_id").groupby("system_id").size().max() <= 3


def test_the_report_shows_the_marked_ones_and_says_so(
    study_db: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    a, _ = _candidates(study_db)
    bundle = synthetic_bundle(2)
    marked = bundle.model_copy(
        update={
            "study": bundle.study.model_copy(
                update={"examples": Examples(sessions=(a[-1], "nope-1"), per_system=1)}
            )
        }
    )

    async def mark() -> None:
        store = await open_store(study_db, lambda: 1_800_000_000.0)
        try:
            await store.record_definition(bundle.study.id, definition_json(marked))
        finally:
            await store.close()

    asyncio.run(mark())
    assert main(["report", "--db", str(study_db), "--format", "json"]) == 0
    found = json.loads(capsys.readouterr().out)["examples"]
    sessions = {(r["system_id"], r["session_id"], r["marked"]) for r in found}
    assert ("system-a", a[-1], True) in sessions
    assert {s for s, _, _ in sessions} == set(SYSTEMS) and len(sessions) == 2
    out = tmp_path / "report.md"
    assert main(["report", "--db", str(study_db), "--out", str(out)]) == 0
    text = " ".join(out.read_text(encoding="utf-8").split())
    assert f"1 conversation the study marks ({a[-1]})" in text
    assert "Marked but not shown: nope-1" in text
    assert "marked by the study" in text


def test_a_marked_scenario_the_study_does_not_have_is_named_with_file_line_and_field(
    tmp_path: Path,
) -> None:
    study, text = arena_with(tmp_path, "\nexamples:\n  scenarios: [nowhere]\n")
    with pytest.raises(StudyError) as caught:
        load_study(study)
    [problem] = caught.value.problems
    assert (problem.file, problem.line) == (study, line_of(text, "scenarios: [nowhere]"))
    assert problem.field == "examples.scenarios[0]"
    assert "no scenario 'nowhere' in scenarios" in problem.message
