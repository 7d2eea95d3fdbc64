"""The contract between ozlab and a system under test.

A system is a black box: it gets the conversation so far and the participant's new message,
and answers with one or more texts and, optionally, events that end the scenario. Systems
receive the whole history on every call so that a restarted bot loses nothing: a system
that keeps state of its own must be able to rebuild it from the history.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Protocol


@dataclass(frozen=True)
class Turn:
    """One finished exchange: what the participant wrote and what the system answered."""

    user: str
    system: str


@dataclass(frozen=True)
class Conversation:
    """What a system is told on each call."""

    session_id: str
    scenario_id: str
    brief: str
    history: tuple[Turn, ...]
    message: str
    system_prompt: str | None = None  # the scenario's own prompt for LLM systems, if any


@dataclass(frozen=True)
class SystemReply:
    """What a system answered.

    ``events`` may hold ``task_success`` or ``end_dialogue``; ``buttons`` are (title,
    payload) pairs offered under the last text: a tap sends the payload as the
    participant's next message (Rasa's buttons).
    """

    texts: tuple[str, ...]
    events: frozenset[str] = field(default_factory=frozenset)
    buttons: tuple[tuple[str, str], ...] = ()
    event_data: Mapping[str, Mapping[str, object]] = field(default_factory=dict)
    """What the system did, by event: ``{"task_success": {"title": ..., ...}}`` for the
    demo shop's game added; a scenario's ``success_if`` is checked against it."""


class SystemFailure(Exception):
    """The system under test failed (down, slow, garbage).

    The message is what the exchange record and the log keep: it says what went wrong in
    words an experimenter understands and never contains a secret.
    """


class SystemTimeout(SystemFailure):
    """The system did not answer in time: the participant is told it is taking long."""


class System(Protocol):
    """A system under test. Implementations must be safe to call concurrently."""

    async def respond(self, conversation: Conversation) -> SystemReply: ...

    async def close(self) -> None: ...
