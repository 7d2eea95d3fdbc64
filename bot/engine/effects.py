"""What the engine asks for, in the imperative. Records are committed to the store, in
one transaction with the new state, before any outbound effect is carried out."""

from __future__ import annotations

from dataclasses import dataclass, field

from bot.systems.base import Conversation

Buttons = tuple[tuple[tuple[str, str], ...], ...]
"""Rows of (label, callback data) for an inline keyboard."""


# --- records: rows for the store -------------------------------------------------------


@dataclass(frozen=True)
class RecordConsent:
    decision: str  # "accepted" | "declined"


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
    state: str  # "dialogue" | "questionnaire" | "ended" | "abandoned"


@dataclass(frozen=True)
class CloseSession:
    session_id: str
    reason: str
    success: bool


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
    source: str = "system"  # system | edited | wizard
    original_text: str | None = None  # the system's words, when a wizard edited or replaced them
    wizard: str | None = None


@dataclass(frozen=True)
class SetSuccess:
    """A wizard's judgement of the task, kept apart from how the session ended."""

    session_id: str
    success: bool


@dataclass(frozen=True)
class RecordCommand:
    """What became of a wizard's command: applied, or expired (it no longer made sense)."""

    command_id: int
    outcome: str


@dataclass(frozen=True)
class RecordGate:
    scope: str
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
    status: str  # answered | skipped (optional item) | not_asked (skip logic) | missing
    shown_at: float
    scope: str = ""  # what the answers belong to: a session, one of its turns or rows, the study
    turn: int | None = None  # exchange-level items: the system turn rated
    stimulus_id: str | None = None  # rating tasks: the row rated
    attention_ok: bool | None = None  # attention checks: whether the instructed answer was given


@dataclass(frozen=True)
class RecordEvent:
    kind: str
    session_id: str | None = None
    data: dict[str, object] = field(default_factory=dict)


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
)

# --- outbound: what the driver does after the commit ----------------------------------


@dataclass(frozen=True)
class Send:
    text: str
    buttons: Buttons = ()
    remember: bool = False  # answer with MessageSent: the message will be edited in place
    format: str = "plain"  # "markdown" or "html" only for system replies a study asks for


@dataclass(frozen=True)
class Edit:
    message_id: int
    text: str
    buttons: Buttons = ()


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
class AssignTasks:
    pass


Outbound = Send | Edit | Toast | ShowTyping | CallSystem | AssignTasks
Effect = Record | Outbound
