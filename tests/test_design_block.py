"""``ozlab power`` and ``ozlab check`` know the design: samples in whole multiples of the
participants that fill its cells evenly (Latin-square rows, balanced cells), checked against
what the assignment really does with that many arrivals."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest

from analytics.statistics.power import in_whole_cells
from bot.cli import main
from bot.engine.assignment import assign_scenarios, cell_counts, design_block
from scenarios.loading import load_study
from scenarios.models import Study
from tests.test_check_design import line_of, starter, without_the_model

HMD = load_study("hmd").study  # one scenario, two systems
IDIAL = load_study("idial").study  # four scenarios, two systems, three tasks each


def designed(study: Study, **design: object) -> Study:
    return study.model_copy(update={"design": study.design.model_copy(update=design)})


def with_systems(study: Study, count: int) -> Study:
    spec = study.systems[0]
    systems = tuple(spec.model_copy(update={"id": f"s{i}"}) for i in range(count))
    return study.model_copy(update={"systems": systems})


def with_scenarios(study: Study, count: int) -> Study:
    return study.model_copy(update={"scenarios": tuple(f"task-{i}" for i in range(count))})


def played(study: Study, arrivals: int) -> list[tuple[tuple[str, str], ...]]:
    """Each arrival's tasks, as the bot assigns them one after another."""
    tasks: list[tuple[tuple[str, str], ...]] = []
    for arrival in range(arrivals):
        drawn = assign_scenarios(study, f"p{arrival}", arrival=arrival, cells=cell_counts(tasks))
        tasks.append(drawn.tasks)
    return tasks


@pytest.mark.parametrize("systems", [2, 3, 4])
def test_a_latin_square_within_fills_with_its_rows(systems: int) -> None:
    study = designed(with_systems(with_scenarios(HMD, systems), systems), type="latin_square",
                     systems="within")  # fmt: skip
    block = design_block(study)
    assert block.participants == (systems if systems % 2 == 0 else 2 * systems)
    orders = Counter(
        tuple(system for _, system in tasks) for tasks in played(study, 2 * block.participants)
    )
    assert len(orders) == block.participants and set(orders.values()) == {2}


def test_a_latin_square_between_fills_with_rows_times_systems() -> None:
    study = designed(with_systems(with_scenarios(HMD, 3), 2), type="latin_square")
    block = design_block(study)
    assert block.participants == 12  # six orders of three scenarios (odd: mirrored), 2 systems
    pairs = Counter(
        (tuple(sc for sc, _ in tasks), tasks[0][1]) for tasks in played(study, block.participants)
    )
    assert len(pairs) == 12 and set(pairs.values()) == {1}


@pytest.mark.parametrize("systems", ["between", "within"])
@pytest.mark.parametrize("tasks", [1, 2, 3, 4])
def test_a_balanced_design_fills_its_cells_with_its_block(tasks: int, systems: str) -> None:
    study = designed(IDIAL, tasks_per_participant=tasks, systems=systems)
    block = design_block(study)
    held = cell_counts(played(study, block.participants))
    assert len(held) == 8 and len(set(held.values())) == 1, (block, held)


def test_random_between_keeps_one_per_system() -> None:
    assert design_block(designed(HMD, type="random")).participants == 2
    assert design_block(designed(HMD, type="random", systems="within")).participants == 1


def test_power_rounds_the_sample_up_to_whole_rows() -> None:
    study = designed(with_systems(with_scenarios(HMD, 3), 3), type="latin_square",
                     systems="within")  # fmt: skip
    assert in_whole_cells(study, 28) == (
        "Design: a Latin square of 6 system orders: whole multiples of 6 participants fill it"
        " evenly; for the 28 the report's test needs, plan 30 in all."
    )
    assert in_whole_cells(designed(HMD, type="random", systems="within"), 28) is None


def test_ozlab_power_and_check_know_the_design(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    study = starter(tmp_path, design="  systems: within\n", scenarios="[my-task, hmd-gift]")
    without_the_model(study)  # two systems
    text = study.read_text(encoding="utf-8").replace("  type: balanced\n", "  type: latin_square\n")
    study.write_text(text, encoding="utf-8")
    assert main(["power", str(study)]) == 0
    out = capsys.readouterr().out
    assert "Needed: 34 participants, each meeting every system" in out
    # planned from the report's own test, Wilcoxon's signed-rank test (ARE 3/π): 35, so 36
    assert "Needed for the report's test: 35 participants" in out
    assert "Design: a Latin square of 2 system orders: whole multiples of 2 participants fill" \
        " it evenly; for the 35 the report's test needs, plan 36 in all." in out  # fmt: skip
    assert main(["check", str(study), "-n", "33"]) == 0
    out = capsys.readouterr().out
    assert (
        f"{study}:{line_of(study, 'type: latin_square')}: warning: design.type: -n 33 leaves the"
        " design uneven (a Latin square of 2 system orders): whole multiples of 2 participants"
        " fill it evenly (plan 32 or 34)"
    ) in out
    assert main(["check", str(study), "-n", "34"]) == 0
    assert "-n 34" not in capsys.readouterr().out


def test_the_block_says_task_or_tasks_as_the_number_wants() -> None:
    assert design_block(designed(HMD, type="balanced")).cells.endswith(", 1 task per participant")
    idial = design_block(designed(IDIAL, type="balanced"))
    assert idial.cells.endswith(", 3 tasks per participant")
