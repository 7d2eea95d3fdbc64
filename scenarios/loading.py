"""Load a study and everything it names, reporting every mistake with file, line and field.

All problems of all files are collected before anything is raised, so that one run of
``ozlab check`` lists everything to fix. Single files are read and placed by
``scenarios.yaml_lines``; rating-task rows by ``scenarios.loading_stimuli``; the rules that
span files (who may screen, unique item ids across a study, ...) by
``scenarios.loading_rules``. This module follows the references between files.

Scenario ids are looked up beside the study (``<study dir>/scenarios/<id>.yaml``), then in
the shipped library; questionnaire ids in ``<study dir>/questionnaires/<id>.yaml``, then in
the shipped instruments. A rating task's stimuli file sits beside its scenario file. Shipped
files are found with importlib.resources.
"""

from __future__ import annotations

import re
import sys
from dataclasses import dataclass
from importlib.resources import files
from importlib.resources.abc import Traversable
from pathlib import Path, PurePosixPath
from typing import Any

from questionnaires.models import Questionnaire
from scenarios import loading_jobs
from scenarios import loading_rules as rules
from scenarios.jobs import AnnotationJob
from scenarios.loading_stimuli import (
    STIMULI_SUFFIXES,
    check_template,
    read_stimuli,
    template_columns,
)
from scenarios.loading_tools import tool_sources
from scenarios.models import Scenario, Stimulus, Study, StudyBundle, ToolSource
from scenarios.yaml_lines import (
    Document,
    Model,
    Problem,
    Resource,
    StudyError,
    load_file,
    parse,
    read_text,
)

__all__ = [
    "Problem",
    "StudyError",
    "load_questionnaire",
    "load_scenario",
    "load_stimuli",
    "load_study",
    "shipped_studies",
    "study_document",
]

_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,63}")
_QUESTIONNAIRE_KEYS = {
    "study": ("screening", "post_study"),
    "scenario": ("post_task", "exchange", "rate_with"),
}


@dataclass(frozen=True)
class _Shelf:
    """Where files of one kind live: a folder beside the study, then ozlab's own library."""

    noun: str
    folder: str
    package: str
    library: tuple[str, ...]

    def shipped_folder(self) -> Traversable:
        return _resource(self.package, *self.library)

    def shipped(self, ref_id: str) -> Traversable:
        return self.shipped_folder() / f"{ref_id}.yaml"

    def shipped_name(self, ref_id: str) -> str:
        return "/".join((self.package, *self.library, f"{ref_id}.yaml"))


_STUDIES = _Shelf("study", "studies", "scenarios", ("library", "studies"))
_SCENARIOS = _Shelf("scenario", "scenarios", "scenarios", ("library", "scenarios"))
_QUESTIONNAIRES = _Shelf("questionnaire", "questionnaires", "questionnaires", ("library",))
_JOBS = _Shelf("annotation job", "jobs", "scenarios", ("library", "jobs"))


def _resource(package: str, *parts: str) -> Traversable:
    resource = files(package)
    for part in parts:
        resource = resource / part
    return resource


def shipped_studies() -> list[str]:
    """Names of the studies ozlab ships, usable as ``load_study(name)``."""
    folder = _STUDIES.shipped_folder()
    if not folder.is_dir():
        return []
    return sorted(
        entry.name.removesuffix(".yaml")
        for entry in folder.iterdir()
        if entry.name.endswith(".yaml") and entry.is_file()
    )


class _StudyLoader:
    """One loading run: the study folder, the problems so far, each file loaded once."""

    def __init__(self, study_dir: Path) -> None:
        self.study_dir = study_dir
        self.problems: list[Problem] = []
        self.files: list[Path] = []  # in the order they were opened, to report in that order
        self.scenarios: dict[str, Scenario | None] = {}
        self.questionnaires: dict[str, Questionnaire | None] = {}
        self.documents: dict[tuple[str, str], Document] = {}
        self.uses: list[rules.Use] = []
        self.stimuli: dict[str, tuple[Stimulus, ...]] = {}
        self.jobs: dict[str, AnnotationJob] = {}
        self.tools: dict[str, dict[str, ToolSource]] = {}
        self.language = "en"
        self.warnings: list[Problem] = []  # what a study may do, but ozlab check tells

    def open(
        self, file: Path, resource: Resource, model: type[Model]
    ) -> tuple[Document | None, Model | None]:
        self.files.append(file)
        return load_file(file, resource, model, self.problems)

    def follow(self, document: Document, key: str, shelf: _Shelf) -> None:
        """Load every id listed under ``key``; a bad reference is told at its own line."""
        refs = document.data.get(key)
        if not isinstance(refs, list):
            return  # missing or not a list: validation already says so
        seen: dict[str, int] = {}
        for index, ref_id in enumerate(refs):
            if not isinstance(ref_id, str):
                continue  # validation already says so
            message = None
            if ref_id in seen:
                message = f"{shelf.noun} {ref_id!r} is listed twice (also {key}[{seen[ref_id]}])"
            elif not _ID.fullmatch(ref_id):
                message = (
                    f"{ref_id!r} is not a {shelf.noun} id: use up to 64 letters, digits, "
                    "'-', '_' or '.', without a path or '.yaml'"
                )
            elif not self.load(ref_id, shelf):
                message = (
                    f"no {shelf.noun} {ref_id!r}: neither {self.local(ref_id, shelf)} "
                    f"nor the shipped {shelf.shipped_name(ref_id)} exists"
                )
            elif shelf is _QUESTIONNAIRES:
                self.uses.append(rules.Use(ref_id, key, document, (key, index)))
            seen.setdefault(ref_id, index)
            if message:
                self.problems.append(document.problem((key, index), message))

    def local(self, ref_id: str, shelf: _Shelf) -> Path:
        return self.study_dir / shelf.folder / f"{ref_id}.yaml"

    def load(self, ref_id: str, shelf: _Shelf) -> bool:
        """Load a referenced file once; False when no file of that id exists anywhere."""
        cache: dict[str, Any] = self.scenarios if shelf is _SCENARIOS else self.questionnaires
        if ref_id in cache:
            return True
        local, shipped = self.local(ref_id, shelf), shelf.shipped(ref_id)
        resource: Resource
        folder: Resource
        if local.is_file():
            file, resource, folder = local, local, local.parent
        elif shipped.is_file():
            file, resource, folder = Path(str(shipped)), shipped, shelf.shipped_folder()
        else:
            return False
        cache[ref_id] = None  # before following its own references, in case they loop
        model = Scenario if shelf is _SCENARIOS else Questionnaire
        document, loaded = self.open(file, resource, model)
        if document is not None:
            self.documents[(shelf.noun, ref_id)] = document
            self.check_id(document, ref_id)
            if shelf is _SCENARIOS:
                for key in _QUESTIONNAIRE_KEYS["scenario"]:
                    self.follow(document, key, _QUESTIONNAIRES)
                self.problems += rules.scenario_kind(document)
                self.problems += rules.translation_keys(document, self.language)
                self.load_stimuli(ref_id, document, folder)
                self.load_tools(ref_id, document, folder)
        cache[ref_id] = loaded
        return True

    def check_id(self, document: Document, ref_id: str) -> None:
        file_id = document.data.get("id")
        if isinstance(file_id, str) and file_id != ref_id:
            message = f"id {file_id!r} does not match {ref_id!r}, the name this file is used by"
            self.problems.append(document.problem(("id",), message))

    def load_stimuli(self, scenario_id: str, document: Document, folder: Resource) -> None:
        """Read a rating task's rows from the file its ``stimuli`` names, beside it."""
        name = document.data.get("stimuli")
        if document.data.get("kind") != "rating" or not isinstance(name, str):
            return
        parts = PurePosixPath(name.replace("\\", "/")).parts
        if not parts or name.startswith(("/", "\\")) or ".." in parts or ":" in parts[0]:
            message = f"{name!r} must be a file name beside this scenario file, such as rows.csv"
            self.problems.append(document.problem(("stimuli",), message))
            return
        if not name.endswith(STIMULI_SUFFIXES):
            message = f"{name!r} must be a .csv or a .jsonl file"
            self.problems.append(document.problem(("stimuli",), message))
            return
        resource = folder.joinpath(*parts)
        file = Path(str(resource))
        self.files.append(file)
        if not resource.is_file():
            line, _ = document.where(("stimuli",))
            message = f"file not found (named by stimuli on line {line} of {document.file})"
            self.problems.append(Problem(file, None, "", message))
            return
        table = read_stimuli(file, resource, self.problems)
        template = document.data.get("stimulus_template")
        if table is None:
            return
        self.stimuli[scenario_id] = table.stimuli
        if isinstance(template, str):
            try:
                columns = template_columns(template)
            except ValueError as error:
                self.problems.append(document.problem(("stimulus_template",), str(error)))
                return
            check_template(table, columns, self.problems)

    def load_tools(self, scenario_id: str, document: Document, folder: Resource) -> None:
        """Read where each of a scenario's tools gets its results, beside it."""
        tools = document.data.get("tools")
        if not isinstance(tools, list) or not tools:
            return
        sources, files = tool_sources(document, tools, folder, self.problems)
        self.files += files
        if sources:
            self.tools[scenario_id] = sources

    def follow_jobs(self, document: Document) -> None:
        """Load the annotation jobs the study names (an id, or a path beside the study),
        the instruments each names, and check them against the study."""
        refs = document.data.get("annotation_jobs")
        if not isinstance(refs, list):
            return  # missing or not a list: validation already says so
        seen: dict[str, int] = {}
        for index, ref in enumerate(refs):
            if not isinstance(ref, str):
                continue
            found = self.find_job(ref)
            message = None
            if ref in seen:
                message = (
                    f"annotation job {ref!r} is listed twice (also annotation_jobs[{seen[ref]}])"
                )
            elif isinstance(found, str):
                message = found
            seen.setdefault(ref, index)
            if message or isinstance(found, str):
                self.problems.append(document.problem(("annotation_jobs", index), message or ""))
                continue
            file, resource = found
            job_document, job = self.open(file, resource, AnnotationJob)
            if job_document is None:
                continue
            if not _looks_like_path(ref):
                self.check_id(job_document, ref)
            for ref_id, loc in loading_jobs.instrument_refs(job_document):
                if _ID.fullmatch(ref_id) and not self.load(ref_id, _QUESTIONNAIRES):
                    local = self.local(ref_id, _QUESTIONNAIRES)
                    message = (
                        f"no questionnaire {ref_id!r}: neither {local} nor the shipped"
                        f" {_QUESTIONNAIRES.shipped_name(ref_id)} exists"
                    )
                    self.problems.append(job_document.problem(loc, message))
                elif not _ID.fullmatch(ref_id):
                    message = f"{ref_id!r} is not a questionnaire id"
                    self.problems.append(job_document.problem(loc, message))
            self.problems += loading_jobs.job_problems(
                job_document, self.questionnaires, document.data
            )
            if job is not None:
                if job.id in self.jobs:
                    message = f"two annotation jobs have the id {job.id!r}"
                    self.problems.append(job_document.problem(("id",), message))
                self.jobs[job.id] = job

    def find_job(self, ref: str) -> tuple[Path, Resource] | str:
        """A job file by id (beside the study, then shipped) or path; else the problem."""
        if _looks_like_path(ref):
            path = Path(ref) if Path(ref).is_absolute() else self.study_dir / ref
            return (path, path) if path.is_file() else f"no annotation job file {path}"
        if not _ID.fullmatch(ref):
            return f"{ref!r} is not an annotation job id or a path to a .yaml file"
        local, shipped = self.local(ref, _JOBS), _JOBS.shipped(ref)
        if local.is_file():
            return local, local
        if shipped.is_file():
            return Path(str(shipped)), shipped
        return (
            f"no annotation job {ref!r}: neither {local} nor the shipped "
            f"{_JOBS.shipped_name(ref)} exists"
        )

    def check_study(self, document: Document) -> None:
        """The rules that need the whole study: design size, where questionnaires are used,
        shared item ids."""
        self.problems += rules.study_language(document)
        self.problems += rules.design_size(document)
        self.problems += rules.translation_keys(document, self.language)
        scenarios = {
            ref_id: document
            for (noun, ref_id), document in self.documents.items()
            if noun == _SCENARIOS.noun
        }
        self.problems += rules.side_by_side_systems(document, scenarios)
        self.problems += rules.speech_engines(document, scenarios)
        documents = {
            ref_id: document
            for (noun, ref_id), document in self.documents.items()
            if noun == _QUESTIONNAIRES.noun
        }
        self.problems += rules.misplaced_questionnaires(self.uses, self.questionnaires, documents)
        self.problems += rules.shared_item_ids(self.questionnaires, documents)
        scenarios = {
            ref_id: document
            for (noun, ref_id), document in self.documents.items()
            if noun == _SCENARIOS.noun
        }
        systems = document.data.get("systems")
        system_ids = [
            str(s["id"])
            for s in (systems if isinstance(systems, list) else [])
            if isinstance(s, dict) and "id" in s
        ]
        errors, self.warnings = rules.simulated_answers(scenarios, system_ids, self.questionnaires)
        self.problems += errors
        self.problems += rules.success_item(document, self.uses, self.questionnaires)
        self.warnings += rules.success_judge(document, scenarios)


def _looks_like_path(ref: str) -> bool:
    return "/" in ref or "\\" in ref or ref.endswith((".yaml", ".yml"))


def _find_study(ref: str | Path) -> tuple[Path, Resource]:
    if isinstance(ref, Path) or _looks_like_path(ref):
        return Path(ref), Path(ref)
    shipped = _STUDIES.shipped(ref) if _ID.fullmatch(ref) else None
    if shipped is not None and shipped.is_file():
        return Path(str(shipped)), shipped
    if Path(ref).is_file():
        return Path(ref), Path(ref)
    names = ", ".join(shipped_studies()) or "none"
    message = f"no study file {ref!r} and no shipped study of that name (shipped: {names})"
    raise StudyError([Problem(Path(ref), None, "", message)])


def _in_file_order(problems: list[Problem], files: list[Path]) -> list[Problem]:
    """Group by file in the order files were opened, by line within a file, without repeats."""
    order = {file: index for index, file in reversed(list(enumerate(files)))}
    unique = list(dict.fromkeys(problems))
    return sorted(unique, key=lambda p: (order.get(p.file, len(order)), p.line or 0))


def load_study(ref: str | Path) -> StudyBundle:
    """A study with its scenarios, questionnaires and stimuli, or a StudyError listing every
    problem.

    ``ref`` is a path to a study YAML file or the name of a shipped study (``"hmd"``).
    """
    return checked_study(ref)[0]


def checked_study(ref: str | Path) -> tuple[StudyBundle, list[Problem]]:
    """:func:`load_study`, and the warnings ``ozlab check`` tells at their lines (settings
    the study never uses, such as a simulated participant's profile of another study's
    system)."""
    file, resource = _find_study(ref)
    loader = _StudyLoader(file.parent)
    document, study = loader.open(file, resource, Study)
    if document is not None:
        language = document.data.get("language", "en")
        loader.language = language if isinstance(language, str) else "en"
        loader.follow(document, "scenarios", _SCENARIOS)
        for key in _QUESTIONNAIRE_KEYS["study"]:
            loader.follow(document, key, _QUESTIONNAIRES)
        loader.follow_jobs(document)
        loader.check_study(document)
    if loader.problems or study is None:
        raise StudyError(_in_file_order(loader.problems, loader.files))
    bundle = StudyBundle(
        study=study,
        scenarios={key: value for key, value in loader.scenarios.items() if value is not None},
        questionnaires={
            key: value for key, value in loader.questionnaires.items() if value is not None
        },
        stimuli=loader.stimuli,
        jobs=loader.jobs,
        tools=loader.tools,
    )
    return bundle, _in_file_order(loader.warnings, loader.files)


def study_document(ref: str | Path) -> Document:
    """The study file's node tree, to place at their lines the problems found only once the
    study is loaded (a system that cannot be built)."""
    file, resource = _find_study(ref)
    problems: list[Problem] = []
    text = read_text(file, resource, problems)
    document = None if text is None else parse(file, text, problems)
    if document is None:
        raise StudyError(problems)
    return document


def _load_one(path: str | Path, model: type[Model]) -> Model:
    problems: list[Problem] = []
    _, loaded = load_file(Path(path), Path(path), model, problems)
    if problems or loaded is None:
        raise StudyError(_in_file_order(problems, [Path(path)]))
    return loaded


def load_scenario(path: str | Path) -> Scenario:
    """One scenario file, validated on its own (its questionnaires are not looked up)."""
    return _load_one(path, Scenario)


def load_questionnaire(path: str | Path) -> Questionnaire:
    """One questionnaire file, validated on its own."""
    return _load_one(path, Questionnaire)


def load_stimuli(path: str | Path, template: str | None = None) -> tuple[Stimulus, ...]:
    """The rows of one CSV or JSONL file, checked against a ``stimulus_template`` if given."""
    file = Path(path)
    problems: list[Problem] = []
    table = read_stimuli(file, file, problems)
    if table is not None and template is not None:
        try:
            check_template(table, template_columns(template), problems)
        except ValueError as error:
            problems.append(Problem(file, None, "stimulus_template", str(error)))
    if problems or table is None:
        raise StudyError(_in_file_order(problems, [file]))
    return table.stimuli


def adapters_beside(ref: str | Path) -> None:
    """A study's own adapter classes (type: python) may live beside the study file: every
    command that loads or checks a study file imports them from there alike."""
    if Path(ref).suffix in (".yaml", ".yml"):
        sys.path.insert(0, str(Path(ref).resolve().parent))
