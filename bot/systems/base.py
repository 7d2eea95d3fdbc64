"""The contract between ozlab and a system under test.

A system is a black box: it gets the conversation so far and the participant's new message,
and answers with one or more texts and, optionally, events that end the scenario. Systems
receive the whole history on every call so that a restarted bot loses nothing: a system
that keeps state of its own must be able to rebuild it from the history.
"""

from __future__ import annotations

from typing import Protocol

from bot.core.conversation import Conversation, SystemReply, ToolCall, Turn

__all__ = ["Conversation", "System", "SystemFailure", "SystemReply", "SystemTimeout", "Turn"]
"""The adapter interface: what a ``python`` system imports (``docs/python-adapter.md``)."""


class SystemFailure(Exception):
    """The system under test failed (down, slow, garbage).

    The message is what the exchange record and the log keep: it says what went wrong in
    words an experimenter understands and never contains a secret. ``tool_calls``: the
    scenario's tools the system called in the turn before it failed, recorded all the same.
    """

    tool_calls: tuple[ToolCall, ...] = ()


class SystemTimeout(SystemFailure):
    """The system did not answer in time: the participant is told it is taking long."""


class System(Protocol):
    """A system under test. Implementations must be safe to call concurrently."""

    async def respond(self, conversation: Conversation) -> SystemReply: ...

    async def close(self) -> None: ...
