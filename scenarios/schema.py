"""JSON Schemas of the study, scenario and questionnaire files, for completion in editors.

``ozlab schema --out schemas`` writes ``study.schema.json``, ``scenario.schema.json`` and
``questionnaire.schema.json``. With the YAML language server (VS Code's YAML extension,
Neovim, Helix, JetBrains IDEs) a file then names its schema on its first line, relative to
the file::

    # yaml-language-server: $schema=../schemas/scenario.schema.json

or all files at once in VS Code's settings::

    "yaml.schemas": {"schemas/study.schema.json": "studies/*.yaml",
                     "schemas/scenario.schema.json": "scenarios/*.yaml",
                     "schemas/questionnaire.schema.json": "questionnaires/*.yaml"}

The editor then completes field names, lists the allowed ``type`` values, shows each
field's documentation and underlines unknown keys. The schemas describe single files:
``ozlab check`` remains the judge of what spans files (references, item ids, stimuli).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from pydantic import BaseModel
from pydantic.json_schema import GenerateJsonSchema, JsonSchemaValue
from pydantic_core import core_schema

from questionnaires.models import Questionnaire
from scenarios import durations
from scenarios.field_docs import describe
from scenarios.models import Scenario, Study, Texts

__all__ = ["questionnaire_schema", "scenario_schema", "study_schema", "write_schemas"]

_DIALECT = "https://json-schema.org/draft/2020-12/schema"
_DURATION: JsonSchemaValue = {
    "anyOf": [
        {"type": "number", "exclusiveMinimum": 0},
        {"type": "string", "pattern": durations._DURATION.pattern},
    ],
    "description": "Seconds (90) or a number with a unit: 90s, 10m, 1.5h, 1d.",
}


class _YamlFiles(GenerateJsonSchema):
    """Schemas of what a researcher writes, which pydantic's defaults do not quite say."""

    def function_before_schema(
        self, schema: core_schema.BeforeValidatorFunctionSchema
    ) -> JsonSchemaValue:
        """Durations are written "10m" as often as 600: both must pass the editor."""
        if schema["function"].get("function") is getattr(durations, "_parse_duration", None):
            return dict(_DURATION)
        return super().function_before_schema(schema)

    def dict_schema(self, schema: core_schema.DictSchema) -> JsonSchemaValue:
        """Integer keys (scale labels) are written ``1: Disagree``."""
        value = super().dict_schema(schema)
        if schema.get("keys_schema", {}).get("type") == "int":
            value["propertyNames"] = {"pattern": r"^-?[0-9]+$"}
        return value


_NOT_JSON_SCHEMA = ("gt", "ge", "lt", "le")
_NAMED = ("properties", "$defs", "patternProperties")


def _tidy(schema: Any) -> None:
    """pydantic leaves its own ``gt`` beside a replaced schema; editors would flag it."""
    if isinstance(schema, list):
        for entry in schema:
            _tidy(entry)
    elif isinstance(schema, dict):
        for key in _NOT_JSON_SCHEMA:
            schema.pop(key, None)
        for key, value in schema.items():
            if key in _NAMED and isinstance(value, dict):
                for entry in value.values():
                    _tidy(entry)
            elif key not in ("default", "examples", "const", "enum"):
                _tidy(value)


def _schema(model: type[BaseModel], title: str) -> dict[str, Any]:
    describe(model)
    schema = model.model_json_schema(by_alias=True, schema_generator=_YamlFiles)
    _tidy(schema)
    return {"$schema": _DIALECT, **schema, "title": title}


def study_schema() -> dict[str, Any]:
    """The schema of a study file (``study.yaml``)."""
    schema = _schema(Study, "ozlab study")
    # Study.translations is a plain mapping in the model; here it names the sentences.
    sentences = _schema(Texts, "")["properties"]
    translation = {
        "type": "object",
        "additionalProperties": False,
        "properties": {
            name: {
                "type": "string",
                **({"description": p["description"]} if "description" in p else {}),
            }
            for name, p in sentences.items()
        },
    }
    schema["properties"]["translations"]["additionalProperties"] = translation
    return schema


def scenario_schema() -> dict[str, Any]:
    """The schema of a scenario file (``scenarios/<id>.yaml``)."""
    return _schema(Scenario, "ozlab scenario")


def questionnaire_schema() -> dict[str, Any]:
    """The schema of a questionnaire file (``questionnaires/<id>.yaml``)."""
    return _schema(Questionnaire, "ozlab questionnaire")


def write_schemas(folder: Path) -> list[Path]:
    """Write the three schemas into ``folder`` (created if needed), replacing older ones."""
    folder.mkdir(parents=True, exist_ok=True)
    written = []
    for name, schema in (
        ("study", study_schema()),
        ("scenario", scenario_schema()),
        ("questionnaire", questionnaire_schema()),
    ):
        path = folder / f"{name}.schema.json"
        path.write_text(json.dumps(schema, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
        written.append(path)
    return written
