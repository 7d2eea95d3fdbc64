"""One YAML file, validated, with every problem placed at its file, line and field.

Researchers edit YAML, not code, so a mistake is only useful to them with its place: each
file is composed with PyYAML to keep the position of every node, validated with its pydantic
model, and each error's ``loc`` is walked down the node tree to the line that holds it.
"""

from __future__ import annotations

import inspect
import types
from dataclasses import dataclass
from importlib.resources.abc import Traversable
from pathlib import Path
from typing import Annotated, Any, Literal, TypeVar, Union, get_args, get_origin

import yaml
from pydantic import BaseModel, ValidationError
from pydantic_core import ErrorDetails

from bot.core.errors import StudyFileError

Model = TypeVar("Model", bound=BaseModel)
Loc = tuple[str | int, ...]
Resource = Path | Traversable

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


class StudyError(StudyFileError):
    """A study, scenario or questionnaire could not be loaded; ``problems`` holds them all.

    The message is what ``ozlab check`` prints: one problem per line, then their count.
    """

    def __init__(self, problems: list[Problem]) -> None:
        self.problems = problems
        count = f"{len(problems)} problem{'' if len(problems) == 1 else 's'} found."
        super().__init__("\n".join([*(str(problem) for problem in problems), count]))


@dataclass(frozen=True)
class Document:
    """A parsed file: the node tree (for lines) and the plain data (for pydantic)."""

    file: Path
    root: yaml.MappingNode
    data: dict[Any, Any]

    def where(self, loc: Loc) -> tuple[int, str]:
        """The line and field name of ``loc``, for problems found after validation."""
        return locate(self.root, loc)

    def problem(self, loc: Loc, message: str) -> Problem:
        line, field = locate(self.root, loc)
        return Problem(self.file, line, field, message)


def line_of(node: yaml.Node) -> int:
    return node.start_mark.line + 1


def read_text(file: Path, resource: Resource, problems: list[Problem]) -> str | None:
    """The file's text, or None with a problem a researcher can act on."""
    try:
        data = resource.read_bytes()
    except FileNotFoundError:
        problems.append(Problem(file, None, "", "file not found"))
        return None
    except IsADirectoryError:
        problems.append(Problem(file, None, "", "is a folder, not a file"))
        return None
    except OSError as error:
        problems.append(Problem(file, None, "", f"cannot be read: {error.strerror or error}"))
        return None
    try:
        return data.decode("utf-8-sig")  # spreadsheet programs like to add a BOM
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


REPEATED_VALUES = 100_000
"""How many values a file's aliases may repeat in all. Shared scale labels repeat a few
hundred; a "billion laughs" file (lists of aliases to lists of aliases) repeats billions,
and everything that walks the parsed values would walk every one of them."""


DEEPEST = 100
"""How many levels values may nest (a study needs about six): PyYAML composes a file by
recursion, and a file of thousands of brackets would otherwise reach Python's limit, slowly."""


class _Refused(Exception):
    """What ozlab reads no further (an alias it will not follow, values nested too deeply),
    with the place."""

    def __init__(self, mark: yaml.Mark, message: str) -> None:
        super().__init__(message)
        self.line = mark.line + 1
        self.message = message


class _Loader(yaml.SafeLoader):
    """PyYAML's safe loader, counting what each alias repeats as it composes the file.

    An alias is composed as the anchored node itself, so the tree is small however many
    values the aliases stand for; the count stops a file before anything walks it.
    """

    def __init__(self, text: str) -> None:
        super().__init__(text)
        self.repeated = 0
        self._sizes: dict[yaml.Node, int] = {}
        self._depth = 0

    def compose_node(self, parent: yaml.Node | None, index: int) -> yaml.Node | None:
        if self.check_event(yaml.AliasEvent):
            event = self.peek_event()  # type: ignore[no-untyped-call]
            node = self.anchors.get(event.anchor)
            if node is not None:  # an unknown anchor is PyYAML's own error
                self._count(event.anchor, event.start_mark, node)
        if self._depth == DEEPEST:
            raise _Refused(
                self.peek_event().start_mark,  # type: ignore[no-untyped-call]
                "values nested deeper than ozlab can read: a study needs a few levels",
            )
        self._depth += 1
        try:
            return super().compose_node(parent, index)
        finally:
            self._depth -= 1

    def _count(self, anchor: str, mark: yaml.Mark, node: yaml.Node) -> None:
        if node.end_mark is None:  # a collection not yet closed: the alias is inside it
            raise _Refused(
                mark, f"the alias *{anchor} is inside its own anchor: it would repeat without end"
            )
        self.repeated += self._size(node)
        if self.repeated > REPEATED_VALUES:
            raise _Refused(
                mark,
                f"the aliases up to *{anchor} here repeat more than {REPEATED_VALUES} values"
                ' (a YAML "billion laughs" file?): ozlab reads no further',
            )

    def _size(self, node: yaml.Node) -> int:
        """How many values ``node`` stands for, its aliases followed (each node once)."""
        size = self._sizes.get(node)
        if size is None:
            if isinstance(node, yaml.MappingNode):
                size = 1 + sum(self._size(k) + self._size(v) for k, v in node.value)
            elif isinstance(node, yaml.SequenceNode):
                size = 1 + sum(self._size(item) for item in node.value)
            else:
                size = 1
            self._sizes[node] = size
        return size


def parse(file: Path, text: str, problems: list[Problem]) -> Document | None:
    loader = _Loader(text)
    try:
        root = loader.get_single_node()
        # Before constructing: merging ``<<: *base`` writes the base's keys into the node.
        duplicates = [] if root is None else _duplicate_keys(file, root, (), set())
        data = None if root is None else loader.construct_document(root)
    except _Refused as error:
        problems.append(Problem(file, error.line, "", error.message))
        return None
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
        problems.append(Problem(file, line_of(root), "", message))
        return None
    problems.extend(duplicates)
    return Document(file, root, data)


def _duplicate_keys(file: Path, node: yaml.Node, path: Loc, seen: set[yaml.Node]) -> list[Problem]:
    """PyYAML silently keeps the last of two equal keys; a researcher must hear of it.

    A node an alias repeats is looked at once, where it is first met: its duplicates are
    on the same lines wherever it is repeated.
    """
    found: list[Problem] = []
    if node in seen:
        return found
    seen.add(node)
    if isinstance(node, yaml.MappingNode):
        first_line: dict[str, int] = {}
        for key, value in node.value:
            if isinstance(key, yaml.ScalarNode) and key.value != "<<":
                if key.value in first_line:
                    message = (
                        f"{key.value!r} appears twice (first on line {first_line[key.value]}); "
                        "only the last one would count"
                    )
                    found.append(
                        Problem(file, line_of(key), field_name((*path, key.value)), message)
                    )
                first_line.setdefault(key.value, line_of(key))
            found.extend(_duplicate_keys(file, value, (*path, str(key.value)), seen))
    elif isinstance(node, yaml.SequenceNode):
        for index, item in enumerate(node.value):
            found.extend(_duplicate_keys(file, item, (*path, index), seen))
    return found


# --- from a pydantic error to a line --------------------------------------------------------


def field_name(loc: Loc) -> str:
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


def _walk(root: yaml.MappingNode, loc: Loc) -> tuple[yaml.Node | None, int, Loc]:
    """The node at ``loc`` (None when the file lacks it), the line of its deepest present
    part, and ``loc`` without pydantic's tags."""
    node: yaml.Node | None = root
    line = line_of(root)
    shown: list[str | int] = []
    tag_taken = False
    for part in loc:
        if not tag_taken and _is_tag(node, part):
            tag_taken = True
            continue
        child = _child(node, part)
        node = None if child is None else child[1]  # missing from the file: keep the line
        if child is not None:
            line = line_of(child[0])
        tag_taken = False
        shown.append(part)
    return node, line, tuple(shown)


def locate(root: yaml.MappingNode, loc: Loc) -> tuple[int, str]:
    """The line of the deepest part of ``loc`` present in the file, and the field's name."""
    _, line, shown = _walk(root, loc)
    return line, field_name(shown)


def _value_loc(root: yaml.MappingNode, loc: Loc, value: object) -> Loc:
    """A condition's wrong value is told at ``equals`` or ``any_of[n]``, not at the
    condition: the model names only the condition."""
    node, _, shown = _walk(root, loc)
    if not isinstance(value, int | str) or not isinstance(node, yaml.MappingNode):
        return loc
    for key in ("equals", "any_of"):
        child = _child(node, key)
        values = None if child is None else child[1]
        if isinstance(values, yaml.ScalarNode) and values.value == str(value):
            return (*shown, key)
        if isinstance(values, yaml.SequenceNode):
            for index, entry in enumerate(values.value):
                if isinstance(entry, yaml.ScalarNode) and entry.value == str(value):
                    return (*shown, key, index)
    return loc


# --- which models and fields may sit at a loc ------------------------------------------------


def _alternatives(annotation: Any) -> list[Any]:
    origin = get_origin(annotation)
    if origin is Annotated:
        return _alternatives(get_args(annotation)[0])
    if origin in (Union, types.UnionType):
        return [alt for arg in get_args(annotation) for alt in _alternatives(arg)]
    return [annotation]


def models_in(annotation: Any) -> list[type[BaseModel]]:
    """The pydantic models an annotation may hold (through unions and ``Annotated``)."""
    return [
        alt
        for alt in _alternatives(annotation)
        if inspect.isclass(alt) and get_origin(alt) is None and issubclass(alt, BaseModel)
    ]


def items_in(annotation: Any) -> list[Any]:
    """The annotations of the entries of a list, tuple or dict annotation."""
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
        models = [model for annotation in annotations for model in models_in(annotation)]
        fields = [m.model_fields[part].annotation for m in models if part in m.model_fields]
        tagged = [m for m in models if part in _tags(m)]
        if isinstance(part, int) or not models:  # a list's index, or a mapping's key
            annotations = [item for annotation in annotations for item in items_in(annotation)]
            tag_taken = False
        elif tagged and not tag_taken:
            annotations, tag_taken = list(tagged), True
        elif fields:
            annotations, tag_taken = fields, False
        else:
            return []
    return [model for annotation in annotations for model in models_in(annotation)]


def _names(model: type[BaseModel]) -> list[str]:
    return [info.alias or name for name, info in model.model_fields.items()]


def _allowed(root: type[BaseModel], loc: Loc) -> list[str]:
    names: list[str] = []
    for model in _models_at(root, loc):
        names.extend(name for name in _names(model) if name not in names)
    return names


def _unknown_field(root: type[BaseModel], loc: Loc) -> str:
    """Say that a field belongs to another ``type`` when it does: the usual slip."""
    name, parent = loc[-1], loc[:-1]
    allowed = _allowed(root, parent)
    listed = f" (allowed: {', '.join(allowed)})" if allowed else ""
    if len(parent) >= 2 and parent[-2] == "translations":
        return f"{name!r} cannot be translated (translatable: {', '.join(allowed)})"
    tag = parent[-1] if parent else None
    siblings = _models_at(root, parent[:-1]) if parent else []
    if not any(tag in _tags(model) for model in siblings):
        return f"unknown field {name!r}{listed}"
    owners = [t for model in siblings if name in _names(model) for t in _tags(model)]
    if name == "reverse" and owners == ["scale"]:
        return f"only scale items can be reverse-coded, not {tag} items"
    if owners:
        others = ", ".join(repr(owner) for owner in owners)
        which = f"type {others} has" if len(owners) == 1 else f"types {others} have"
        return f"unknown field {name!r} for type {tag!r}: only {which} it{listed}"
    return f"unknown field {name!r}{listed}"


def _message(root: type[BaseModel], error: ErrorDetails) -> str:
    """pydantic's message, reworded where it speaks Python rather than YAML."""
    kind, loc, ctx = error["type"], tuple(error["loc"]), error.get("ctx", {})
    if kind == "extra_forbidden":
        return _unknown_field(root, loc)
    if kind in ("union_tag_invalid", "union_tag_not_found"):
        tags = [tag for model in _models_at(root, loc) for tag in _tags(model)]
        choices = ", ".join(str(tag) for tag in tags)
        if kind == "union_tag_invalid":
            return f"unknown type {ctx.get('tag')!r} (allowed: {choices})"
        return f"missing field 'type' that says which kind this is (one of: {choices})"
    if kind == "missing" and loc[-2:-1] == ("scale",) and loc[-1] == "labels":
        return "a scale needs a label for every point, e.g. labels: {1: Disagree, ..., 5: Agree}"
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


def _problem(document: Document, root: type[BaseModel], error: ErrorDetails) -> Problem:
    loc = tuple(error["loc"])
    if error["type"] in ("union_tag_invalid", "union_tag_not_found"):
        loc = (*loc, "type")  # point at the type line, or at the item that lacks one
    elif " is not an answer of " in error["msg"]:
        loc = _value_loc(document.root, loc, error.get("input"))
    line, field = locate(document.root, loc)
    return Problem(document.file, line, field, _message(root, error))


def validate(document: Document, model: type[Model], problems: list[Problem]) -> Model | None:
    try:
        return model.model_validate(document.data)
    except ValidationError as error:
        problems.extend(
            _problem(document, model, detail)
            for detail in error.errors(include_url=False)
            if not _is_noise(detail)
        )
        return None


def load_file(
    file: Path, resource: Resource, model: type[Model], problems: list[Problem]
) -> tuple[Document | None, Model | None]:
    """Read, parse and validate one file; problems are added, never raised."""
    text = read_text(file, resource, problems)
    document = None if text is None else parse(file, text, problems)
    return document, None if document is None else validate(document, model, problems)
