"""The experimenters' accounts of the web page: one per name with its role, the failed
sign-ins that lock an account for a while, and one-time links that sign in once, before
they expire."""

from __future__ import annotations

import asyncio

from bot.core.vocabulary import ExperimenterRole
from bot.store.model import ExperimenterAccount, SignInLink
from tests.store_contract.conftest import Clock, OpenStore

VIEWER, EXPERIMENTER = ExperimenterRole.VIEWER, ExperimenterRole.EXPERIMENTER


async def test_an_account_is_kept_once_per_name_with_its_latest_role_and_hash(
    open_store: OpenStore,
) -> None:
    store = await open_store(Clock(100.0))
    assert await store.experimenters() == [] and await store.experimenter("ana") is None
    assert await store.save_experimenter("ana", VIEWER, "$argon2id$one")
    assert await store.save_experimenter("bo", EXPERIMENTER, "$argon2id$two")
    assert not await store.save_experimenter("ana", EXPERIMENTER, "$argon2id$three")
    assert await store.experimenters() == [
        ExperimenterAccount("ana", EXPERIMENTER, "$argon2id$three", 0, None, 100.0),
        ExperimenterAccount("bo", EXPERIMENTER, "$argon2id$two", 0, None, 100.0),
    ]
    assert await store.remove_experimenter("bo")
    assert not await store.remove_experimenter("bo")
    assert [a.name for a in await store.experimenters()] == ["ana"]


async def test_failed_sign_ins_lock_an_account_and_a_good_one_starts_the_count_again(
    open_store: OpenStore,
) -> None:
    clock = Clock(100.0)
    store = await open_store(clock)
    await store.save_experimenter("ana", VIEWER, "h")
    assert await store.failed_sign_in("nobody", 3, 60.0) is None
    assert await store.failed_sign_in("ana", 3, 60.0) is None
    await store.good_sign_in("ana")
    assert [await store.failed_sign_in("ana", 3, 60.0) for _ in range(3)] == [None, None, 160.0]
    locked = await store.experimenter("ana")
    assert locked is not None and locked.locked_until == 160.0 and locked.failures == 0
    await store.save_experimenter("ana", VIEWER, "new")  # a new password ends the lock
    unlocked = await store.experimenter("ana")
    assert unlocked is not None and unlocked.locked_until is None


async def test_failed_sign_ins_at_once_are_each_counted(open_store: OpenStore) -> None:
    store = await open_store(Clock(100.0))
    await store.save_experimenter("ana", VIEWER, "h")
    ends = await asyncio.gather(*(store.failed_sign_in("ana", 5, 60.0) for _ in range(10)))
    assert sorted(ends, key=lambda e: e is None) == [160.0, 160.0] + [None] * 8


async def test_a_link_signs_in_once_and_never_after_it_expired(open_store: OpenStore) -> None:
    clock = Clock(100.0)
    store = await open_store(clock)
    await store.add_sign_in_link("first", None, EXPERIMENTER, 200.0)
    await store.add_sign_in_link("ana's", "ana", VIEWER, 150.0)
    assert await store.use_sign_in_link("unknown") is None
    assert await store.use_sign_in_link("first") == SignInLink(None, EXPERIMENTER, 200.0)
    assert await store.use_sign_in_link("first") is None  # once
    clock.now = 150.0
    assert await store.use_sign_in_link("ana's") is None  # expired
