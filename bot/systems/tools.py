"""A scenario's tools as a language-model system meets them: offered in the OpenAI
function-calling form, each call answered from the scenario's results table or function.

A call the model gets wrong (an unknown tool, arguments that are not a JSON object, a
required argument missing, a value of the wrong type, no row for these arguments, a
function that raised) is answered to the model as an error it can read and correct, and
recorded as such: a participant never sees a crash because a model called a tool badly.
"""

from __future__ import annotations

import asyncio
import hashlib
import importlib
import importlib.util
import inspect
import json
from collections.abc import Callable, Mapping
from typing import Any

from bot.core.conversation import ToolCall
from bot.core.errors import SystemSetupError
from bot.systems.http_json import excerpt
from scenarios.models import StudyBundle, Tool, ToolRow, ToolSource

_TYPES: dict[str, tuple[type, ...]] = {
    "string": (str,),
    "integer": (int,),
    "number": (int, float),
    "boolean": (bool,),
    "array": (list,),
    "object": (dict,),
}


def as_text(value: object) -> str:
    """A result as the model reads it: text as is, anything else as JSON."""
    if isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False, default=str)


def _fold(value: object) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    return str(value).strip().casefold()


def _matches(row: ToolRow, arguments: Mapping[str, object]) -> bool:
    return all(
        name in arguments and _fold(arguments[name]) == _fold(wanted)
        for name, wanted in row.when.items()
    )


def argument_problem(tool: Tool, arguments: Mapping[str, object]) -> str | None:
    """What is wrong with a call's arguments against the tool's schema (its required
    arguments, their types and ``enum``), or None."""
    properties = tool.parameters.get("properties", {})
    required = tool.parameters.get("required", [])
    assert isinstance(properties, dict) and isinstance(required, list)  # checked on loading
    missing = [name for name in required if name not in arguments]
    if missing:
        return f"missing required argument {missing[0]!r}"
    if tool.parameters.get("additionalProperties") is False:
        unknown = [name for name in arguments if name not in properties]
        if unknown:
            return f"unknown argument {unknown[0]!r} (the arguments: {', '.join(properties)})"
    for name, value in arguments.items():
        schema = properties.get(name)
        if not isinstance(schema, dict):
            continue
        kind = schema.get("type")
        types = _TYPES.get(kind) if isinstance(kind, str) else None
        wrong_bool = isinstance(value, bool) and kind in ("integer", "number")
        if types is not None and (not isinstance(value, types) or wrong_bool):
            return f"argument {name!r} must be of type {kind}"
        allowed = schema.get("enum")
        if isinstance(allowed, list) and value not in allowed:
            return f"argument {name!r} must be one of {', '.join(map(str, allowed))}"
    return None


def _load_function(scenario_id: str, tool: Tool, source: ToolSource) -> Callable[..., Any]:
    where, name = source.file or "", source.function or ""
    try:
        if where.endswith(".py"):
            digest = hashlib.sha256(where.encode()).hexdigest()[:12]
            spec = importlib.util.spec_from_file_location(f"ozlab_tools_{digest}", where)
            if spec is None or spec.loader is None:
                raise ImportError(f"cannot read {where}")
            module = importlib.util.module_from_spec(spec)
            spec.loader.exec_module(module)
        else:
            module = importlib.import_module(where)
    except Exception as error:
        raise SystemSetupError(
            f"scenario {scenario_id!r}: tool {tool.name!r}: importing {where!r} failed: "
            f"{type(error).__name__}: {error}",
            field="tools",
        ) from error
    function = getattr(module, name, None)
    if not callable(function):
        raise SystemSetupError(
            f"scenario {scenario_id!r}: tool {tool.name!r}: {where!r} has no function {name!r}",
            field="tools",
        )
    return function


class ScenarioTools:
    """One scenario's tools, ready to be offered and called."""

    def __init__(
        self,
        scenario_id: str,
        tools: tuple[Tool, ...],
        sources: Mapping[str, ToolSource],
        *,
        timeout: float = 10.0,
    ) -> None:
        self.scenario_id = scenario_id
        self.tools = {tool.name: tool for tool in tools}
        self.sources = dict(sources)
        self.timeout = timeout
        self.functions = {
            tool.name: _load_function(scenario_id, tool, sources[tool.name])
            for tool in tools
            if tool.function is not None and tool.name in sources
        }

    def offered(self) -> list[dict[str, Any]]:
        """The tools in the form a chat completions request's ``tools`` takes."""
        return [
            {
                "type": "function",
                "function": {
                    "name": tool.name,
                    "description": tool.description,
                    "parameters": tool.parameters,
                },
            }
            for tool in self.tools.values()
        ]

    async def call(self, name: str, raw_arguments: object) -> ToolCall:
        """Run one call the model made; a bad call comes back with its ``error``."""
        arguments: object = raw_arguments
        if isinstance(raw_arguments, str):
            try:
                arguments = json.loads(raw_arguments) if raw_arguments.strip() else {}
            except ValueError:
                arguments = None
        if not isinstance(arguments, dict):
            kept = {"raw": excerpt(str(raw_arguments))}
            return ToolCall(name, kept, error="the arguments are not a JSON object")
        tool = self.tools.get(name)
        if tool is None:
            known = ", ".join(self.tools) or "none"
            return ToolCall(name, arguments, error=f"there is no tool {name!r} (tools: {known})")
        problem = argument_problem(tool, arguments)
        if problem is not None:
            return ToolCall(name, arguments, error=problem, ends_task=tool.ends_task)
        try:
            result = await self._result(tool, arguments)
        except LookupError as error:
            return ToolCall(name, arguments, error=str(error), ends_task=tool.ends_task)
        except Exception as error:
            said = excerpt(f"{type(error).__name__}: {error}")
            return ToolCall(
                name, arguments, error=f"the tool failed: {said}", ends_task=tool.ends_task
            )
        return ToolCall(name, arguments, result=as_text(result), ends_task=tool.ends_task)

    async def _result(self, tool: Tool, arguments: dict[str, Any]) -> object:
        function = self.functions.get(tool.name)
        if function is None:
            rows = self.sources[tool.name].rows
            for row in rows:
                if _matches(row, arguments):
                    return row.result
            raise LookupError("no result for these arguments")
        async with asyncio.timeout(self.timeout):
            if inspect.iscoroutinefunction(function):
                return await function(**arguments)
            return await asyncio.to_thread(function, **arguments)


def scenario_tools(bundle: StudyBundle, *, timeout: float = 10.0) -> dict[str, ScenarioTools]:
    """Every scenario's tools that declares some, by scenario id (functions imported now, so
    a broken one stops the start, not a participant's turn)."""
    return {
        scenario.id: ScenarioTools(
            scenario.id, scenario.tools, bundle.tools.get(scenario.id, {}), timeout=timeout
        )
        for scenario in bundle.scenarios.values()
        if scenario.tools
    }
