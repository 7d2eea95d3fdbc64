"""Studies whose systems are real adapters pointed at the fake protocol servers.

The adapter end-to-end tests (``test_adapters_e2e.py``) start the bot with *no* ``systems=``
so that the registry builds every adapter from the study file, exactly as ``ozlab run`` does.
This module builds those studies from the shipped ``hmd`` bundle:

- :func:`with_systems` - the bundle with its ``systems`` replaced;
- :func:`spec` - a study's system entry for one adapter kind, validated like the YAML is;
- :func:`fake` - a fake server of a kind whose reply is a function of the participant's message,
  so that one test body can run against every protocol;
- :class:`Moody` - a custom (``type: python``) adapter that misbehaves when asked to.
"""

from __future__ import annotations

import asyncio
import hashlib
from collections.abc import Callable
from typing import Any, Literal

from pydantic import TypeAdapter

from bot.core.conversation import Conversation, SystemReply
from bot.systems.base import SystemFailure
from scenarios.models import StudyBundle
from scenarios.systems import SystemSpec
from tests.fake_servers import FakeHttp, FakeOpenAI, FakeRasa, FakeServer

Kind = Literal["openai", "rasa", "http"]
KINDS: tuple[Kind, ...] = ("openai", "rasa", "http")

EMPTY_TEXT_ERROR: dict[Kind, str] = {
    "openai": "the system returned an empty reply",
    "rasa": "the assistant sent no message",
    "http": "the system returned an empty reply",
}
"""What the exchange's error says when a well-formed answer carries no text (Mode.EMPTY_TEXT)."""

_SPECS: TypeAdapter[Any] = TypeAdapter(SystemSpec)


def with_systems(bundle: StudyBundle, *specs: Any) -> StudyBundle:
    """``bundle`` with its systems under test replaced by ``specs``."""
    study = bundle.study.model_copy(update={"systems": tuple(specs)})
    return bundle.model_copy(update={"study": study})


def spec(
    kind: str, server: FakeServer | str | None = None, *, id: str | None = None, **fields: Any
) -> Any:
    """A study's system entry for ``kind`` pointing at ``server`` (or at a URL; none for python).

    Defaults keep failing cases quick: a 1 s timeout and no retries. The ``http`` adapter
    gets the full endpoint (a homemade service has no conventional path); ``openai`` and
    ``rasa`` get the base address, as a researcher writes it.
    """
    if isinstance(server, FakeServer):
        url = server.endpoint if kind == "http" else server.url
    else:
        url = server
    entry: dict[str, Any] = {"type": kind, "id": id or kind, "timeout": 1.0, "retries": 0}
    if url is not None:
        entry["url"] = url
    if kind == "openai":
        entry["model"] = "test-model"
    return _SPECS.validate_python(entry | fields)


def message_of(kind: Kind, body: Any) -> str:
    """The participant's new message inside a request body of ``kind`` (default mappings)."""
    if kind == "openai":
        return body["messages"][-1]["content"]
    return body["message"]


def fake(kind: Kind, reply: str | Callable[[str], str] = "Hello from the system.") -> FakeServer:
    """A not yet started fake server of ``kind`` answering ``reply`` (or ``reply(message)``)."""

    def text(body: Any) -> str:
        return reply(message_of(kind, body)) if callable(reply) else reply

    if kind == "openai":
        return FakeOpenAI(reply=text)
    if kind == "rasa":
        return FakeRasa(lambda body: [{"text": text(body)}])
    return FakeHttp(lambda body: {"text": text(body)})


class Moody:
    """A custom adapter (``type: python``) that misbehaves when the message asks it to.

    ``slow`` sleeps ``delay`` seconds, ``refuse`` raises :class:`SystemFailure` (what a
    well-written adapter does), ``crash`` raises an unexpected error (what a buggy one does),
    ``blank`` answers only whitespace, ``done`` ends the task without a word (only the
    ``task_success`` event); anything else is echoed.
    """

    def __init__(self, delay: float = 30.0) -> None:
        self.delay = delay

    async def respond(self, conversation: Conversation) -> SystemReply:
        match conversation.message:
            case "slow":
                await asyncio.sleep(self.delay)
            case "refuse":
                raise SystemFailure("the model is still loading")
            case "crash":
                raise KeyError("choices")
            case "blank":
                return SystemReply(texts=("  ",))
            case "done":
                return SystemReply(texts=(), events=frozenset({"task_success"}))
        return SystemReply(texts=(f"Moody heard: {conversation.message}",))

    async def close(self) -> None:
        """Nothing to release."""


class Looker:
    """A custom adapter that says what picture it was given: its size in bytes and the
    start of its SHA-256 (``slow`` as the caption: after ``delay`` seconds)."""

    def __init__(self, delay: float = 30.0) -> None:
        self.delay = delay

    async def respond(self, conversation: Conversation) -> SystemReply:
        if conversation.message == "slow":
            await asyncio.sleep(self.delay)
        seen = [
            f"{len(a.data)} bytes {hashlib.sha256(a.data).hexdigest()[:12]}"
            for a in conversation.attachments
        ]
        return SystemReply((f"Looker saw: {', '.join(seen) or 'nothing'}",))

    async def close(self) -> None:
        """Nothing to release."""
