"""Questionnaire instruments as data: what a researcher writes in a YAML file.

Items have stable ids (``hmd.understanding``) so that stored answers never depend on
list positions; item types form a discriminated union on ``type``.
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator
from pydantic_core import InitErrorDetails, PydanticCustomError

Loc = tuple[str | int, ...]


def error_at(title: str, errors: list[tuple[Loc, str, object]]) -> ValidationError:
    """Errors of a cross-field check placed at the offending field, not at the whole model.

    A plain ``ValueError`` in a model validator is reported at the model's own location;
    pydantic nests the locations of a raised ``ValidationError`` instead, so that
    ``ozlab check`` can name the field and its line. Each error is ``(loc, message, input)``.
    """
    return ValidationError.from_exception_data(
        title,
        [
            InitErrorDetails(
                type=PydanticCustomError("value_error", "{reason}", {"reason": message}),
                loc=loc,
                input=value,
            )
            for loc, message, value in errors
        ],
    )


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class ScaleItem(_Model):
    """A rating scale of any width with a label for every point."""

    type: Literal["scale"]
    id: str = Field(min_length=1, max_length=64)
    text: str = Field(min_length=1)
    min: int = 1
    max: int = 5
    labels: dict[int, str]
    help: str | None = None
    examples: tuple[str, ...] = ()
    required: bool = True

    @model_validator(mode="after")
    def _labels_cover_scale(self) -> ScaleItem:
        if self.max <= self.min:
            message = f"max ({self.max}) must be greater than min ({self.min})"
            raise error_at("ScaleItem", [(("max",), message, self.max)])
        points = set(range(self.min, self.max + 1))
        if set(self.labels) != points:
            missing = sorted(points - set(self.labels))
            extra = sorted(set(self.labels) - points)
            message = (
                f"labels must name every point from {self.min} to {self.max}"
                + (f"; missing {missing}" if missing else "")
                + (f"; not on the scale {extra}" if extra else "")
            )
            raise error_at("ScaleItem", [(("labels",), message, dict(self.labels))])
        return self

    def label(self, value: int) -> str:
        return self.labels[value]


class TextItem(_Model):
    """Free text typed by the participant; optional items can be skipped with a button."""

    type: Literal["text"]
    id: str = Field(min_length=1, max_length=64)
    text: str = Field(min_length=1)
    required: bool = False
    max_length: int = Field(default=2000, ge=1, le=4000)
    help: str | None = None


Item = Annotated[ScaleItem | TextItem, Field(discriminator="type")]


class Questionnaire(_Model):
    id: str = Field(min_length=1, max_length=64)
    title: str
    intro: str | None = None
    items: tuple[Item, ...] = Field(min_length=1)

    @model_validator(mode="after")
    def _unique_item_ids(self) -> Questionnaire:
        first: dict[str, int] = {}
        repeats = []
        for index, item in enumerate(self.items):
            if item.id in first:
                message = f"item id {item.id!r} is already used by items[{first[item.id]}]"
                repeats.append((("items", index, "id"), message, item.id))
            first.setdefault(item.id, index)
        if repeats:
            raise error_at("Questionnaire", repeats)
        return self
