"""``analytics report`` end to end: on a database the real bot wrote through the demo (the
emulator, the bot and simulated participants), on synthetic studies, on empty and partial
databases; every format; --exclude-flagged; --study; stable JSON keys."""

from __future__ import annotations

import asyncio
import contextlib
import copy
import io
import json
import re
import shutil
from collections.abc import Awaitable, Callable
from pathlib import Path

import pytest

from analytics.data.synthetic import create_study_database, synthetic_bundle, write_synthetic_study
from analytics.io.progress import steps
from bot.cli import analytics_main as main
from bot.core.errors import StoreError, StudyDataError
from bot.pilot.demo import play_study
from bot.store.blocking import run_blocking
from bot.store.definition import definition_json
from bot.store.model import SNAPSHOT_COLUMNS, BulkRows
from bot.store.sqlite import SqliteStore, open_store
from scenarios.loading import load_study
from tests import store_reads

pytestmark = pytest.mark.slow  # whole commands, reports or renderings: make test, not make check

TABLE_SECTIONS = {
    "participation": ("by_system", "events"),
    "completion": ("by_system", "by_scenario", "end_reasons", "end_reasons_by_scenario", "sources"),
    "questionnaires": (
        "items", "items_by_scenario", "distribution", "constructs", "reliability", "idial",
        "by_turn", "by_turn_constructs", "agreement", "codebook",
    ),
}  # fmt: skip


def writing(db: Path, write: Callable[[SqliteStore], Awaitable[object]]) -> None:
    """``write`` through the store the bot runs on (a pilot's rows, a second definition)."""

    async def work() -> None:
        async with await open_store(db) as store:
            await write(store)

    run_blocking(work)


@pytest.fixture(scope="module")
def demo_db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Eight simulated participants through the real bot on the HMD study."""
    db = tmp_path_factory.mktemp("demo") / "demo.sqlite"
    asyncio.run(play_study(load_study("hmd"), db, participants=8))
    return db


@pytest.fixture(scope="module")
def synthetic_db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    db = tmp_path_factory.mktemp("synthetic") / "synthetic.sqlite"
    write_synthetic_study(db, sessions=160, responses_per_session=40, seed=3, systems=3)
    return db


@pytest.fixture(scope="module")
def synthetic_made(synthetic_db: Path) -> dict:
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert main(["report", "--db", str(synthetic_db), "--format", "json"]) == 0
    return json.loads(out.getvalue(), parse_constant=_no_nan)


@pytest.fixture
def synthetic_json(synthetic_made: dict) -> dict:
    """The synthetic study's JSON report, made once for the tests that only read it."""
    return copy.deepcopy(synthetic_made)


def run(capsys: pytest.CaptureFixture[str], *args: str | Path) -> tuple[int, str, str]:
    code = main(["report", *map(str, args)])
    out, err = capsys.readouterr()
    return code, out, err


def report_json(capsys: pytest.CaptureFixture[str], db: Path, *extra: str) -> dict:
    code, out, _ = run(capsys, "--db", db, "--format", "json", *extra)
    assert code == 0
    return json.loads(out, parse_constant=_no_nan)


def _no_nan(name: str) -> None:
    raise AssertionError(f"{name} in JSON")


def shape(value: object) -> object:
    """The keys of a JSON document, recursively, without the values (nor table rows)."""
    if isinstance(value, dict):
        return {k: shape(v) for k, v in value.items()}
    return type(value).__name__ if value is not None else "null"


def test_terminal_report_on_a_database_the_bot_wrote(capsys, demo_db: Path, monkeypatch) -> None:
    monkeypatch.setenv("COLUMNS", "250")  # headers whole on one line, whatever runs the tests
    code, out, err = run(capsys, "--db", demo_db)
    assert code == 0
    for words in ("Participation", "Task completion", "Wizard involvement", "Questionnaires",
                  "Systems compared", "Comments", "Data quality", "hmd.understanding",
                  "Mann–Whitney U", "Succeeded", "Where task success came from", "Done correctly",
                  "System reliability", "Provenance"):  # fmt: skip
        assert words in out, words
    assert "shop-v0" in out and "shop-v1" in out
    # one system has a single participant in 8: the comparison says so, with no p-value
    assert "too few participants" in out or "p = " in out
    assert err == ""  # no progress bar without a terminal


def test_every_format_on_a_synthetic_study(
    capsys, synthetic_db: Path, synthetic_json: dict, tmp_path: Path
) -> None:
    files = [tmp_path / f"report.{suffix}" for suffix in ("md", "html", "txt")]
    code, _, err = run(capsys, "--db", synthetic_db, *(a for f in files for a in ("--out", f)))
    assert code == 0 and err.count("Report written") == 3
    md, page, text = (f.read_text(encoding="utf-8") for f in files)
    assert "## Task completion" in md and "| System |" in md and "average " in md
    assert re.search(r"H = \d+\.\d, p [<=] [.\d]+ \(Holm across 5 measures: [<.\d ]+\), ε² = ", md)
    assert "rank-biserial r = " in md and "Cronbach" in md

    assert page.startswith("<!DOCTYPE html>") and page.count("data:image/svg+xml;base64,") >= 4
    assert "<script" not in page and "<link" not in page and "http://" not in page
    assert not re.search(r"src=\"(?!data:)", page)  # nothing loaded from elsewhere

    assert "\x1b[" not in text and "IDIAL summary" in text

    data = synthetic_json
    assert data["format"] == "ozlab-report" and data["version"] == 1
    assert data["study"]["systems"] == ["system-a", "system-b", "system-c"]
    idial = data["questionnaires"]["idial"]
    assert {row["summary"].endswith("/4") for row in idial} == {True}
    items = data["questionnaires"]["items"]
    assert items[0]["distribution"][0].keys() == {"answer", "count"}
    tests = data["comparisons"]["table"]
    assert {t["test"] for t in tests} == {"Kruskal–Wallis H", "Mann–Whitney U"}
    assert all(isinstance(t["n_per_group"], dict) for t in tests)
    completion = data["completion"]["by_system"]
    assert all(r["ci_low"] <= r["success_rate"] <= r["ci_high"] for r in completion)


def test_several_outs_are_each_written_as_alone_from_one_computation(
    capsys, demo_db: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``--out`` repeated writes each file in its suffix's format, byte for byte what the
    format alone gives; ``--format`` with several, or one file twice, is refused before
    anything is read."""
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "1760000000")
    together = [tmp_path / f"together.{suffix}" for suffix in ("json", "md", "txt")]
    code, _, err = run(capsys, "--db", demo_db, *(a for f in together for a in ("--out", f)))
    assert code == 0 and [line.split()[-1] for line in err.splitlines()] == list(map(str, together))
    for file in together:
        alone = tmp_path / f"alone{file.suffix}"
        assert run(capsys, "--db", demo_db, "--out", alone)[0] == 0
        assert file.read_bytes() == alone.read_bytes(), file.suffix
    md, txt = tmp_path / "x.md", tmp_path / "x.txt"
    code, out, err = run(capsys, "--db", demo_db, "--out", md, "--out", txt, "--format", "md")
    assert (code, out) == (3, "") and "--format goes with one --out" in err
    code, out, err = run(capsys, "--db", demo_db, "--out", md, "--out", md)
    assert (code, out) == (3, "") and f"--out {md} is given twice" in err
    assert not md.exists() and not txt.exists()


def test_json_keys_are_stable_across_databases(capsys, demo_db, synthetic_json, tmp_path) -> None:
    empty = tmp_path / "empty.sqlite"
    empty.touch()  # a file, not yet a database
    documents = [report_json(capsys, demo_db), synthetic_json, report_json(capsys, empty)]
    shapes = [shape({k: v for k, v in d.items() if k != "notes"}) for d in documents]
    top = {k: (v if not isinstance(v, dict) else set(v)) for k, v in shapes[0].items()}
    for other in shapes[1:]:
        assert {k: (v if not isinstance(v, dict) else set(v)) for k, v in other.items()} == top
    # every row of a table has the same keys, in every database
    for section, tables in TABLE_SECTIONS.items():
        for name in tables:
            keys = {tuple(row) for d in documents for row in d[section][name]}
            assert len(keys) <= 1, (section, name, keys)


def test_exclude_flagged_says_how_many_and_why(
    capsys, synthetic_db: Path, synthetic_json: dict
) -> None:
    before = synthetic_json
    after = report_json(capsys, synthetic_db, "--exclude-flagged")
    exclusion = after["quality"]["exclusion"]
    assert before["quality"]["exclusion"] is None
    assert exclusion["excluded"] == len(before["quality"]["participants"]) > 0
    assert sum(r["participants"] for r in exclusion["by_flag"]) >= exclusion["excluded"]
    assert any("were excluded" in note for note in after["notes"])
    total = after["participation"]["overall"]["participants"]
    assert total == before["participation"]["overall"]["participants"] - exclusion["excluded"]
    code, out, _ = run(capsys, "--db", synthetic_db, "--exclude-flagged")
    assert code == 0 and "Excluded: " in out and "computed without them" in out


def test_empty_and_partial_databases_say_what_is_missing(capsys, tmp_path: Path) -> None:
    empty = tmp_path / "empty.sqlite"
    empty.touch()  # a file, not yet a database
    schema_only = tmp_path / "schema.sqlite"
    create_study_database(schema_only)
    defined = tmp_path / "defined.sqlite"
    create_study_database(defined)
    definition = synthetic_bundle(2).model_dump_json(by_alias=True)
    writing(defined, lambda store: store.record_definition("synthetic", definition))
    for db in (empty, schema_only, defined):
        for fmt in ("terminal", "md", "json"):
            code, out, _ = run(capsys, "--db", db, "--format", fmt)
            assert code == 0, (db, fmt)
            assert "No sessions yet" in out or "No participants yet" in out
    code, out, _ = run(capsys, "--db", empty)
    assert "the bot has never run on it" in out
    html_file = tmp_path / "empty.html"
    assert main(["report", "--db", str(defined), "--out", str(html_file)]) == 0
    assert "No questionnaire answers yet" in html_file.read_text(encoding="utf-8")
    code, _, err = run(capsys, "--db", tmp_path / "absent.sqlite")
    assert code == StoreError.exit_code and "no study database" in err


def test_a_partial_study_with_sessions_but_no_answers(capsys, tmp_path: Path) -> None:
    db = tmp_path / "partial.sqlite"
    write_synthetic_study(db, sessions=6, responses_per_session=0, seed=1)
    unfinished = {"state": "dialogue", "ended_at": None, "end_reason": None, "success": None}
    running = [  # two sessions still running: the first two participants' next tasks
        {**s, "session_id": f"{s['session_id']}-next", "task_index": 2, **unfinished}
        for s in store_reads.tables(db)["sessions"][:2]
    ]
    rows = [tuple(s[c] for c in SNAPSHOT_COLUMNS["sessions"]) for s in running]
    writing(db, lambda store: store.bulk_load(BulkRows(sessions=rows)))
    code, out, _ = run(capsys, "--db", db)
    assert code == 0
    assert "No questionnaire answers yet" in out and "still in progress" in out


def test_a_database_with_two_studies_needs_study(
    capsys, synthetic_db, synthetic_json, tmp_path
) -> None:
    db = tmp_path / "two.sqlite"
    shutil.copy(synthetic_db, db)
    definition = load_study("hmd").model_dump_json(by_alias=True)
    pilot = BulkRows(participants=[("pilot01", "hmd", "accepted", None, 1.0)])
    writing(db, lambda store: store.record_definition("hmd", definition))
    writing(db, lambda store: store.bulk_load(pilot))
    code, _, err = run(capsys, "--db", db)
    assert code == StudyDataError.exit_code
    assert "--study" in err and "hmd" in err and "synthetic" in err
    alone = report_json(capsys, db, "--study", "synthetic")
    assert alone["study"]["study_ids"] == ["synthetic"]
    assert alone["participation"]["overall"] == synthetic_json["participation"]["overall"]
    pilot = report_json(capsys, db, "--study", "hmd")
    assert pilot["participation"]["overall"]["participants"] == 1
    assert pilot["questionnaires"]["items"] == []
    code, _, err = run(capsys, "--db", db, "--study", "nope")
    assert code == StudyDataError.exit_code and "no study 'nope'" in err


def test_the_progress_bar_shows_only_on_a_terminal() -> None:
    class Terminal(io.StringIO):
        def isatty(self) -> bool:
            return True

    quiet, loud = io.StringIO(), Terminal()
    for stream in (quiet, loud):
        with steps(2, "Report", stream=stream) as step:
            step("reading")
            step.add(1)
            step("plots")
    assert quiet.getvalue() == ""
    assert "Report" in loud.getvalue()


def test_withdrawals_are_counted_per_study_and_per_system(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """Erased on withdrawal: the store's anonymous count is all the report can show."""
    db = tmp_path / "study.sqlite"
    study = write_synthetic_study(db, sessions=8, responses_per_session=4, seed=3)
    people = sorted({p["participant_id"] for p in store_reads.tables(db)["participants"]})
    gone = people[:2]

    bundle = study.bundle
    asks = bundle.model_copy(
        update={"study": bundle.study.model_copy(update={"withdrawals_by_system": True})}
    )

    async def withdraw(store: SqliteStore) -> None:
        await store.record_definition(asks.study.id, definition_json(asks))
        for participant in gone:
            await store.erase_participant(participant)

    writing(db, withdraw)
    report = report_json(capsys, db)
    assert report["participation"]["overall"]["withdrawn"] == 2
    by_system = {r["system_id"]: r["withdrawn"] for r in report["participation"]["by_system"]}
    assert sum(by_system.values()) >= 2 and set(by_system) <= {
        s.id for s in study.bundle.study.systems
    }
    remaining = {p["participant_id"] for p in store_reads.tables(db)["participants"]}
    assert not remaining & set(gone)
