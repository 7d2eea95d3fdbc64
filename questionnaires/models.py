"""Questionnaire instruments as data: what a researcher writes in a YAML file.

Items have stable ids (``hmd.understanding``) so that stored answers never depend on
list positions; item types form a discriminated union on ``type``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Annotated, Literal, Protocol

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    PrivateAttr,
    ValidationError,
    model_validator,
)
from pydantic_core import InitErrorDetails, PydanticCustomError

Loc = tuple[str | int, ...]


def error_at(title: str, errors: Sequence[tuple[Loc, str, object]]) -> ValidationError:
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


class _Identified(Protocol):
    @property
    def id(self) -> str: ...


def repeated_ids(field: str, things: Sequence[_Identified]) -> list[tuple[Loc, str, object]]:
    """Errors for ids used twice in a list (answers and records are stored by id)."""
    first: dict[str, int] = {}
    repeats: list[tuple[Loc, str, object]] = []
    for index, thing in enumerate(things):
        thing_id = thing.id
        if thing_id in first:
            message = f"{field[:-1]} id {thing_id!r} is already used by {field}[{first[thing_id]}]"
            repeats.append(((field, index, "id"), message, thing_id))
        first.setdefault(thing_id, index)
    return repeats


class _Model(BaseModel):
    """Validators built when first used (``defer_build``): a command that validates a
    study validates it as one tree, and building each model at import cost every command
    0.2 s."""

    model_config = ConfigDict(extra="forbid", frozen=True, populate_by_name=True, defer_build=True)


class Condition(_Model):
    """Skip logic: ask an item only when an earlier item of the same questionnaire was
    answered a certain way (``equals`` one value, or ``any_of`` several)."""

    item: str
    """The id of an earlier closed item of this questionnaire."""
    equals: int | str | None = None
    """The condition holds when that item was answered with this value."""
    any_of: tuple[int | str, ...] = ()
    """The condition holds when that item was answered with one of these values."""

    @model_validator(mode="after")
    def _one_test(self) -> Condition:
        if (self.equals is None) == (not self.any_of):
            raise ValueError("give exactly one of 'equals' or 'any_of'")
        return self

    def holds(self, answer: int | str | None) -> bool:
        accepted = (self.equals,) if self.equals is not None else self.any_of
        return answer is not None and answer in accepted


Measurement = Literal["ordinal", "interval", "ratio"]
"""What the distance between two points of a scale means: only their order (ordinal), equal
steps (interval), or equal steps from a true zero (ratio)."""


class _Item(_Model):
    id: str = Field(min_length=1, max_length=64)
    """A stable id, by convention prefixed with the questionnaire's (``hmd.understanding``):
    the answers, the report and the export's columns are keyed by it."""
    text: str = Field(min_length=1)
    """The question or statement, as the participant reads it."""
    required: bool = True
    """Whether the participant must answer; an optional item gets a Skip button."""
    help: str | None = None
    """Shown with an "Examples" button: scoring examples, definitions, worked examples."""
    examples: tuple[str, ...] = ()
    """Examples shown with ``help`` behind the "Examples" button, one paragraph each."""
    construct_name: str | None = Field(default=None, alias="construct")
    """``construct`` in files: the scale this item belongs to (e.g. "enjoyment"), for
    scores and reliability. (``construct`` itself is a name pydantic reserves.)"""
    when: Condition | None = None
    """Skip logic: ask this item only when an earlier answer was as given."""

    def help_text(self) -> str | None:
        parts = [p for p in (self.help, *self.examples) if p]
        return "\n\n".join(parts) if parts else None


class ScaleItem(_Item):
    """A rating scale of any width with a label for every point."""

    type: Literal["scale"]
    """``scale``: one point of a rating scale, one button per point."""
    min: int = 1
    """The lowest point of the scale."""
    max: int = 5
    """The highest point of the scale."""
    labels: dict[int, str]
    """Point → its label, for every point from ``min`` to ``max``; long labels are listed in
    the message and the numbers go on the buttons."""
    reverse: bool = False
    """Scored as min + max − answer in analysis; shown as asked."""
    attention: int | None = None
    """An instructed-response check: the answer a reading participant gives."""
    measurement: Measurement | None = None
    """The level of measurement agreement between annotators is reported at (Krippendorff's
    alpha); unset, the instrument's ``measurement`` holds."""

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
        if self.attention is not None and self.attention not in points:
            message = f"attention answer {self.attention} is not on the scale"
            raise error_at("ScaleItem", [(("attention",), message, self.attention)])
        return self

    def label(self, value: int) -> str:
        return self.labels[value]

    def choices(self) -> list[tuple[int, str]]:
        return [(v, self.labels[v]) for v in range(self.min, self.max + 1)]


class YesNoItem(_Item):
    """Yes (stored as 1) or no (0)."""

    type: Literal["yes_no"]
    """``yes_no``: two buttons, stored as 1 and 0."""
    yes: str = "Yes"
    """The yes button's label."""
    no: str = "No"
    """The no button's label."""
    attention: bool | None = None
    """An instructed-response check: the answer a reading participant gives (stored and
    flagged, never dropped)."""

    def choices(self) -> list[tuple[int, str]]:
        return [(1, self.yes), (0, self.no)]


class ThumbsItem(_Item):
    """Thumbs up (1) or down (0), e.g. for a single reply."""

    type: Literal["thumbs"]
    """``thumbs``: thumbs up or down, stored as 1 and 0."""
    up: str = "👍"
    """The thumbs-up button's label."""
    down: str = "👎"
    """The thumbs-down button's label."""

    def choices(self) -> list[tuple[int, str]]:
        return [(1, self.up), (0, self.down)]


class PreferenceItem(_Item):
    """Which of the two systems the participant met they prefer: "the first assistant" or
    "the second assistant", in the order met (stored as a vote between those two
    systems too); with ``strength``, much or slightly, or no preference."""

    type: Literal["preference"]
    """``preference``: the first or the second system met; stored as 1 or 2, or with
    ``strength`` as 1 (first, much) to 5 (second, much), 3 being no preference."""
    strength: bool = False
    """Ask how much: much or slightly better, or no preference (five buttons)."""
    first: str = "The first assistant"
    """The words for the system met first."""
    second: str = "The second assistant"
    """The words for the system met second."""
    neither: str = "No preference"
    """With ``strength``: the words for no preference."""
    much: str = "much better"
    """With ``strength``: added to a side's words for a strong preference."""
    slightly: str = "slightly better"
    """With ``strength``: added to a side's words for a weak preference."""

    def choices(self) -> list[tuple[int, str]]:
        if not self.strength:
            return [(1, self.first), (2, self.second)]
        return [
            (1, f"{self.first}, {self.much}"),
            (2, f"{self.first}, {self.slightly}"),
            (3, self.neither),
            (4, f"{self.second}, {self.slightly}"),
            (5, f"{self.second}, {self.much}"),
        ]


class SliderItem(_Item):
    """A visual-analogue scale from 0 to 100: a row of buttons at every ``step`` points,
    and any whole number from 0 to 100 typed instead."""

    type: Literal["slider"]
    """``slider``: 0 to 100, by a button (0, 10, …, 100) or a typed number; stored as the
    number."""
    step: int = Field(default=10, ge=5, le=50)
    """The distance between two buttons; it must divide 100 (5, 10, 20, 25 or 50)."""
    left: str = ""
    """The words at 0 (e.g. "Not at all")."""
    right: str = ""
    """The words at 100 (e.g. "Completely")."""

    min: int = 0
    """Always 0 (stated for the codebook and the export)."""
    max: int = 100
    """Always 100 (stated for the codebook and the export)."""

    @model_validator(mode="after")
    def _fixed_range(self) -> SliderItem:
        problems: list[tuple[Loc, str, object]] = []
        if 100 % self.step:
            message = f"step {self.step} does not divide 100: use 5, 10, 20, 25 or 50"
            problems.append((("step",), message, self.step))
        for name, fixed in (("min", 0), ("max", 100)):
            if getattr(self, name) != fixed:
                message = f"a slider runs from 0 to 100: {name} is {fixed}"
                problems.append(((name,), message, getattr(self, name)))
        if problems:
            raise error_at("SliderItem", problems)
        return self

    def choices(self) -> list[tuple[int, str]]:
        """The buttons' points, each labelled by its number (as a typed answer is)."""
        return [(v, str(v)) for v in range(0, 101, self.step)]

    def anchors(self) -> list[tuple[int, str]]:
        """The ends' words, for the codebook and the message."""
        return [(v, words) for v, words in ((0, self.left), (100, self.right)) if words]


class Statement(_Model):
    """One statement of a matrix: answered on the matrix's scale and stored, exported and
    scored as an item of its own."""

    id: str = Field(min_length=1, max_length=64)
    """A stable id, unique among the questionnaire's items and statements
    (``ux.clear``): its answers, its export column and its construct are keyed by it."""
    text: str = Field(min_length=1)
    """The statement, as the participant reads it."""
    reverse: bool = False
    """Scored as min + max − answer in analysis; shown as asked."""
    construct_name: str | None = Field(default=None, alias="construct")
    """``construct`` in files: the scale this statement belongs to; unset, the matrix's."""


TELEGRAM_TEXT_LIMIT = 4096
"""The longest text Telegram sends in one message, in UTF-16 code units as the Bot API
counts; a matrix is one message edited in place, so it cannot be split over two."""
LABEL_ON_BUTTON = 24
"""Labels up to this long go on the buttons; a longer one puts the scale in the message."""


def _units(text: str) -> int:
    return len(text.encode("utf-16-le")) // 2


def matrix_message_length(title: str, item: MatrixItem, items: int) -> int:
    """The longest message ``item`` can be shown in (``bot.engine.asking.render``): the
    questionnaire's ``title`` with its widest counter among ``items`` items, the item's text,
    every statement answered with the longest label (or marked as asked), and the scale's
    legend when its labels are too long for buttons; in UTF-16 code units."""
    labels = [item.labels[point] for point in range(item.min, item.max + 1)]
    widest = max(_units(label) for label in labels)
    lines = [_units(f"{title} · {items}/{items}"), 0, _units(item.text), 0]
    lines += [_units(f"✓ {s.text} — ") + widest for s in item.statements]
    if any(len(label) > LABEL_ON_BUTTON for label in labels):
        lines.append(0)
        lines += [
            _units(f"{point} = {item.labels[point]}") for point in range(item.min, item.max + 1)
        ]
    return sum(lines) + len(lines) - 1  # the line breaks between them


MAX_STATEMENTS = 12
"""The most statements a matrix may have: the message lists them all, and a longer grid
is where people start answering without reading."""


class MatrixItem(_Item):
    """Several statements on one rating scale, asked one after another in one message
    edited in place: the statements answered so far with their answers, the current one
    marked, and its scale as buttons; each statement is stored as an item of its own."""

    type: Literal["matrix"]
    """``matrix``: statements on one scale; each stored, exported and scored as its own
    scale item (usable in a ``construct``)."""
    statements: tuple[Statement, ...] = Field(min_length=2)
    """The statements, asked in this order; at least two and at most twelve."""
    min: int = 1
    """The lowest point of the scale."""
    max: int = 5
    """The highest point of the scale."""
    labels: dict[int, str]
    """Point → its label, for every point from ``min`` to ``max``."""
    measurement: Measurement | None = None
    """As a scale item's: the level of measurement of its statements' scale."""

    @model_validator(mode="after")
    def _askable(self) -> MatrixItem:
        """Its scale as a scale item's (every point labelled), and few enough statements,
        each with its own id."""
        problems: list[tuple[Loc, str, object]] = []
        scale = {"type": "scale", "id": self.id, "text": self.text, "labels": dict(self.labels)}
        try:
            ScaleItem.model_validate({**scale, "min": self.min, "max": self.max})
        except ValidationError as error:
            problems += [
                (tuple(e["loc"]), str(e["msg"]).removeprefix("Value error, "), e.get("input"))
                for e in error.errors()
            ]
        if len(self.statements) > MAX_STATEMENTS:
            message = (
                f"a matrix has at most {MAX_STATEMENTS} statements, not "
                f"{len(self.statements)}: split it in two"
            )
            problems.append((("statements",), message, len(self.statements)))
        problems += repeated_ids("statements", self.statements)
        if problems:
            raise error_at("MatrixItem", problems)
        return self

    def choices(self) -> list[tuple[int, str]]:
        """The scale's points, each with its label."""
        return [(v, self.labels[v]) for v in range(self.min, self.max + 1)]

    def statement_items(self) -> tuple[ScaleItem, ...]:
        """Each statement as the scale item it is stored, exported and scored as."""
        return tuple(
            ScaleItem(
                type="scale",
                id=s.id,
                text=s.text,
                min=self.min,
                max=self.max,
                labels=dict(self.labels),
                reverse=s.reverse,
                construct_name=s.construct_name or self.construct_name,
                measurement=self.measurement,
            )
            for s in self.statements
        )


class Option(_Model):
    value: int | str
    """Stored with the answer: a number, or a short code such as "off_topic"."""
    label: str = Field(min_length=1)
    """What the button says."""


class _Options(_Item):
    options: tuple[Option, ...] = Field(min_length=2)
    """The options, one button each, in this order; at least two."""

    @model_validator(mode="after")
    def _unique_values(self) -> _Options:
        values = [o.value for o in self.options]
        repeats = [
            (("options", i, "value"), f"option value {v!r} is used twice", v)
            for i, v in enumerate(values)
            if v in values[:i]
        ]
        if repeats:
            raise error_at(type(self).__name__, repeats)
        return self

    def choices(self) -> list[tuple[int | str, str]]:
        return [(o.value, o.label) for o in self.options]


class ChoiceItem(_Options):
    """One option out of several."""

    type: Literal["choice"]
    """``choice``: one option out of several."""
    attention: int | str | None = None
    """An instructed-response check: the option value a reading participant picks (stored
    and flagged, never dropped)."""


class MultiChoiceItem(_Options):
    """Any number of options, toggled with buttons and confirmed with "Done"."""

    type: Literal["multi_choice"]
    """``multi_choice``: any number of options, toggled and confirmed with "Done"."""
    required: bool = False
    """Whether at least one option must be chosen."""


MAX_RANKED = 10
"""The most options a ranking may have: each is a button of its own row, and ordering more
than ten by taps on a phone is a chore that yields careless tails."""


class RankingItem(_Options):
    """The options put in order: tapped from first to last, each tap moving an option into
    the order shown in the message; the last tap can be undone, and "Done" confirms."""

    type: Literal["ranking"]
    """``ranking``: every option ranked, first to last; stored as the option values in
    that order, separated by commas, and exported as a rank per option (1 = first)."""
    options: tuple[Option, ...] = Field(min_length=2)
    """The options to rank, at least two and at most ten; a button each, in this order."""

    @model_validator(mode="after")
    def _rankable(self) -> RankingItem:
        problems: list[tuple[Loc, str, object]] = []
        if len(self.options) > MAX_RANKED:
            message = (
                f"a ranking has at most {MAX_RANKED} options, not {len(self.options)}: "
                "put more in order by other means (a choice of the few that matter)"
            )
            problems.append((("options",), message, len(self.options)))
        problems += [
            (("options", i, "value"), f"option value {o.value!r} has a comma: the order is "
             "stored as values separated by commas", o.value)
            for i, o in enumerate(self.options)
            if "," in str(o.value)
        ]  # fmt: skip
        if problems:
            raise error_at("RankingItem", problems)
        return self

    def ranks(self, stored: str | None) -> dict[int | str, int]:
        """Each option's rank (1 = first) in a stored order; empty when it is not one."""
        codes = stored.split(",") if stored else []
        values = {str(o.value): o.value for o in self.options}
        if sorted(codes) != sorted(values):
            return {}
        return {values[code]: rank for rank, code in enumerate(codes, start=1)}


class TextItem(_Item):
    """Free text typed by the participant; optional items can be skipped with a button."""

    type: Literal["text"]
    """``text``: a typed answer."""
    required: bool = False
    """Whether the participant must write something; otherwise a Skip button is offered."""
    max_length: int = Field(default=2000, ge=1, le=4000)
    """The longest answer accepted, in characters; a longer one is asked again."""


Item = Annotated[
    ScaleItem
    | YesNoItem
    | ThumbsItem
    | ChoiceItem
    | MultiChoiceItem
    | TextItem
    | PreferenceItem
    | SliderItem
    | RankingItem
    | MatrixItem,
    Field(discriminator="type"),
]
ClosedItem = ScaleItem | YesNoItem | ThumbsItem | ChoiceItem | PreferenceItem
"""Items answered with one tap."""


class ItemText(_Model):
    """An item's words in another language; what is not given stays as written."""

    text: str | None = None
    """The item's ``text`` in this language."""
    help: str | None = None
    """The item's ``help`` in this language."""
    examples: tuple[str, ...] | None = None
    """The item's ``examples`` in this language."""
    labels: dict[int, str] = {}
    """Scale and matrix items: point → label."""
    statements: dict[str, str] = {}
    """Matrix items: statement id → its text."""
    options: dict[int | str, str] = {}
    """Choice, multiple-choice and ranking items: option value → label."""
    left: str | None = None
    """Slider items: the words at 0."""
    right: str | None = None
    """Slider items: the words at 100."""
    yes: str | None = None
    """Yes/no items: the yes button's label."""
    no: str | None = None
    """Yes/no items: the no button's label."""

    @model_validator(mode="before")
    @classmethod
    def _yaml_booleans(cls, data: object) -> object:
        """YAML 1.1 reads an unquoted ``yes:`` or ``no:`` key as true or false."""
        if isinstance(data, dict) and any(isinstance(key, bool) for key in data):
            return {
                ({True: "yes", False: "no"}.get(k, k) if isinstance(k, bool) else k): v
                for k, v in data.items()
            }
        return data

    def applied_to(self, item: Item) -> Item:
        """``item`` in these words (its ids, values and scoring unchanged)."""
        update: dict[str, object] = {
            key: value
            for key, value in (
                ("text", self.text),
                ("help", self.help),
                ("examples", self.examples),
            )
            if value is not None
        }
        if isinstance(item, ScaleItem | MatrixItem) and self.labels:
            update["labels"] = {**item.labels, **self.labels}
        if isinstance(item, MatrixItem) and self.statements:
            update["statements"] = tuple(
                s.model_copy(update={"text": self.statements.get(s.id, s.text)})
                for s in item.statements
            )
        if isinstance(item, _Options) and self.options:
            words = {str(value): label for value, label in self.options.items()}
            update["options"] = tuple(
                o.model_copy(update={"label": words.get(str(o.value), o.label)})
                for o in item.options
            )
        if isinstance(item, YesNoItem):
            update |= {k: v for k, v in (("yes", self.yes), ("no", self.no)) if v is not None}
        if isinstance(item, SliderItem):
            ends = (("left", self.left), ("right", self.right))
            update |= {k: v for k, v in ends if v is not None}
        return item.model_copy(update=update)

    def problems(self, item: Item) -> list[tuple[Loc, str, object]]:
        """Words for what ``item`` does not have: (field, message, value), for the file."""
        found: list[tuple[Loc, str, object]] = []
        points = set(item.labels) if isinstance(item, ScaleItem | MatrixItem) else set()
        for point in self.labels:
            if point not in points:
                found.append((("labels", point), f"{item.id!r} has no scale point {point}", point))
        values = {str(o.value) for o in item.options} if isinstance(item, _Options) else set()
        for value in self.options:
            if str(value) not in values:
                found.append((("options", value), f"{item.id!r} has no option {value!r}", value))
        ids = {s.id for s in item.statements} if isinstance(item, MatrixItem) else set()
        for statement in self.statements:
            if statement not in ids:
                message = f"{item.id!r} has no statement {statement!r}"
                found.append((("statements", statement), message, statement))
        for key in ("yes", "no"):
            if getattr(self, key) is not None and not isinstance(item, YesNoItem):
                found.append(((key,), f"{item.id!r} is not a yes_no item", key))
        for key in ("left", "right"):
            if getattr(self, key) is not None and not isinstance(item, SliderItem):
                found.append(((key,), f"{item.id!r} is not a slider item", key))
        return found

    def missing(self, item: Item) -> list[str]:
        """What of ``item`` a reader would still see untranslated."""
        gaps = [] if self.text else ["text"]
        if item.help and not self.help:
            gaps.append("help")
        if item.examples and self.examples is None:
            gaps.append("examples")
        if isinstance(item, ScaleItem | MatrixItem) and set(item.labels) - set(self.labels):
            gaps.append("labels")
        if isinstance(item, MatrixItem) and {s.id for s in item.statements} - set(self.statements):
            gaps.append("statements")
        if isinstance(item, _Options):
            given = {str(v) for v in self.options}
            if any(str(o.value) not in given for o in item.options):
                gaps.append("options")
        if isinstance(item, YesNoItem):
            gaps += [key for key in ("yes", "no") if getattr(self, key) is None]
        if isinstance(item, SliderItem):
            gaps += [
                key for key in ("left", "right") if getattr(item, key) and not getattr(self, key)
            ]
        return gaps


class QuestionnaireText(_Model):
    """A questionnaire's words in another language, items by id."""

    title: str | None = None
    """The questionnaire's ``title`` in this language."""
    intro: str | None = None
    """The questionnaire's ``intro`` in this language."""
    items: dict[str, ItemText] = {}
    """Item id → that item's words in this language."""


class Questionnaire(_Model):
    """An instrument: items asked one at a time with buttons, after a task, after the study,
    after each reply, as screening, or by annotators."""

    id: str = Field(min_length=1, max_length=64)
    """The questionnaire's id, equal to its file name; studies and scenarios name it."""
    title: str
    """Its title, as the participant sees it in the chat and the report names it."""
    intro: str | None = None
    """Said once before the first item (after the study's own words for the moment)."""
    language: str = Field(default="en", pattern=r"^[a-z]{2,3}$")
    """The language the file is written in."""
    translations: dict[str, QuestionnaireText] = {}
    """Language code → the title, intro and items' words in that language; participants
    whose Telegram uses it see them where the study is offered in it."""
    _translated: dict[str, tuple[Questionnaire, Questionnaire]] = PrivateAttr(default_factory=dict)
    """(original, translated copy) per language, made once (the engine asks for an item's
    words at every step); the original is named because ``model_copy`` shares this dict."""
    items: tuple[Item, ...] = Field(min_length=1)
    """The items, asked in this order (unless ``randomize``), each chosen by its ``type``."""
    randomize: bool = False
    """Items in a new order for each participant (the seed is stored); conditional items
    keep their place after the item they depend on."""
    eligible_if: tuple[Condition, ...] = ()
    """For screening: every condition must hold, or the participant is thanked and released."""
    measurement: Measurement = "ordinal"
    """The level of measurement of its scale items, for the agreement between annotators:
    ordinal unless the instrument declares its scales interval or ratio (an item may say
    otherwise for itself)."""

    @model_validator(mode="after")
    def _unique_item_ids(self) -> Questionnaire:
        repeats = repeated_ids("items", self.items)
        owners: dict[str, Loc] = {item.id: ("items", i) for i, item in enumerate(self.items)}
        for i, item in enumerate(self.items):
            for j, statement in enumerate(getattr(item, "statements", ())):
                here: Loc = ("items", i, "statements", j)
                first = owners.setdefault(statement.id, here)
                if first != here:
                    where = "".join(f"[{x}]" if isinstance(x, int) else f".{x}" for x in first)
                    where = where.removeprefix(".")
                    message = f"statement id {statement.id!r} is already used by {where}"
                    repeats.append((("items", i, "statements", j, "id"), message, statement.id))
        if repeats:
            raise error_at("Questionnaire", repeats)
        return self

    @model_validator(mode="after")
    def _conditions_look_back(self) -> Questionnaire:
        """A condition may only name an earlier closed item, with values it can have."""
        position = {item.id: i for i, item in enumerate(self.items)}
        problems: list[tuple[Loc, str, object]] = []
        checks: list[tuple[Loc, Condition | None, int]] = [
            (("items", i, "when"), item.when, i) for i, item in enumerate(self.items)
        ]
        checks += [(("eligible_if", i), c, len(self.items)) for i, c in enumerate(self.eligible_if)]
        for loc, condition, index in checks:
            if condition is None:
                continue
            target = position.get(condition.item)
            if target is None:
                problems.append(
                    ((*loc, "item"), f"no item {condition.item!r} here", condition.item)
                )
            elif target >= index:
                message = f"{condition.item!r} comes later: a condition can only look back"
                problems.append(((*loc, "item"), message, condition.item))
            elif isinstance(earlier := self.items[target], TextItem):
                message = f"{condition.item!r} is free text: a condition needs answer choices"
                problems.append(((*loc, "item"), message, condition.item))
            elif isinstance(earlier, RankingItem | MatrixItem):
                message = f"{condition.item!r} is a {earlier.type}: a condition needs one answer"
                problems.append(((*loc, "item"), message, condition.item))
            else:
                values = {v for v, _ in earlier.choices()}
                wanted = (condition.equals,) if condition.equals is not None else condition.any_of
                for value in wanted:
                    if value not in values:
                        message = f"{value!r} is not an answer of {condition.item!r}"
                        problems.append((loc, message, value))
        if problems:
            raise error_at("Questionnaire", problems)
        return self

    @model_validator(mode="after")
    def _translations_fit(self) -> Questionnaire:
        """Translated words must belong to an item, point or option this file has."""
        by_id = {item.id: item for item in self.items}
        problems: list[tuple[Loc, str, object]] = []
        for code, words in self.translations.items():
            if code == self.language:
                message = f"{code!r} is this questionnaire's own language: change the words"
                problems.append((("translations", code), message, code))
            for item_id, item_words in words.items.items():
                base: Loc = ("translations", code, "items", item_id)
                item = by_id.get(item_id)
                if item is None:
                    problems.append((base, f"no item {item_id!r} here", item_id))
                    continue
                problems += [(base + loc, m, v) for loc, m, v in item_words.problems(item)]
        if problems:
            raise error_at("Questionnaire", problems)
        return self

    @model_validator(mode="after")
    def _matrices_fit_a_message(self) -> Questionnaire:
        """A matrix is one message edited in place: in every language it is offered in, its
        longest form must fit Telegram's limit, or the bot could not show it."""
        problems: list[tuple[Loc, str, object]] = []
        languages: list[tuple[str | None, str, tuple[Item, ...]]] = [(None, self.title, self.items)]
        for language, words in self.translations.items():
            translated = tuple(
                words.items[item.id].applied_to(item) if item.id in words.items else item
                for item in self.items
            )
            languages.append((language, words.title or self.title, translated))
        for code, title, items in languages:
            for i, item in enumerate(items):
                if not isinstance(item, MatrixItem):
                    continue
                length = matrix_message_length(title, item, len(items))
                if length > TELEGRAM_TEXT_LIMIT:
                    where = f" (in {code})" if code else ""
                    message = (
                        f"this matrix's message{where} could be {length:,} characters long,"
                        f" over Telegram's {TELEGRAM_TEXT_LIMIT:,}: shorten its statements or"
                        " split it in two"
                    )
                    problems.append((("items", i, "statements"), message, length))
        if problems:
            raise error_at("Questionnaire", problems)
        return self

    def item(self, item_id: str) -> Item:
        return next(item for item in self.items if item.id == item_id)

    def answered_items(self) -> tuple[Item, ...]:
        """The items answers are stored under: each item, a matrix as its statements."""
        return tuple(
            answered
            for item in self.items
            for answered in (item.statement_items() if isinstance(item, MatrixItem) else (item,))
        )

    def in_language(self, language: str) -> Questionnaire:
        """This questionnaire in ``language`` where it has words for it, else as written."""
        words = self.translations.get(language)
        if words is None:
            return self
        cached = self._translated.get(language)
        if cached is not None and cached[0] is self:
            return cached[1]
        items = tuple(
            words.items[item.id].applied_to(item) if item.id in words.items else item
            for item in self.items
        )
        update: dict[str, object] = {"items": items}
        update |= {k: v for k, v in (("title", words.title), ("intro", words.intro)) if v}
        translated = self.model_copy(update=update)
        self._translated[language] = (self, translated)
        return translated

    def missing_in(self, language: str) -> list[str]:
        """What a participant in ``language`` would still read as written: "title",
        "intro", "<item id> text", ... (nothing when ``language`` is the file's own)."""
        if language == self.language:
            return []
        words = self.translations.get(language, QuestionnaireText())
        gaps = [] if words.title else ["title"]
        if self.intro and not words.intro:
            gaps.append("intro")
        for item in self.items:
            item_words = words.items.get(item.id, ItemText())
            gaps += [f"{item.id} {gap}" for gap in item_words.missing(item)]
        return gaps
