"""How a study names its systems under test: one model per adapter, chosen by ``type``.

Secrets are never written here: a study names the environment variable that holds a key
(``api_key_env``), and the bot reads it at start-up.
"""

from __future__ import annotations

import re
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from scenarios.durations import Seconds

_ENV_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
_ENTRY = re.compile(r"^[A-Za-z_][\w.]*:[A-Za-z_]\w*$")


class _System(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, defer_build=True)

    id: str = Field(min_length=1, max_length=64)
    """The system's name in the study, the database and the report (e.g. ``shop-v1``)."""
    timeout: Seconds = 30.0
    """How long one reply may take before the participant is asked to try again."""
    retries: int = Field(default=2, ge=0, le=10)
    """Extra attempts after a connection error or a 5xx answer, with backoff."""
    format: Literal["plain", "markdown", "html"] = "plain"
    """How replies are shown; plain text unless the study asks (stray ``*`` stay harmless)."""
    family: str | None = Field(default=None, min_length=1, max_length=64)
    """The model family the system is built on, as the study names it (``qwen``, ``gpt``):
    a model judge of the same family is checked for preferring it; none: not said."""


def check_url(url: str) -> str:
    """``url`` without a trailing slash; a ValueError when it is not an http(s) address."""
    if not re.match(r"^https?://[^\s/]+", url):
        raise ValueError(f"{url!r} is not an http:// or https:// address")
    return url.rstrip("/")


def check_env_name(name: str | None) -> str | None:
    if name is not None and not _ENV_NAME.match(name):
        raise ValueError(f"{name!r} is not an environment variable name (e.g. OPENAI_API_KEY)")
    return name


class DemoSystem(_System):
    """The built-in demo systems: the shop assistant (``v1``, and ``v0`` which ignores the
    platform, never asks for clarification and matches keywords exactly) and the small-talk
    companion (``chat``)."""

    type: Literal["demo"]
    """``demo``: the built-in systems, nothing to install or run beside the bot."""
    variant: Literal["v1", "v0", "chat"] = "v1"
    """``v1``: the shop assistant; ``v0``: its weaker twin; ``chat``: the small-talk
    companion."""


class OpenAISystem(_System):
    """An OpenAI-compatible chat completions server (vLLM, llama.cpp, Ollama, hosted APIs)."""

    type: Literal["openai"]
    """``openai``: a language model behind an OpenAI-compatible server."""
    url: str
    """The server's base address; ``/v1/chat/completions`` is added unless already there."""
    url_env: str | None = None
    """The name of an environment variable that, when set, gives the server's address in
    place of ``url``: the study file keeps a default (a local server) and each machine that
    runs it may say where its model is, without an edit."""
    model: str = Field(min_length=1)
    """The model's name as the server knows it."""
    api_key_env: str | None = None
    """The name of the environment variable that holds the API key (never the key itself),
    sent as ``Authorization: Bearer <key>``; none for a local server without a key."""
    system_prompt: str | None = None
    """May contain ``{brief}`` (the scenario brief) and ``{scenario}`` (its id)."""
    temperature: float | None = Field(default=None, ge=0, le=2)
    """Sampling temperature sent with each call (0 to 2); none: the server's default."""
    max_tokens: int | None = Field(default=None, ge=1)
    """At most this many tokens per reply; none: the server's default."""
    history_turns: int | None = Field(default=20, ge=0)
    """Most recent exchanges sent with each call (``null``: all of them)."""
    history_chars: int | None = Field(default=None, ge=1)
    """Also trim the oldest exchanges until the history fits in this many characters."""
    max_tool_rounds: int = Field(default=4, ge=1, le=20)
    """Where the scenario offers tools: at most this many rounds of tool calls within one
    turn before the model must answer in words."""

    _url = field_validator("url")(classmethod(lambda cls, v: check_url(v)))
    _env = field_validator("api_key_env", "url_env")(classmethod(lambda cls, v: check_env_name(v)))


class RasaSystem(_System):
    """A Rasa assistant through its REST channel (``/webhooks/rest/webhook``)."""

    type: Literal["rasa"]
    """``rasa``: a Rasa assistant."""
    url: str
    """The Rasa server's address (``http://127.0.0.1:5005``); the REST channel's path is
    added."""

    _url = field_validator("url")(classmethod(lambda cls, v: check_url(v)))


RequestField = Literal["session_id", "message", "history", "scenario_id", "brief", "turn"]


class HttpResponseMap(BaseModel):
    """Where, in the service's JSON answer, ozlab finds each part (dotted paths)."""

    model_config = ConfigDict(extra="forbid", frozen=True, defer_build=True)

    text: str | None = "text"
    """A string, sent as a message."""
    messages: str | None = None
    """A list of strings (or of objects with ``text``), each sent as its own message."""
    events: str | None = None
    """A list of event names, e.g. ``["task_success"]``."""
    event_data: str | None = None
    """An object of what the system did by event, e.g. ``{"task_success": {"title": ...}}``
    (a scenario's ``success_if`` checks it)."""
    pictures: str | None = None
    """A list of pictures, each an object with ``data`` (the image, base64), ``mime``
    (``image/jpeg`` unless said) and ``caption``: sent as photos in a task whose
    ``media.system_returns`` has ``photo``."""


class HttpSystem(_System):
    """A homemade JSON service: the study maps request and response with dotted paths."""

    type: Literal["http"]
    """``http``: your own JSON service, called with one POST per participant message."""
    url: str
    """The address ozlab posts each participant message to."""
    headers: dict[str, str] = {}
    """Extra HTTP headers sent with every call; their values are masked in the study
    definition stored with the data."""
    api_key_env: str | None = None
    """Sent as ``Authorization: Bearer <key>`` when set."""
    request: dict[str, RequestField] = {
        "session_id": "session_id",
        "message": "message",
        "history": "history",
    }
    """Dotted path in the request body → what ozlab puts there."""
    response: HttpResponseMap = HttpResponseMap()
    """Where in the service's JSON answer the texts, events and event data are."""

    _url = field_validator("url")(classmethod(lambda cls, v: check_url(v)))
    _env = field_validator("api_key_env")(classmethod(lambda cls, v: check_env_name(v)))


class PythonSystem(_System):
    """A researcher's own adapter class, ``package.module:ClassName``, built with ``options``."""

    type: Literal["python"]
    """``python``: a class of your own, run inside the bot's process."""
    entry: str
    """``package.module:ClassName``; a module beside the study file works too."""
    options: dict[str, Any] = {}
    """Keyword arguments the class is built with, once, at start-up."""

    @field_validator("entry")
    @classmethod
    def _entry_form(cls, value: str) -> str:
        if not _ENTRY.match(value):
            raise ValueError(f"{value!r} is not of the form package.module:ClassName")
        return value


class WizardSystem(_System):
    """No program: every reply is written by an experimenter in the wizard console
    (Wizard-of-Oz). Several wizards may share the queue; a reply is taken by one."""

    type: Literal["wizard"]
    """``wizard``: no program behind it; experimenters write every reply."""


SystemSpec = Annotated[
    DemoSystem | OpenAISystem | RasaSystem | HttpSystem | PythonSystem | WizardSystem,
    Field(discriminator="type"),
]


def reports_success(spec: SystemSpec) -> bool:
    """Whether a system can say itself that a task succeeded: a language model, a wizard-only
    system, the demo's small-talk companion and an http service whose answer maps no events
    cannot (their success comes from tool calls, the participant's answer, a wizard's or a
    model judge's judgement)."""
    if isinstance(spec, OpenAISystem | WizardSystem):
        return False
    if isinstance(spec, DemoSystem) and spec.variant == "chat":
        return False  # the small-talk companion has no task to report on
    return not (isinstance(spec, HttpSystem) and spec.response.events is None)
