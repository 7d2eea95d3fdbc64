"""``ozlab schema`` and ``ozlab new``: schemas an editor can use, a starter study that loads.

jsonschema is not a dependency of ozlab, so the starter is validated against the schemas
by the small subset of JSON Schema that they use (``_errors`` below); a keyword outside that
subset fails the test rather than passing unchecked.
"""

from __future__ import annotations

import json
import re
from importlib.resources import files
from pathlib import Path
from typing import Any

import pytest
import yaml

from bot.check.study import check
from bot.core.errors import StudyDataError
from scenarios.loading import load_study
from scenarios.schema import (
    questionnaire_schema,
    scenario_schema,
    study_schema,
    write_schemas,
)
from scenarios.starter import STARTER_FILES, write_starter

# --- a small JSON Schema validator, enough for these schemas ----------------------------------

_TYPES: dict[str, Any] = {
    "object": dict,
    "array": list,
    "string": str,
    "boolean": bool,
    "null": type(None),
}
_ANNOTATIONS = {"title", "description", "default", "discriminator", "$schema", "$defs", "examples"}
_CHECKED = {
    "type",
    "properties",
    "required",
    "additionalProperties",
    "propertyNames",
    "items",
    "anyOf",
    "oneOf",
    "$ref",
    "enum",
    "const",
    "pattern",
    "minLength",
    "maxLength",
    "minItems",
    "maxItems",
    "minimum",
    "maximum",
    "exclusiveMinimum",
    "exclusiveMaximum",
}


def _is_type(value: Any, kind: str) -> bool:
    if kind == "integer":
        return isinstance(value, int) and not isinstance(value, bool)
    if kind == "number":
        return isinstance(value, int | float) and not isinstance(value, bool)
    return isinstance(value, _TYPES[kind])


def _errors(value: Any, schema: dict[str, Any], root: dict[str, Any], at: str = "") -> list[str]:
    unknown = set(schema) - _ANNOTATIONS - _CHECKED
    assert not unknown, f"the test validator does not know {unknown} (at {at or 'the top'})"
    if "$ref" in schema:
        target: Any = root
        for part in schema["$ref"].removeprefix("#/").split("/"):
            target = target[part]
        return _errors(value, target, root, at)
    found: list[str] = []
    kinds = schema.get("type")
    if kinds is not None:
        kinds = [kinds] if isinstance(kinds, str) else kinds
        if not any(_is_type(value, kind) for kind in kinds):
            return [f"{at}: {value!r} is not of type {kinds}"]
    for key in ("anyOf", "oneOf"):
        if key in schema:
            matching = [s for s in schema[key] if not _errors(value, s, root, at)]
            if not matching or (key == "oneOf" and len(matching) > 1):
                found.append(f"{at}: {value!r} matches {len(matching)} of {key}")
    if "enum" in schema and value not in schema["enum"]:
        found.append(f"{at}: {value!r} not in {schema['enum']}")
    if "const" in schema and value != schema["const"]:
        found.append(f"{at}: {value!r} is not {schema['const']!r}")
    if isinstance(value, str):
        if "pattern" in schema and not re.search(schema["pattern"], value):
            found.append(f"{at}: {value!r} does not match {schema['pattern']}")
        if len(value) < schema.get("minLength", 0) or len(value) > schema.get("maxLength", 1e9):
            found.append(f"{at}: length of {value!r}")
    if _is_type(value, "number"):
        if value < schema.get("minimum", -1e300) or value > schema.get("maximum", 1e300):
            found.append(f"{at}: {value} out of range")
        if value <= schema.get("exclusiveMinimum", -1e300):
            found.append(f"{at}: {value} too small")
        if value >= schema.get("exclusiveMaximum", 1e300):
            found.append(f"{at}: {value} too large")
    if isinstance(value, list):
        if len(value) < schema.get("minItems", 0) or len(value) > schema.get("maxItems", 1e9):
            found.append(f"{at}: {len(value)} entries")
        for index, entry in enumerate(value):
            found += _errors(entry, schema.get("items", {}), root, f"{at}[{index}]")
    if isinstance(value, dict):
        properties = schema.get("properties", {})
        found += [f"{at}: missing {key}" for key in schema.get("required", []) if key not in value]
        for key, entry in value.items():
            where = f"{at}.{key}" if at else key
            found += _errors(key, schema.get("propertyNames", {}), root, f"{where} (name)")
            if key in properties:
                found += _errors(entry, properties[key], root, where)
            elif schema.get("additionalProperties") is False:
                found.append(f"{where}: not allowed")
            elif isinstance(schema.get("additionalProperties"), dict):
                found += _errors(entry, schema["additionalProperties"], root, where)
    return found


def _as_json(value: Any) -> Any:
    """What an editor's YAML language server hands to JSON Schema: keys are strings."""
    if isinstance(value, dict):
        return {str(key): _as_json(entry) for key, entry in value.items()}
    if isinstance(value, list):
        return [_as_json(entry) for entry in value]
    return value


def _validate(path: Path | Any, schema: dict[str, Any]) -> list[str]:
    data = _as_json(yaml.safe_load(path.read_text(encoding="utf-8")))
    return _errors(data, schema, schema)


# --- schemas -----------------------------------------------------------------------------------


@pytest.mark.parametrize("make", [study_schema, scenario_schema, questionnaire_schema])
def test_schemas_are_json_schema_objects(make: Any) -> None:
    schema = make()
    assert schema["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    assert schema["type"] == "object"
    assert schema["additionalProperties"] is False
    assert "id" in schema["properties"] and "id" in schema["required"]
    json.dumps(schema)  # plain JSON, nothing Python-only left


def test_schemas_document_fields_and_accept_durations_in_words() -> None:
    study = study_schema()
    reminder = study["$defs"]["Timing"]["properties"]["reminder_after"]
    assert [option["type"] for option in reminder["anyOf"]] == ["number", "string"]
    assert '"gt":' not in json.dumps(study)  # pydantic's own keyword, unknown to editors
    design = study["$defs"]["Design"]["properties"]
    assert "IDIAL" in design["tasks_per_participant"]["description"]
    assert sorted(study["properties"]["translations"]["additionalProperties"]["properties"]) == (
        sorted(study["$defs"]["Texts"]["properties"])
    )
    items = questionnaire_schema()["properties"]["items"]["items"]
    assert set(items["discriminator"]["mapping"]) == {
        "scale",
        "yes_no",
        "thumbs",
        "choice",
        "multi_choice",
        "text",
        "preference",
        "slider",
        "ranking",
        "matrix",
    }
    scale = questionnaire_schema()["$defs"]["ScaleItem"]["properties"]
    assert "construct" in scale and "reverse" in scale
    assert scale["labels"]["propertyNames"] == {"pattern": "^-?[0-9]+$"}
    assert "CSV or JSONL" in scenario_schema()["properties"]["stimuli"]["description"]


def test_write_schemas(tmp_path: Path) -> None:
    written = write_schemas(tmp_path / "schemas")
    assert [path.name for path in written] == [
        "study.schema.json",
        "scenario.schema.json",
        "questionnaire.schema.json",
    ]
    assert json.loads(written[0].read_text(encoding="utf-8")) == study_schema()
    assert write_schemas(tmp_path / "schemas") == written  # regenerating replaces them


# --- the starter study -------------------------------------------------------------------------


def test_starter_writes_its_files_and_loads(tmp_path: Path) -> None:
    folder = tmp_path / "pilot"
    written = write_starter(folder)
    assert written == [folder / name for name in STARTER_FILES]
    assert all(path.is_file() for path in written)
    bundle = load_study(folder / "study.yaml")
    study = bundle.study
    assert study.id == "pilot"
    assert study.screening == ("my-screening",)
    assert study.design.type == "balanced"
    assert study.timing.reminder_after == 600
    assert study.texts_for("it").welcome.startswith("Ciao")
    task = bundle.scenario("my-task")
    assert (task.exchange, task.post_task) == (("my-reply-rating",), ("my-questionnaire",))
    assert task.time_limit == 420
    questionnaire = bundle.questionnaire("my-questionnaire")
    reverse = [item.id for item in questionnaire.items if getattr(item, "reverse", False)]
    assert reverse == ["my-questionnaire.confusing"]
    assert bundle.questionnaire("my-screening").eligible_if


def test_starter_passes_the_check(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    write_starter(tmp_path / "pilot")
    check(str(tmp_path / "pilot" / "study.yaml"))
    out, err = capsys.readouterr()
    assert err == ""
    assert out.startswith("OK: study 'pilot'")


def test_starter_study_id_falls_back_when_the_folder_is_no_id(tmp_path: Path) -> None:
    write_starter(tmp_path / "my study!")
    assert load_study(tmp_path / "my study!" / "study.yaml").study.id == "my-study"


def test_starter_never_overwrites(tmp_path: Path) -> None:
    folder = tmp_path / "pilot"
    (folder / "questionnaires").mkdir(parents=True)
    mine = folder / "questionnaires" / "my-questionnaire.yaml"
    mine.write_text("mine", encoding="utf-8")
    with pytest.raises(StudyDataError, match=r"my-questionnaire\.yaml"):
        write_starter(folder)
    assert mine.read_text(encoding="utf-8") == "mine"
    assert not (folder / "study.yaml").exists()  # nothing written at all


def test_starter_into_an_existing_empty_folder(tmp_path: Path) -> None:
    assert len(write_starter(tmp_path)) == len(STARTER_FILES)


def _uncomment_systems(text: str) -> str:
    """The commented-out systems as a researcher enables them: '  # - ' and '  #   ' lines."""
    return re.sub(r"(?m)^  # (- |  )", r"  \1", text)


def test_the_commented_systems_load_when_enabled(tmp_path: Path) -> None:
    write_starter(tmp_path)
    study = tmp_path / "study.yaml"
    study.write_text(_uncomment_systems(study.read_text(encoding="utf-8")), encoding="utf-8")
    systems = load_study(study).study.systems
    assert [system.type for system in systems] == [
        "demo",
        "demo",
        "openai",
        "rasa",
        "http",
        "python",
    ]


def test_starter_files_validate_against_the_schemas(tmp_path: Path) -> None:
    write_starter(tmp_path)
    study = tmp_path / "study.yaml"
    assert _validate(study, study_schema()) == []
    study.write_text(_uncomment_systems(study.read_text(encoding="utf-8")), encoding="utf-8")
    assert _validate(study, study_schema()) == []
    assert _validate(tmp_path / "scenarios" / "my-task.yaml", scenario_schema()) == []
    for name in ("my-questionnaire", "my-screening", "my-reply-rating"):
        path = tmp_path / "questionnaires" / f"{name}.yaml"
        assert _validate(path, questionnaire_schema()) == []


def test_shipped_files_validate_against_the_schemas() -> None:
    library = files("scenarios") / "library"
    shelves = [
        (library / "studies", study_schema()),
        (library / "scenarios", scenario_schema()),
        (files("questionnaires") / "library", questionnaire_schema()),
    ]
    checked = 0
    for folder, schema in shelves:
        for entry in folder.iterdir():
            if entry.name.endswith(".yaml"):
                assert _validate(entry, schema) == [], entry.name
                checked += 1
    assert checked >= 3


@pytest.mark.parametrize(
    ("change", "error"),
    [
        (("reminder_after: 10m", "reminder_after: ten minutes"), "timing.reminder_after"),
        (("title: My study", "title: My study\ncolour: red"), "colour: not allowed"),
        (("variant: v0", "variant: v9"), "systems[1]"),
        (("seed: 1", "seed: one"), "design.seed"),
    ],
)
def test_schemas_catch_what_an_editor_should_underline(
    tmp_path: Path, change: tuple[str, str], error: str
) -> None:
    write_starter(tmp_path)
    study = tmp_path / "study.yaml"
    text = study.read_text(encoding="utf-8")
    assert change[0] in text
    study.write_text(text.replace(change[0], change[1], 1), encoding="utf-8")
    assert any(error in found for found in _validate(study, study_schema()))


def test_the_starter_and_shipped_studies_point_to_the_guides_not_to_the_source(
    tmp_path: Path,
) -> None:
    """A researcher reading the comments of their study file is sent to the study file
    reference (which they have), never to a class in ozlab's source (which they may not)."""
    docs = Path(__file__).resolve().parents[1] / "docs"
    written = write_starter(tmp_path / "pilot")
    shipped = files("scenarios").joinpath("library", "studies").iterdir()
    texts = {str(p): p.read_text(encoding="utf-8") for p in written}
    texts |= {str(p): p.read_text(encoding="utf-8") for p in shipped if p.name.endswith(".yaml")}
    for name, text in texts.items():
        source = re.findall(r"\b(?:bot|scenarios|questionnaires|analytics)/[\w/]*\.py\b", text)
        assert not source, (name, source)
        for page, anchor in re.findall(r"\bdocs/([\w/.-]+\.md)#([\w-]+)", text):
            headings = re.findall(r"^#+ (.+)$", (docs / page).read_text(encoding="utf-8"), re.M)
            assert anchor in {h.strip().lower().replace(" ", "-") for h in headings}, (name, page)
    starter = texts[str(tmp_path / "pilot" / "study.yaml")]
    assert "docs/reference/study-file.md#texts" in starter
