"""Where a participant stands, as the engine writes it with every step and the console
shows it: the read model the store keeps beside the engine's private snapshot."""

from __future__ import annotations

from dataclasses import dataclass

from bot.core.vocabulary import (
    Stage,
)


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
    cell: str | None = None  # the cell of the design they were assigned to, once assigned
