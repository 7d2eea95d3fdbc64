"""The ``rasa`` adapter: a Rasa assistant through its REST channel.

``POST {url}/webhooks/rest/webhook`` with ``{"sender": <session id>, "message": <text>}``.
Rasa keeps the conversation itself (its tracker, keyed by ``sender``), so no history is sent.
It answers with a list of messages; what ozlab makes of each one:

- ``text``: a message of its own, in order;
- ``image``: its URL, as a message of its own (after the text of the same object);
- ``buttons`` (``[{"title", "payload"}]``): inline buttons under the last message, all of
  them in order; a tap sends the payload (e.g. ``/affirm``) back as the next message;
- ``custom``: ignored (it is meant for other channels), except that a custom object holding
  ``"event": "<name>"`` or ``"events": ["<name>", ...]`` adds those events to the reply, so
  a Rasa action can end the scenario: ``dispatcher.utter_message(json_message={"event":
  "task_success"})``;
- anything else (``recipient_id``, ``attachment``…): ignored.

An answer with no message at all (``[]``, or only buttons or events) is a failure: Rasa
answers ``[]`` when its policies predicted no utterance or an action failed, and leaving the
participant without an answer is never right; they are asked to try again and the exchange
is stored with the error.
"""

from __future__ import annotations

from typing import Any

from bot.core.conversation import Conversation, SystemReply
from bot.systems.base import SystemFailure
from bot.systems.http_json import JsonClient, describe_url, json_kind
from scenarios.systems import RasaSystem

WEBHOOK = "/webhooks/rest/webhook"


def webhook_url(base: str) -> str:
    """``{base}/webhooks/rest/webhook``, unless the study already wrote the whole path."""
    base = base.rstrip("/")
    return base if base.endswith(WEBHOOK) else base + WEBHOOK


def parse_rasa(answer: Any, where: str = "Rasa") -> SystemReply:
    """Rasa's list of messages → one reply (see the module's docstring for the rules)."""
    if not isinstance(answer, list):
        raise SystemFailure(f"{where} answered with {json_kind(answer)}, not a list of messages")
    texts: list[str] = []
    buttons: list[tuple[str, str]] = []
    events: set[str] = set()
    for number, message in enumerate(answer, start=1):
        if not isinstance(message, dict):
            raise SystemFailure(
                f"{where}: message {number} of the answer is {json_kind(message)}, not an object"
            )
        for key in ("text", "image"):
            value = message.get(key)
            if value is None:
                continue
            if not isinstance(value, str):
                raise SystemFailure(
                    f"{where}: the {key} of message {number} is {json_kind(value)}, not a string"
                )
            if value.strip():
                texts.append(value)
        buttons.extend(_buttons(message.get("buttons"), number, where))
        events |= _events(message.get("custom"), number, where)
    if not texts and not events:  # events alone (ending the task silently) are a reply
        raise SystemFailure("the assistant sent no message (Rasa's answer held no text)")
    return SystemReply(texts=tuple(texts), events=frozenset(events), buttons=tuple(buttons))


def _buttons(value: Any, number: int, where: str) -> list[tuple[str, str]]:
    if value is None:
        return []
    if not isinstance(value, list):
        raise SystemFailure(f"{where}: the buttons of message {number} are not a list")
    found = []
    for button in value:
        if not isinstance(button, dict):
            raise SystemFailure(f"{where}: a button of message {number} is not an object")
        title, payload = button.get("title"), button.get("payload")
        title = title if isinstance(title, str) and title.strip() else None
        payload = payload if isinstance(payload, str) and payload.strip() else None
        if title is None and payload is None:
            raise SystemFailure(f"{where}: a button of message {number} has no title or payload")
        found.append((title or payload or "", payload or title or ""))
    return found


def _events(custom: Any, number: int, where: str) -> set[str]:
    if not isinstance(custom, dict):
        return set()
    names: Any = []
    if "event" in custom:
        names = [custom["event"]]
    if "events" in custom:
        more = custom["events"]
        names = [*names, *(more if isinstance(more, list) else [more])]
    if not all(isinstance(n, str) and n for n in names):
        raise SystemFailure(
            f"{where}: the custom events of message {number} are not names such as task_success"
        )
    return set(names)


class RasaRest:
    """A system under test that is a Rasa assistant's REST channel."""

    def __init__(self, spec: RasaSystem, client: JsonClient) -> None:
        self.spec = spec
        self.client = client
        self.endpoint = webhook_url(spec.url)

    async def respond(self, conversation: Conversation) -> SystemReply:
        answer = await self.client.post(
            self.endpoint,
            {"sender": conversation.session_id, "message": conversation.message},
            timeout=self.spec.timeout,
            retries=self.spec.retries,
        )
        return parse_rasa(answer, describe_url(self.endpoint))

    async def close(self) -> None:
        """Nothing of its own to release: the shared client is closed by ``close_systems``."""
