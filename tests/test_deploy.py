"""The deployment files (``bot/deploy/``) say what ozlab accepts: the systemd unit parses
and starts a real ``ozlab`` command, the Containerfile copies files that exist and runs a
command ``bot.cli`` takes, and neither holds a secret. (``systemd-analyze verify`` and a
container build are not available where the tests run: this is what can be checked.)"""

from __future__ import annotations

import argparse
import configparser
import fnmatch
import json
import re
import shlex
import tomllib
from pathlib import Path, PurePosixPath

import pytest

from bot.cli import TOKEN_ENV, parser
from bot.core import errors
from bot.core.privacy import SECRET_ENV

ROOT = Path(__file__).resolve().parents[1]
DEPLOY = ROOT / "bot" / "deploy"
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))


def accepted(argv: list[str]) -> argparse.Namespace:
    """What ``ozlab`` makes of ``argv`` (its arguments, without the program's name)."""
    try:
        return parser().parse_args(argv)
    except SystemExit as error:
        raise AssertionError(f"ozlab does not accept {shlex.join(argv)}") from error


# --- the systemd unit ---------------------------------------------------------------------


@pytest.fixture(scope="module")
def unit() -> configparser.ConfigParser:
    parser = configparser.ConfigParser(interpolation=None, strict=True)
    parser.optionxform = str  # type: ignore[assignment,method-assign]  # keys keep their case
    parser.read_string((DEPLOY / "ozlab.service").read_text(encoding="utf-8"))
    return parser


def test_the_unit_has_its_sections(unit: configparser.ConfigParser) -> None:
    assert unit.sections() == ["Unit", "Service", "Install"]
    assert unit["Install"]["WantedBy"] == "multi-user.target"
    assert "network-online.target" in unit["Unit"]["After"].split()


def test_the_unit_runs_ozlab_as_its_own_user_on_a_state_directory(
    unit: configparser.ConfigParser,
) -> None:
    service = unit["Service"]
    assert service["User"] not in ("", "root") and service["Group"] == service["User"]
    program, *argv = shlex.split(service["ExecStart"])
    assert PurePosixPath(program).is_absolute() and PurePosixPath(program).name == "ozlab"
    args = accepted(argv)
    assert args.command == "run"
    state = PurePosixPath("/var/lib") / service["StateDirectory"]
    assert PurePosixPath(args.db).parent == state == PurePosixPath(service["WorkingDirectory"])
    assert service["StateDirectoryMode"] == "0700"


def test_the_unit_restarts_what_a_restart_can_mend(unit: configparser.ConfigParser) -> None:
    service = unit["Service"]
    assert service["Restart"] == "on-failure"
    assert float(service["RestartSec"]) > 0
    statuses = {int(status) for status in service["RestartPreventExitStatus"].split()}
    mistakes = {
        cls.exit_code
        for cls in vars(errors).values()
        if isinstance(cls, type) and issubclass(cls, errors.OzlabError) and cls.exit_code > 1
    }
    # every mistake a person must mend (a wrong argument too), and never a crash (1)
    assert statuses == mistakes | {errors.USAGE}
    assert service["KillSignal"] == "SIGTERM"  # ozlab run's clean stop


def test_the_secrets_come_from_an_environment_file(unit: configparser.ConfigParser) -> None:
    service = unit["Service"]
    assert PurePosixPath(service["EnvironmentFile"]).is_absolute()
    assert "Environment" not in service
    text = (DEPLOY / "ozlab.service").read_text(encoding="utf-8")
    assert not re.search(rf"^\s*(Environment=.*)?({TOKEN_ENV}|{SECRET_ENV})=", text, re.M)


# --- the Containerfile --------------------------------------------------------------------


def instructions(path: Path) -> list[tuple[str, str]]:
    """(INSTRUCTION, arguments) of a Dockerfile, continuation lines joined."""
    found: list[tuple[str, str]] = []
    pending = ""
    for line in path.read_text(encoding="utf-8").splitlines():
        if not pending and (not line.strip() or line.lstrip().startswith("#")):
            continue
        pending += line.strip()
        if pending.endswith("\\"):
            pending = pending[:-1].rstrip() + " "
            continue
        keyword, _, rest = pending.partition(" ")
        found.append((keyword.upper(), rest.strip()))
        pending = ""
    assert not pending, "a continuation line runs off the end"
    return found


@pytest.fixture(scope="module")
def containerfile() -> list[tuple[str, str]]:
    return instructions(DEPLOY / "Containerfile")


def test_the_image_is_a_python_ozlab_supports(containerfile: list[tuple[str, str]]) -> None:
    [base] = [rest for keyword, rest in containerfile if keyword == "FROM"]
    found = re.fullmatch(r"python:(\d+)\.(\d+)-slim", base)
    assert found, base
    oldest = re.fullmatch(r">=(\d+)\.(\d+)", PYPROJECT["project"]["requires-python"])
    assert oldest is not None
    assert (int(found[1]), int(found[2])) >= (int(oldest[1]), int(oldest[2]))


def test_the_image_copies_what_installing_ozlab_needs(
    containerfile: list[tuple[str, str]],
) -> None:
    copied: set[str] = set()
    for keyword, rest in containerfile:
        if keyword == "COPY":
            *sources, _ = [part for part in shlex.split(rest) if not part.startswith("--")]
            for source in sources:
                assert (ROOT / source).exists(), f"COPY {source}: no such file in the project"
                copied.add(source)
    found = PYPROJECT["tool"]["setuptools"]["packages"]["find"]["include"]
    packages = {pattern.rstrip("*") for pattern in found}
    assert packages | {"pyproject.toml", PYPROJECT["project"]["readme"]} <= copied
    steps = [" ".join(rest.split()) for keyword, rest in containerfile if keyword == "RUN"]
    assert any(step.split(" && ")[0] == "pip install ." for step in steps)


def test_the_image_runs_a_command_ozlab_takes_with_the_database_on_a_volume(
    containerfile: list[tuple[str, str]],
) -> None:
    given = {keyword: rest for keyword, rest in containerfile}
    entrypoint, command = json.loads(given["ENTRYPOINT"]), json.loads(given["CMD"])
    assert entrypoint == ["ozlab"]
    args = accepted(command)
    assert args.command == "run"
    volumes = [PurePosixPath(v) for v in json.loads(given["VOLUME"])]
    assert PurePosixPath(args.db).parent in volumes
    assert given["USER"] not in ("root", "0")
    assert given["STOPSIGNAL"] == "SIGTERM"


def test_no_secret_is_baked_into_the_image(containerfile: list[tuple[str, str]]) -> None:
    for keyword, rest in containerfile:
        if keyword in ("ENV", "ARG", "LABEL", "RUN"):
            assert TOKEN_ENV not in rest and SECRET_ENV not in rest, (keyword, rest)


# --- shipped with ozlab -------------------------------------------------------------------


def test_the_deployment_files_ship_as_package_data() -> None:
    patterns = PYPROJECT["tool"]["setuptools"]["package-data"]["bot"]
    for path in DEPLOY.iterdir():
        relative = path.relative_to(ROOT / "bot").as_posix()
        assert any(fnmatch.fnmatch(relative, pattern) for pattern in patterns), relative
