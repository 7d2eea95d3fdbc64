"""Simulated participants, as every store backend keeps them: marked once a simulation
played them, and read back marked in the snapshot analytics gets."""

from __future__ import annotations

from bot.store.interface import StudyStore
from tests.store_contract.test_contract import step


async def _simulated(store: StudyStore) -> dict[str, object]:
    found: dict[str, object] = {}

    def sink(table: str, rows: object) -> None:
        if table == "participants":
            for row in rows:  # type: ignore[attr-defined]
                found[row[0]] = row[-1]

    await store.read_snapshot(sink)
    return found


async def test_participants_are_people_until_a_simulation_marks_them(store: StudyStore) -> None:
    await store.commit_step(step("p1"))
    await store.commit_step(step("p2"))
    assert await _simulated(store) == {"p1": 0, "p2": 0}
    assert await store.mark_simulated(["p2", "nobody"]) == 1
    assert await _simulated(store) == {"p1": 0, "p2": 1}
