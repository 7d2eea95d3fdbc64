"""Imports: answers and ratings from files, all or nothing, never resumed as participants."""

from __future__ import annotations

from bot.core.annotation import AnnotationTarget
from bot.core.vocabulary import Origin
from bot.store.interface import StudyStore
from bot.store.model import ImportedRating
from tests.store_contract.conftest import Clock, OpenStore
from tests.store_contract.records import EXCHANGE, answer, job, rows_into


async def test_imported_answers_are_all_or_nothing_and_never_resumed(store: StudyStore) -> None:
    answers = [answer(2, "P017", "q.a", value=4, system_id="sys"), answer(3, "P018", "q.b")]
    dry = await store.import_answers("s", answers, {"file": "paper.csv"}, dry_run=True)
    assert (dry.answers, dry.new_participants) == (2, 2)
    assert (await store.import_context("s")).participants == {}  # a dry run writes nothing
    done = await store.import_answers("s", answers, {"file": "paper.csv"})
    assert (done.written, done.answers, done.participants, done.new_participants) == (
        True, 2, 2, 2,
    )  # fmt: skip
    again = await store.import_answers("s", answers[1:], {"file": "paper.csv"})
    assert (again.written, again.duplicates) == (False, (3,))
    assert (await store.import_context("s")).participants == {"P017": "s", "P018": "s"}
    assert await store.load_participants("s") == []  # answered on paper: nothing to resume
    assert await store.live_participants() == []

    chunks: dict[str, list[tuple[object, ...]]] = {}
    info = await store.read_snapshot(rows_into(chunks))
    assert info.has_tables
    imported = [(r[1], r[5], r[15], r[16], r[17]) for r in chunks["responses"]]
    assert imported == [
        ("P017", "q.a", "post_study", "import", "sys"),
        ("P018", "q.b", "post_study", "import", None),
    ]
    [event] = chunks["events"]
    assert event[4] == "responses_imported"


async def test_imported_ratings_are_all_or_nothing(open_store: OpenStore) -> None:
    store = await open_store(Clock(50.0))
    record = job("imported")
    outside = AnnotationTarget("imported", "clip-7", EXCHANGE, 0)
    rows = [
        ImportedRating(2, outside, "R1", "cues", "cues.exchange", value=3),
        ImportedRating(3, outside, "R2", "cues", "cues.exchange", value=4),
    ]
    dry = await store.import_annotations(record, rows, dry_run=True)
    assert (dry.written, dry.ratings, dry.new_annotators) == (False, 2, 2)
    assert await store.annotation_ratings() == [] and await store.annotation_jobs() == []
    done = await store.import_annotations(record, rows)
    assert (done.written, done.ratings, done.targets, done.annotators) == (True, 2, 1, 2)
    ratings = await store.annotation_ratings()
    assert [(r.annotator, r.value, r.origin, r.session_id) for r in ratings] == [
        ("R1", "3", "import", None),
        ("R2", "4", "import", None),
    ]
    assert {a.origin for a in await store.annotators("imported")} == {Origin.IMPORT}
    again = await store.import_annotations(
        record, [*rows, ImportedRating(4, outside, "R3", "cues", "cues.exchange", value=2)]
    )
    assert (again.written, again.duplicates) == (False, (2, 3))
    assert len(await store.annotation_ratings()) == 2
    assert [a.annotator_id for a in await store.annotators("imported")] == ["R1", "R2"]


async def test_a_model_judges_ratings_are_its_own_and_never_planned(
    open_store: OpenStore,
) -> None:
    store = await open_store(Clock(50.0))
    record = job("imported")
    outside = AnnotationTarget("imported", "clip-7", EXCHANGE, 0)
    other = AnnotationTarget("imported", "clip-8", EXCHANGE, 1)
    people = [ImportedRating(2, outside, "R1", "cues", "cues.exchange", value=3)]
    assert (await store.import_annotations(record, people)).written
    judged = [ImportedRating(0, other, "model:j", "cues", "cues.exchange", value=4)]
    done = await store.import_annotations(record, judged, origin=Origin.MODEL)
    assert done.written
    ratings = await store.annotation_ratings()
    assert [(r.annotator, r.origin) for r in ratings] == [("R1", "import"), ("model:j", "model")]
    tasks = await store.judge_tasks("imported", "model:j")
    assert [(t.target.target, done) for t, done in tasks] == [
        ("clip-7", frozenset()),
        ("clip-8", frozenset({"cues.exchange"})),
    ]
    state = await store.annotation_state("imported")
    assert state is not None and [a.annotator_id for a in state.annotators] == ["R1"]


async def test_imported_ratings_count_in_progress_and_the_planning_state(
    store: StudyStore,
) -> None:
    record = job("imported")
    clips = [AnnotationTarget("imported", f"clip-{n}", EXCHANGE, n) for n in (1, 2)]
    rows = [
        ImportedRating(2, clips[0], "R1", "cues", "cues.exchange", value=3),
        ImportedRating(3, clips[0], "R1", "cues", "cues.other", value=3),  # one target still
        ImportedRating(4, clips[1], "R1", "cues", "cues.exchange", value=4),
        ImportedRating(5, clips[1], "R2", "cues", "cues.exchange", value=2),
    ]
    assert (await store.import_annotations(record, rows)).written
    progress = await store.annotation_progress()
    assert [(p.annotator, p.assigned, p.imported) for p in progress] == [("R1", 0, 2), ("R2", 0, 1)]
    state = await store.annotation_state("imported")
    assert state is not None
    assert state.imported == (
        ("clip-1", EXCHANGE, "R1"),
        ("clip-2", EXCHANGE, "R1"),
        ("clip-2", EXCHANGE, "R2"),
    )
