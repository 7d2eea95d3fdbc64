"""A command that cannot go on says one line: Ctrl-C, a file where a folder goes, a count of
-3. Each as a researcher meets it, in a process of its own, with its documented status."""

from __future__ import annotations

import asyncio
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from analytics.data.synthetic import write_synthetic_study
from bot.core.errors import StudyDataError
from tests.command_line import environment, interrupted_demo, ozlab
from tests.e2e_support import OzlabProcesses

pytestmark = pytest.mark.slow  # whole commands in subprocesses: make test, not make check

USAGE_ERROR = 2  # argparse's own status for a wrong argument


@pytest.mark.slow
async def test_ctrl_c_stops_a_demo_with_one_line_and_130(tmp_path: Path) -> None:
    """It printed some forty lines of traceback (the simulation's coroutines, asyncio's
    runner) and died of the signal."""
    status, out, err = await interrupted_demo(tmp_path)
    assert status == 130  # the shell's status for Ctrl-C
    assert err.splitlines() == ["ozlab: stopped by Ctrl-C"]
    assert "Database:" not in out  # no summary of a study played half-way


@pytest.mark.slow
async def test_ctrl_c_stops_a_running_bot_cleanly_with_130(ozlab: OzlabProcesses) -> None:
    """Its stop is the clean one SIGTERM gives (a service manager's: status 0), and the
    shell's status for Ctrl-C."""
    bot = await ozlab.start()
    bot.process.send_signal(signal.SIGINT)
    assert await asyncio.wait_for(bot.finish(), 30) == 130
    assert bot.stderr.splitlines()[-1] == "ozlab: stopped by Ctrl-C"
    assert "Traceback" not in bot.stderr and " ERROR " not in bot.stderr


def test_export_into_a_file_is_one_line_and_3_and_the_file_stays(tmp_path: Path) -> None:
    """It raised FileExistsError from deep in the export (a traceback, status 1)."""
    db = tmp_path / "study.sqlite"
    write_synthetic_study(db, sessions=4, responses_per_session=3, seed=1, systems=2)
    kept = tmp_path / "exchanges.csv"
    kept.write_bytes(b"an earlier export, kept\n")
    done = ozlab("export", "--db", db, "--out", kept, cwd=tmp_path)
    assert done.returncode == StudyDataError.exit_code == 3
    assert done.stderr.splitlines() == [
        f"ozlab: {kept} is a file: give --out a folder to write the tables into"
    ]
    assert kept.read_bytes() == b"an earlier export, kept\n"
    below = ozlab("export", "--db", db, "--out", kept / "tables", cwd=tmp_path)
    assert below.returncode == 3
    assert below.stderr.splitlines() == [
        f"ozlab: cannot make the folder {kept / 'tables'}: Not a directory"
    ]


@pytest.mark.parametrize(
    ("args", "said"),
    [
        (
            ("report", "--db", "study.sqlite", "--out", "afile/report.md"),
            "cannot write into afile: it is a file, not a folder",
        ),
        (
            ("report", "--db", "study.sqlite", "--figures", "afile"),
            "cannot write into afile: it is a file, not a folder",
        ),
        (("import", "responses", "gone.csv", "--db", "study.sqlite"), "gone.csv: No such file"),
        (
            ("report", "--db", "study.sqlite", "--out", "report.docx"),
            "cannot write a report as report.docx: ozlab writes .txt (terminal), .md, .html",
        ),
        (
            ("report", "--db", "study.sqlite", "--format", "json", "--out", "report.md"),
            "--format json does not go with --out report.md, which names md",
        ),
        (
            ("report", "--db", "study.sqlite", "--format", "tex"),
            "--format tex writes a main file with its tables and figures beside it",
        ),
        (("schema", "--out", "afile"), "afile: File exists"),
        (("new", "afile"), "afile: File exists"),
    ],
)
def test_a_file_that_cannot_be_read_or_written_is_one_line_and_3(
    tmp_path: Path, args: tuple[str, ...], said: str
) -> None:
    """Each raised FileExistsError or FileNotFoundError: some twenty lines of traceback, 1."""
    write_synthetic_study(tmp_path / "study.sqlite", sessions=2, responses_per_session=2, seed=1)
    (tmp_path / "afile").write_text("kept")
    done = ozlab(*args, cwd=tmp_path)
    assert done.returncode == StudyDataError.exit_code == 3
    [line] = done.stderr.splitlines()
    assert line.startswith(f"ozlab: {said}"), line
    assert (tmp_path / "afile").read_text() == "kept"
    assert not {"report.docx", "report.md"} & {p.name for p in tmp_path.iterdir()}


@pytest.mark.parametrize(
    ("args", "option", "value"),
    [
        (("demo", "-n", "-3"), "-n/--participants", "-3"),
        (("demo", "--participants", "0"), "-n/--participants", "0"),
        (("pilot", "hmd", "-n", "0", "--simulator", "scripted"), "-n/--participants", "0"),
        (("invite", "--db", "x.sqlite", "--bot", "b", "--n", "-1"), "--n", "-1"),
        (("invite", "--db", "x.sqlite", "--bot", "b", "--annotators", "0"), "--annotators", "0"),
        (("serve-demo", "--port", "70000"), "--port", "70000"),
        (("stress", "run", "--db", "x.sqlite", "--concurrency", "0"), "--concurrency", "0"),
        (("stress", "generate", "--db", "x.sqlite", "--per-type", "-2"), "--per-type", "-2"),
        (("wizard", "say", "s1", "hello", "--wait", "-1"), "--wait", "-1"),
        (("power", "hmd", "--effect", "-0.5"), "--effect", "-0.5"),
    ],
)
def test_a_count_below_one_is_a_usage_error(
    tmp_path: Path, args: tuple[str, ...], option: str, value: str
) -> None:
    """``-n -3`` was taken: the demo played no one and printed an empty summary."""
    done = ozlab(*args, cwd=tmp_path)
    assert done.returncode == USAGE_ERROR, done.stderr
    assert done.stderr.startswith("usage: ozlab ")
    assert f"error: argument {option}: must be " in done.stderr.splitlines()[-1]
    assert value in done.stderr.splitlines()[-1]
    assert list(tmp_path.iterdir()) == []  # nothing opened, nothing written


def test_a_word_where_a_count_goes_says_what_kind_of_value(tmp_path: Path) -> None:
    done = ozlab("demo", "-n", "many", cwd=tmp_path)
    assert done.returncode == USAGE_ERROR
    assert done.stderr.splitlines()[-1] == (
        "ozlab demo: error: argument -n/--participants: invalid count value: 'many'"
    )


def test_a_report_piped_into_a_reader_that_stops_ends_quietly_with_141(tmp_path: Path) -> None:
    """``ozlab report | head -1``: the reader goes away; the report says nothing more (no
    BrokenPipeError traceback) and exits as the shell says of a cut pipe."""
    db = tmp_path / "study.sqlite"
    write_synthetic_study(db, sessions=40, responses_per_session=20, seed=1, systems=2)
    report = subprocess.Popen(
        [sys.executable, "-m", "bot.cli", "report", "--db", str(db), "--format", "md"],
        cwd=tmp_path,
        env=environment(),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    assert report.stdout is not None and report.stderr is not None
    report.stdout.close()  # the reader is gone before the report is written
    with report.stderr:
        assert report.wait(timeout=120) == 141
        assert report.stderr.read() == b""


def test_an_import_problem_quoting_the_files_text_shows_its_control_characters(
    tmp_path: Path,
) -> None:
    """An import file is text from outside: its header named in a problem line brought an
    escape sequence (retitling the terminal) straight to the researcher's screen."""
    ratings = tmp_path / "ratings.csv"
    ratings.write_text("target,annot\x1b]0;TITLE\x07\n")
    done = ozlab(
        "import", "annotations", ratings, "--db", tmp_path / "r.sqlite", "--instrument",
        "hri-cues", cwd=tmp_path,
    )  # fmt: skip
    assert done.returncode == 3, done.stderr
    assert "\x1b" not in done.stderr and "\x07" not in done.stderr
    assert "annot\\x1b]0;title\\x07" in done.stderr  # headers are read lower-cased
