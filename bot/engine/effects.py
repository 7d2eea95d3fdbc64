"""What the engine asks for, in the imperative. Records are committed to the store, in
one transaction with the new state, before any outbound effect is carried out."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from enum import StrEnum

from bot.core.conversation import Conversation
from bot.core.media import Medium, Transcript
from bot.core.vocabulary import (
    AnswerStatus,
    CommandOutcome,
    Consent,
    EndReason,
    EventKind,
    GateScope,
    Moment,
    PaymentStatus,
    ReplySource,
    SessionState,
)
from bot.core.votes import Vote

Buttons = tuple[tuple[tuple[str, str], ...], ...]
"""Rows of (label, callback data) for an inline keyboard."""


def callback_data(buttons: Buttons) -> tuple[str, ...]:
    """What the keyboard's buttons carry, row by row."""
    return tuple(data for row in buttons for _, data in row)


# --- records: rows for the store -------------------------------------------------------


@dataclass(frozen=True)
class RecordConsent:
    decision: Consent


@dataclass(frozen=True)
class OpenSession:
    session_id: str
    scenario_id: str
    system_id: str
    task_index: int
    design: str
    seed: str


@dataclass(frozen=True)
class SetSessionState:
    session_id: str
    state: SessionState


@dataclass(frozen=True)
class CloseSession:
    session_id: str
    reason: EndReason
    success: bool  # the system reported success (or the rows were all rated)
    correct: bool | None = None  # done as the scenario's success_if says; None: not defined


@dataclass(frozen=True)
class RecordUserTurn:
    session_id: str
    turn: int
    text: str


@dataclass(frozen=True)
class RecordSystemTurn:
    session_id: str
    turn: int
    text: str | None
    latency_ms: float
    error: str | None = None
    source: ReplySource = ReplySource.SYSTEM
    original_text: str | None = None  # the system's words, when a wizard edited or replaced them
    wizard: str | None = None


@dataclass(frozen=True)
class SetSuccess:
    """A wizard's judgement of the task, kept apart from how the session ended: it is also
    the session's word on whether the task was done correctly."""

    session_id: str
    success: bool


@dataclass(frozen=True)
class RecordCommand:
    """What became of a wizard's command: applied, or expired (it no longer made sense)."""

    command_id: int
    outcome: CommandOutcome


@dataclass(frozen=True)
class RecordGate:
    scope: GateScope
    gated: bool
    auto_send_after: float | None
    wizard: str


@dataclass(frozen=True)
class RecordResponse:
    session_id: str | None
    questionnaire_id: str
    item_id: str
    value: int | None
    label: str | None
    text: str | None
    status: AnswerStatus
    shown_at: float
    moment: Moment
    scope: str = ""  # what the answers belong to: a session, one of its turns or rows, the study
    turn: int | None = None  # exchange-level items: the system turn rated
    stimulus_id: str | None = None  # rating tasks: the row rated
    attention_ok: bool | None = None  # attention checks: whether the instructed answer was given


@dataclass(frozen=True)
class RecordEvent:
    kind: EventKind
    session_id: str | None = None
    data: Mapping[str, object] = field(default_factory=dict)


@dataclass(frozen=True)
class ClaimInvitation:
    """A single-use invitation code taken by this participant (the first one wins)."""

    code: str


@dataclass(frozen=True)
class RecordRecruitment:
    """The participant came from a recruitment platform: the payment record begins.
    ``platform_key`` is the platform id sealed with the study secret, never the id itself."""

    platform: str
    platform_key: str
    status: PaymentStatus = PaymentStatus.STARTED
    """Not STARTED when the id comes after the participant's part ended (a late ``/start``)."""
    since: tuple[float, float] | None = None
    """When they arrived and were last active, when the id comes later than the arrival."""


@dataclass(frozen=True)
class SetPaymentStatus:
    """How the participant's part ended, for the platform (no row without a recruitment)."""

    status: PaymentStatus


@dataclass(frozen=True)
class RecordVote:
    """A pairwise judgement the participant gave, kept with the step that took it."""

    vote: Vote


@dataclass(frozen=True)
class RecordMedia:
    """A voice note or photo taken as the participant's line of ``turn``: what it was,
    its content hash and its transcript. When ``kept``, the runner puts its bytes with
    the step (the engine never holds them); otherwise they are discarded."""

    session_id: str
    turn: int
    medium: Medium
    size: int
    digest: str
    kept: bool
    transcript: Transcript | None = None
    fetch_ms: float = 0.0
    transcribe_ms: float | None = None


Record = (
    RecordConsent
    | OpenSession
    | SetSessionState
    | CloseSession
    | RecordUserTurn
    | RecordSystemTurn
    | RecordResponse
    | RecordEvent
    | SetSuccess
    | RecordCommand
    | RecordGate
    | ClaimInvitation
    | RecordRecruitment
    | SetPaymentStatus
    | RecordVote
    | RecordMedia
)

# --- outbound: what the driver does after the commit ----------------------------------


class Until(StrEnum):
    """How long a message's buttons mean something (then the engine removes them)."""

    PHASE_END = "phase_end"  # the agreement, the brief's "Finish task"
    NEXT_TURN = "next_turn"  # a system's buttons under its reply
    ANSWERED = "answered"  # a question of its own ("withdraw?"), in any phase: until answered


@dataclass(frozen=True)
class Send:
    text: str
    buttons: Buttons = ()
    remember: bool = False  # answer with MessageSent: the message will be edited in place
    format: str = "plain"  # "markdown" or "html" only for system replies a study asks for
    until: Until | None = None  # answer with KeyboardShown: its buttons are removed later


@dataclass(frozen=True)
class SendFile:
    """A photo (a picture a system returned) or a voice note, with its caption."""

    kind: str  # photo | voice
    data: bytes = field(repr=False)
    mime: str
    caption: str = ""


@dataclass(frozen=True)
class SpeakReply:
    """A system's text, spoken and sent as a voice note (with the text as its caption when
    ``beside``); answered with ``ReplySpoken``. ``buttons`` go under it until ``until``."""

    text: str
    beside: bool = False
    buttons: Buttons = ()
    until: Until | None = None


@dataclass(frozen=True)
class Edit:
    message_id: int
    text: str
    buttons: Buttons = ()


@dataclass(frozen=True)
class RemoveButtons:
    """Take the keyboard off a message whose buttons no longer mean anything."""

    message_id: int


@dataclass(frozen=True)
class Toast:
    """Answer to the button tap being handled (``None``: a silent acknowledgement)."""

    text: str | None = None


@dataclass(frozen=True)
class ShowTyping:
    pass


@dataclass(frozen=True)
class CallSystem:
    system_id: str
    conversation: Conversation


@dataclass(frozen=True)
class CallSides:
    """Side by side: every call at once (a turn costs the slower system, not the sum);
    answered with one ``SidesAnswered``."""

    calls: tuple[CallSystem, ...]


@dataclass(frozen=True)
class FetchMedia:
    """Fetch a file the participant sent (at most ``largest`` bytes) and, for a voice note
    the system gets as words, transcribe it; answered with ``MediaFetched``."""

    medium: Medium
    transcribe: bool
    largest: int


@dataclass(frozen=True)
class Erase:
    """The participant withdrew: the store erases everything of theirs in one transaction
    and the driver forgets them. Carried out after the step's commit, before what follows.
    ``command_id``: an operator's erasure (``ozlab erase``), settled in that transaction."""

    command_id: int | None = None


Outbound = (
    Send
    | SendFile
    | SpeakReply
    | Edit
    | RemoveButtons
    | Toast
    | ShowTyping
    | CallSystem
    | CallSides
    | FetchMedia
    | Erase
)
Effect = Record | Outbound


def split(effects: Iterable[Effect]) -> tuple[list[Record], list[Outbound]]:
    """Rows for the store (committed first) and what to do after the commit, in order."""
    records: list[Record] = []
    outbound: list[Outbound] = []
    for effect in effects:
        if isinstance(effect, Outbound):
            outbound.append(effect)
        else:
            records.append(effect)
    return records, outbound
