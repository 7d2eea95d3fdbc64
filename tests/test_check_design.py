"""``ozlab check`` warns about designs that cannot do what they say, at the setting to change;
the balance warning is checked against what the balanced design really does."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from bot.cli import main
from bot.engine.assignment import assign_scenarios, balance_holds, cell_counts
from scenarios.loading import load_study
from scenarios.models import Study
from scenarios.starter import write_starter

DESIGN = "  systems: between\n  # tasks_per_participant: 3\n"


def starter(tmp_path: Path, *, design: str, scenarios: str = "[my-task]") -> Path:
    """The starter study with ``design`` for its systems/tasks lines and ``scenarios``."""
    write_starter(tmp_path / "pilot")
    study = tmp_path / "pilot" / "study.yaml"
    text = study.read_text(encoding="utf-8")
    assert DESIGN in text and "scenarios: [my-task]" in text
    text = text.replace(DESIGN, design).replace("scenarios: [my-task]", f"scenarios: {scenarios}")
    study.write_text(text, encoding="utf-8")
    return study


def without_the_model(study: Path) -> None:
    """The starter without its language model: the two demo shops alone."""
    text = study.read_text(encoding="utf-8")
    model = re.compile(r"(?ms)^  # A language model .*?^    temperature: 0\.7\n")
    assert model.search(text)
    study.write_text(model.sub("", text), encoding="utf-8")


def warnings(study: Path, capsys: pytest.CaptureFixture[str]) -> list[str]:
    assert main(["check", str(study)]) == 0  # a warning never stops the study
    out, err = capsys.readouterr()
    assert err == ""
    return [line for line in out.splitlines() if ": warning: " in line]


def line_of(study: Path, text: str) -> int:
    lines = study.read_text(encoding="utf-8").splitlines()
    [number] = [n for n, line in enumerate(lines, start=1) if line.strip() == text]
    return number


def test_within_with_one_scenario(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    study = starter(tmp_path, design="  systems: within\n")
    [warning] = warnings(study, capsys)
    assert warning.startswith(
        f"{study}:{line_of(study, 'systems: within')}: warning: design.systems: systems: within,"
        " but the study has one scenario: each participant plays one task and meets one system"
    )


def test_within_with_one_task_each(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    study = starter(
        tmp_path,
        design="  systems: within\n  tasks_per_participant: 1\n",
        scenarios="[my-task, hmd-gift]",
    )
    [warning] = warnings(study, capsys)
    assert "design.systems: systems: within, but tasks_per_participant is 1" in warning


def test_within_meeting_fewer_systems_than_there_are(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    study = starter(
        tmp_path,
        design="  systems: within\n  tasks_per_participant: 2\n",
        scenarios="[my-task, hmd-gift, my-task-2]",
    )
    text = study.read_text(encoding="utf-8")
    study.write_text(
        text.replace("systems:\n", "systems:\n  - {type: demo, id: shop-chat, variant: chat}\n", 1),
        encoding="utf-8",
    )
    task = tmp_path / "pilot" / "scenarios" / "my-task.yaml"
    task.with_name("my-task-2.yaml").write_text(
        task.read_text(encoding="utf-8").replace("id: my-task", "id: my-task-2", 1),
        encoding="utf-8",
    )
    found = warnings(study, capsys)
    assert any(
        w.startswith(f"{study}:{line_of(study, 'tasks_per_participant: 2')}: warning:")
        and "each participant plays 2 tasks of 4 systems: nobody meets every system" in w
        for w in found
    ), found


def spread(study: Study, participants: int = 36) -> int:
    """The largest gap between two cells' sessions as participants arrive one by one."""
    tasks: list[tuple[tuple[str, str], ...]] = []
    worst = 0
    for arrival in range(participants):
        drawn = assign_scenarios(study, f"p{arrival}", arrival=arrival, cells=cell_counts(tasks))
        tasks.append(drawn.tasks)
        held = cell_counts(tasks)
        counts = [held.get((sc, sy.id), 0) for sc in study.scenarios for sy in study.systems]
        worst = max(worst, max(counts) - min(counts))
    return worst


def test_the_balance_warning_says_what_the_balanced_design_does(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """IDIAL: three of four tasks each, balanced between two systems. Its cells do drift two
    sessions apart, and the tasks per participant the warning offers keep them even."""
    idial = load_study("idial").study
    assert main(["check", "idial"]) == 0
    out = capsys.readouterr().out
    [warning] = [line for line in out.splitlines() if ": warning: " in line]
    assert "design.tasks_per_participant: a balanced design cannot keep its 8 (scenario," in warning
    assert warning.endswith("tasks per participant that keep them even: 1, 2, 4")
    assert spread(idial) >= 2
    for tasks in (1, 2, 4):
        even = idial.model_copy(
            update={"design": idial.design.model_copy(update={"tasks_per_participant": tasks})}
        )
        assert spread(even) <= 1


@pytest.mark.parametrize(
    ("scenarios", "systems", "tasks", "between", "holds"),
    [
        (3, 2, 2, True, False),  # the example in assignment._balanced
        (4, 2, 2, True, True),
        (3, 1, 2, True, True),  # one ring
        (3, 2, 2, False, True),  # within: one ring of six cells (gcd 1)
        (4, 2, 3, False, False),  # within: two rings of four
        (4, 2, 4, False, True),
    ],
)
def test_balance_holds_where_blocks_tile_the_rings(
    scenarios: int, systems: int, tasks: int, between: bool, holds: bool
) -> None:
    assert balance_holds(scenarios, systems, tasks, between=between) is holds
    idial = load_study("idial").study
    shaped = idial.model_copy(
        update={
            "scenarios": tuple(f"s{i}" for i in range(scenarios)),
            "systems": tuple(
                idial.systems[0].model_copy(update={"id": f"y{i}"}) for i in range(systems)
            ),
            "design": idial.design.model_copy(
                update={
                    "tasks_per_participant": tasks,
                    "systems": "between" if between else "within",
                }
            ),
        }
    )
    assert (spread(shaped) <= 1) is holds


def graded(tmp_path: Path, shipped: str) -> Path:
    """The shipped study ``shipped`` with ``pairwise: strength: graded`` at its end."""
    study = tmp_path / f"{shipped}.yaml"
    text = (Path(__file__).parents[1] / "scenarios/library/studies" / f"{shipped}.yaml").read_text(
        encoding="utf-8"
    )
    study.write_text(text + "pairwise:\n  strength: graded\n", encoding="utf-8")
    return study


def test_graded_strength_without_an_item_that_asks_for_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The arena's votes are A, B or a tie: nothing has a strength to grade."""
    study = graded(tmp_path, "arena")
    [warning] = warnings(study, capsys)
    assert warning == (
        f"{study}:{line_of(study, 'strength: graded')}: warning: pairwise.strength:"
        " strength: graded, but no preference item of the study asks for strength"
        " (strength: true): every vote counts as a whole win; ask for it, or leave"
        " strength out"
    )


def test_graded_strength_with_a_preference_item_that_asks_for_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert warnings(graded(tmp_path, "within"), capsys) == []


def test_a_quota_is_shown_with_the_design_s_cells(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    study = starter(tmp_path, design="  systems: between\n  quota: 10\n")
    without_the_model(study)
    assert main(["check", str(study)]) == 0
    out = capsys.readouterr().out
    [design] = [line for line in out.splitlines() if line.strip().startswith("design:")]
    assert design.endswith("; quota: 10 completed in each of 2 cells (shop-v1, shop-v0)")
    assert ": warning: " not in out


def test_a_plan_the_quota_does_not_fill(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    study = starter(tmp_path, design="  systems: between\n  quota: 10\n")
    without_the_model(study)
    assert main(["check", str(study), "-n", "20"]) == 0
    assert ": warning: " not in capsys.readouterr().out
    assert main(["check", str(study), "-n", "25"]) == 0
    [warning] = [line for line in capsys.readouterr().out.splitlines() if ": warning: " in line]
    assert warning == (
        f"{study}:{line_of(study, 'quota: 10')}: warning: design.quota: -n 25 is not what the"
        " quota fills: 10 in each of 2 cells is 20 completed participants; change the quota"
        " or the plan"
    )


def test_a_quota_that_cannot_fill_the_design_evenly(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    study = starter(
        tmp_path,
        design="  systems: between\n  tasks_per_participant: 2\n  quota: 4\n",
        scenarios="[my-task, hmd-gift, idial-budget]",
    )
    without_the_model(study)
    found = [w for w in warnings(study, capsys) if "design.quota" in w]
    assert found == [
        f"{study}:{line_of(study, 'quota: 4')}: warning: design.quota: quota: 4 in each of"
        " 2 cells (8 participants) cannot fill the design evenly (6 (scenario, system) cells,"
        " 2 tasks per participant: whole multiples of 6 participants); a quota of 3 or 6 per"
        " cell does"
    ]


def test_a_quota_below_one_is_refused_at_its_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    study = starter(tmp_path, design="  systems: between\n  quota: 0\n")
    assert main(["check", str(study)]) != 0
    err = capsys.readouterr().err
    assert f"{study}:{line_of(study, 'quota: 0')}" in err and "design.quota" in err
