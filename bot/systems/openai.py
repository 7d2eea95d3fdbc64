"""The ``openai`` adapter: an OpenAI-compatible chat completions server as system under test.

vLLM, llama.cpp's server, Ollama and hosted APIs all speak ``POST /v1/chat/completions``.
Each call sends the system prompt (the scenario's, else the study's, with ``{brief}`` and
``{scenario}`` filled in), the session's history trimmed to the study's budget, and the new
message; the reply is ``choices[0].message.content``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from bot.core.conversation import Conversation, SystemReply, Turn
from bot.systems.base import SystemFailure
from bot.systems.http_json import JsonClient, bearer_header, describe_url, excerpt, json_kind
from scenarios.systems import OpenAISystem

EMPTY_REPLY = "the system returned an empty reply"


def completions_url(base: str) -> str:
    """``{base}/v1/chat/completions``, without doubling what the study already wrote."""
    base = base.rstrip("/")
    if base.endswith("/chat/completions"):
        return base
    if base.endswith("/v1"):
        return base + "/chat/completions"
    return base + "/v1/chat/completions"


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

    def __init__(self, spec: OpenAISystem, client: JsonClient, env: Mapping[str, str]) -> None:
        self.spec = spec
        self.client = client
        self.endpoint = completions_url(spec.url)
        self._headers = bearer_header(spec.id, spec.api_key_env, env)

    def messages(self, conversation: Conversation) -> list[dict[str, str]]:
        """The chat messages one call sends: prompt, trimmed history, new message."""
        messages: list[dict[str, str]] = []
        template = conversation.system_prompt or self.spec.system_prompt
        if template:
            messages.append({"role": "system", "content": fill_prompt(template, conversation)})
        for turn in trim_history(
            conversation.history, self.spec.history_turns, self.spec.history_chars
        ):
            messages.append({"role": "user", "content": turn.user})
            messages.append({"role": "assistant", "content": turn.system})
        messages.append({"role": "user", "content": conversation.message})
        return messages

    def request(self, conversation: Conversation) -> dict[str, Any]:
        body: dict[str, Any] = {"model": self.spec.model, "messages": self.messages(conversation)}
        if self.spec.temperature is not None:
            body["temperature"] = self.spec.temperature
        if self.spec.max_tokens is not None:
            body["max_tokens"] = self.spec.max_tokens
        return body

    async def respond(self, conversation: Conversation) -> SystemReply:
        answer = await self.client.post(
            self.endpoint,
            self.request(conversation),
            timeout=self.spec.timeout,
            retries=self.spec.retries,
            headers=self._headers,
        )
        return SystemReply(texts=(self._content(answer),))

    def _content(self, answer: Any) -> str:
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
