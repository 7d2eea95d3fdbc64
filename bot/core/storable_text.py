"""Text from outside ozlab, made storable once, at the door where it comes in.

Participants, annotators, systems under test, model judges and imported files may bring
any character; a database cannot keep them all. PostgreSQL's text refuses U+0000 (NUL),
and a lone surrogate (U+D800–U+DFFF without its pair, which a JSON escape such as
``"\\ud83d"`` gives Python) cannot be encoded as UTF-8 at all, so neither SQLite nor
PostgreSQL can be sent it. Each such code point becomes U+FFFD (the replacement character,
"�"), the same on every backend, before the text goes anywhere: the engine, the store and
what the participant is shown all see the same words, and no backend decides by a failed
statement what text becomes.

The doors: a Telegram update as it is read (``bot.telegram.inbound``), a system's reply
(``bot.runtime.participants``, ``bot.stress.replay``), a model's answer (a judge's,
``bot.annotation.judging``; a proposed stress test's, ``bot.stress.propose``), a wizard's
command (``bot.desk``), an imported file (``analytics.io.import_rows``) and a
study copied from another database (``bot.store.moving``, which counts what it changed).

The standard library and ``bot.core`` only: every layer imports it.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import replace

from bot.core.conversation import SystemReply, ToolCall

REPLACEMENT = "\ufffd"
"""What stands for a code point no backend can keep."""

_REFUSED = re.compile("[\x00\ud800-\udfff]")
"""NUL (PostgreSQL's text refuses it) and lone surrogates (UTF-8 cannot encode them): a
surrogate in a Python string is always a lone one, a pair being one code point there."""


def storable(text: str) -> str:
    """``text`` with every code point a backend refuses replaced by U+FFFD."""
    if _REFUSED.search(text) is None:
        return text
    return _REFUSED.sub(REPLACEMENT, text)


def storable_data(value: object) -> object:
    """``value`` (JSON-like: text, numbers, lists, mappings) with its texts, keys too, made
    storable; anything else as it is."""
    if isinstance(value, str):
        return storable(value)
    if isinstance(value, Mapping):
        return {storable(str(k)): storable_data(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return type(value)(storable_data(v) for v in value)
    return value


def storable_reply(reply: SystemReply) -> SystemReply:
    """A system's reply with every text in it (texts, buttons, events, what it did, its tool
    calls) made storable; the reply itself (the usual case) when it held nothing to change."""
    calls = [(c.tool, c.arguments, c.result, c.error) for c in reply.tool_calls]
    captions = tuple(p.caption for p in reply.pictures)
    said = (reply.texts, reply.events, reply.buttons, reply.event_data, calls, captions)
    if not _refused_in(said):
        return reply
    return replace(
        reply,
        texts=tuple(storable(t) for t in reply.texts),
        events=frozenset(storable(e) for e in reply.events),
        buttons=tuple((storable(title), storable(payload)) for title, payload in reply.buttons),
        event_data={
            storable(event): {storable(k): storable_data(v) for k, v in data.items()}
            for event, data in reply.event_data.items()
        },
        tool_calls=tuple(_storable_call(call) for call in reply.tool_calls),
        pictures=tuple(replace(p, caption=storable(p.caption)) for p in reply.pictures),
    )


def _refused_in(value: object) -> bool:
    if isinstance(value, str):
        return _REFUSED.search(value) is not None
    if isinstance(value, Mapping):
        return any(_refused_in(str(k)) or _refused_in(v) for k, v in value.items())
    if isinstance(value, list | tuple | frozenset):
        return any(_refused_in(v) for v in value)
    return False


def _storable_call(call: ToolCall) -> ToolCall:
    return replace(
        call,
        tool=storable(call.tool),
        arguments={storable(k): storable_data(v) for k, v in call.arguments.items()},
        result=None if call.result is None else storable(call.result),
        error=None if call.error is None else storable(call.error),
    )
