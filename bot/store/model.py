"""What goes into the store and what comes out of it, as plain frozen records: no SQL.

The bot commits a ``StepCommit`` per engine step; the console reads ``ParticipantStatus``
rows (a read model the store keeps beside the engine's private snapshot, so that nobody
outside the engine parses that snapshot); commands travel as ``Command``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from bot.vocabulary import CommandKind, Stage

if TYPE_CHECKING:
    from bot.engine.effects import Record


@dataclass(frozen=True)
class StoredParticipant:
    """A participant as the bot last committed them, to resume after a restart."""

    participant_id: str
    chat_key: str | None  # the chat id, encrypted; None before consent or once dropped
    state: str  # the engine's snapshot (JSON): only the engine reads it
    undelivered: str | None  # messages committed but perhaps not sent (JSON), or None


@dataclass(frozen=True)
class HeldReply:
    """A system reply held for a wizard (``texts`` empty for a wizard-type system)."""

    texts: tuple[str, ...]
    since: float
    auto_send_at: float | None = None


@dataclass(frozen=True)
class ParticipantStatus:
    """Where a participant stands, as the console shows it: written with every step."""

    stage: Stage
    last_activity_at: float
    session_id: str | None = None  # the current (or next) session, once tasks are assigned
    scenario_id: str | None = None
    system_id: str | None = None
    session_started_at: float | None = None
    exchanges: int = 0  # successful exchanges of the current session
    turns: int = 0  # user turns of the current session, failed ones included
    pending_message: str | None = None  # the participant's message waiting for a reply
    held: HeldReply | None = None
    paused: bool = False
    gated: bool = False  # the session's own gate
    gate_auto_send: float | None = None
    reminded: bool = False
    abandoned: bool = False


@dataclass(frozen=True)
class StepCommit:
    """One engine step, committed in one transaction before anything is sent."""

    study_id: str
    participant_id: str
    state: str | None  # the new snapshot; None: only rows (the step's own commit has it)
    status: ParticipantStatus | None
    chat_key: str | None  # kept once stored (the first one wins)
    records: Sequence[Record] = ()
    update_id: int | None = None  # the Telegram update this step consumed
    undelivered: str | None = None  # the messages about to be sent, until ``delivered``


@dataclass(frozen=True)
class Command:
    """An experimenter's command, appended by a console and applied once by the bot."""

    id: int
    at: float
    wizard: str
    kind: CommandKind
    session_id: str | None  # None for commands about a system or the whole study
    payload: Mapping[str, object] = field(default_factory=dict)
