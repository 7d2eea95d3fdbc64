"""The register of files written with participants' data: each path once, with its kind and
the last time it was written; what an erasure reads to name the files beyond its reach."""

from __future__ import annotations

from bot.core.vocabulary import WrittenKind
from bot.store.model import WrittenFile
from tests.store_contract.conftest import Clock, OpenStore
from tests.store_contract.records import session, step

EXPORT, REPORT = WrittenKind.EXPORT, WrittenKind.REPORT


async def test_each_file_is_kept_once_with_its_kind_and_latest_time(
    open_store: OpenStore,
) -> None:
    clock = Clock(100.0)
    store = await open_store(clock)
    assert await store.registered_files() == []
    await store.register_files(EXPORT, ["/lab/export/a.csv", "/lab/export/b.csv"])
    clock.now = 200.0
    await store.register_files(REPORT, ["/lab/report.md"])
    await store.register_files(EXPORT, ["/lab/export/a.csv"])  # written again
    await store.register_files(EXPORT, [])
    assert await store.registered_files() == [
        WrittenFile("/lab/export/b.csv", EXPORT, 100.0),
        WrittenFile("/lab/export/a.csv", EXPORT, 200.0),
        WrittenFile("/lab/report.md", REPORT, 200.0),
    ]


async def test_an_erasure_leaves_the_register_as_it_is(open_store: OpenStore) -> None:
    store = await open_store(Clock(100.0))
    await store.commit_step(step("p", *session("p")))
    await store.register_files(WrittenKind.PAYMENTS, ["/lab/payments.csv"])
    await store.erase_participant("p")
    assert await store.registered_files() == [
        WrittenFile("/lab/payments.csv", WrittenKind.PAYMENTS, 100.0)
    ]
