"""Quotas in the pure engine: the cells of each design, a newcomer sent to an open cell,
and one who comes when every cell is full told so before consent."""

from __future__ import annotations

from collections import Counter

import pytest

from bot.core.vocabulary import Consent, Stage
from bot.engine import effects as fx
from bot.engine import events as ev
from bot.engine.assignment import (
    WHOLE_STUDY,
    assign_scenarios,
    design_cells,
    has_room,
    open_cells,
)
from bot.engine.common import CONSENT_YES
from bot.engine.context import Context
from bot.engine.flow import step
from bot.engine.phases.assignment import place_held, waiting
from scenarios.models import Design, Recruitment
from tests.test_assignment import make_study
from tests.test_engine import make_bundle, of


@pytest.mark.parametrize(
    ("kind", "mode", "cells"),
    [
        ("random", "between", ("sys0", "sys1")),
        ("balanced", "between", ("sys0", "sys1")),
        ("random", "within", (WHOLE_STUDY,)),
        ("balanced", "within", (WHOLE_STUDY,)),
        ("latin_square", "within", ("row 0", "row 1")),
    ],
)
def test_the_cells_of_each_design(kind: str, mode: str, cells: tuple[str, ...]) -> None:
    assert design_cells(make_study(type=kind, mode=mode)) == cells


def test_a_latin_square_between_subjects_has_a_cell_per_row_and_system() -> None:
    study = make_study(scenarios=3, systems=2, type="latin_square")
    assert len(design_cells(study)) == 6 * 2  # three scenarios: six rows (odd, mirrored)
    assert design_cells(study)[:3] == ("row 0, sys0", "row 0, sys1", "row 1, sys0")


@pytest.mark.parametrize("kind", ["random", "balanced"])
def test_between_subjects_a_newcomer_takes_an_open_system(kind: str) -> None:
    study = make_study(type=kind, quota=3)
    places = {"sys0": 3, "sys1": 2}
    for i in range(20):
        assignment = assign_scenarios(study, f"p{i}", places=places)
        assert assignment.cell == "sys1"
        assert {system for _, system in assignment.tasks} == {"sys1"}
    # Without a quota the full system is drawn as before.
    free = make_study(type=kind)
    drawn = {assign_scenarios(free, f"p{i}", places=places).cell for i in range(20)}
    assert drawn == {"sys0", "sys1"}


def test_a_latin_square_fills_the_open_row_with_the_fewest_places() -> None:
    study = make_study(scenarios=2, systems=2, mode="within", type="latin_square", quota=2)
    # Arrival 0 would take row 0; row 0 is full, so row 1 (open) takes the newcomer.
    assignment = assign_scenarios(study, "p", arrival=0, places={"row 0": 2, "row 1": 1})
    assert assignment.cell == "row 1"
    assert [system for _, system in assignment.tasks] == ["sys1", "sys0"]
    assert "row 1 of 2" in assignment.design
    # Equal places: the row the arrival gives, as without a quota.
    assert assign_scenarios(study, "q", arrival=3, places={}).cell == "row 1"
    # A drop-out's place is filled first, whatever the arrival.
    assert assign_scenarios(study, "r", arrival=0, places={"row 0": 1, "row 1": 0}).cell == "row 1"


def test_a_latin_square_between_subjects_keeps_the_row_and_system_of_its_cell() -> None:
    study = make_study(scenarios=2, systems=2, type="latin_square", quota=1)
    places = {"row 0, sys0": 1, "row 0, sys1": 1, "row 1, sys0": 1}
    assignment = assign_scenarios(study, "p", arrival=0, places=places)
    assert assignment.cell == "row 1, sys1"
    assert assignment.tasks == (("task1", "sys1"), ("task0", "sys1"))


def test_a_failing_system_is_left_out_while_an_open_cell_of_another_remains() -> None:
    study = make_study(scenarios=2, systems=2, type="latin_square", quota=2)
    assignment = assign_scenarios(study, "p", frozenset({"sys0"}), arrival=0, places={})
    assert assignment.cell.endswith("sys1")
    # Within subjects a row holds every system: the quota's rows are filled all the same.
    within = make_study(scenarios=2, systems=2, mode="within", type="latin_square", quota=2)
    places = {"row 0": 2, "row 1": 0}
    assert assign_scenarios(within, "p", frozenset({"sys0"}), places=places).cell == "row 1"
    places = {"row 0": 0, "row 1": 1}
    assert assign_scenarios(within, "p", frozenset({"sys0"}), places=places).cell == "row 0"


def test_with_every_cell_full_one_who_consented_takes_the_emptiest() -> None:
    study = make_study(type="balanced", quota=1)
    assignment = assign_scenarios(study, "p", places={"sys0": 2, "sys1": 1})
    assert assignment.cell == "sys1"
    assert open_cells(study, {"sys0": 2, "sys1": 1}) == ()


def test_room_counts_the_participants_waiting_in_screening() -> None:
    study = make_study(type="random", quota=2)  # two systems, four places
    assert has_room(study, {"sys0": 2, "sys1": 1}, waiting=0)
    assert not has_room(study, {"sys0": 2, "sys1": 1}, waiting=1)
    assert not has_room(study, {"sys0": 3, "sys1": 2}, waiting=0)  # overfilled: none
    assert has_room(make_study(), {"sys0": 99}, waiting=99)  # no quota: always


def full_bundle(**changes: object):  # type: ignore[no-untyped-def]
    bundle = make_bundle(**changes)
    study = bundle.study.model_copy(update={"design": Design(quota=1)})
    return bundle.model_copy(update={"study": study})


def test_a_newcomer_to_a_full_study_is_told_before_consent_with_the_return_instruction() -> None:
    bundle = full_bundle(recruitment=Recruitment(completion_code="DONE1"))
    full = Context(bundle, places={"sys": 1})  # its one system, the one cell
    result = step(bundle, "p1", None, ev.StartCommand(platform_key="sealed"), 0.0, full)
    assert result.journey is None  # nothing kept, not even the payment record
    assert not of(result.effects, fx.RecordRecruitment)
    texts = [e.text for e in of(result.effects, fx.Send)]
    assert texts == [
        bundle.study.texts.study_full,
        bundle.study.texts.platform_return.format(platform="Prolific"),
    ]
    room = Context(bundle, places={"sys": 0})
    welcomed = step(bundle, "p1", None, ev.StartCommand(platform_key="sealed"), 0.0, room)
    assert welcomed.journey is not None and welcomed.journey.stage is Stage.CONSENT


def test_agreeing_after_the_last_place_went_records_nothing() -> None:
    bundle = full_bundle()
    journey = step(bundle, "p1", None, ev.StartCommand(), 0.0).journey
    assert journey is not None
    journey = journey.evolve(keyboards=())
    full = Context(bundle, places={"sys": 0}, waiting=1)
    result = step(bundle, "p1", journey, ev.ButtonTapped(CONSENT_YES), 1.0, full)
    assert not of(result.effects, fx.RecordConsent)
    assert result.journey is not None and result.journey.stage is Stage.CONSENT
    assert [e.text for e in of(result.effects, fx.Send)] == [bundle.study.texts.study_full]
    agreed = step(bundle, "p1", journey, ev.ButtonTapped(CONSENT_YES), 1.0, Context(bundle))
    assert of(agreed.effects, fx.RecordConsent) == [fx.RecordConsent(Consent.ACCEPTED)]
    assert agreed.journey is not None and agreed.journey.cell == "sys"


def test_who_holds_a_place() -> None:
    bundle = full_bundle()
    journey = step(bundle, "p1", None, ev.StartCommand(), 0.0).journey
    assert journey is not None
    assert place_held(journey) is None and not waiting(journey)
    assigned = journey.evolve(stage=Stage.DIALOGUE, cell="sys0")
    assert place_held(assigned) == "sys0"
    assert place_held(assigned.evolve(stage=Stage.FINISHED)) == "sys0"  # completed
    assert place_held(assigned.evolve(abandoned=True)) is None
    assert place_held(assigned.evolve(stage=Stage.CLOSED)) is None
    screening = journey.evolve(stage=Stage.QUESTIONNAIRE)
    assert waiting(screening) and not waiting(screening.evolve(abandoned=True))
    assert Counter(filter(None, map(place_held, [assigned, assigned, journey]))) == {"sys0": 2}
