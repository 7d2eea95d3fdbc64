"""AnnotatorRecruitment: a recruiting job's link makes a new annotator with a payment record
(the platform id sealed), binds the id to the chat's annotator who has none, refuses another
id for a bound annotator and one id from a second chat; the record's status follows their
part (a completed one stays so, a drop-out times out), the targets they rated are counted,
and erasing the annotator leaves the record unlinked and withdrawn."""

from __future__ import annotations

from bot.core.vocabulary import AnnotatorClaim, PaymentStatus
from bot.store.interface import StudyStore
from bot.store.model import PlatformArrival
from tests.store_contract.conftest import Clock, OpenStore
from tests.store_contract.records import EXCHANGE, give, ready


def arrival(chat: str, tag: str, job: str = "hri") -> PlatformArrival:
    return PlatformArrival(job, "s", "prolific", chat, f"sealed-{chat}", f"key-{tag}", tag)


async def test_the_link_makes_an_annotator_and_each_id_is_one_annotator_of_the_job(
    open_store: OpenStore,
) -> None:
    clock = Clock(100.0)
    store = await open_store(clock)
    await ready(store)
    version = (await store.annotation_state("hri")).version  # type: ignore[union-attr]
    claim, made = await store.join_from_platform(arrival("hash-9", "tag-x"), ["A-1", "A-N"])
    assert claim is AnnotatorClaim.JOINED and made is not None
    assert made.annotator_id == "A-N"  # A-1 is taken: the next one drawn
    assert (made.code, made.chat_key, made.joined_at) == (None, "sealed-hash-9", 100.0)
    state = await store.annotation_state("hri")
    assert state is not None and state.version > version  # planned again with them
    found = await store.annotator_for_chat("hash-9")
    assert found is not None and found.annotator_id == "A-N"
    [record] = await store.payments()
    assert (record.job, record.platform_key, record.status) == ("hri", "key-tag-x", "started")
    assert record.arrived_at == 100.0

    clock.now = 160.0
    again, same = await store.join_from_platform(arrival("hash-9", "tag-x"), ["A-Z"])
    assert again is AnnotatorClaim.RETURNING and same is not None and same.annotator_id == "A-N"
    other = await store.join_from_platform(arrival("hash-9", "tag-y"), ["A-Z"])
    assert other == (AnnotatorClaim.OTHER_ID, None)
    twin = await store.join_from_platform(arrival("hash-8", "tag-x"), ["A-Z"])
    assert twin == (AnnotatorClaim.TAKEN, None)
    assert [r.platform_key for r in await store.payments()] == ["key-tag-x"]
    assert [a.annotator_id for a in await store.annotators("hri")] == ["A-1", "A-2", "A-N"]


async def test_an_annotator_invited_with_a_code_is_bound_when_the_link_comes(
    open_store: OpenStore,
) -> None:
    clock = Clock(1000.0)
    store = await open_store(clock)
    await ready(store)  # A-1 joined with its code from hash-1 at 1000
    clock.now = 1300.0
    claim, bound = await store.join_from_platform(arrival("hash-1", "tag-a"), ["A-Z"])
    assert claim is AnnotatorClaim.RETURNING and bound is not None
    assert bound.annotator_id == "A-1"
    [record] = await store.payments()
    assert (record.arrived_at, record.last_at, record.job) == (1000.0, 1300.0, "hri")
    # One already bound elsewhere: the id cannot be bound to a second annotator.
    await store.claim_annotator("ann-TWO", "hash-2", "sealed-2")
    assert await store.join_from_platform(arrival("hash-2", "tag-a"), ["A-Z"]) == (
        AnnotatorClaim.TAKEN,
        None,
    )
    assert await store.drop_annotator("A-2")
    assert await store.join_from_platform(arrival("hash-2", "tag-b"), ["A-Z"]) == (
        AnnotatorClaim.DROPPED,
        None,
    )


async def test_the_record_follows_the_part_and_counts_what_was_rated(
    open_store: OpenStore,
) -> None:
    clock = Clock(100.0)
    store = await open_store(clock)
    sid = await ready(store)
    _, one = await store.join_from_platform(arrival("hash-7", "tag-1"), ["A-7"])
    _, two = await store.join_from_platform(arrival("hash-8", "tag-2"), ["A-8"])
    assert one is not None and two is not None
    await give(store, "hri", (f"{sid}#1", EXCHANGE, "A-7"), (f"{sid}#2", EXCHANGE, "A-7"))
    await give(store, "hri", (f"{sid}#3", EXCHANGE, "A-8"))
    await store.record_annotation("A-7", "hri", f"{sid}#1", EXCHANGE, "cues", "cues.x", 4)
    assert await store.finish_annotation_target("A-7", "hri", f"{sid}#1", EXCHANGE)
    rows = {r.platform_key: r.row for r in await store.payments()}
    assert await store.targets_rated("hri") == {rows["key-tag-1"]: 1, rows["key-tag-2"]: 0}

    clock.now = 250.0
    assert await store.set_annotator_payment("A-7", PaymentStatus.STARTED) is PaymentStatus.STARTED
    assert await store.set_annotator_payment("A-7", PaymentStatus.COMPLETED) is (
        PaymentStatus.COMPLETED
    )
    clock.now = 400.0
    assert await store.set_annotator_payment("A-7", PaymentStatus.SCREENED_OUT) is (
        PaymentStatus.COMPLETED  # a completed part stays so
    )
    assert await store.set_annotator_payment("A-1", PaymentStatus.COMPLETED) is None
    assert await store.drop_annotator("A-8")
    by_key = {r.platform_key: r for r in await store.payments()}
    assert (by_key["key-tag-1"].status, by_key["key-tag-1"].seconds) == ("completed", 150.0)
    assert by_key["key-tag-2"].status is PaymentStatus.TIMED_OUT


async def test_erasing_the_annotator_leaves_the_record_unlinked_and_withdrawn(
    store: StudyStore,
) -> None:
    await ready(store)
    _, made = await store.join_from_platform(arrival("hash-9", "tag-x"), ["A-9"])
    assert made is not None
    assert await store.erase_annotator("A-9") is not None
    [record] = await store.payments()
    assert (record.job, record.platform_key, record.status) == ("hri", "key-tag-x", "withdrawn")
    assert await store.targets_rated("hri") == {}
    # The id is nobody's now: the same person coming again is a new annotator.
    claim, again = await store.join_from_platform(arrival("hash-9", "tag-x"), ["A-5"])
    assert claim is AnnotatorClaim.JOINED and again is not None
    assert len(await store.payments()) == 2
