"""What happens to a participant, in the past tense. The transport and the driver create
events; the engine only reads them. Nothing here knows about Telegram, SQL or the clock."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from bot.core.conversation import SystemReply, ToolCall
from bot.core.media import Medium, Transcript
from bot.core.vocabulary import CommandKind, MediaProblem
from bot.engine.callbacks import Tap, decode
from bot.engine.effects import Until


@dataclass(frozen=True)
class StartCommand:
    """``/start`` or ``/start <invite code>``, with the language Telegram reports. A
    recruitment platform's id (``/start pid_<id>``, on any ``/start``) arrives sealed by the
    runner, never in the clear: ``platform_key``, with ``platform_tag``, its keyed hash, to
    tell whether it is the id the participant is bound to."""

    code: str | None = None
    language: str | None = None
    platform_key: str | None = None
    platform_tag: str | None = None


@dataclass(frozen=True)
class DoneCommand:
    """``/done`` typed by the participant."""


@dataclass(frozen=True)
class HelpCommand:
    """``/help``: where the participant stands and what they can do."""


@dataclass(frozen=True)
class WithdrawCommand:
    """``/withdraw``: the participant asks to leave the study and have their data erased
    (asked for confirmation first)."""


@dataclass(frozen=True)
class UnknownCommand:
    """A ``/command`` the bot does not have: answered by the bot, not a turn (unless the
    study passes commands on to its systems)."""

    text: str


@dataclass(frozen=True)
class TextReceived:
    text: str


@dataclass(frozen=True)
class UnsupportedReceived:
    """A location, a contact, a poll or anything else that is neither text nor a file."""

    kind: str


@dataclass(frozen=True)
class MediaReceived:
    """A voice note, photo, video note, sticker or other file: its description only."""

    medium: Medium


@dataclass(frozen=True)
class MediaFetched:
    """The answer to ``FetchMedia``: the file's content hash and size (its bytes stay with
    the runner), its words where it was to be transcribed, or why it went no further."""

    medium: Medium
    digest: str = ""
    size: int = 0
    transcript: Transcript | None = None
    problem: MediaProblem | None = None
    fetch_ms: float = 0.0
    transcribe_ms: float | None = None


@dataclass(frozen=True)
class MessageEdited:
    """The participant edited an earlier message: not a new turn."""


@dataclass(frozen=True)
class ButtonTapped:
    """An inline button; ``data`` is what the engine put in the button (see ``callbacks``),
    ``message_id`` the message it was tapped on: a tap counts only on a message the bot sent
    with that button, still live (``None``: not known, a tap kept in the inbox by an ozlab
    from before taps carried their message)."""

    data: str
    message_id: int | None = None

    @property
    def tap(self) -> Tap | None:
        """The typed tap, or ``None`` for data ozlab never wrote (old, forged, foreign)."""
        return decode(self.data)


@dataclass(frozen=True)
class SystemReplied:
    reply: SystemReply
    latency_ms: float
    recovered: bool = False  # the system had been failing: it answers again


@dataclass(frozen=True)
class SystemFailed:
    error: str
    latency_ms: float
    slow: bool = False  # it did not answer in time (rather than answering wrongly)
    unavailable: bool = False  # this failure made the system count as unavailable
    failures: int = 0  # failures of this system in a row, this one included
    tool_calls: tuple[ToolCall, ...] = ()  # the scenario's tools it called before failing


@dataclass(frozen=True)
class SidesAnswered:
    """Side by side: what each system said to the same message, asked at once, in the
    order of ``CallSides`` (A first)."""

    answers: tuple[SystemReplied | SystemFailed, ...]


@dataclass(frozen=True)
class MessageSent:
    """The answer to ``Send(remember=True)``: which message to edit in place later.

    ``resent``: sent again after a restart (at least once): an earlier copy whose id the bot
    never learned may be in the chat, with the same buttons meaning the same."""

    message_id: int
    resent: bool = False


@dataclass(frozen=True)
class KeyboardShown:
    """The answer to ``Send(until=...)``: which message's buttons to remove, and when;
    ``data``, what its buttons carry (the only taps the message can bring)."""

    message_id: int
    until: Until
    data: tuple[str, ...]
    resent: bool = False  # as ``MessageSent.resent``


@dataclass(frozen=True)
class ReplySpoken:
    """The answer to ``SpeakReply``: the voice note's message id (and its buttons, as
    ``KeyboardShown`` says them), how long speaking took and which engine spoke; or, when
    the engine failed, the text sent instead (``failed``)."""

    message_id: int | None
    until: Until | None
    data: tuple[str, ...]
    speak_ms: float
    engine: str = ""
    model: str = ""
    failed: bool = False


@dataclass(frozen=True)
class WizardCommand:
    """An experimenter's command from the console, applied exactly once.

    ``payload`` by ``kind``: say (``text``), reply (``action`` approve | edit | replace,
    ``text``), end (``reason``), gate (``on``, ``auto_send_after``, and ``scope`` for a
    system's or the study's gate), note (``turn``, ``text``); the others take nothing.
    """

    command_id: int
    kind: CommandKind
    wizard: str
    payload: Mapping[str, object]


@dataclass(frozen=True)
class Tick:
    """The clock looked: reminders, abandonment and time limits are decided here."""


@dataclass(frozen=True)
class Recovered:
    """The bot restarted; pending work (a system call in flight, an assignment) is redone."""


Event = (
    StartCommand
    | DoneCommand
    | WithdrawCommand
    | HelpCommand
    | UnknownCommand
    | TextReceived
    | UnsupportedReceived
    | MediaReceived
    | MediaFetched
    | MessageEdited
    | ButtonTapped
    | SystemReplied
    | SystemFailed
    | SidesAnswered
    | MessageSent
    | KeyboardShown
    | ReplySpoken
    | WizardCommand
    | Tick
    | Recovered
)

PARTICIPANT_EVENTS = (
    StartCommand,
    DoneCommand,
    WithdrawCommand,
    HelpCommand,
    UnknownCommand,
    TextReceived,
    UnsupportedReceived,
    MediaReceived,
    MessageEdited,
    ButtonTapped,
)
"""Events that come from the participant: they end a silence."""
