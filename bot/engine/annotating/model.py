"""An annotator's state, what happens to them (events) and what the flow asks for
(effects). The participants' events (a text, a tap, ``/start``) come as they are
(``bot.engine.events``); these are the ones only annotators have."""

from __future__ import annotations

from dataclasses import dataclass

from bot.core.annotation import AnnotationTask
from bot.core.vocabulary import AnnotationLevel, AnnotatorClaim, PaymentStatus
from bot.core.votes import Vote
from bot.engine import effects as fx
from bot.engine.asking import Survey


@dataclass(frozen=True)
class Annotating:
    """Where one annotator stands: the target in front of them (None: nothing open), the
    survey of its items, and what of its conversation the chat shows already."""

    annotator: str
    job: str
    language: str | None = None
    task: AnnotationTask | None = None
    survey: Survey | None = None
    paused: bool = False
    shown: tuple[str, int] | None = None  # (conversation, last turn shown in the chat)
    given: tuple[tuple[str, str], ...] = ()  # a pair's answers given since it was shown
    withdrawal: int | None = None
    """The "withdraw?" prompt waiting for its answer: its message id (``ASKING`` while it
    is being sent); None: no such question open. Only a Yes on it erases."""


ASKING = 0
"""``Annotating.withdrawal`` of a prompt sent but whose message id is not known yet."""


# --- events ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class Claimed:
    """``/start ann-CODE``, as the store answered it; ``task`` is the annotator's next open
    target (None: nothing open, or the code was refused)."""

    claim: AnnotatorClaim
    annotator: str | None = None
    job: str | None = None
    paused: bool = False
    task: AnnotationTask | None = None
    language: str | None = None
    unqualified: bool = False
    """Below a pairwise job's onboarding threshold: no real pairs (told so)."""
    ended: PaymentStatus | None = None
    """A recruited annotator's part ended so (their share rated, their onboarding failed):
    the platform's code is shown again."""


@dataclass(frozen=True)
class Reloaded:
    """The bot does not hold this annotator's state (it restarted): rebuilt from the store
    before the event that follows is handled."""

    annotator: str
    job: str
    paused: bool
    task: AnnotationTask | None


@dataclass(frozen=True)
class TargetLoaded:
    """The annotator's next open target after one was finished (None: all done);
    ``pushed``: work that arrived while they waited (an adjudication, a reassignment)."""

    task: AnnotationTask | None
    pushed: bool = False
    unqualified: bool = False
    """Below a pairwise job's onboarding threshold: no real pairs (told so)."""
    ended: PaymentStatus | None = None
    """A recruited annotator's part ended so (their share rated, their onboarding failed):
    the platform's code is shown."""


@dataclass(frozen=True)
class Reopened:
    """The answer to ``/back``: the target open again, or None when nothing can be."""

    task: AnnotationTask | None


@dataclass(frozen=True)
class TargetGone:
    """The target in front of the annotator is no longer theirs (they were silent past the
    job's deadline and it went to someone else): their next one instead, or None."""

    task: AnnotationTask | None


AnnotatorEvent = Claimed | Reloaded | TargetLoaded | Reopened | TargetGone


# --- effects --------------------------------------------------------------------------------


@dataclass(frozen=True)
class RecordRating:
    """One item's answer, kept by the store (once per annotator, target, item and round)."""

    annotator: str
    job: str
    target: str
    level: AnnotationLevel
    instrument_id: str
    item_id: str
    value: int | None
    label: str | None
    text: str | None


@dataclass(frozen=True)
class RecordVotes:
    """A finished ACUTE pair's votes, kept with its finish (only while the pair is the
    annotator's)."""

    annotator: str
    job: str
    target: str
    votes: tuple[Vote, ...]


@dataclass(frozen=True)
class FinishTarget:
    """The annotator answered every item of the target: done; then who rates what is
    planned again (adjudication, reassignment), and ``TargetLoaded`` follows."""

    annotator: str
    job: str
    target: str
    level: AnnotationLevel


@dataclass(frozen=True)
class ReopenLast:
    """``/back`` where the job allows it: ``Reopened`` follows."""

    annotator: str


@dataclass(frozen=True)
class SetPaused:
    annotator: str
    paused: bool


@dataclass(frozen=True)
class SetCommands:
    """The annotator's own command menu in their chat (name, description), in place of the
    participants' one."""

    commands: tuple[tuple[str, str], ...]


@dataclass(frozen=True)
class WithdrawAnnotator:
    """``/withdraw``, confirmed on its waiting prompt: the annotator erased (their ratings
    kept unlinked where the job's consent says so), their targets back to the pool."""

    annotator: str
    job: str


AnnotatorRecord = (
    RecordRating | RecordVotes | FinishTarget | ReopenLast | SetPaused | WithdrawAnnotator
)
"""What the store keeps of an annotator's step, with the update it consumed."""

AnnotatorEffect = (
    RecordRating
    | RecordVotes
    | FinishTarget
    | ReopenLast
    | SetPaused
    | WithdrawAnnotator
    | SetCommands
    | fx.Send
    | fx.Edit
    | fx.Toast
    | fx.RemoveButtons
)
