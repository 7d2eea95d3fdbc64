"""``ozlab import annotations``: ratings made elsewhere join the study database like the
annotators' own, checked first (every problem with its line, nothing written), keyed by
job, target and level with the session's system and scenario kept."""

from __future__ import annotations

from pathlib import Path

import pytest

from analytics.io.importing_annotations import import_annotations
from bot.cli import analytics_main as main
from bot.store.model import AnnotationRating
from bot.store.sqlite import open_existing
from tests.annotation_support import read, stored_study
from tests.test_store import old_database

ONE = "p0123456789abcde-1"  # a session with the companion, 3 exchanges
TWO = "pfedcba987654321-1"  # a session with another system, 2 exchanges


@pytest.fixture
def db(tmp_path: Path) -> Path:
    sessions = [(ONE, "companion", 3), (TWO, "other", 2)]
    return stored_study(tmp_path / "study.sqlite", "hri-cues", "hri-cues-chat", sessions)


def ratings(db: Path) -> list[AnnotationRating]:
    return read(db, lambda store: store.annotation_ratings())


def csv_file(tmp_path: Path, text: str, name: str = "ratings.csv") -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def test_ratings_join_their_job_with_system_and_scenario(db: Path, tmp_path: Path) -> None:
    exchanges = csv_file(
        tmp_path,
        "target,annotator,item,value\n"
        f"{ONE}#1,A1,exchange,4\n"  # the item without its instrument's prefix
        f"{ONE}#2,A1,hri-cues.exchange,3\n"  # a second target of the same annotator
        f"{TWO}#1,A1,exchange,2\n"  # turn 1 of another system's session: its own target
        f"{ONE}#1,A2,exchange,5\n",
    )
    result = import_annotations(exchanges, db, instrument="hri-cues", job="hri-cues")
    assert result.problems == ()
    assert (result.ratings, result.targets, result.annotators) == (4, 3, 2)
    overall = csv_file(
        tmp_path, f"target,annotator,item,value\n{ONE},A1,overall,4\n", name="overall.csv"
    )
    assert import_annotations(overall, db, instrument="hri-cues-overall", job="hri-cues").ratings
    stored = ratings(db)
    assert {(r.target, r.level, r.system, r.scenario, r.turn) for r in stored} == {
        (f"{ONE}#1", "exchange", "companion", "hri-cues-chat", 1),
        (f"{ONE}#2", "exchange", "companion", "hri-cues-chat", 2),
        (f"{TWO}#1", "exchange", "other", "hri-cues-chat", 1),
        (ONE, "session", "companion", "hri-cues-chat", None),
    }
    assert {(r.job, r.origin, r.round) for r in stored} == {("hri-cues", "import", "first")}
    assert sorted(r.value for r in stored if r.item_id == "hri-cues.exchange") == [
        "2",
        "3",
        "4",
        "5",
    ]


def test_material_from_outside_the_study_is_a_target_too(db: Path, tmp_path: Path) -> None:
    file = csv_file(
        tmp_path,
        "target,annotator,item,value,round\nclip-7,R1,exchange,3,first\nclip-7,R2,exchange,1,\n"
        "clip-7,R3,exchange,2,adjudication\n",
    )
    result = import_annotations(file, db, instrument="hri-cues")
    assert (result.job, result.ratings, result.targets, result.new_annotators) == (
        "imported",
        3,
        1,
        3,
    )
    stored = ratings(db)
    assert {(r.target, r.session_id, r.system) for r in stored} == {("clip-7", None, None)}
    assert [r.round for r in stored] == ["adjudication", "first", "first"]


def test_ozlab_s_own_annotator_pseudonyms_are_taken_even_without_a_digit(
    db: Path, tmp_path: Path
) -> None:
    """An annotator's pseudonym as ozlab makes it (``A-`` and four of a 32-sign alphabet)
    has no digit about one time in three: an export's ratings must import again."""
    file = csv_file(
        tmp_path,
        f"target,annotator,item,value\n{ONE}#1,A-FSGZ,exchange,3\n{ONE}#2,A-2K7Q,exchange,4\n",
    )
    result = import_annotations(file, db, instrument="hri-cues", job="hri-cues")
    assert result.problems == ()
    assert {r.annotator for r in ratings(db)} == {"A-FSGZ", "A-2K7Q"}


@pytest.mark.parametrize(
    ("rows", "line", "words"),
    [
        (f"{ONE}#1,A1,exchange,7", 2, "answer '7' is not on the scale (1, 2, 3, 4, 5)"),
        (f"{ONE}#1,Anna,exchange,3", 2, "does not look like a pseudonym"),
        (f"{ONE}#9,A1,exchange,3", 2, f"session '{ONE}' has no exchange 9 (1, 2, 3)"),
        ("p0000000000000aa-1#1,A1,exchange,3", 2, "no session 'p0000000000000aa-1'"),
        ("p0000000000000aa-1,A1,exchange,3", 2, "looks like a session id"),
        (f"{ONE}#1,Anna Smith,exchange,3", 2, "does not look like a pseudonym"),
        (f"{ONE}#1,A1,nope,3", 2, "has no item 'nope'"),
        (f"{ONE}#1,A1,exchange,3\n{ONE}#1,A1,exchange,4", 3, "already on line 3"),
    ],
)
def test_a_bad_row_is_told_with_its_line_and_nothing_is_written(
    db: Path, tmp_path: Path, rows: str, line: int, words: str
) -> None:
    good = f"{ONE}#2,A2,exchange,3\n"
    file = csv_file(tmp_path, "target,annotator,item,value\n" + good + rows + "\n")
    result = import_annotations(file, db, instrument="hri-cues", job="hri-cues")
    [problem] = result.problems
    assert (problem.line, words in problem.message) == (line + 1, True), problem
    assert ratings(db) == []


@pytest.mark.parametrize(
    ("header", "words"),
    [
        ("target,rater,item,value", "missing column(s): annotator"),
        ("target,annotator,item,value,colour", "unknown column(s): colour"),
        ("target,annotator,item", "missing column(s): value or label"),
    ],
)
def test_a_file_with_wrong_columns_is_refused(
    db: Path, tmp_path: Path, header: str, words: str
) -> None:
    file = csv_file(tmp_path, f"{header}\n{ONE}#1,A1,exchange,3\n")
    [problem] = import_annotations(file, db, instrument="hri-cues").problems
    assert problem.line == 1 and words in problem.message
    assert ratings(db) == []


def test_the_job_decides_the_level_and_refuses_other_instruments(db: Path, tmp_path: Path) -> None:
    file = csv_file(tmp_path, f"target,annotator,item,value\n{ONE}#1,A1,overall,3\n")
    [problem] = import_annotations(file, db, instrument="hri-cues-overall", job="hri-cues").problems
    assert "is not a whole session" in problem.message
    other = import_annotations(file, db, instrument="xrec-exchange", job="hri-cues")
    assert "does not rate with 'xrec-exchange'" in other.problems[0].message


def test_the_command_line_imports_once_and_refuses_it_again(
    db: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    file = csv_file(tmp_path, f"target,annotator,item,value\n{ONE}#1,A1,exchange,3\n")
    args = ["import", "annotations", str(file), "--db", str(db), "--instrument", "hri-cues"]
    assert main([*args, "--job", "hri-cues", "--dry-run"]) == 0
    assert "would be imported" in capsys.readouterr().out and ratings(db) == []
    assert main([*args, "--job", "hri-cues"]) == 0
    assert "1 rating of 1 annotator on 1 target imported" in capsys.readouterr().out
    assert main([*args, "--job", "hri-cues"]) == 3
    assert "already in the database" in capsys.readouterr().err
    assert len(ratings(db)) == 1
    path = str(Path(__file__).parents[1] / "questionnaires" / "library" / "hri-cues.yaml")
    file2 = csv_file(tmp_path, f"target,annotator,item,value\n{ONE}#2,A1,exchange,3\n", "b.csv")
    assert main(["import", "annotations", str(file2), "--db", str(db), "--instrument", path]) == 0


async def test_a_database_from_before_annotations_has_no_ratings(tmp_path: Path) -> None:
    """Analytics opens older files read-only, as they are: no annotations table, no ratings."""
    path = tmp_path / "old.sqlite"
    old_database(path, 4)
    store = await open_existing(path, read_only=True)
    try:
        assert await store.annotation_ratings() == []
    finally:
        await store.close()
