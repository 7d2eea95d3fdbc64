"""A study's definition as a database holds it: the JSON the bot stored beside its data
(``bot.store.definition.definition_json``), read into what its readers need.

One reader for the bot, the console and analytics, tolerant of every ozlab that stored a
definition: a field an earlier version did not store reads as the default a study file has
today (``tests/test_stored_definition.py`` holds the two together), and a definition that
cannot be read at all reads as an empty study (no systems, nothing retained), never as an
error in the middle of erasing or watching. Only :meth:`StoredDefinition.bundle`, which
needs every field, refuses one that no longer validates, in one line.

Standard library only (the study models are loaded by ``bundle`` alone), so the store may
read ``withdrawals_by_system`` and ``retention`` without loading the study models.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from bot.core.errors import StoreError

if TYPE_CHECKING:
    from scenarios.models import StudyBundle

LANGUAGE = "en"
REMINDER_AFTER = 600.0


class UnreadableDefinition(StoreError):
    """The stored definition of a study does not validate with this version of ozlab."""

    def __init__(self, study_id: str, problems: int, first: str) -> None:
        counted = f"{problems} problem" + ("" if problems == 1 else "s")
        super().__init__(
            f"the definition of study {study_id!r} stored in this database does not validate"
            f" with this version of ozlab ({counted}; the first: {first}); a command that"
            " takes --study reads the study file given there instead"
        )
        self.study_id = study_id
        self.problems = problems


@dataclass(frozen=True)
class StoredSystem:
    """A system under test as stored (header values masked)."""

    id: str
    type: str
    settings: Mapping[str, Any]
    """Every setting as stored, for validating into a ``SystemSpec`` where one is built."""


@dataclass(frozen=True)
class StoredScenario:
    id: str
    brief: str = ""
    system_prompt: str | None = None
    max_exchanges: int | None = None
    time_limit: float | None = None  # seconds


@dataclass(frozen=True)
class StoredDefinition:
    """What readers need of one study's stored definition."""

    study_id: str
    language: str = LANGUAGE
    retention: float | None = None  # seconds after a participant's last activity
    withdrawals_by_system: bool = False
    reminder_after: float = REMINDER_AFTER
    systems: tuple[StoredSystem, ...] = ()
    scenarios: Mapping[str, StoredScenario] = field(default_factory=dict)
    questionnaires: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    """Each instrument as stored (items, scales, constructs), by id."""
    stress_model: Mapping[str, Any] | None = None
    """The ``stress_model`` settings as stored (those of an ``openai`` system)."""
    source: str = field(default="", repr=False, compare=False)
    """The JSON as stored."""

    def bundle(self) -> StudyBundle:
        """The whole study, validated as a study file is; :class:`UnreadableDefinition`
        when this ozlab cannot read it so (a field since renamed or removed)."""
        from pydantic import ValidationError

        from scenarios.models import StudyBundle

        try:
            return StudyBundle.model_validate_json(self.source)
        except ValidationError as error:
            first = error.errors()[0]
            where = ".".join(str(part) for part in first["loc"]) or "(the definition)"
            raise UnreadableDefinition(
                self.study_id, error.error_count(), f"{where}: {first['msg']}"
            ) from None


def read_definition(study_id: str, raw: str | None) -> StoredDefinition:
    """``raw`` (the stored JSON) as a :class:`StoredDefinition`; whatever is missing or not
    of its kind reads as its default."""
    try:
        parsed = json.loads(raw) if raw else None
    except ValueError:
        parsed = None
    top = _mapping(parsed)
    study = _mapping(top.get("study"))
    timing = _mapping(study.get("timing"))
    systems = [_mapping(entry) for entry in _sequence(study.get("systems")) if _is_map(entry)]
    scenarios = _mapping(top.get("scenarios"))
    instruments = _mapping(top.get("questionnaires"))
    model = study.get("stress_model")
    language = study.get("language")
    return StoredDefinition(
        study_id=study_id,
        language=language if isinstance(language, str) and language else LANGUAGE,
        retention=_number(study.get("retention")),
        withdrawals_by_system=study.get("withdrawals_by_system") is True,
        reminder_after=_number(timing.get("reminder_after")) or REMINDER_AFTER,
        systems=tuple(
            StoredSystem(str(entry.get("id", "")), str(entry.get("type", "")), entry)
            for entry in systems
        ),
        scenarios={
            str(scenario_id): _scenario(str(scenario_id), _mapping(scenario))
            for scenario_id, scenario in scenarios.items()
            if _is_map(scenario)
        },
        questionnaires={str(k): v for k, v in instruments.items() if _is_map(v)},
        stress_model=_mapping(model) if _is_map(model) and model else None,
        source=raw or "",
    )


def read_definitions(stored: Mapping[str, str]) -> dict[str, StoredDefinition]:
    """Each study's definition (``StudyStore.latest_definitions()``), by study id."""
    return {study_id: read_definition(study_id, raw) for study_id, raw in stored.items()}


def _scenario(scenario_id: str, scenario: Mapping[str, Any]) -> StoredScenario:
    prompt = scenario.get("system_prompt")
    limit = scenario.get("max_exchanges")
    return StoredScenario(
        id=scenario_id,
        brief=str(scenario.get("brief") or ""),
        system_prompt=None if prompt is None else str(prompt),
        max_exchanges=limit if isinstance(limit, int) and not isinstance(limit, bool) else None,
        time_limit=_number(scenario.get("time_limit")),
    )


def _is_map(value: object) -> bool:
    return isinstance(value, dict)


def _mapping(value: object) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _sequence(value: object) -> list[Any]:
    return value if isinstance(value, list) else []


def _number(value: object) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return float(value)
