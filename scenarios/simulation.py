"""A scenario's ``simulation:`` block: how a simulated participant plays *this* task.

``ozlab demo`` and ``ozlab pilot`` read it; a real participant never sees it. Everything
about the study's domain (what people say, how they rate) lives here, in the study's own
files, so a simulated participant never borrows another study's words.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, use_attribute_docstrings=True)


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


class Answers(_Model):
    """How simulated participants answer questionnaire buttons.

    ``profiles``: per system id, the mean answer per item id on the item's own scale
    (``default`` for every item without its own entry), so systems can differ as a study
    expects them to; ``items``: a distribution per item id (answer value → weight), which
    wins over a profile; ``spread``: how far answers scatter around a profile's mean (the
    standard deviation on the item's scale). Items with neither get a uniform choice."""

    profiles: dict[str, dict[str, float]] = {}
    """System id → item id (or ``default``) → mean answer on the item's own scale."""
    items: dict[str, dict[int, float]] = {}
    """Item id → answer value → weight: a distribution that wins over a profile."""
    spread: float = Field(default=0.7, ge=0)
    """How far answers scatter around a profile's mean (the standard deviation on the item's
    scale)."""

    @model_validator(mode="after")
    def _weights(self) -> Answers:
        for item, weights in self.items.items():
            if any(w < 0 for w in weights.values()) or not sum(weights.values()) > 0:
                raise ValueError(f"the weights of {item!r} must be positive numbers")
        return self


class Simulation(_Model):
    """What simulated participants say in this scenario and how they answer.

    ``say``: their own lines, ``in_order`` or at ``random`` (each used once), until
    ``replies`` match what the system said or the lines run out (then ``otherwise``);
    ``typo_rate``: the share of messages with one misspelt word; ``off_task_rate``: the
    share of turns that say one of ``off_task`` instead; ``max_messages``: when they give
    up (default: the scenario's ``max_exchanges``, else 8); ``comments``: free-text
    answers, given at ``comment_rate`` where an item may be skipped."""

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
    votes: dict[str, float] = {}
    """Side by side, and preference items: how good each system seems to them, on a logit
    scale (Bradley-Terry): A is preferred to B with probability 1 / (1 + e^(b - a)). A
    system not listed is 0; none listed: every vote a coin toss."""
    tie_rate: float = Field(default=0.1, ge=0, le=1)
    """The share of side-by-side votes that are a tie, whatever the systems."""
