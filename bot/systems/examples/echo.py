"""An example custom adapter: it echoes the participant's message.

A study uses it (or your own class, written the same way) with::

    systems:
      - id: echo
        type: python
        entry: bot.systems.examples.echo:Echo
        options: {prefix: "You said: "}

A custom adapter is any class that ozlab can build with the study's ``options`` as keyword
arguments and that has two coroutine methods:

- ``respond(conversation) -> SystemReply``: ``conversation`` holds the session id, the
  scenario id and brief, the finished exchanges (``history``) and the new ``message``;
  answer with one or more ``texts`` and, to end the scenario, ``events`` such as
  ``{"task_success"}`` or ``{"end_dialogue"}``. Raise ``SystemFailure("what went wrong")``
  when the system cannot answer: the participant is asked to try again and the message is
  stored with the exchange. It must be safe to call concurrently for many sessions.
- ``close()``: release what the adapter holds (connections, files) when the bot stops.

ozlab applies the study's ``timeout`` around ``respond``.
"""

from __future__ import annotations

from bot.systems.base import Conversation, SystemReply


class Echo:
    """Answers with ``prefix`` + the message; says goodbye (``end_dialogue``) on "bye"."""

    def __init__(self, prefix: str = "You said: ") -> None:
        if not isinstance(prefix, str):
            raise TypeError(f"prefix must be a string, not {type(prefix).__name__}")
        self.prefix = prefix

    async def respond(self, conversation: Conversation) -> SystemReply:
        if conversation.message.strip().lower() in ("bye", "goodbye"):
            return SystemReply(texts=("Goodbye!",), events=frozenset({"end_dialogue"}))
        return SystemReply(texts=(self.prefix + conversation.message,))

    async def close(self) -> None:
        """Nothing to release."""
