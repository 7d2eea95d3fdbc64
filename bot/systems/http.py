"""The ``http`` adapter: a researcher's own JSON service, mapped by the study file.

The request body is built from ``request`` (dotted path in the body → what ozlab puts
there), e.g. ``{"input.text": "message", "user": "session_id"}`` sends
``{"input": {"text": "..."}, "user": "..."}``. What ozlab can put there:

- ``session_id``, ``message``, ``scenario_id``, ``brief``: strings;
- ``history``: the finished exchanges, ``[{"user": "...", "system": "..."}, ...]``;
- ``turn``: the number of this exchange in the session, starting at 1.

A message that comes with a voice note or photo (a task whose systems receive media) is
posted as ``multipart/form-data`` instead: the same JSON body as the part ``request``, and
the file as the part ``media`` (``voice.ogg`` or ``photo.jpg``, with its content type).

The answer is read with ``response``'s dotted paths, where a number indexes a list
(``choices.0.text``; ``-1`` is the last item) and an empty path is the whole answer:

- ``text``: a string, sent as a message;
- ``messages``: a list of strings or of objects with ``text``, each sent as a message
  (after ``text``, when both are mapped);
- ``events``: a list of event names (or one name), e.g. ``["task_success"]``;
- ``event_data``: an object of what the system did by event, e.g. ``{"task_success":
  {"title": "Lantern Road", "genres": ["adventure"]}}`` (a scenario's ``success_if`` checks it);
- ``pictures``: a list of ``{"data": base64, "mime": ..., "caption": ...}``, sent as photos.

At least one non-empty text must come out; a missing path is only an error when nothing
else gave a text, and the message names the path and the keys the answer did have.
"""

from __future__ import annotations

import base64
import binascii
import itertools
from collections.abc import Mapping
from typing import Any

from bot.core.conversation import Conversation, Picture, SystemReply
from bot.core.errors import SystemSetupError
from bot.systems.base import SystemFailure
from bot.systems.http_json import JsonClient, bearer_header, describe_url, excerpt, json_kind
from scenarios.systems import HttpSystem, RequestField

_MISSING: Any = object()


Compiled = list[tuple[tuple[str, ...], RequestField]]


def compile_request(system_id: str, mapping: Mapping[str, RequestField]) -> Compiled:
    """Check the request paths once, at start-up: no empty parts, no path inside another."""
    compiled: Compiled = []
    for path, field in mapping.items():
        parts = tuple(path.split("."))
        if not all(p.strip() for p in parts):
            raise SystemSetupError(
                f"system {system_id!r}: the request path {path!r} has an empty part (use a.b.c)",
                field="request",
            )
        compiled.append((parts, field))
    by_parts = sorted(compiled)
    for (first, _), (second, _) in itertools.pairwise(by_parts):
        if second[: len(first)] == first:
            raise SystemSetupError(
                f"system {system_id!r}: the request paths {'.'.join(first)!r} and "
                f"{'.'.join(second)!r} overlap: one would overwrite the other",
                field="request",
            )
    return compiled


def build_body(compiled: Compiled, values: Mapping[str, Any]) -> dict[str, Any]:
    """Nested objects from dotted paths: ``("input", "text") → {"input": {"text": ...}}``."""
    body: dict[str, Any] = {}
    for parts, field in compiled:
        node = body
        for part in parts[:-1]:
            node = node.setdefault(part, {})
        node[parts[-1]] = values[field]
    return body


def lookup(data: Any, path: str) -> Any:
    """The value at a dotted path (numbers index lists), or ``_MISSING``."""
    if path in ("", "."):
        return data
    node = data
    for part in path.split("."):
        if isinstance(node, dict):
            if part not in node:
                return _MISSING
            node = node[part]
        elif isinstance(node, list):
            try:
                index = int(part)
            except ValueError:
                return _MISSING
            if not -len(node) <= index < len(node):
                return _MISSING
            node = node[index]
        else:
            return _MISSING
    return node


class HttpService:
    """A system under test that is a homemade JSON service (see the module's docstring)."""

    def __init__(self, spec: HttpSystem, client: JsonClient, env: Mapping[str, str]) -> None:
        self.spec = spec
        self.client = client
        self._request = compile_request(spec.id, spec.request)
        auth = bearer_header(spec.id, spec.api_key_env, env)
        if auth and any(name.lower() == "authorization" for name in spec.headers):
            raise SystemSetupError(
                f"system {spec.id!r}: both api_key_env and an Authorization header are set; "
                "keep one of them",
                field="api_key_env",
            )
        self._headers = {**spec.headers, **auth}

    def request(self, conversation: Conversation) -> dict[str, Any]:
        values = {
            "session_id": conversation.session_id,
            "message": conversation.message,
            "history": [{"user": t.user, "system": t.system} for t in conversation.history],
            "scenario_id": conversation.scenario_id,
            "brief": conversation.brief,
            "turn": len(conversation.history) + 1,
        }
        return build_body(self._request, values)

    async def respond(self, conversation: Conversation) -> SystemReply:
        answer = await self.client.post(
            self.spec.url,
            self.request(conversation),
            timeout=self.spec.timeout,
            retries=self.spec.retries,
            headers=self._headers,
            files=conversation.attachments,
        )
        return self.parse(answer)

    def parse(self, answer: Any) -> SystemReply:
        """The service's JSON answer → a reply, by the study's response paths."""
        where = describe_url(self.spec.url)
        mapping = self.spec.response
        texts: list[str] = []
        notes: list[str] = []
        if mapping.text is not None:
            value = lookup(answer, mapping.text)
            if value is _MISSING or value is None:
                notes.append(f"no {mapping.text!r}")
            elif not isinstance(value, str):
                raise SystemFailure(
                    f"{where}: {mapping.text!r} in the answer is {json_kind(value)}, not a string"
                )
            elif value.strip():
                texts.append(value)
            else:
                notes.append(f"{mapping.text!r} is empty")
        if mapping.messages is not None:
            value = lookup(answer, mapping.messages)
            if value is _MISSING or value is None:
                notes.append(f"no {mapping.messages!r}")
            elif not isinstance(value, list):
                raise SystemFailure(
                    f"{where}: {mapping.messages!r} in the answer is {json_kind(value)}, "
                    "not a list of messages"
                )
            else:
                before = len(texts)
                texts.extend(_message_texts(value, mapping.messages, where))
                if len(texts) == before:
                    notes.append(f"{mapping.messages!r} holds no text")
        events = self._events(answer, where)
        pictures = self._pictures(answer, where)
        if not texts and not events and not pictures:  # events or pictures alone are a reply
            if isinstance(answer, dict):
                keys = f" (the answer's keys: {excerpt(', '.join(map(str, answer))) or 'none'})"
            else:
                keys = f" (the answer is {json_kind(answer)})"
            raise SystemFailure(
                f"{where}: the system returned an empty reply: {'; '.join(notes)}{keys}"
            )
        return SystemReply(
            tuple(texts), events, event_data=self._event_data(answer, where), pictures=pictures
        )

    def _pictures(self, answer: Any, where: str) -> tuple[Picture, ...]:
        path = self.spec.response.pictures
        value = lookup(answer, path) if path is not None else None
        if value is _MISSING or value is None:
            return ()
        if not isinstance(value, list):
            raise SystemFailure(
                f"{where}: {path!r} in the answer is {json_kind(value)}, not a list"
            )
        found = []
        for number, item in enumerate(value, start=1):
            data = item.get("data") if isinstance(item, dict) else None
            try:
                image = base64.b64decode(data, validate=True) if isinstance(data, str) else b""
            except binascii.Error:
                image = b""
            if not image:
                raise SystemFailure(
                    f"{where}: picture {number} of {path!r} is not an object with its image"
                    " in base64 as data"
                )
            mime, caption = item.get("mime"), item.get("caption")
            found.append(
                Picture(
                    image,
                    mime if isinstance(mime, str) and mime else "image/jpeg",
                    caption if isinstance(caption, str) else "",
                )
            )
        return tuple(found)

    def _event_data(self, answer: Any, where: str) -> dict[str, Mapping[str, object]]:
        path = self.spec.response.event_data
        value = lookup(answer, path) if path is not None else None
        if value is _MISSING or value is None:
            return {}
        if not isinstance(value, dict) or not all(isinstance(v, dict) for v in value.values()):
            raise SystemFailure(
                f"{where}: {path!r} in the answer is {json_kind(value)}, not an object of what"
                ' the system did by event, such as {"task_success": {"title": "..."}}'
            )
        return {str(name): data for name, data in value.items()}

    def _events(self, answer: Any, where: str) -> frozenset[str]:
        path = self.spec.response.events
        if path is None:
            return frozenset()
        value = lookup(answer, path)
        if value is _MISSING or value is None:
            return frozenset()
        if isinstance(value, str):
            value = [value]
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            raise SystemFailure(
                f"{where}: {path!r} in the answer is {json_kind(value)}, "
                "not a list of event names such as task_success"
            )
        return frozenset(v for v in value if v)

    async def close(self) -> None:
        """Nothing of its own to release: the shared client is closed by ``close_systems``."""


def _message_texts(items: list[Any], path: str, where: str) -> list[str]:
    texts = []
    for number, item in enumerate(items, start=1):
        text = item.get("text") if isinstance(item, dict) else item
        if text is None and isinstance(item, dict):
            continue  # an object without text (an image, a card…) is skipped
        if not isinstance(text, str):
            raise SystemFailure(
                f"{where}: item {number} of {path!r} is {json_kind(item)}, "
                "not a string or an object with a text"
            )
        if text.strip():
            texts.append(text)
    return texts
