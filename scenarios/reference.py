"""The study file reference, written from the models a researcher's files are checked with.

``python -m scenarios.reference > docs/reference/study-file.md`` writes the page; a test
fails when the committed page differs from what the models say, so the reference cannot
drift from what ``ozlab check`` accepts. Each field's meaning is its docstring in the model.
"""

from __future__ import annotations

import inspect
import re
import sys
import types
from typing import Annotated, Any, Literal, Union, get_args, get_origin

from pydantic import BaseModel
from pydantic.fields import FieldInfo

from questionnaires.models import Questionnaire
from scenarios import durations
from scenarios.field_docs import describe, field_types, models_in
from scenarios.jobs import AnnotationJob
from scenarios.models import Scenario, Study

__all__ = ["FILES", "all_models", "reference"]

FILES: tuple[tuple[str, str, type[BaseModel]], ...] = (
    ("The study file", "`study.yaml`, or any name given to `ozlab check` and `ozlab run`", Study),
    ("A scenario file", "`scenarios/<id>.yaml` beside the study, then ozlab's library", Scenario),
    (
        "A questionnaire file",
        "`questionnaires/<id>.yaml` beside the study, then ozlab's library",
        Questionnaire,
    ),
    ("An annotation job", "`jobs/<id>.yaml` beside the study, then ozlab's library", AnnotationJob),
)

_HEADER = """\
# The study file reference

<!-- Written by `python -m scenarios.reference > docs/reference/study-file.md`;
     a test fails when it differs from the models. Edit the models' docstrings instead. -->

What each file a study is made of may say: every field, its type, its default, and what it
means. `ozlab check` judges a file by exactly these models and names the file, line and field
of every mistake; `ozlab schema` writes the same fields as JSON Schemas for an editor's
completion. Durations are seconds (`90`) or a number with a unit (`90s`, `10m`, `1.5h`,
`1d`). How the parts fit together is in [Writing a study](../writing-a-study.md).
"""


def all_models(root: type[BaseModel]) -> dict[str, type[BaseModel]]:
    """Every model a file may hold, by class name (the names of the schema's ``$defs``)."""
    found: dict[str, type[BaseModel]] = {}
    waiting = [root]
    while waiting:
        model = waiting.pop()
        if found.setdefault(model.__name__, model) is not model:
            continue
        for hint in field_types(model).values():
            waiting.extend(m for m in models_in(hint) if m.__name__ not in found)
    return found


def _plain(text: str) -> str:
    """A docstring as one line of Markdown: reStructuredText's double backticks made single."""
    text = re.sub(r"``(.+?)``", r"`\1`", text)
    return " ".join(text.split()).replace("|", "\\|")


def _is_duration(metadata: tuple[Any, ...]) -> bool:
    parse = getattr(durations, "_parse_duration", None)
    return any(getattr(m, "func", None) is parse for m in metadata)


def _type(annotation: Any) -> str:
    """How a researcher reads a type: words, not Python."""
    origin = get_origin(annotation)
    args = get_args(annotation)
    if origin is Annotated:
        if _is_duration(args[1:]):
            return "duration"
        return _type(args[0])
    if origin is Literal:
        return " or ".join(f"`{value}`" for value in args)
    if origin in (Union, types.UnionType):
        named = [_type(a) for a in args if a is not type(None)]
        return " or ".join(dict.fromkeys(named))
    if origin is tuple or origin is list:
        return f"list of {_type(args[0])}" if args else "list"
    if origin is dict:
        return f"mapping of {_type(args[0])} to {_type(args[1])}"
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return f"[{annotation.__name__}](#{annotation.__name__.lower()})"
    words = {str: "text", int: "integer", float: "number", bool: "true or false", Any: "any"}
    return words.get(annotation, getattr(annotation, "__name__", str(annotation)))


def _default(info: FieldInfo) -> str:
    if info.is_required():
        return "required"
    value = info.get_default(call_default_factory=True)
    if value is None:
        return "none"
    if isinstance(value, BaseModel):
        return "its defaults"
    if value in ((), [], {}):
        return "empty"
    if isinstance(value, bool):
        return "`true`" if value else "`false`"
    if isinstance(value, str):
        return f'"{_plain(value)}"'
    return f"`{value}`"


def _table(model: type[BaseModel]) -> list[str]:
    hints = field_types(model)
    lines = ["| field | type | default | meaning |", "|---|---|---|---|"]
    for name, info in model.model_fields.items():
        key = info.alias or name
        duration = _is_duration(tuple(info.metadata))
        kind = "duration" if duration else _type(hints[name])
        meaning = _plain(info.description or "")
        lines.append(f"| `{key}` | {kind} | {_default(info)} | {meaning} |")
    return lines


def _prose(text: str | None) -> list[str]:
    """A model's docstring as Markdown paragraphs (its lists stay lists)."""
    if not text or text is BaseModel.__doc__:
        return []
    return [re.sub(r"``(.+?)``", r"`\1`", inspect.cleandoc(text)), ""]


def _section(model: type[BaseModel], level: str) -> list[str]:
    return [f"{level} {model.__name__}", "", *_prose(model.__doc__), *_table(model), ""]


def reference() -> str:
    """The whole page: each kind of file, its top level, then every part it may hold once."""
    out = [_HEADER]
    shown: set[str] = set()
    for title, where, root in FILES:
        describe(root)
        out += [f"## {title}", "", f"Where it lives: {where}.", ""]
        out += _prose(root.__doc__)
        out += [*_table(root), ""]
        shown.add(root.__name__)
        parts = sorted(all_models(root).items())
        for name, model in parts:
            if name in shown:
                continue
            shown.add(name)
            out += _section(model, "###")
    return "\n".join(out).rstrip() + "\n"


def main() -> None:
    sys.stdout.write(reference())


if __name__ == "__main__":
    main()
