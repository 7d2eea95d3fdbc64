"""A scenario's ``simulation:`` block: how a simulated participant plays *this* task.

``ozlab demo`` and ``ozlab pilot`` read it; a real participant never sees it. Everything
about the study's domain (what people say, how they rate) lives here, in the study's own
files, so a simulated participant never borrows another study's words.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, defer_build=True)


class ReplyRule(_Model):
    """When a system reply contains one of ``when`` (ignoring case), say one of ``say``.

    ``{item}`` and ``{n}`` in a line are the title and number of a line picked from the
    last numbered list the system sent ("2. Lantern Road, €17.99" → ``Lantern Road``, 2);
    ``another: true`` first drops the item picked before (the system said it will not do)."""

    when: tuple[str, ...] = Field(min_length=1)
    """Cues: the rule fires when the system's reply contains one of them (ignoring case)."""
    say: tuple[str, ...] = Field(min_length=1)
    """What the simulated participant answers then, one line drawn from these; ``{item}`` and
    ``{n}`` name a line of the reply's last numbered list."""
    another: bool = False
    """First drop the item picked before, and pick another (the system said it will not do)."""


Setting = float | dict[int | str, float]
"""How simulated participants answer an item: a number, or a distribution (answer value →
weight). A number is the mean answer on a scale item's own scale, and the share of "yes"
(or thumbs up) on a two-button item, from 0 to 1. For a ranking, option value → weight:
each place goes to one of the options still unranked with a chance in proportion to its
weight (Plackett–Luce), so the heaviest tends to come first; an option not named comes
after those named."""

ITEM_TYPES = ("scale", "yes_no", "thumbs", "choice", "slider")
"""The item types a setting may name: those answered by tapping one button."""


class Answers(_Model):
    """How simulated participants answer questionnaire buttons.

    For an item, the first setting found of: ``profiles`` (the participant's system) by the
    item's id, ``items`` by its id, ``profiles`` by its type (``scale``, ``yes_no``,
    ``thumbs``, ``choice``), ``types`` by its type, ``profiles``' ``default`` (scale items
    only: never a yes/no item). A setting is a mean (a share for two-button items) or a
    distribution; items with none get a uniform choice. So systems can differ as a study
    expects them to (a pilot plants a difference and sees the report find it). A setting by
    item id is the item's answer as given; one by type or ``default`` says how good the
    system is, so on a reverse-keyed item it is mirrored (``default: 4.5`` answers "it
    confused me" with about 1.5).

    The answers to the items of one construct hang together as a person's do: each
    simulated participant has a trait per construct, and an answer is drawn from the trait
    and the item's own noise (``consistency``: the correlation between two items' answers),
    the other way round for a reverse-keyed item; ``spread``: how far answers scatter around
    a mean (the standard deviation on the item's scale)."""

    profiles: dict[str, dict[str, Setting]] = {}
    """System id → item id, item type or ``default`` (scale items) → a mean or a
    distribution (for a ranking, by its id: the options' weights)."""
    items: dict[str, dict[int | str, float]] = {}
    """Item id → answer value (a ranking's option value) → weight: a distribution for
    every system."""
    types: dict[str, Setting] = {}
    """Item type (``scale``, ``yes_no``, ``thumbs``, ``choice``, ``slider``) → a mean (a
    share of "yes" for two-button items) or a distribution, for every system."""
    spread: float = Field(default=0.7, ge=0)
    """How far answers scatter around a mean (the standard deviation on the item's scale;
    on a 0–100 slider, in quarters of its range: 0.7 is 17.5 points)."""
    consistency: float = Field(default=0.6, ge=0, le=1)
    """How much a participant's answers to one construct's items share: the correlation
    between two of them (0: independent; Cronbach's α follows from it and the items)."""

    @model_validator(mode="after")
    def _weights(self) -> Answers:
        settings: list[tuple[str, Setting]] = [*self.items.items(), *self.types.items()]
        for profile in self.profiles.values():
            settings += profile.items()
        for key, setting in settings:
            if isinstance(setting, dict) and (
                any(w < 0 for w in setting.values()) or not sum(setting.values()) > 0
            ):
                raise ValueError(f"the weights of {key!r} must be positive numbers")
        for key in self.types:
            if key not in ITEM_TYPES:
                raise ValueError(
                    f"types: {key!r} is no item type answered by a button (one of"
                    f" {', '.join(ITEM_TYPES)})"
                )
        return self


class Simulation(_Model):
    """What simulated participants say in this scenario and how they answer.

    ``say``: their own lines, ``in_order`` or at ``random`` (each used once), until
    ``replies`` match what the system said or the lines run out (then ``otherwise``);
    ``typo_rate``: the share of messages with one misspelt word; ``off_task_rate``: the
    share of turns that say one of ``off_task`` instead; ``max_messages``: when they give
    up (default: the scenario's ``max_exchanges``, else 8); ``comments``: free-text
    answers, given at ``comment_rate`` where an item may be skipped; attention checks are
    passed but at ``attention_fail_rate``."""

    say: tuple[str, ...] = ()
    """The simulated participant's own lines, each used once."""
    order: Literal["in_order", "random"] = "in_order"
    """Whether ``say`` is used in the order written or drawn at random."""
    replies: tuple[ReplyRule, ...] = ()
    """What to answer when the system's reply contains a cue; a matching rule comes before
    ``say``."""
    otherwise: tuple[str, ...] = ()
    """What to say when no rule matches and ``say`` has run out."""
    typo_rate: float = Field(default=0.0, ge=0, le=1)
    """The share of messages with one misspelt word (0 to 1)."""
    off_task_rate: float = Field(default=0.0, ge=0, le=1)
    """The share of turns that say one of ``off_task`` instead (0 to 1)."""
    off_task: tuple[str, ...] = ()
    """Lines beside the task ("sorry, wrong chat"), said at ``off_task_rate``."""
    voice_rate: float = Field(default=0.0, ge=0, le=1)
    """The share of lines spoken as voice notes (by espeak-ng, on the machine that runs the
    simulation) rather than typed (0 to 1); only in a task that takes voice notes
    (``media.participant_sends``)."""
    max_messages: int | None = Field(default=None, ge=1)
    """When the simulated participant gives up; none: the scenario's ``max_exchanges``,
    else 8."""
    answers: Answers = Answers()
    """How they answer the questionnaires' buttons."""
    comments: tuple[str, ...] = ()
    """Free-text answers, drawn from these."""
    comment_rate: float = Field(default=0.5, ge=0, le=1)
    """The share of free-text items that may be skipped which they answer with one of
    ``comments``."""
    attention_fail_rate: float = Field(default=0.0, ge=0, le=1)
    """The share of attention checks (items with ``attention``) they fail, answering
    something else than the item asks for; 0, the default: a simulated participant reads
    and passes every check. Outside a task, the highest of the scenarios' rates."""
    votes: dict[str, float] = {}
    """Side by side, and preference items: how good each system seems to them, on a logit
    scale (Bradley-Terry): A is preferred to B with probability 1 / (1 + e^(b - a)). A
    system not listed is 0; none listed: every vote a coin toss."""
    tie_rate: float = Field(default=0.1, ge=0, le=1)
    """The share of side-by-side votes that are a tie, whatever the systems."""
