"""Annotation as the planners, the annotators' flow and the store all see it: jobs,
annotators, targets, who rates what, and the target an annotator rates next."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from bot.core.media import FileShown
from bot.core.vocabulary import (
    AnnotationLevel,
    AnnotationRound,
    Origin,
    ReplySource,
    SessionState,
)


@dataclass(frozen=True)
class TranscriptExchange:
    """One exchange: the participant's line, and the reply (or the error) it got."""

    exchange_id: int
    turn: int
    user_text: str
    user_at: float
    user_seq: int | None
    system_text: str | None = None
    system_at: float | None = None
    system_seq: int | None = None
    error: str | None = None
    source: ReplySource | None = None
    original_text: str | None = None
    wizard: str | None = None
    file: FileShown | None = None
    """The voice note or photo the participant's line came with (its words are the line)."""


@dataclass(frozen=True)
class AnnotatableSession:
    """A stored session as a job's targets are built from it: the turns the system
    answered (an exchange without a reply has nothing to rate)."""

    session_id: str
    study_id: str
    system: str
    scenario: str
    state: SessionState
    turns: tuple[int, ...]


@dataclass(frozen=True)
class AnnotationJobRecord:
    """An annotation job as the store keeps it: its file as JSON, and what the store
    itself enforces (no revisiting; when silence counts as dropping out)."""

    job: str
    study_id: str
    definition: str
    seen_once: bool
    drop_out_after: float | None = None
    version: int = 0


@dataclass(frozen=True)
class Annotator:
    """An annotator of one job: a pseudonym, never a participant."""

    annotator_id: str
    job: str
    origin: Origin
    code: str | None = None
    chat_key: str | None = None  # the chat id, encrypted (to write to them after a restart)
    joined_at: float | None = None
    last_active_at: float | None = None
    paused: bool = False
    dropped: bool = False
    simulated: bool = False  # played by a simulation (``ozlab demo``), not a person


@dataclass(frozen=True)
class AnnotationTarget:
    """One thing to rate: an exchange or a session (or outside material, imported), with
    the session's system and scenario kept so nothing is pooled across them."""

    job: str
    target: str
    level: AnnotationLevel
    position: int
    session_id: str | None = None
    turn: int | None = None
    system: str | None = None
    scenario: str | None = None

    @property
    def key(self) -> tuple[str, str, AnnotationLevel]:
        return (self.job, self.target, self.level)


@dataclass(frozen=True)
class AnnotationAssignment:
    """Who is to rate a target, in which round, and whether they finished it."""

    target: str
    level: AnnotationLevel
    annotator: str
    round: AnnotationRound
    assigned_at: float
    done_at: float | None = None
    swapped: bool = False
    """A pair shown to this annotator in the other order than its target's name gives."""


@dataclass(frozen=True)
class FirstRating:
    """A finished first-round rating, as the adjudication rule reads it."""

    target: str
    level: AnnotationLevel
    annotator: str
    item_id: str
    value: int | None
    text: str | None
    swapped: bool = False
    """A pair's rating given while it was shown in the other order than its name gives."""


@dataclass(frozen=True)
class AnnotationState:
    """Everything the assignment of one job is planned from, read at one instant;
    ``version`` is handed back with the plan so that a plan made from a stale state is
    refused."""

    job: AnnotationJobRecord
    targets: tuple[AnnotationTarget, ...]
    annotators: tuple[Annotator, ...]
    assignments: tuple[AnnotationAssignment, ...]  # those not released
    first_ratings: tuple[FirstRating, ...]
    version: int
    imported: tuple[tuple[str, AnnotationLevel, str], ...] = ()
    """(target, level, annotator) of each target an annotator rated in a file brought in by
    ``ozlab import annotations``: rated, though never assigned."""
    pair_systems: Mapping[str, tuple[str, str]] = field(default_factory=dict)
    """A real pair's target -> the systems of its two conversations, in its name's order."""
    swapped_before: Mapping[tuple[str, str], bool] = field(default_factory=dict)
    """(target, annotator) of a pair assignment released: the side it was shown in, which
    it keeps if it is given back (what they rated of it was rated on that side)."""


@dataclass(frozen=True)
class AssignmentPlan:
    """What the planner decided: new assignments, and open ones given up (released)."""

    assign: tuple[tuple[str, AnnotationLevel, str, AnnotationRound], ...] = ()
    release: tuple[tuple[str, AnnotationLevel, str], ...] = ()
    swapped: tuple[tuple[str, str], ...] = ()
    """(target, annotator) of each new pair assignment shown in the other order than the
    target's name gives (``bot.engine.annotating.sides``)."""


@dataclass(frozen=True)
class AnnotationTask:
    """The next target an annotator rates: the conversation up to and including the
    exchange (all of it for a session), what they answered already, and where they stand
    (exchange ``exchange_number`` of ``exchanges`` · conversation ``conversation_number`` of
    ``conversations``; exchange numbers are 0 for a session-level target)."""

    target: AnnotationTarget
    round: AnnotationRound
    conversation: tuple[TranscriptExchange, ...]
    answers: Mapping[str, str]  # item id -> value as stored, for a target rated before
    exchange_number: int
    exchanges: int
    conversation_number: int
    conversations: int
    next_message: str | None = None
    """The participant's next message after the exchange (HRI CUES rates "the robot's
    response and the participant's subsequent input"); None for the last one."""
    second: tuple[TranscriptExchange, ...] = ()
    """A pair's second conversation in its name's order (``conversation``: the first, whole)."""
    second_system: str | None = None
    """The system of a pair's second conversation (``target.system``: the first's)."""
    swapped: bool = False
    """A pair shown in the other order than its target's name (and ``conversation``,
    ``second``) give: the second conversation first (``bot.engine.annotating.pairs``)."""
    recommended: tuple[str, ...] = ()
    """The catalogue entries of what the rated reply names (the demo shop's games), in the
    order it names them: a job's extra information shows them (``bot.annotation``)."""
