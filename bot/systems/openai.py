"""The ``openai`` adapter: an OpenAI-compatible chat completions server as system under test.

vLLM, llama.cpp's server, Ollama and hosted APIs all speak ``POST /v1/chat/completions``.
Each call sends the system prompt (the scenario's, else the study's, with ``{brief}`` and
``{scenario}`` filled in), the session's history trimmed to the study's budget, and the new
message (with a participant's voice note or photo as content parts, where the task sends
media); the reply is ``choices[0].message.content``.

Where the scenario declares tools, they are offered (``tools``) and each call the model makes
is answered from the scenario's tools and sent back, for at most ``max_tool_rounds`` rounds
within the turn (the last round says ``tool_choice: none``); the calls come back with the
reply, to be recorded with the session.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Mapping, Sequence
from typing import Any

from bot.core.conversation import Conversation, SystemReply, ToolCall, Turn
from bot.core.errors import SystemSetupError
from bot.systems.base import SystemFailure
from bot.systems.http_json import JsonClient, bearer_header, describe_url, excerpt, json_kind
from bot.systems.tools import ScenarioTools
from scenarios.systems import OpenAISystem, check_url

EMPTY_REPLY = "the system returned an empty reply"


def completions_url(base: str) -> str:
    """``{base}/v1/chat/completions``, without doubling what the study already wrote."""
    base = base.rstrip("/")
    if base.endswith("/chat/completions"):
        return base
    if base.endswith("/v1"):
        return base + "/chat/completions"
    return base + "/v1/chat/completions"


def server_url(spec: OpenAISystem, env: Mapping[str, str]) -> str:
    """Where the model is served: the value of ``url_env`` where the environment sets it,
    else the study's ``url``; a value that is no http(s) address stops the start."""
    return served_at(spec.url, spec.url_env, env, f"system {spec.id!r}")


def served_at(url: str, url_env: str | None, env: Mapping[str, str], who: str) -> str:
    """``url``, or the address the environment's ``url_env`` gives in its place (a system
    under test, a model judge)."""
    given = env.get(url_env, "").strip() if url_env else ""
    if not given:
        return url
    try:
        return check_url(given)
    except ValueError as error:
        raise SystemSetupError(
            f"{who}: the environment's {url_env}: {error}", field="url_env"
        ) from None


def user_content(conversation: Conversation) -> str | list[dict[str, Any]]:
    """The new message: its text, or, with a voice note or photo, content parts: the text
    (when there is any), then each file inline, a photo as an ``image_url`` with a data URI,
    a voice note as ``input_audio`` (base64, with its format named from its type: ``ogg``
    for Telegram's voice notes; a server that takes only wav or mp3 needs them converted)."""
    if not conversation.attachments:
        return conversation.message
    parts: list[dict[str, Any]] = []
    if conversation.message:
        parts.append({"type": "text", "text": conversation.message})
    for attachment in conversation.attachments:
        encoded = base64.b64encode(attachment.data).decode("ascii")
        if attachment.kind == "photo":
            uri = f"data:{attachment.mime};base64,{encoded}"
            parts.append({"type": "image_url", "image_url": {"url": uri}})
        else:
            audio = attachment.mime.partition("/")[2].partition(";")[0] or "ogg"
            parts.append({"type": "input_audio", "input_audio": {"data": encoded, "format": audio}})
    return parts


def fill_prompt(template: str, conversation: Conversation) -> str:
    """Replace ``{brief}`` and ``{scenario}`` only: other braces (JSON examples) stay as is."""
    return template.replace("{brief}", conversation.brief).replace(
        "{scenario}", conversation.scenario_id
    )


def trim_history(history: Sequence[Turn], turns: int | None, chars: int | None) -> tuple[Turn, ...]:
    """The last ``turns`` exchanges (``None``: all), then without the oldest ones until
    their texts add up to at most ``chars`` characters (``None``: no limit)."""
    kept = tuple(history)
    if turns is not None:
        kept = kept[max(0, len(kept) - turns) :]
    if chars is not None:
        size = sum(len(t.user) + len(t.system) for t in kept)
        start = 0
        while start < len(kept) and size > chars:
            size -= len(kept[start].user) + len(kept[start].system)
            start += 1
        kept = kept[start:]
    return kept


class OpenAIChat:
    """A system under test behind an OpenAI-compatible server."""

    def __init__(
        self,
        spec: OpenAISystem,
        client: JsonClient,
        env: Mapping[str, str],
        tools: Mapping[str, ScenarioTools] | None = None,
    ) -> None:
        self.spec = spec
        self.client = client
        self.endpoint = completions_url(server_url(spec, env))
        self._headers = bearer_header(spec.id, spec.api_key_env, env)
        self.tools: Mapping[str, ScenarioTools] = tools or {}

    def messages(self, conversation: Conversation) -> list[dict[str, Any]]:
        """The chat messages one call sends: prompt, trimmed history, new message."""
        messages: list[dict[str, Any]] = []
        template = conversation.system_prompt or self.spec.system_prompt
        if template:
            messages.append({"role": "system", "content": fill_prompt(template, conversation)})
        for turn in trim_history(
            conversation.history, self.spec.history_turns, self.spec.history_chars
        ):
            messages.append({"role": "user", "content": turn.user})
            messages.append({"role": "assistant", "content": turn.system})
        messages.append({"role": "user", "content": user_content(conversation)})
        return messages

    def request(
        self,
        conversation: Conversation,
        messages: list[dict[str, Any]] | None = None,
        tools: ScenarioTools | None = None,
        *,
        last_round: bool = False,
    ) -> dict[str, Any]:
        body: dict[str, Any] = {
            "model": self.spec.model,
            "messages": self.messages(conversation) if messages is None else messages,
        }
        if self.spec.temperature is not None:
            body["temperature"] = self.spec.temperature
        if self.spec.max_tokens is not None:
            body["max_tokens"] = self.spec.max_tokens
        if tools is not None:
            body["tools"] = tools.offered()
            if last_round:
                body["tool_choice"] = "none"
        return body

    async def respond(self, conversation: Conversation) -> SystemReply:
        calls: list[ToolCall] = []
        try:
            return await self._turn(conversation, calls)
        except SystemFailure as error:
            error.tool_calls = tuple(calls)  # made before it failed: recorded all the same
            raise

    async def _turn(self, conversation: Conversation, calls: list[ToolCall]) -> SystemReply:
        tools = self.tools.get(conversation.scenario_id)
        messages = self.messages(conversation)
        rounds = self.spec.max_tool_rounds
        for number in range(rounds + 1):
            answer = await self.client.post(
                self.endpoint,
                self.request(conversation, messages, tools, last_round=number == rounds),
                timeout=self.spec.timeout,
                retries=self.spec.retries,
                headers=self._headers,
            )
            first, message = self._message(answer)
            asked = message.get("tool_calls")
            if tools is None or not isinstance(asked, list) or not asked:
                return SystemReply(texts=(self._content(first, message),), tool_calls=tuple(calls))
            if number == rounds:
                break  # told to answer in words, it called tools again: they are not run
            messages.append(
                {"role": "assistant", "content": message.get("content"), "tool_calls": asked}
            )
            for number_in_round, item in enumerate(asked):
                call_id, name, arguments = _asked_call(item, number_in_round)
                call = await tools.call(name, arguments)
                calls.append(call)
                said = call.result if call.error is None else json.dumps({"error": call.error})
                messages.append({"role": "tool", "tool_call_id": call_id, "content": said})
        raise SystemFailure(
            f"{describe_url(self.endpoint)}: the model still called tools after "
            f"{rounds} rounds in one turn (max_tool_rounds), without a reply"
        )

    def _message(self, answer: Any) -> tuple[Any, dict[str, Any]]:
        """The first choice and its message, or the failure the answer shows."""
        where = describe_url(self.endpoint)
        if not isinstance(answer, dict):
            raise SystemFailure(f"{where} answered with {json_kind(answer)}, not a completion")
        choices = answer.get("choices")
        if not choices and answer.get("error") is not None:
            error = answer["error"]
            said = error.get("message", error) if isinstance(error, dict) else error
            raise SystemFailure(f"{where} answered with an error: {excerpt(str(said))}")
        if not isinstance(choices, list) or not choices:
            raise SystemFailure(f"{where} answered without choices (no completion)")
        first = choices[0]
        message = first.get("message") if isinstance(first, dict) else None
        if not isinstance(message, dict):
            raise SystemFailure(f"{where} answered without choices[0].message")
        return first, message

    def _content(self, first: Any, message: dict[str, Any]) -> str:
        where = describe_url(self.endpoint)
        content = message.get("content")
        if isinstance(content, list):  # content parts: [{"type": "text", "text": "..."}]
            content = "".join(
                p.get("text", "")
                for p in content
                if isinstance(p, dict) and isinstance(p.get("text"), str)
            )
        if content is not None and not isinstance(content, str):
            raise SystemFailure(
                f"{where} answered with choices[0].message.content as {json_kind(content)}, "
                "not text"
            )
        if not content or not content.strip():
            hint = ""
            if isinstance(first, dict) and first.get("finish_reason") == "length":
                hint = " (finish_reason 'length': is max_tokens too small?)"
            raise SystemFailure(EMPTY_REPLY + hint)
        return content.strip()

    async def close(self) -> None:
        """Nothing of its own to release: the shared client is closed by ``close_systems``."""


def _asked_call(item: object, number: int) -> tuple[str, str, object]:
    """(id, function name, arguments) of one entry of ``tool_calls``, however malformed:
    what is missing comes back empty, so the call is answered with an error."""
    if not isinstance(item, dict):
        return f"call_{number}", "", None
    call_id = item.get("id")
    function = item.get("function")
    if not isinstance(function, dict):
        function = {}
    name = function.get("name")
    return (
        call_id if isinstance(call_id, str) and call_id else f"call_{number}",
        name if isinstance(name, str) else "",
        function.get("arguments"),
    )
