"""Failing systems are set aside for new participants, and taken back when they recover."""

from __future__ import annotations

from bot.engine.assignment import assign_scenarios
from bot.systems.health import SystemHealth
from scenarios.loading import load_study


def test_three_failures_in_a_row_make_a_system_unavailable_until_it_answers() -> None:
    health = SystemHealth(threshold=3)
    assert [health.failed("a") for _ in range(4)] == [False, False, True, False]
    assert health.unavailable == {"a"}
    assert health.succeeded("a") is True and health.unavailable == frozenset()
    assert health.succeeded("a") is False


def test_a_success_in_between_resets_the_count() -> None:
    health = SystemHealth(threshold=2)
    health.failed("a")
    health.succeeded("a")
    assert health.failed("a") is False and health.unavailable == frozenset()


def test_assignment_avoids_unavailable_systems_while_there_are_others() -> None:
    study = load_study("hmd").study
    drawn = {
        assign_scenarios(study, f"p{i}", frozenset({"shop-v0"})).tasks[0][1] for i in range(40)
    }
    assert drawn == {"shop-v1"}
    everyone_down = frozenset({"shop-v0", "shop-v1"})
    assert {assign_scenarios(study, f"p{i}", everyone_down).tasks[0][1] for i in range(40)} == {
        "shop-v0",
        "shop-v1",
    }


def test_assignment_is_reproducible_from_its_seed() -> None:
    study = load_study("hmd").study
    first = assign_scenarios(study, "p-42")
    assert first == assign_scenarios(study, "p-42")
    assert first.seed == f"{study.design.seed}:p-42" and first.design == "balanced/between"
