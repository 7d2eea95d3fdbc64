"""An annotator's erasure (OperatorTasks.erase_annotator, and their own /withdraw through
AnnotatorWork.commit_annotator_step): their row, assignments, ratings and votes go in one
transaction (or the ratings stay under a new pseudonym where the job's consent says so),
their targets go back to the pool, the ledger names them, and an import cannot bring them
back."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

from bot.core.annotation import AnnotationJobRecord
from bot.engine.annotating.model import WithdrawAnnotator
from bot.rights.backups import erase_backups
from bot.store.erasure import ledger_digest
from bot.store.interface import StudyStore
from bot.store.model import AnnotatorErased, ImportedRating
from tests.store_contract.backends import open_backend, sqlite_url
from tests.store_contract.records import EXCHANGE, give, ready, tables
from tests.store_contract.test_votes_contract import acute_vote

COMMENT = "an annotator's own words"


async def rated(store: StudyStore, sid: str) -> None:
    """A-1 finished #1 (a scale point and a comment), half rated #2, voted on a pair; A-2
    rated #1 too."""
    await give(
        store,
        "hri",
        (f"{sid}#1", EXCHANGE, "A-1"),
        (f"{sid}#2", EXCHANGE, "A-1"),
        (f"{sid}#1", EXCHANGE, "A-2"),
    )
    await store.record_annotation("A-1", "hri", f"{sid}#1", EXCHANGE, "c", "c.i", 3)
    await store.record_annotation("A-1", "hri", f"{sid}#1", EXCHANGE, "c", "c.why", text=COMMENT)
    assert await store.finish_annotation_target("A-1", "hri", f"{sid}#1", EXCHANGE)
    await store.record_annotation("A-1", "hri", f"{sid}#2", EXCHANGE, "c", "c.i", 5)
    await store.record_annotation("A-2", "hri", f"{sid}#1", EXCHANGE, "c", "c.i", 4)
    await store.record_votes("s", [acute_vote("A-1", sid, "r-1")])


def mentions(found: dict[str, list[tuple[object, ...]]], *words: str) -> list[str]:
    return [
        table
        for table, rows in found.items()
        for row in rows
        if any(isinstance(v, str) and any(w in v for w in words) for v in row)
    ]


async def test_an_erased_annotator_leaves_nothing_but_a_line_in_the_ledger(
    store: StudyStore,
) -> None:
    sid = await ready(store)
    await rated(store, sid)

    erased = await store.erase_annotator("A-1")

    assert erased == AnnotatorErased("hri", "s", 3, 1, 2, 0, kept_unlinked=False)
    assert [a.annotator_id for a in await store.annotators()] == ["A-2"]
    assert [(r.annotator, r.value) for r in await store.annotation_ratings()] == [("A-2", "4")]
    assert await store.votes() == []
    state = await store.annotation_state("hri")
    assert state is not None
    assert [(a.target, a.annotator) for a in state.assignments] == [(f"{sid}#1", "A-2")]
    found = await tables(store)
    assert mentions(found, "A-1", "sealed-1", "hash-1", "ann-ONE", COMMENT) == []
    assert ("s", ledger_digest("A-1")) in {
        (e.study_id, e.digest) for e in await store.erasure_ledger()
    }
    assert await store.erase_annotator("A-1") is None
    assert await store.erase_annotator("A-9") is None


async def test_a_job_whose_consent_keeps_ratings_keeps_them_unlinked(store: StudyStore) -> None:
    sid = await ready(store)
    kept = json.dumps({"id": "hri", "on_withdrawal": "keep_unlinked"})
    await store.save_annotation_job(AnnotationJobRecord("hri", "s", kept, True, 3600.0))
    await rated(store, sid)

    erased = await store.erase_annotator("A-1")

    # The finished target's two ratings and the vote stay; the half-rated one goes back.
    assert erased == AnnotatorErased("hri", "s", 2, 1, 1, 0, kept_unlinked=True)
    ratings = await store.annotation_ratings()
    [new] = {r.annotator for r in ratings} - {"A-2"}
    assert new != "A-1" and new.startswith("A-")
    assert sorted((r.target, r.item_id, r.value) for r in ratings if r.annotator == new) == [
        (f"{sid}#1", "c.i", "3"),
        (f"{sid}#1", "c.why", COMMENT),
    ]
    assert [v.rater for _, v in await store.votes()] == [new]
    state = await store.annotation_state("hri")
    assert state is not None
    assert sorted((a.target, a.annotator, a.done_at is not None) for a in state.assignments) == [
        (f"{sid}#1", "A-2", False),
        (f"{sid}#1", new, True),
    ]
    [unlinked] = [a for a in await store.annotators() if a.annotator_id == new]
    assert (unlinked.code, unlinked.chat_key, unlinked.joined_at, unlinked.dropped) == (
        None,
        None,
        None,
        True,
    )
    assert mentions(await tables(store), "A-1", "sealed-1", "hash-1", "ann-ONE") == []
    assert await store.annotator_for_chat("hash-1") is None


async def test_an_annotators_withdrawal_is_committed_with_the_update_it_consumed(
    store: StudyStore,
) -> None:
    sid = await ready(store)
    await rated(store, sid)
    await store.remember_updates([(41, "sealed tap")])

    [answer] = await store.commit_annotator_step([WithdrawAnnotator("A-1", "hri")], 41)

    assert isinstance(answer, AnnotatorErased) and answer.ratings == 3
    assert await store.pending_updates() == []
    assert "A-1" not in {a.annotator_id for a in await store.annotators()}


async def test_an_import_by_an_erased_annotator_is_refused(store: StudyStore) -> None:
    sid = await ready(store)
    await rated(store, sid)
    await store.erase_annotator("A-1")
    [target] = [t for t in await store.annotation_targets("hri") if t.target == f"{sid}#1"]
    record = (await store.annotation_jobs())[0]
    rows = [
        ImportedRating(2, target, "R1", "c", "c.i", value=2),
        ImportedRating(3, target, "A-1", "c", "c.i", value=3),
    ]
    refused = await store.import_annotations(record, rows)
    assert (refused.written, refused.erased) == (False, (3,))
    assert [r.annotator for r in await store.annotation_ratings()] == ["A-2"]
    votes = await store.import_votes("s", [(2, acute_vote("A-1", sid, "r-2"))])
    assert (votes.votes, votes.erased) == (0, (2,))
    assert await store.votes() == []


async def test_the_ledger_unlinks_their_kept_ratings_in_a_backup_too(
    store: StudyStore, tmp_path: Path
) -> None:
    sid = await ready(store)
    kept = json.dumps({"id": "hri", "on_withdrawal": "keep_unlinked"})
    await store.save_annotation_job(AnnotationJobRecord("hri", "s", kept, True, 3600.0))
    await rated(store, sid)
    folder = tmp_path / "backups"
    folder.mkdir()
    await store.backup(folder / "monday.sqlite")
    await store.erase_annotator("A-1")

    ledger = await store.erasure_ledger()
    lines = await asyncio.to_thread(erase_backups, folder, ledger, None, None)

    assert lines == [f"{folder / 'monday.sqlite'}: erased 1 withdrawn participant"]
    copy = await open_backend(sqlite_url(folder / "monday.sqlite"))
    try:
        ratings = await copy.annotation_ratings()
        found = await tables(copy)
    finally:
        await copy.close()
    assert mentions(found, "A-1", "sealed-1", "hash-1", "ann-ONE") == []
    [new] = {r.annotator for r in ratings} - {"A-2"}
    assert sorted(r.value for r in ratings if r.annotator == new) == ["3", COMMENT]
