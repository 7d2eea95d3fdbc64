"""Files with participants' data are their owner's only: the database, invitation and
annotator codes, payments, every export, every report and its figures are written 0600 (the
folders ozlab makes for them 0700), whatever a permissive umask would allow; a file written
again over a readable one is tightened too. Each command runs as a researcher runs it, with
the umask most systems give (022)."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from bot.core.privacy import SECRET_ENV
from bot.core.vocabulary import WrittenKind
from tests.annotation_support import stored_study
from tests.conftest import SECRET
from tests.e2e_support import PROJECT_ROOT
from tests.store_reads import reading

pytestmark = pytest.mark.slow  # whole commands, reports or renderings: make test, not make check

OZLAB = str(Path(sys.executable).with_name("ozlab"))
CUES = [("p0123456789abcde-1", "companion", 3), ("p1123456789abcde-1", "companion", 2)]


def _under_umask_022(*argv: str) -> str:
    """``argv`` run under umask 022, as a researcher's shell runs it; its standard output."""
    done = subprocess.run(
        ["/bin/sh", "-c", 'umask 022 && exec "$0" "$@"', *argv],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=PROJECT_ROOT,
        check=False,
        env=os.environ | {SECRET_ENV: SECRET},
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


def ozlab(*args: str) -> str:
    """``ozlab ARGS`` under umask 022; its standard output."""
    return _under_umask_022(OZLAB, *args)


IN_TURN = """
import json, sys
from bot.cli import main
for argv in json.loads(sys.argv[1]):
    status = main(argv)
    print("\\0", flush=True)
    if status:
        sys.exit(status)
"""


def ozlab_in_turn(*commands: list[str]) -> list[str]:
    """Several ``ozlab`` commands, one after the other in one process under umask 022 (each
    writes its files through the same code whatever ran before it); what each said."""
    out = _under_umask_022(sys.executable, "-c", IN_TURN, json.dumps(commands))
    said = out.split("\0\n")
    assert len(said) == len(commands) + 1 and said[-1] == "", out
    return said[:-1]


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def everything(folder: Path) -> dict[str, int]:
    """Every file and folder under ``folder`` (itself too) with its mode."""
    found = {".": mode(folder)}
    for path in folder.rglob("*"):
        found[str(path.relative_to(folder))] = mode(path)
    return found


@pytest.fixture(scope="module")
def demo_db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    db = tmp_path_factory.mktemp("modes") / "demo.sqlite"
    ozlab("demo", "--db", str(db), "-n", "2", "--seed", "1")
    return db


def test_a_database_ozlab_creates_is_its_owners_only(demo_db: Path, tmp_path: Path) -> None:
    assert mode(demo_db) == 0o600
    invited = tmp_path / "invited.sqlite"
    codes = tmp_path / "codes.csv"
    ozlab("invite", "--db", str(invited), "--n", "2", "--bot", "lab_bot", "--out", str(codes))
    beside = [p for p in tmp_path.iterdir() if p.name.startswith("invited.sqlite")]
    assert beside and {p.name: mode(p) for p in beside} == {p.name: 0o600 for p in beside}
    copy = tmp_path / "backups" / "demo.sqlite"
    copy.parent.mkdir()
    ozlab("backup", "--db", str(demo_db), "--out", str(copy))
    assert mode(copy) == 0o600


def test_codes_and_payments_are_their_owners_only(tmp_path: Path) -> None:
    db = tmp_path / "study.sqlite"
    invitations = tmp_path / "invitations.csv"
    ozlab("invite", "--db", str(db), "--n", "3", "--bot", "lab_bot", "--out", str(invitations))
    assert mode(invitations) == 0o600
    payments = tmp_path / "payments.csv"
    payments.write_text("an older list\n")
    payments.chmod(0o644)
    ozlab("export", "payments", "--db", str(db), "--out", str(payments))
    assert mode(payments) == 0o600 and payments.read_text().startswith("study,platform")
    cues = stored_study(tmp_path / "cues.sqlite", "hri-cues", "hri-cues-chat", CUES)
    annotators = tmp_path / "annotators.csv"
    ozlab("invite", "--db", str(cues), "--bot", "lab_bot", "--out", str(annotators),
          "--annotators", "2", "--job", "hri-cues")  # fmt: skip
    assert mode(annotators) == 0o600


@pytest.mark.parametrize("fmt", ["csv", "parquet", "sav"])
def test_every_export_is_its_owners_only(demo_db: Path, tmp_path: Path, fmt: str) -> None:
    out = tmp_path / "data" / "2026" / "export"
    again = tmp_path / "shared"  # a folder that was there, readable by others
    again.mkdir(mode=0o755)
    again.chmod(0o755)
    written, _ = ozlab_in_turn(
        ["export", "--db", str(demo_db), "--out", str(out), "--format", fmt, "--wide"],
        ["export", "--db", str(demo_db), "--out", str(again), "--format", fmt],
    )
    assert len(written.split()) >= 8
    modes = everything(tmp_path / "data")
    folders = {name for name in modes if (tmp_path / "data" / name).is_dir()}
    assert folders == {".", "2026", "2026/export"}
    assert modes == {name: 0o700 if name in folders else 0o600 for name in modes}
    # A folder that was there keeps its mode: the files in it are private all the same.
    assert mode(again) == 0o755
    assert {mode(p) for p in again.iterdir()} == {0o600}


def test_every_report_and_its_figures_are_their_owners_only(demo_db: Path, tmp_path: Path) -> None:
    reports = tmp_path / "reports"
    ozlab_in_turn(
        *(
            ["report", "--db", str(demo_db), "--out", str(reports / name), "--pilot"]
            for name in ("report.html", "report.md", "report.json", "report.txt")
        ),
        ["report", "--db", str(demo_db), "--out", str(reports / "paper.md"), "--figures",
         str(tmp_path / "figures")],
    )  # fmt: skip
    assert everything(reports) == {
        ".": 0o700,
        **{name: 0o600 for name in ("report.html", "report.md", "report.json", "report.txt")},
        "paper.md": 0o600,
    }
    figures = everything(tmp_path / "figures")
    assert len(figures) > 4 and figures == {".": 0o700} | {
        name: 0o600 for name in figures if name != "."
    }
    # each is in the study's register of files written, which an erasure reads
    registered = {f.path: f.kind for f in reading(demo_db, lambda store: store.registered_files())}
    for folder, kind in (
        (reports, WrittenKind.REPORT),
        (tmp_path / "figures", WrittenKind.FIGURES),
    ):
        assert {str(p): kind for p in folder.iterdir()}.items() <= registered.items()


def test_a_latex_report_its_tables_and_figures_are_their_owners_only(
    demo_db: Path, tmp_path: Path
) -> None:
    paper = tmp_path / "paper"
    ozlab("report", "--db", str(demo_db), "--out", str(paper / "report.tex"))
    found = everything(paper)
    folders = {".", "report-tables", "report-figures"}
    assert len(found) > 6 and folders <= set(found)
    assert found == {name: 0o700 if name in folders else 0o600 for name in found}
    registered = {f.path: f.kind for f in reading(demo_db, lambda store: store.registered_files())}
    files = {str(p): WrittenKind.REPORT for p in paper.rglob("*") if p.is_file()}
    assert files.items() <= registered.items()


def test_a_file_that_cannot_be_written_is_one_line(demo_db: Path, tmp_path: Path) -> None:
    taken = tmp_path / "taken"
    taken.write_text("not a folder\n")
    for args in (
        ["export", "--db", str(demo_db), "--out", str(taken)],
        ["report", "--db", str(demo_db), "--out", str(taken / "report.html")],
        ["invite", "--db", str(tmp_path / "s.sqlite"), "--n", "1", "--bot", "lab_bot",
         "--out", str(taken / "invitations.csv")],
    ):  # fmt: skip
        done = subprocess.run(
            [OZLAB, *args], capture_output=True, text=True, timeout=300, check=False
        )
        assert done.returncode == 3, done.stderr
        assert done.stderr.count("\n") == 1 and str(taken) in done.stderr
    assert not (tmp_path / "s.sqlite").exists()  # no code stored that nobody holds
