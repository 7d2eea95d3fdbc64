"""What a system under test is told and what it answers: the exchange as the engine, the
store and every adapter see it (``bot.systems.base`` says how a system is called)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field


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
    attachments: tuple[Attachment, ...] = ()
    """The voice note or photo the message came with, for a task whose systems receive
    media (``message`` is then its transcript or caption, or empty)."""


@dataclass(frozen=True)
class Attachment:
    """A file a system is given with the participant's message: what it is, its type and
    its bytes. The engine names it by ``digest`` (its SHA-256) and never holds the bytes:
    the runner puts them in as it calls the system."""

    kind: str  # voice | photo
    mime: str  # audio/ogg, image/jpeg, ...
    digest: str
    data: bytes = field(default=b"", repr=False)


@dataclass(frozen=True)
class ToolCall:
    """One call a language-model system made to a scenario's tool within a turn, and what
    it was told: the result, or the error (a bad call is answered, never raised)."""

    tool: str
    arguments: Mapping[str, object]
    """The arguments as the model gave them (``{"raw": text}`` when they were not JSON)."""
    result: str | None = None
    """What the model was told: the result as text (JSON for a structure)."""
    error: str | None = None
    """Why the call got no result (an unknown tool, a missing argument, no matching row)."""
    ends_task: bool = False
    """The tool ends the task as done when a call of it gets a result."""


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
    tool_calls: tuple[ToolCall, ...] = ()
    """The scenario's tools the system called in this turn, in order (``openai`` systems)."""
    pictures: tuple[Picture, ...] = ()
    """Pictures to show after the texts, each as a photo with its caption (where the task
    lets systems return photos)."""


@dataclass(frozen=True)
class Picture:
    """A picture a system returns: its bytes (JPEG or PNG), type and caption."""

    data: bytes = field(repr=False)
    mime: str = "image/jpeg"
    caption: str = ""
