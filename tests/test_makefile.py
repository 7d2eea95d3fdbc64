"""What ``make check`` and ``make test`` do before the suite runs.

``make test`` on a fresh Debian machine installs what the suite needs from Debian
(Chromium, TeX Live, PostgreSQL's server) before it runs, with the script CI runs too; where it
cannot (not root), it stops before the suite with the one command to run. The script runs
here with a PATH that has none of the tools (or stand-ins for all of them) and a stand-in
``apt-get`` that only records how it was called: nothing is installed or removed."""

from __future__ import annotations

import os
import re
import shutil
import stat
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = ROOT / ".ci" / "packages"
POSTGRES_INSTALLED = any(Path("/usr/lib/postgresql").glob("*/bin/initdb"))
NOBODY = 65534


def which(name: str) -> str:
    found = shutil.which(name)
    assert found is not None, f"no {name} (util-linux)"
    return found


def executable(path: Path, body: str) -> None:
    path.write_text(f"#!/bin/sh\n{body}\n", encoding="utf-8")
    path.chmod(path.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)


@pytest.fixture
def shared_tmp() -> Iterator[Path]:
    """A folder the unprivileged user can use too (pytest's tmp_path is its owner's alone)."""
    with tempfile.TemporaryDirectory(prefix="ozlab-packages-") as name:
        Path(name).chmod(0o777)
        yield Path(name)


def tools(tmp: Path, *present: str) -> tuple[Path, Path]:
    """A folder for PATH with stand-ins for ``present`` and an ``apt-get`` that records its
    arguments, one call a line, in the returned file."""
    folder = tmp / "bin"
    folder.mkdir()
    folder.chmod(0o755)
    calls = tmp / "apt-get.calls"
    executable(folder / "apt-get", f'echo "$*" >> {calls}')
    for name in present:
        executable(folder / name, "exit 0")
    return folder, calls


def run(path: Path, *, as_root: bool) -> subprocess.CompletedProcess[str]:
    """The script, read from stdin by bash (so the unprivileged user needs no access to the
    checkout), with only ``path`` on PATH, as root or not whoever runs the tests: root drops to
    nobody, anyone else is root in a user namespace of their own."""
    if as_root == (os.geteuid() == 0):
        become = []
    elif as_root:
        become = [which("unshare"), "--map-root-user"]
    else:
        become = [which("setpriv"), f"--reuid={NOBODY}", f"--regid={NOBODY}", "--clear-groups"]
    command = [*become, "/bin/bash", "-s"]
    return subprocess.run(
        command,
        input=SCRIPT.read_text(encoding="utf-8"),
        env={"PATH": str(path), "LC_ALL": "C"},
        capture_output=True,
        text=True,
        timeout=30,
    )


def recipe(target: str) -> list[str]:
    makefile = (ROOT / "Makefile").read_text(encoding="utf-8")
    found = re.search(rf"^{target}:.*\n((?:\t.*\n)+)", makefile, re.MULTILINE)
    assert found is not None, target
    return [line.strip() for line in found.group(1).splitlines()]


def test_with_everything_there_it_does_nothing_and_says_nothing(shared_tmp: Path) -> None:
    folder, calls = tools(
        shared_tmp, "chromium", "pdflatex", "kpsewhich", "pdftotext", "initdb", "espeak-ng"
    )
    for as_root in (True, False):
        done = run(folder, as_root=as_root)
        assert (done.returncode, done.stdout, done.stderr) == (0, "", "")
    assert not calls.exists()


def test_as_root_it_installs_what_is_missing_after_one_update(shared_tmp: Path) -> None:
    folder, calls = tools(shared_tmp, "pdflatex")  # pdflatex without lmodern (kpsewhich finds none)
    done = run(folder, as_root=True)
    assert done.returncode == 0, done.stderr
    update, install = calls.read_text(encoding="utf-8").splitlines()
    assert update == "update -qq"
    packages = install.split()[install.split().index("--no-install-recommends") + 1 :]
    expected = ["chromium", "fonts-dejavu-core", "texlive-latex-base"]
    expected += ["texlive-latex-recommended", "lmodern", "poppler-utils"]
    assert packages == [*expected, *([] if POSTGRES_INSTALLED else ["postgresql"]), "espeak-ng"]


def test_not_root_it_stops_in_one_line_naming_the_command(shared_tmp: Path) -> None:
    folder, calls = tools(shared_tmp, "chromium")
    done = run(folder, as_root=False)
    assert done.returncode == 1
    assert done.stdout == ""
    [line] = done.stderr.splitlines()
    assert line.endswith("run sudo .ci/packages")
    assert "texlive-latex-recommended" in line and "lmodern" in line
    assert "chromium" not in line
    assert ("postgresql" in line) == (not POSTGRES_INSTALLED)
    assert not calls.exists()


def test_make_test_and_ci_run_it_before_the_suite() -> None:
    testing = recipe("test")
    assert testing[0] == ".ci/packages"
    assert any("pytest" in line for line in testing[1:])
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8").splitlines()
    assert ".ci/packages" in ci and ci.index(".ci/packages") < ci.index("make test")
    assert SCRIPT.stat().st_mode & stat.S_IXUSR


def test_make_runs_its_commands_where_bytecode_is_kept(tmp_path: Path) -> None:
    """Where the shell sets PYTHONDONTWRITEBYTECODE, the Makefile's commands (pytest above
    all, whose rewritten test modules are bytecode) still keep it between runs."""
    probe = tmp_path / "probe.mk"
    probe.write_text('probe:\n\t@echo "[$$PYTHONDONTWRITEBYTECODE]"\n', encoding="utf-8")
    shown = subprocess.run(
        ["make", "-s", "-f", str(ROOT / "Makefile"), "-f", str(probe), "probe"],
        cwd=ROOT,
        env={**os.environ, "PYTHONDONTWRITEBYTECODE": "1"},
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert (shown.returncode, shown.stdout) == (0, "[]\n"), shown.stderr


def test_make_check_runs_the_fast_tests_on_both_cores_and_make_test_runs_them_all() -> None:
    """The unit tests compute: a worker a core. The whole suite also waits on bots, servers
    and browsers: a third worker fills that time. Each on one BLAS thread."""
    [checking] = [line for line in recipe("check") if "pytest" in line]
    assert "-n 2" in checking and '-m "not slow"' in checking
    [testing] = [line for line in recipe("test") if "pytest" in line]
    assert "-n 3" in testing and " -m " not in testing and " -k " not in testing
    assert all(line.startswith("OPENBLAS_NUM_THREADS=1 ") for line in (checking, testing))
