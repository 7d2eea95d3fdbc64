"""Load a study and everything it names, reporting every mistake with file, line and field.

Researchers edit YAML, not code, so a mistake is only useful to them with its place: each
file is composed with PyYAML to keep the position of every node, validated with its pydantic
model, and each error's ``loc`` is walked down the node tree to the line that holds it.
All problems of all files are collected before anything is raised, so that one run of
``ozlab check`` lists everything to fix.

Scenario ids are looked up beside the study (``<study dir>/scenarios/<id>.yaml``), then in
the shipped library; questionnaire ids in ``<study dir>/questionnaires/<id>.yaml``, then in
the shipped instruments. Shipped files are found with importlib.resources.
"""

from __future__ import annotations

import inspect
import re
import types
from dataclasses import dataclass
from importlib.resources import files
from importlib.resources.abc import Traversable
from pathlib import Path
from typing import Annotated, Any, Literal, TypeVar, Union, get_args, get_origin

import yaml
from pydantic import BaseModel, ValidationError
from pydantic_core import ErrorDetails

from questionnaires.models import Questionnaire
from scenarios.models import Scenario, Study, StudyBundle

__all__ = [
    "Problem",
    "StudyError",
    "load_questionnaire",
    "load_scenario",
    "load_study",
    "shipped_studies",
]

Model = TypeVar("Model", bound=BaseModel)
Loc = tuple[str | int, ...]
Resource = Path | Traversable

_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,63}")
_VALUE_ERROR_PREFIX = "Value error, "


@dataclass(frozen=True)
class Problem:
    """One mistake in one file, told where a researcher can find it."""

    file: Path
    line: int | None
    field: str
    message: str

    def __str__(self) -> str:
        where = str(self.file) if self.line is None else f"{self.file}:{self.line}"
        return (
            f"{where}: {self.field}: {self.message}" if self.field else f"{where}: {self.message}"
        )


class StudyError(Exception):
    """A study, scenario or questionnaire could not be loaded; ``problems`` holds them all."""

    def __init__(self, problems: list[Problem]) -> None:
        self.problems = problems
        super().__init__("\n".join(str(problem) for problem in problems))


@dataclass(frozen=True)
class _Shelf:
    """Where files of one kind live: a folder beside the study, then ozlab's own library."""

    noun: str
    folder: str
    package: str
    library: tuple[str, ...]

    def shipped(self, ref_id: str) -> Traversable:
        return _resource(self.package, *self.library, f"{ref_id}.yaml")

    def shipped_name(self, ref_id: str) -> str:
        return "/".join((self.package, *self.library, f"{ref_id}.yaml"))


_STUDIES = _Shelf("study", "studies", "scenarios", ("library", "studies"))
_SCENARIOS = _Shelf("scenario", "scenarios", "scenarios", ("library", "scenarios"))
_QUESTIONNAIRES = _Shelf("questionnaire", "questionnaires", "questionnaires", ("library",))


def _resource(package: str, *parts: str) -> Traversable:
    resource = files(package)
    for part in parts:
        resource = resource / part
    return resource


def shipped_studies() -> list[str]:
    """Names of the studies ozlab ships, usable as ``load_study(name)``."""
    folder = _resource(_STUDIES.package, *_STUDIES.library)
    if not folder.is_dir():
        return []
    return sorted(
        entry.name.removesuffix(".yaml")
        for entry in folder.iterdir()
        if entry.name.endswith(".yaml") and entry.is_file()
    )


# --- one YAML file -------------------------------------------------------------------------


@dataclass(frozen=True)
class _Document:
    """A parsed file: the node tree (for lines) and the plain data (for pydantic)."""

    file: Path
    root: yaml.MappingNode
    data: dict[Any, Any]


def _line(node: yaml.Node) -> int:
    return node.start_mark.line + 1


def _read(file: Path, resource: Resource, problems: list[Problem]) -> str | None:
    try:
        data = resource.read_bytes()
    except FileNotFoundError:
        problems.append(Problem(file, None, "", "file not found"))
        return None
    except IsADirectoryError:
        problems.append(Problem(file, None, "", "is a folder, not a YAML file"))
        return None
    except OSError as error:
        problems.append(Problem(file, None, "", f"cannot be read: {error.strerror or error}"))
        return None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as error:
        line = data[: error.start].count(b"\n") + 1
        message = "is not UTF-8 text: save the file as UTF-8"
        problems.append(Problem(file, line, "", message))
        return None


def _syntax_problem(file: Path, error: yaml.MarkedYAMLError) -> Problem:
    """PyYAML's own words, on the line of the problem, with the column and its context."""
    mark = error.problem_mark or error.context_mark
    problem = (error.problem or error.context or "not valid YAML").removeprefix("but ")
    syntax = isinstance(
        error, yaml.scanner.ScannerError | yaml.parser.ParserError | yaml.composer.ComposerError
    )
    message = f"{'YAML syntax error' if syntax else 'YAML error'}: {problem}"
    details = [] if mark is None else [f"column {mark.column + 1}"]
    if error.context and error.problem and error.context_mark is not None:
        details.append(f"{error.context} on line {error.context_mark.line + 1}")
    if details:
        message += f" ({'; '.join(details)})"
    if "'\\t'" in problem:
        message += "; indent with spaces, not tabs"
    return Problem(file, None if mark is None else mark.line + 1, "", message)


def _parse(file: Path, text: str, problems: list[Problem]) -> _Document | None:
    loader = yaml.SafeLoader(text)
    try:
        root = loader.get_single_node()
        data = None if root is None else loader.construct_document(root)
    except yaml.MarkedYAMLError as error:
        problems.append(_syntax_problem(file, error))
        return None
    except yaml.YAMLError as error:
        problems.append(Problem(file, None, "", f"not valid YAML: {error}"))
        return None
    finally:
        loader.dispose()
    if root is None:
        problems.append(Problem(file, None, "", "the file is empty"))
        return None
    if not isinstance(root, yaml.MappingNode) or not isinstance(data, dict):
        kind = "a list" if isinstance(root, yaml.SequenceNode) else "a single value"
        message = f"the top level must be a mapping of fields such as 'id: ...', not {kind}"
        problems.append(Problem(file, _line(root), "", message))
        return None
    problems.extend(_duplicate_keys(file, root, ()))
    return _Document(file, root, data)


def _duplicate_keys(file: Path, node: yaml.Node, path: Loc) -> list[Problem]:
    """PyYAML silently keeps the last of two equal keys; a researcher must hear of it."""
    found: list[Problem] = []
    if isinstance(node, yaml.MappingNode):
        first_line: dict[str, int] = {}
        for key, value in node.value:
            if isinstance(key, yaml.ScalarNode) and key.value != "<<":
                if key.value in first_line:
                    message = (
                        f"{key.value!r} appears twice (first on line {first_line[key.value]}); "
                        "only the last one would count"
                    )
                    found.append(Problem(file, _line(key), _field((*path, key.value)), message))
                first_line.setdefault(key.value, _line(key))
            found.extend(_duplicate_keys(file, value, (*path, str(key.value))))
    elif isinstance(node, yaml.SequenceNode):
        for index, item in enumerate(node.value):
            found.extend(_duplicate_keys(file, item, (*path, index)))
    return found


# --- from a pydantic error to a line --------------------------------------------------------


def _field(loc: Loc) -> str:
    text = ""
    for part in loc:
        text += f"[{part}]" if isinstance(part, int) else (f".{part}" if text else str(part))
    return text


def _child(node: yaml.Node | None, part: str | int) -> tuple[yaml.Node, yaml.Node] | None:
    """The node naming ``part`` (a key, or a list item) and the node of its value."""
    if isinstance(node, yaml.MappingNode):
        match = None
        for key, value in node.value:  # the last equal key wins, as when constructing
            if isinstance(key, yaml.ScalarNode) and key.value == str(part):
                match = (key, value)
        return match
    if (
        isinstance(node, yaml.SequenceNode)
        and isinstance(part, int)
        and part in range(len(node.value))
    ):
        return node.value[part], node.value[part]
    return None


def _is_tag(node: yaml.Node | None, part: str | int) -> bool:
    """Parts pydantic adds to a loc that are not in the file: union tags, ``[key]``.

    A tag names the value of the node's own ``type`` key (``items[1]`` with ``type: text``
    gets the loc ``('items', 1, 'text', ...)``); callers take it once per node, because the
    same word may also be a field (TextItem's ``text``).
    """
    if not isinstance(part, str):
        return False
    if "[" in part:
        return True
    type_node = _child(node, "type")
    return type_node is not None and getattr(type_node[1], "value", None) == part


def _locate(root: yaml.MappingNode, loc: Loc) -> tuple[int, str]:
    """The line of the deepest part of ``loc`` present in the file, and the field's name."""
    node: yaml.Node | None = root
    line = _line(root)
    shown: list[str | int] = []
    tag_taken = False
    for part in loc:
        if not tag_taken and _is_tag(node, part):
            tag_taken = True
            continue
        child = _child(node, part)
        node = None if child is None else child[1]  # missing from the file: keep the line
        if child is not None:
            line = _line(child[0])
        tag_taken = False
        shown.append(part)
    return line, _field(tuple(shown))


def _alternatives(annotation: Any) -> list[Any]:
    origin = get_origin(annotation)
    if origin is Annotated:
        return _alternatives(get_args(annotation)[0])
    if origin in (Union, types.UnionType):
        return [alt for arg in get_args(annotation) for alt in _alternatives(arg)]
    return [annotation]


def _models_in(annotation: Any) -> list[type[BaseModel]]:
    return [
        alt
        for alt in _alternatives(annotation)
        if inspect.isclass(alt) and get_origin(alt) is None and issubclass(alt, BaseModel)
    ]


def _items_in(annotation: Any) -> list[Any]:
    items = []
    for alt in _alternatives(annotation):
        origin, args = get_origin(alt), get_args(alt)
        if origin in (tuple, list) and args:
            items.append(args[0])
        elif origin is dict and len(args) == 2:
            items.append(args[1])
    return items


def _tags(model: type[BaseModel]) -> tuple[Any, ...]:
    field = model.model_fields.get("type")
    if field is None or get_origin(field.annotation) is not Literal:
        return ()
    return get_args(field.annotation)


def _models_at(root: type[BaseModel], loc: Loc) -> list[type[BaseModel]]:
    """The model classes that may sit at ``loc``, to tell which fields are allowed there."""
    annotations: list[Any] = [root]
    tag_taken = False
    for part in loc:
        models = [model for annotation in annotations for model in _models_in(annotation)]
        fields = [m.model_fields[part].annotation for m in models if part in m.model_fields]
        tagged = [m for m in models if part in _tags(m)]
        if isinstance(part, int):
            annotations = [item for annotation in annotations for item in _items_in(annotation)]
            tag_taken = False
        elif tagged and not tag_taken:
            annotations, tag_taken = list(tagged), True
        elif fields:
            annotations, tag_taken = fields, False
        else:
            return []
    return [model for annotation in annotations for model in _models_in(annotation)]


def _allowed(root: type[BaseModel], loc: Loc) -> list[str]:
    names: list[str] = []
    for model in _models_at(root, loc):
        fields = (info.alias or name for name, info in model.model_fields.items())
        names.extend(name for name in fields if name not in names)
    return names


def _message(root: type[BaseModel], error: ErrorDetails) -> str:
    """pydantic's message, reworded where it speaks Python rather than YAML."""
    kind, loc, ctx = error["type"], error["loc"], error.get("ctx", {})
    if kind == "extra_forbidden":
        allowed = _allowed(root, loc[:-1])
        listed = f" (allowed: {', '.join(allowed)})" if allowed else ""
        return f"unknown field {loc[-1]!r}{listed}"
    if kind in ("union_tag_invalid", "union_tag_not_found"):
        tags = [tag for model in _models_at(root, loc) for tag in _tags(model)]
        choices = ", ".join(str(tag) for tag in tags)
        if kind == "union_tag_invalid":
            return f"unknown type {ctx.get('tag')!r} (allowed: {choices})"
        return f"missing field 'type' that says which kind this is (one of: {choices})"
    if kind in ("model_type", "model_attributes_type", "dict_type"):
        return "should be a mapping of fields (name: value lines), not a single value or a list"
    if kind in ("tuple_type", "list_type"):
        return "should be a list, such as [a, b] or one '- a' line per entry"
    if kind in ("too_short", "too_long"):
        return error["msg"].replace("Tuple", "List")
    return error["msg"].removeprefix(_VALUE_ERROR_PREFIX)


def _is_noise(error: ErrorDetails) -> bool:
    """A tuple holding an invalid item is also reported as too short; the item's error says it."""
    value, ctx = error.get("input"), error.get("ctx", {})
    return (
        error["type"] == "too_short"
        and isinstance(value, list | tuple)
        and len(value) >= ctx.get("min_length", 0)
    )


def _problem(document: _Document, root: type[BaseModel], error: ErrorDetails) -> Problem:
    loc = tuple(error["loc"])
    if error["type"] in ("union_tag_invalid", "union_tag_not_found"):
        loc = (*loc, "type")  # point at the type line, or at the item that lacks one
    line, field = _locate(document.root, loc)
    return Problem(document.file, line, field, _message(root, error))


def _validate(document: _Document, model: type[Model], problems: list[Problem]) -> Model | None:
    try:
        return model.model_validate(document.data)
    except ValidationError as error:
        problems.extend(
            _problem(document, model, detail)
            for detail in error.errors(include_url=False)
            if not _is_noise(detail)
        )
        return None


def _load_file(
    file: Path, resource: Resource, model: type[Model], problems: list[Problem]
) -> tuple[_Document | None, Model | None]:
    text = _read(file, resource, problems)
    document = None if text is None else _parse(file, text, problems)
    return document, None if document is None else _validate(document, model, problems)


# --- a study and the files it names ---------------------------------------------------------


class _StudyLoader:
    """One loading run: the study folder, the problems so far, each file loaded once."""

    def __init__(self, study_dir: Path) -> None:
        self.study_dir = study_dir
        self.problems: list[Problem] = []
        self.files: list[Path] = []  # in the order they were opened, to report in that order
        self.scenarios: dict[str, Scenario | None] = {}
        self.questionnaires: dict[str, Questionnaire | None] = {}

    def open(
        self, file: Path, resource: Resource, model: type[Model]
    ) -> tuple[_Document | None, Model | None]:
        self.files.append(file)
        return _load_file(file, resource, model, self.problems)

    def follow(self, document: _Document, key: str, shelf: _Shelf) -> None:
        """Load every id listed under ``key``; a bad reference is told at its own line."""
        refs = document.data.get(key)
        if not isinstance(refs, list):
            return  # missing or not a list: validation already says so
        seen: dict[str, int] = {}
        for index, ref_id in enumerate(refs):
            if not isinstance(ref_id, str):
                continue  # validation already says so
            line, field = _locate(document.root, (key, index))
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
            seen.setdefault(ref_id, index)
            if message:
                self.problems.append(Problem(document.file, line, field, message))

    def local(self, ref_id: str, shelf: _Shelf) -> Path:
        return self.study_dir / shelf.folder / f"{ref_id}.yaml"

    def load(self, ref_id: str, shelf: _Shelf) -> bool:
        """Load a referenced file once; False when no file of that id exists anywhere."""
        cache: dict[str, Any] = self.scenarios if shelf is _SCENARIOS else self.questionnaires
        if ref_id in cache:
            return True
        local, shipped = self.local(ref_id, shelf), shelf.shipped(ref_id)
        if local.is_file():
            file, resource = local, local
        elif shipped.is_file():
            file, resource = Path(str(shipped)), shipped
        else:
            return False
        cache[ref_id] = None  # before following its own references, in case they loop
        model = Scenario if shelf is _SCENARIOS else Questionnaire
        document, loaded = self.open(file, resource, model)
        if document is not None:
            self.check_id(document, ref_id)
            if shelf is _SCENARIOS:
                self.follow(document, "post_task", _QUESTIONNAIRES)
        cache[ref_id] = loaded
        return True

    def check_id(self, document: _Document, ref_id: str) -> None:
        file_id = document.data.get("id")
        if isinstance(file_id, str) and file_id != ref_id:
            line, field = _locate(document.root, ("id",))
            message = f"id {file_id!r} does not match {ref_id!r}, the name this file is used by"
            self.problems.append(Problem(document.file, line, field, message))


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
    """A study with its scenarios and questionnaires, or a StudyError listing every problem.

    ``ref`` is a path to a study YAML file or the name of a shipped study (``"hmd"``).
    """
    file, resource = _find_study(ref)
    loader = _StudyLoader(file.parent)
    document, study = loader.open(file, resource, Study)
    if document is not None:
        loader.follow(document, "scenarios", _SCENARIOS)
        loader.follow(document, "post_study", _QUESTIONNAIRES)
    if loader.problems or study is None:
        raise StudyError(_in_file_order(loader.problems, loader.files))
    return StudyBundle(
        study=study,
        scenarios={key: value for key, value in loader.scenarios.items() if value is not None},
        questionnaires={
            key: value for key, value in loader.questionnaires.items() if value is not None
        },
    )


def _load_one(path: str | Path, model: type[Model]) -> Model:
    problems: list[Problem] = []
    _, loaded = _load_file(Path(path), Path(path), model, problems)
    if problems or loaded is None:
        raise StudyError(_in_file_order(problems, [Path(path)]))
    return loaded


def load_scenario(path: str | Path) -> Scenario:
    """One scenario file, validated on its own (its questionnaires are not looked up)."""
    return _load_one(path, Scenario)


def load_questionnaire(path: str | Path) -> Questionnaire:
    """One questionnaire file, validated on its own."""
    return _load_one(path, Questionnaire)
