"""Stress tests a person wrote, from a YAML or a CSV file, with every mistake placed at its
file, line and field (as study files are: :mod:`scenarios.yaml_lines`).

YAML::

    tests:
      - session: s-3f2a        # a logged session
        turn: 2                # the participant's message of that turn is perturbed
        type: ST-9
        perturbed: "a game cheap for Linux"
      - session: s-3f2a
        turn: 4
        type: ST-7
        ad_hoc: true           # no logged utterance fitted: the author wrote the original
        original: "Is it on Linux?"
        perturbed: "Is it on the penguin's system?"

CSV: a header with ``session,turn,type,perturbed`` and, when needed, ``original``,
``ad_hoc`` (true/false) and ``change`` (a note on what changed).

A row that is not ad hoc perturbs the logged message of (session, turn); the file need not
repeat it. :func:`read_authored` leaves its ``original`` empty and :func:`match_log` fills
it from the log, telling each (session, turn) the log lacks with its line. An ad hoc row
needs no logged utterance: its ``original`` is the author's.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    ValidationError,
    ValidationInfo,
    field_validator,
)

from bot.core.phenomena import StressType, parse_types
from bot.core.stress import Perturbation, Source, Utterance
from scenarios.csv_lines import csv_records
from scenarios.yaml_lines import Problem, StudyError, parse, read_text, validate

COLUMNS = ("session", "turn", "type", "perturbed", "original", "ad_hoc", "change")
REQUIRED = ("session", "turn", "type", "perturbed")
_TRUE = {"true", "yes", "1", "y"}
_FALSE = {"false", "no", "0", "n", ""}


class AuthoredRow(BaseModel):
    """One authored stress test as the file gives it."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    session: str = Field(min_length=1)
    turn: int = Field(ge=1)
    type: StressType
    perturbed: str
    ad_hoc: bool = False
    original: str | None = Field(default=None, validate_default=True)
    change: str = ""

    @field_validator("type", mode="before")
    @classmethod
    def _type(cls, value: Any) -> StressType:
        text = str(value).strip() if value is not None else ""
        if not text:
            raise ValueError("the stress test type is empty (one of ST-1 … ST-11)")
        kinds = parse_types(text)  # an unknown code: UnknownStressType, a ValueError
        if len(kinds) != 1:
            raise ValueError("one type per test, such as ST-9")
        return kinds[0]

    @field_validator("perturbed")
    @classmethod
    def _text(cls, value: str) -> str:
        if not value.strip():
            raise ValueError("the perturbed utterance is empty")
        return value

    @field_validator("original")
    @classmethod
    def _original(cls, value: str | None, info: ValidationInfo) -> str | None:
        if info.data.get("ad_hoc") and not (value or "").strip():
            raise ValueError("an ad hoc test needs its original (no logged utterance has it)")
        perturbed = info.data.get("perturbed")
        if value is not None and perturbed is not None and value.strip() == perturbed.strip():
            raise ValueError("the perturbed utterance is the same as the original")
        return value

    def perturbation(self) -> Perturbation:
        return Perturbation(
            session_id=self.session,
            turn=self.turn,
            stress_type=self.type,
            original=self.original or "",
            perturbed=self.perturbed,
            source=Source.AUTHORED,
            ad_hoc=self.ad_hoc,
            change=self.change,
        )


class AuthoredFile(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    tests: list[AuthoredRow]


@dataclass(frozen=True)
class AuthoredTest:
    """A perturbation and where the file wrote it, to place later problems (an unknown
    session) at their line."""

    perturbation: Perturbation
    file: Path
    line: int


def _reworded(problem: Problem) -> Problem:
    if problem.message == "Field required":
        name = problem.field.rsplit(".", 1)[-1]
        what = "the perturbed utterance" if name == "perturbed" else f"the test's {name}"
        message = f"missing: {what} ({', '.join(REQUIRED)} are needed)"
        return Problem(problem.file, problem.line, problem.field, message)
    return problem


def _from_yaml(file: Path, text: str, problems: list[Problem]) -> list[AuthoredTest]:
    document = parse(file, text, problems)
    if document is None:
        return []
    found: list[Problem] = []
    model = validate(document, AuthoredFile, found)
    problems.extend(_reworded(p) for p in found)
    if model is None:
        return []
    return [
        AuthoredTest(row.perturbation(), file, document.where(("tests", index))[0])
        for index, row in enumerate(model.tests)
    ]


def _flag(value: str) -> bool | str:
    lowered = value.strip().lower()
    return True if lowered in _TRUE else False if lowered in _FALSE else value


def _from_csv(file: Path, text: str, problems: list[Problem]) -> list[AuthoredTest]:
    headed = False

    def header_ok(line: int, header: list[str]) -> bool:
        nonlocal headed
        headed = True
        unknown = [name for name in header if name not in COLUMNS]
        missing = [name for name in REQUIRED if name not in header]
        if unknown or missing:
            said = [f"unknown column {name!r}" for name in unknown]
            said += [f"missing column {name!r}" for name in missing]
            message = f"{'; '.join(said)} (columns: {', '.join(COLUMNS)})"
            problems.append(Problem(file, line, "", message))
        return not (unknown or missing)

    tests: list[AuthoredTest] = []
    for line, fields in csv_records(file, text, problems, header_ok, lower=True):
        values: dict[str, Any] = dict(fields)
        if "original" in values and not values["original"].strip():
            values["original"] = None
        if "ad_hoc" in values:
            values["ad_hoc"] = _flag(values["ad_hoc"])
        try:
            authored = AuthoredRow.model_validate(values)
        except ValidationError as error:
            for detail in error.errors(include_url=False):
                field = ".".join(str(part) for part in detail["loc"])
                message = detail["msg"].removeprefix("Value error, ")
                problems.append(_reworded(Problem(file, line, field, message)))
            continue
        tests.append(AuthoredTest(authored.perturbation(), file, line))
    if not headed:
        problems.append(Problem(file, None, "", "the file is empty (no header, no tests)"))
    return tests


def read_authored_tests(path: Path) -> list[AuthoredTest]:
    """The tests of ``path`` (``.yaml``/``.yml`` or ``.csv``) with their lines; every
    problem of the file at once in one :class:`~scenarios.yaml_lines.StudyError`."""
    problems: list[Problem] = []
    suffix = path.suffix.lower()
    if suffix not in (".yaml", ".yml", ".csv"):
        problems.append(Problem(path, None, "", "must be a .yaml, .yml or .csv file"))
        raise StudyError(problems)
    text = read_text(path, path, problems)
    tests: list[AuthoredTest] = []
    if text is not None:
        tests = (_from_csv if suffix == ".csv" else _from_yaml)(path, text, problems)
    if not tests and not problems:
        problems.append(Problem(path, None, "", "has no tests"))
    if problems:
        raise StudyError(problems)
    return tests


def read_authored(path: Path) -> list[Perturbation]:
    """The stress tests written in ``path``, as :class:`Perturbation` (``source`` AUTHORED).

    A test that is not ad hoc has ``original`` empty unless the file gave it: fill it from
    the log with :func:`match_log`.
    """
    return [test.perturbation for test in read_authored_tests(path)]


def match_log(tests: Sequence[AuthoredTest], utterances: Sequence[Utterance]) -> list[Perturbation]:
    """The tests with the logged message of their (session, turn) as ``original``.

    Raises one :class:`~scenarios.yaml_lines.StudyError` naming, at its line, every test
    whose (session, turn) has no logged participant message or whose written ``original``
    differs from the log. Ad hoc tests need no logged message and pass unchanged.
    """
    logged = {(u.session_id, u.turn): u.text for u in utterances}
    problems: list[Problem] = []
    matched: list[Perturbation] = []
    for test in tests:
        p = test.perturbation
        if p.ad_hoc:
            matched.append(p)
            continue
        text = logged.get((p.session_id, p.turn))
        if text is None:
            message = (
                f"no logged participant message at turn {p.turn} of session {p.session_id!r} "
                "(mark the test ad_hoc: true and give its original if none fits)"
            )
            problems.append(Problem(test.file, test.line, "session", message))
        elif p.original and p.original.strip() != text.strip():
            message = f"differs from the logged message {text!r}"
            problems.append(Problem(test.file, test.line, "original", message))
        else:
            matched.append(replace(p, original=text))
    if problems:
        raise StudyError(problems)
    return matched
