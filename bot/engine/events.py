"""What happens to a participant, in the past tense. The transport and the driver create
events; the engine only reads them. Nothing here knows about Telegram, SQL or the clock."""

from __future__ import annotations

from dataclasses import dataclass

from bot.systems.base import SystemReply


@dataclass(frozen=True)
class StartCommand:
    """``/start`` or ``/start <invite code>``, with the language Telegram reports."""

    code: str | None = None
    language: str | None = None


@dataclass(frozen=True)
class DoneCommand:
    """``/done`` typed by the participant."""


@dataclass(frozen=True)
class TextReceived:
    text: str


@dataclass(frozen=True)
class UnsupportedReceived:
    """A sticker, photo, voice note or anything else that is not text."""

    kind: str


@dataclass(frozen=True)
class MessageEdited:
    """The participant edited an earlier message: not a new turn."""


@dataclass(frozen=True)
class ButtonTapped:
    """An inline button; ``data`` is what the engine put in the button (see ``buttons``)."""

    data: str


@dataclass(frozen=True)
class TasksAssigned:
    """The answer to ``AssignTasks``: the (scenario, system) pairs for this participant."""

    tasks: tuple[tuple[str, str], ...]
    design: str
    seed: str


@dataclass(frozen=True)
class SystemReplied:
    reply: SystemReply
    latency_ms: float
    gated: bool = False  # the system or the study is gated: the reply waits for a wizard
    auto_send_after: float | None = None  # ...unless no wizard decides within this time


@dataclass(frozen=True)
class SystemFailed:
    error: str
    latency_ms: float
    slow: bool = False  # it did not answer in time (rather than answering wrongly)


@dataclass(frozen=True)
class MessageSent:
    """The answer to ``Send(remember=True)``: which message to edit in place later."""

    message_id: int


@dataclass(frozen=True)
class WizardCommand:
    """An experimenter's command from the console, applied exactly once.

    ``kind``: say, reply (payload ``action`` approve | edit | replace, ``text``), end
    (``reason``), success, fail, gate (``on``, ``auto_send_after``), pause, resume, note
    (``turn``, ``text``), start.
    """

    command_id: int
    kind: str
    wizard: str
    payload: dict[str, object]


@dataclass(frozen=True)
class Tick:
    """The clock looked: reminders, abandonment and time limits are decided here."""


@dataclass(frozen=True)
class Recovered:
    """The bot restarted; pending work (a system call in flight) must be done again."""


Event = (
    StartCommand
    | DoneCommand
    | TextReceived
    | UnsupportedReceived
    | MessageEdited
    | ButtonTapped
    | TasksAssigned
    | SystemReplied
    | SystemFailed
    | MessageSent
    | WizardCommand
    | Tick
    | Recovered
)
