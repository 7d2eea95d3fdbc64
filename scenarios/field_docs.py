"""The fields' descriptions, from the docstring under each field, read when something shows
them (``ozlab schema``, the study file reference) rather than when the models are defined.

pydantic's ``use_attribute_docstrings`` reads them while each class is made, and before
Python 3.13 it finds a class's source by walking the stack frames and asking
``inspect.getmodule`` of each: a fifth of a second of every ozlab command (a report, the
bot's start), for words only these two readers use.
"""

from __future__ import annotations

import ast
import inspect
import textwrap
from typing import Any, get_args, get_type_hints

from pydantic import BaseModel

_described: set[type[BaseModel]] = set()


def docstrings(model: type) -> dict[str, str]:
    """Each field of ``model``'s own class body that has a docstring under it: the text."""
    try:
        source = textwrap.dedent(inspect.getsource(model))
    except (OSError, TypeError):
        return {}
    [body] = ast.parse(source).body
    assert isinstance(body, ast.ClassDef)
    found: dict[str, str] = {}
    for field, under in zip(body.body, body.body[1:], strict=False):
        if (
            isinstance(field, ast.AnnAssign)
            and isinstance(field.target, ast.Name)
            and isinstance(under, ast.Expr)
            and isinstance(under.value, ast.Constant)
            and isinstance(under.value.value, str)
        ):
            found[field.target.id] = inspect.cleandoc(under.value.value)
    return found


def field_types(model: type[BaseModel]) -> dict[str, Any]:
    """The fields' types, resolved here: a field's stored annotation may still be a forward
    reference, depending on when pydantic last rebuilt the model."""
    hints = get_type_hints(model, include_extras=True)
    return {name: hints.get(name, info.annotation) for name, info in model.model_fields.items()}


def models_in(hint: Any) -> list[type[BaseModel]]:
    """The models a field's type names (in a union, a list, a mapping...)."""
    if isinstance(hint, type) and issubclass(hint, BaseModel):
        return [hint]
    return [model for arg in get_args(hint) for model in models_in(arg)]


def _held_first(root: type[BaseModel], seen: set[type[BaseModel]]) -> list[type[BaseModel]]:
    """``root`` and every model it may hold, each after the models it holds."""
    seen.add(root)
    ordered: list[type[BaseModel]] = []
    for hint in field_types(root).values():
        for model in models_in(hint):
            if model not in seen:
                ordered += _held_first(model, seen)
    return [*ordered, root]


def describe(root: type[BaseModel]) -> None:
    """Give each field of ``root`` and of the models it may hold its docstring, as its
    description, where it has none of its own (the held models first: a model's schema
    takes theirs as they are)."""
    for model in _held_first(root, set()):
        if model in _described:
            continue
        texts: dict[str, str] = {}
        for klass in reversed(model.__mro__):  # a subclass's own docstring wins
            if issubclass(klass, BaseModel) and klass is not BaseModel:
                texts.update(docstrings(klass))
        for name, info in model.model_fields.items():
            if info.description is None and name in texts:
                info.description = texts[name]
        model.model_rebuild(force=True)
        _described.add(model)
