"""The inbox: which update ids are new, and where a local emulator numbers on from."""

from __future__ import annotations

from bot.store.interface import StudyStore
from bot.store.model import StepCommit
from tests.store_contract.conftest import Clock, OpenStore

DAY = 24 * 3600.0


async def test_the_highest_update_id_is_told_handled_or_not(open_store: OpenStore) -> None:
    store = await open_store(Clock())
    assert await store.highest_update_id() == 0
    await store.remember_updates([(41, "a"), (7, "b")])
    assert await store.highest_update_id() == 41
    await store.commit_step(StepCommit("s", "p", None, None, None, (), update_id=41))
    assert await store.highest_update_id() == 41  # handled ids count: they must not come again


async def handled(store: StudyStore, update_id: int, payload: str) -> set[int]:
    new = await store.remember_updates([(update_id, payload)])
    await store.commit_step(StepCommit("s", "p", None, None, None, (), update_id=update_id))
    return new


async def test_an_id_handled_within_telegrams_day_is_a_redelivery(open_store: OpenStore) -> None:
    clock = Clock()
    store = await open_store(clock)
    assert await handled(store, 5, "first") == {5}
    clock.now += DAY - 60
    assert await store.remember_updates([(5, "first")]) == set()
    assert await store.pending_updates() == []


async def test_an_id_handled_longer_ago_than_telegram_keeps_updates_is_new(
    open_store: OpenStore,
) -> None:
    """Telegram numbers on at random after a week without updates: an old id may come again."""
    clock = Clock()
    store = await open_store(clock)
    assert await handled(store, 5, "first") == {5}
    clock.now += 8 * DAY
    assert await store.remember_updates([(5, "second")]) == {5}
    assert await store.pending_updates() == [(5, "second")]
    assert await store.remember_updates([(5, "second")]) == set()  # now its redelivery


async def test_an_old_update_not_yet_handled_is_never_replaced(open_store: OpenStore) -> None:
    clock = Clock()
    store = await open_store(clock)
    await store.remember_updates([(5, "kept")])
    clock.now += 8 * DAY
    assert await store.remember_updates([(5, "other")]) == set()
    assert await store.pending_updates() == [(5, "kept")]
