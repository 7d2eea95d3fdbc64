"""The study definition as it is stored beside its data: system headers may hold keys
(``Authorization: Bearer ...``), so their values never reach the database. It is read
back by ``scenarios.stored``, the one reader."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from scenarios.models import StudyBundle

MASK = "***"


def definition_json(bundle: StudyBundle) -> str:
    """The study, its scenarios and instruments as JSON, with header values masked."""
    return _dumps(mask_headers(bundle.model_dump(mode="json", by_alias=True)))


def masked_definition(definition: str) -> str:
    """``definition`` (JSON) with header values masked; unchanged when nothing is to mask
    (so a definition made by :func:`definition_json` keeps its digest)."""
    try:
        parsed = json.loads(definition)
    except ValueError:
        return definition
    if not isinstance(parsed, dict) or not _has_headers(parsed):
        return definition
    return _dumps(mask_headers(parsed))


def mask_headers(definition: dict[str, Any]) -> dict[str, Any]:
    for system in _systems(definition):
        if system.get("headers"):
            system["headers"] = {name: MASK for name in system["headers"]}
    return definition


def _has_headers(definition: dict[str, Any]) -> bool:
    return any(
        isinstance(s.get("headers"), dict) and any(v != MASK for v in s["headers"].values())
        for s in _systems(definition)
    )


def _systems(definition: dict[str, Any]) -> list[dict[str, Any]]:
    study = definition.get("study")
    systems = study.get("systems") if isinstance(study, dict) else None
    return [s for s in systems or () if isinstance(s, dict)]


def _dumps(definition: dict[str, Any]) -> str:
    return json.dumps(definition, ensure_ascii=False)
