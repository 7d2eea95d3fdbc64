"""Study designs: who gets which scenarios with which systems, reproducibly and evenly."""

from __future__ import annotations

import random
from collections import Counter
from itertools import pairwise
from typing import Any

import pytest

from bot.engine.assignment import Assignment, assign_scenarios, cell_counts, latin_square
from scenarios.models import Design, Study, Texts

TEXTS = Texts(welcome="Welcome", consent="Do you agree?", declined="Goodbye")


def make_study(scenarios: int = 3, systems: int = 2, mode: str = "between", **design: Any) -> Study:
    """``scenarios`` task ids and ``systems`` demo systems; ``mode``: between or within."""
    return Study(
        id="designs",
        title="Designs",
        texts=TEXTS,
        systems=tuple({"type": "demo", "id": f"sys{j}"} for j in range(systems)),
        scenarios=tuple(f"task{i}" for i in range(scenarios)),
        design=Design(seed=1234, systems=mode, **design),
    )


def systems_of(assignment: Assignment) -> list[str]:
    return [system for _, system in assignment.tasks]


def scenarios_of(assignment: Assignment) -> list[str]:
    return [scenario for scenario, _ in assignment.tasks]


def spread(study: Study, cells: dict[tuple[str, str], int]) -> int:
    counts = [cells.get((sc, sy.id), 0) for sc in study.scenarios for sy in study.systems]
    return max(counts) - min(counts)


# --- the Latin square -----------------------------------------------------------------------


@pytest.mark.parametrize("n", range(1, 10))
def test_latin_square_rows_and_columns_are_permutations(n: int) -> None:
    square = latin_square(n)
    odd = n % 2 == 1 and n > 1
    assert len(square) == (2 * n if odd else n)
    for row in square:
        assert sorted(row) == list(range(n))
    # Odd n: two stacked Latin squares (the rows and their mirror images).
    for half in (square[:n], square[n:]) if odd else (square,):
        for column in zip(*half, strict=True):
            assert sorted(column) == list(range(n))


@pytest.mark.parametrize("n", [2, 4, 6, 8, 10])
def test_even_latin_square_has_every_ordered_pair_of_neighbours_exactly_once(n: int) -> None:
    pairs = Counter(pair for row in latin_square(n) for pair in pairwise(row))
    assert set(pairs) == {(a, b) for a in range(n) for b in range(n) if a != b}
    assert set(pairs.values()) == {1}


@pytest.mark.parametrize("n", [3, 5, 7])
def test_odd_latin_square_with_mirrored_rows_has_every_pair_exactly_twice(n: int) -> None:
    pairs = Counter(pair for row in latin_square(n) for pair in pairwise(row))
    assert set(pairs) == {(a, b) for a in range(n) for b in range(n) if a != b}
    assert set(pairs.values()) == {2}


def test_latin_square_first_row_is_the_williams_sequence() -> None:
    assert latin_square(4)[0] == [0, 1, 3, 2]
    assert latin_square(6)[0] == [0, 1, 5, 2, 4, 3]
    assert latin_square(6)[1] == [1, 2, 0, 3, 5, 4]
    assert latin_square(1) == [[0]]
    with pytest.raises(ValueError):
        latin_square(0)


# --- random ---------------------------------------------------------------------------------


def test_random_between_gives_one_system_for_all_scenarios_in_study_order() -> None:
    study = make_study(scenarios=4, systems=3)
    drawn = [assign_scenarios(study, f"p{i}") for i in range(60)]
    for assignment in drawn:
        assert scenarios_of(assignment) == list(study.scenarios)
        assert len(set(systems_of(assignment))) == 1
        assert assignment.design == "random/between"
    assert {systems_of(a)[0] for a in drawn} == {"sys0", "sys1", "sys2"}


@pytest.mark.parametrize(("scenarios", "systems"), [(3, 3), (5, 2), (4, 3), (2, 4)])
def test_random_within_meets_every_system_going_round_a_permutation(
    scenarios: int, systems: int
) -> None:
    study = make_study(scenarios=scenarios, systems=systems, mode="within")
    first_systems = set()
    for i in range(40):
        assignment = assign_scenarios(study, f"p{i}")
        met = systems_of(assignment)
        assert assignment.design == "random/within"
        assert scenarios_of(assignment) == list(study.scenarios)
        uses = Counter(met)
        if scenarios >= systems:
            assert set(met) == {s.id for s in study.systems}
        else:
            assert len(uses) == scenarios  # fewer tasks than systems: all different
        assert max(uses.values()) - min(uses.values()) <= 1
        # Cycling: task i + systems has the same system as task i.
        assert all(met[i] == met[i + systems] for i in range(len(met) - systems))
        first_systems.add(met[0])
    assert len(first_systems) == systems  # the permutation is drawn, not fixed


def test_idial_three_random_distinct_tasks_each() -> None:
    study = make_study(scenarios=6, systems=2, tasks_per_participant=3)
    drawn = [assign_scenarios(study, f"p{i}") for i in range(60)]
    for assignment in drawn:
        tasks = scenarios_of(assignment)
        assert len(tasks) == 3 and len(set(tasks)) == 3
        assert tasks == sorted(tasks, key=study.scenarios.index)  # order: fixed
        assert len(set(systems_of(assignment))) == 1
    assert len({tuple(scenarios_of(a)) for a in drawn}) > 5
    assert {sc for a in drawn for sc in scenarios_of(a)} == set(study.scenarios)


def test_random_order_shuffles_each_participants_tasks() -> None:
    study = make_study(scenarios=4, systems=2, order="random")
    orders = {tuple(scenarios_of(assign_scenarios(study, f"p{i}"))) for i in range(40)}
    assert all(sorted(order) == list(study.scenarios) for order in orders)
    assert len(orders) > 5


def test_more_tasks_per_participant_than_scenarios_means_each_scenario_once() -> None:
    study = make_study(scenarios=3, systems=2, tasks_per_participant=5)
    assert scenarios_of(assign_scenarios(study, "p")) == list(study.scenarios)


# --- balanced -------------------------------------------------------------------------------

BALANCED_CASES = {
    "between, all scenarios": dict(scenarios=3, systems=2),
    "between, three systems": dict(scenarios=2, systems=3),
    "between, one task each": dict(scenarios=3, systems=2, tasks_per_participant=1),
    "between, two of four": dict(scenarios=4, systems=3, tasks_per_participant=2),
    "within, all scenarios": dict(scenarios=3, systems=2, mode="within"),
    "within, as many as systems": dict(scenarios=4, systems=4, mode="within"),
    "within, more systems": dict(scenarios=2, systems=3, mode="within"),
    "within, three of five": dict(scenarios=5, systems=2, mode="within", tasks_per_participant=3),
    "within, two of four, random order": dict(
        scenarios=4, systems=2, mode="within", tasks_per_participant=2, order="random"
    ),
}


def balanced(**options: Any) -> Study:
    return make_study(type="balanced", **options)


@pytest.mark.parametrize("case", BALANCED_CASES)
@pytest.mark.parametrize("run", range(5))
def test_balanced_keeps_every_cell_within_one_over_60_arrivals_with_random_dropouts(
    case: str, run: int
) -> None:
    study = balanced(**BALANCED_CASES[case])
    chance = random.Random(f"{case}:{run}")
    active: dict[str, tuple[tuple[str, str], ...]] = {}
    dropouts = 0
    for arrival in range(60):
        participant = f"r{run}-p{arrival}"
        assignment = assign_scenarios(
            study, participant, arrival=arrival, cells=cell_counts(active.values())
        )
        active[participant] = assignment.tasks
        assert spread(study, cell_counts(active.values())) <= 1, (case, arrival)
        if study.design.systems == "within":
            uses = Counter(systems_of(assignment))
            wanted = min(len(study.systems), len(assignment.tasks))
            assert len(uses) == wanted and max(uses.values()) - min(uses.values()) <= 1
        if chance.random() < 0.3:  # someone, maybe still playing, leaves for good
            del active[chance.choice(sorted(active))]
            dropouts += 1
    assert dropouts > 5


@pytest.mark.parametrize("case", BALANCED_CASES)
def test_balanced_refills_a_burst_of_dropouts(case: str) -> None:
    study = balanced(**BALANCED_CASES[case])
    active: dict[str, tuple[tuple[str, str], ...]] = {}
    for i in range(30):
        active[f"p{i}"] = assign_scenarios(study, f"p{i}", cells=cell_counts(active.values())).tasks
    for gone in ("p3", "p4", "p11", "p12", "p20"):
        del active[gone]
    for i in range(30, 50):
        active[f"p{i}"] = assign_scenarios(study, f"p{i}", cells=cell_counts(active.values())).tasks
    assert spread(study, cell_counts(active.values())) <= 1


def test_balanced_fills_the_emptiest_cell_and_draws_among_ties() -> None:
    study = balanced(scenarios=1, systems=3)
    cells = {("task0", "sys0"): 2, ("task0", "sys1"): 1, ("task0", "sys2"): 2}
    assert all(
        systems_of(assign_scenarios(study, f"p{i}", cells=cells)) == ["sys1"] for i in range(20)
    )
    empty = {systems_of(assign_scenarios(study, f"p{i}"))[0] for i in range(30)}
    assert empty == {"sys0", "sys1", "sys2"}
    assert assign_scenarios(study, "p").design == "balanced/between"


def test_balanced_between_with_tasks_that_cannot_tile_stays_close() -> None:
    """Three scenarios, two systems, two tasks each cannot stay within one; within two."""
    study = balanced(scenarios=3, systems=2, tasks_per_participant=2)
    active: dict[str, tuple[tuple[str, str], ...]] = {}
    for i in range(40):
        active[f"p{i}"] = assign_scenarios(study, f"p{i}", cells=cell_counts(active.values())).tasks
        assert spread(study, cell_counts(active.values())) <= 2


# --- latin_square ---------------------------------------------------------------------------


@pytest.mark.parametrize("systems", [2, 3, 4])
def test_latin_square_within_orders_systems_by_the_row_of_the_arrival(systems: int) -> None:
    study = make_study(scenarios=systems, systems=systems, type="latin_square", mode="within")
    square = latin_square(systems)
    positions: Counter[tuple[int, str]] = Counter()
    for arrival in range(2 * len(square)):
        assignment = assign_scenarios(study, f"p{arrival}", arrival=arrival)
        row = arrival % len(square)
        assert systems_of(assignment) == [f"sys{j}" for j in square[row]]
        assert scenarios_of(assignment) == list(study.scenarios)
        assert assignment.design == f"latin_square/within row {row} of {len(square)}"
        positions.update(enumerate(systems_of(assignment)))
    assert set(positions.values()) == {2 * len(square) // systems}


def test_latin_square_within_cycles_when_there_are_more_tasks_than_systems() -> None:
    study = make_study(scenarios=5, systems=2, type="latin_square", mode="within")
    assert systems_of(assign_scenarios(study, "p", arrival=1)) == ["sys1", "sys0"] * 2 + ["sys1"]


def test_latin_square_between_orders_the_scenarios_and_turns_the_system() -> None:
    study = make_study(scenarios=4, systems=2, type="latin_square")
    square = latin_square(4)
    pairs = Counter()
    per_system: Counter[str] = Counter()
    for arrival in range(16):
        assignment = assign_scenarios(study, f"p{arrival}", arrival=arrival)
        row = arrival % 4
        assert scenarios_of(assignment) == [f"task{i}" for i in square[row]]
        assert len(set(systems_of(assignment))) == 1
        assert assignment.design == f"latin_square/between row {row} of 4"
        system = systems_of(assignment)[0]
        pairs[(row, system)] += 1
        per_system[system] += 1
        assert max(per_system.values()) - min(per_system.values()) <= 1
    assert set(pairs.values()) == {2} and len(pairs) == 8  # every system with every row


def test_latin_square_between_with_fewer_tasks_takes_the_start_of_the_row() -> None:
    study = make_study(scenarios=4, systems=1, type="latin_square", tasks_per_participant=2)
    played = Counter()
    for arrival in range(4):
        tasks = scenarios_of(assign_scenarios(study, f"p{arrival}", arrival=arrival))
        assert tasks == [f"task{i}" for i in latin_square(4)[arrival][:2]]
        played.update(enumerate(tasks))
    assert set(played.values()) == {1} and len(played) == 8  # each scenario once per position


# --- every design ---------------------------------------------------------------------------

EVERY_DESIGN = [
    dict(type=kind, mode=mode, order=order, tasks_per_participant=tasks)
    for kind in ("random", "balanced", "latin_square")
    for mode in ("between", "within")
    for order in ("fixed", "random")
    for tasks in (None, 2)
]


def design_study(options: dict[str, Any]) -> Study:
    return make_study(scenarios=4, systems=3, **options)


@pytest.mark.parametrize("options", EVERY_DESIGN, ids=str)
def test_every_assignment_is_reproducible_from_its_inputs(options: dict[str, Any]) -> None:
    study = design_study(options)
    cells = {("task1", "sys2"): 3, ("task0", "sys0"): 1}
    for participant in ("p-1", "p-2", "42"):
        first = assign_scenarios(study, participant, frozenset({"sys1"}), arrival=5, cells=cells)
        again = assign_scenarios(study, participant, frozenset({"sys1"}), arrival=5, cells=cells)
        assert first == again
        assert first.seed == f"1234:{participant}"
        assert first.design.startswith(f"{options['type']}/{study.design.systems}")
        assert first.design.endswith(" without sys1")
        tasks = scenarios_of(first)
        assert len(tasks) == len(set(tasks)) == (options["tasks_per_participant"] or 4)


@pytest.mark.parametrize("options", EVERY_DESIGN, ids=str)
def test_unavailable_systems_are_left_out_while_others_remain(options: dict[str, Any]) -> None:
    study = design_study(options)
    cells = {("task0", "sys0"): 5, ("task1", "sys0"): 5}
    for arrival in range(30):
        assignment = assign_scenarios(
            study, f"p{arrival}", frozenset({"sys1", "nonexistent"}), arrival=arrival, cells=cells
        )
        assert "sys1" not in systems_of(assignment)
    everyone_down = frozenset({"sys0", "sys1", "sys2"})
    met = {
        system
        for arrival in range(30)
        for system in systems_of(
            assign_scenarios(study, f"p{arrival}", everyone_down, arrival=arrival)
        )
    }
    assert met == {"sys0", "sys1", "sys2"}
    assert "without" not in assign_scenarios(study, "p", everyone_down).design


def test_the_unavailable_argument_still_works_positionally_as_the_runner_passes_it() -> None:
    study = make_study(systems=2)
    assert {
        systems_of(assign_scenarios(study, f"p{i}", frozenset({"sys0"})))[0] for i in range(20)
    } == {"sys1"}


def test_a_negative_arrival_is_refused() -> None:
    with pytest.raises(ValueError):
        assign_scenarios(make_study(), "p", arrival=-1)


def test_cell_counts_adds_up_every_task_of_the_given_participants() -> None:
    assert cell_counts([[("a", "x"), ("b", "y")], [("a", "x")], []]) == {
        ("a", "x"): 2,
        ("b", "y"): 1,
    }
