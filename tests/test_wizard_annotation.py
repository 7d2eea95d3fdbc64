"""The console's annotation progress (key ``o``) through Textual's headless harness, on a
real database where one annotator has started and another has not joined yet."""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from textual.widgets import DataTable

from analytics.io.importing_annotations import import_annotations
from bot.annotation.jobs import assign
from bot.store.definition import definition_json
from bot.store.sqlite import open_store
from scenarios.loading import load_study
from tests.annotating_support import invite
from tests.annotation_support import store_conversations, stored_study
from tests.test_wizard_app import console
from wizard_console.annotation import AnnotationScreen


async def _study(db: Path) -> list[tuple[str, str]]:
    store = await open_store(db)
    try:
        await store.record_definition("hri-cues", definition_json(load_study("hri-cues")))
        await store_conversations(store, "hri-cues", "hri-cues-chat", [("p1-1", "companion", 2)])
    finally:
        await store.close()
    codes = await invite(db, "hri-cues", 2)
    store = await open_store(db)
    try:  # the first annotator joins and rates the first exchange
        _, first = await store.claim_annotator(codes[0][1], "c-first-chat")
        assert first is not None
        task = await store.next_annotation_target(first.annotator_id)
        assert task is not None
        target, level = task.target.target, task.target.level
        who = first.annotator_id
        await store.record_annotation(who, "hri-cues", target, level, "hri-cues", "x", 4)
        await store.finish_annotation_target(who, "hri-cues", target, level)
    finally:
        await store.close()
    return codes


async def test_the_console_shows_annotation_progress_per_job_and_annotator(
    tmp_path: Path,
) -> None:
    db = tmp_path / "cues.sqlite"
    (first, _), (second, _) = await _study(db)
    async with console(db) as pilot:
        await pilot.press("o")
        screen = pilot.app.screen
        assert isinstance(screen, AnnotationScreen)
        table = screen.query_one(DataTable)
        await pilot.pause()
        rows = {
            str(row[1]): [str(cell) for cell in row]
            for row in (table.get_row_at(i) for i in range(table.row_count))
        }
        # Two exchanges and the conversation overall: three targets each.
        assert rows[first][2:5] == ["1/3", "0/1", "rating"]
        assert rows[second][2:5] == ["0/3", "0/1", "not joined"]
        assert rows["all"][2] == "1/6"
        assert rows["all"][4] == "3 waiting for an annotator"  # three per target, two invited
        await pilot.press("escape")
        assert not isinstance(pilot.app.screen, AnnotationScreen)


async def test_a_dropped_annotators_targets_wait_visibly_for_an_annotator(
    tmp_path: Path,
) -> None:
    """Two per target, two annotators, one declared dropped: their open targets are
    released with nobody to take them, and the console says they wait."""
    db = tmp_path / "xrec.sqlite"
    bundle = load_study("xrec")
    store = await open_store(db)
    try:
        await store.record_definition("xrec", definition_json(bundle))
        await store_conversations(store, "xrec", "xrec-chat", [("p1-1", "xrec", 2)])
    finally:
        await store.close()
    [_, (second, _)] = await invite(db, "xrec", 2)
    store = await open_store(db)
    try:
        assert await store.drop_annotator(second)
        released = await assign(store, bundle, bundle.jobs["xrec"], time.time())
        assert {who for *_, who in released.release} == {second} and not released.assign
    finally:
        await store.close()
    async with console(db) as pilot:
        await pilot.press("o")
        await pilot.pause()
        table = pilot.app.screen.query_one(DataTable)
        rows = {str(table.get_row_at(i)[1]): table.get_row_at(i) for i in range(table.row_count)}
        assert rows[second][4] == "dropped"
        assert rows["all"][4] == "2 waiting for an annotator"


async def test_no_annotators_yet_is_said(tmp_path: Path) -> None:
    db = tmp_path / "empty.sqlite"
    store = await open_store(db)
    await store.record_definition("hri-cues", definition_json(load_study("hri-cues")))
    await store.close()
    async with console(db) as pilot:
        await pilot.press("o")
        await pilot.pause()
        hint = str(pilot.app.screen.query_one("#annotation-empty").render())
        assert "ozlab invite --annotators" in hint


PEOPLE = ("A1", "A2", "A3")  # as many as the hri-cues job asks for


@pytest.fixture
def rated_by_import(tmp_path: Path) -> Path:
    """A study whose every target (two exchanges, the conversation) three annotators rated
    in a spreadsheet, imported."""
    session = "p0123456789abcde-1"
    db = stored_study(tmp_path / "cues.sqlite", "hri-cues", "hri-cues-chat", [(session, "x", 2)])
    exchanges = tmp_path / "exchanges.csv"
    overall = tmp_path / "overall.csv"
    rows = [f"{session}#{turn},{who},exchange,4" for turn in (1, 2) for who in PEOPLE]
    exchanges.write_text("target,annotator,item,value\n" + "\n".join(rows) + "\n")
    overall.write_text(
        "target,annotator,item,value\n" + "".join(f"{session},{who},overall,3\n" for who in PEOPLE)
    )
    for path, instrument in ((exchanges, "hri-cues"), (overall, "hri-cues-overall")):
        done = import_annotations(path, db, instrument=instrument, job="hri-cues")
        assert done.problems == () and done.ratings
    return db


async def test_ratings_that_came_by_import_count_in_the_console(rated_by_import: Path) -> None:
    async with console(rated_by_import) as pilot:
        await pilot.press("o")
        await pilot.pause()
        table = pilot.app.screen.query_one(DataTable)
        rows = {
            str(row[1]): [str(cell) for cell in row]
            for row in (table.get_row_at(i) for i in range(table.row_count))
        }
        for who in PEOPLE:
            assert rows[who][2:5] == ["3 by import", "", "imported"]
        assert rows["all"][2] == "0/0 + 9 by import"
        assert rows["all"][4] == ""  # nothing waits for an annotator
