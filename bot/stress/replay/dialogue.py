"""What a replay needs of a logged session: its system, its scenario's brief and prompt,
the participant's earlier lines, and what the system did at the tested turn."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from pydantic import TypeAdapter, ValidationError

from bot.core.errors import StudyDataError, SystemSetupError
from bot.core.vocabulary import EndReason, EventKind
from bot.engine.phases.dialogue import END_EVENT, SUCCESS_EVENT
from bot.store.definition import MASK
from bot.store.model import SessionRecord, Transcript
from scenarios.stored import read_definitions
from scenarios.systems import SystemSpec

_SPECS: TypeAdapter[Any] = TypeAdapter(SystemSpec)


@dataclass(frozen=True)
class LoggedTurn:
    """One logged exchange the system answered (a failed call never reached the history)."""

    turn: int
    user: str
    system: str
    events: Mapping[str, Mapping[str, object]] = field(default_factory=dict)


@dataclass(frozen=True)
class LoggedDialogue:
    """A session as a replay sees it."""

    session_id: str
    system_id: str
    scenario_id: str
    brief: str
    system_prompt: str | None
    turns: tuple[LoggedTurn, ...]

    def prefix(self, turn: int) -> tuple[LoggedTurn, ...]:
        return tuple(t for t in self.turns if t.turn < turn)

    def at(self, turn: int) -> LoggedTurn | None:
        return next((t for t in self.turns if t.turn == turn), None)


def logged_dialogue(
    session: SessionRecord, transcript: Transcript, scenario: Mapping[str, object]
) -> LoggedDialogue:
    """The session's answered exchanges with the events the bot logged after each: a
    reported task success after the reply that reported it, a system's ending on the last."""
    answered = [x for x in transcript.exchanges if x.system_text is not None and x.error is None]
    reported = [
        e for e in transcript.events if e.kind is EventKind.TASK_REPORTED and e.seq is not None
    ]
    turns: list[LoggedTurn] = []
    for n, exchange in enumerate(answered):
        after = exchange.system_seq or 0
        following = answered[n + 1].user_seq if n + 1 < len(answered) else None
        events: dict[str, Mapping[str, object]] = {}
        for event in reported:
            assert event.seq is not None
            if event.seq > after and (following is None or event.seq < following):
                data = event.data.get("data", {})
                events[str(event.data.get("event", SUCCESS_EVENT))] = (
                    dict(data) if isinstance(data, dict) else {}
                )
        last = n + 1 == len(answered)
        if last and transcript.end_reason is EndReason.SYSTEM_ENDED:
            events[END_EVENT] = {}
        turns.append(
            LoggedTurn(exchange.turn, exchange.user_text, exchange.system_text or "", events)
        )
    prompt = scenario.get("system_prompt")
    return LoggedDialogue(
        session.session_id,
        session.system_id,
        session.scenario_id,
        str(scenario.get("brief", "")),
        None if prompt is None else str(prompt),
        tuple(turns),
    )


@dataclass(frozen=True)
class StoredStudy:
    """The parts of a stored study definition a replay needs."""

    systems: dict[str, Any]
    scenarios: dict[str, Mapping[str, object]]


def stored_study(definitions: Mapping[str, str]) -> StoredStudy:
    """Systems (as the study validated them) and scenarios of every study in the file."""
    systems: dict[str, Any] = {}
    scenarios: dict[str, Mapping[str, object]] = {}
    for study_id, definition in read_definitions(definitions).items():
        for system in definition.systems:
            try:
                spec = _SPECS.validate_python(dict(system.settings))
            except ValidationError as error:
                raise StudyDataError(
                    f"study {study_id!r}: a stored system cannot be read back: {error}"
                ) from None
            systems.setdefault(spec.id, spec)
        for scenario in definition.scenarios.values():
            scenarios.setdefault(
                scenario.id, {"brief": scenario.brief, "system_prompt": scenario.system_prompt}
            )
    return StoredStudy(systems, scenarios)


def replayable(spec: Any) -> None:
    """Refuse what cannot be replayed as it ran: a wizard has no program, and header
    values were masked before the definition was stored (give the study file)."""
    if spec.type == "wizard":
        raise SystemSetupError(f"system {spec.id!r} is a wizard: there is nothing to replay")
    headers = getattr(spec, "headers", None) or {}
    if any(value == MASK for value in headers.values()):
        raise SystemSetupError(
            f"system {spec.id!r}: its headers were masked in the database; give the study"
            " file with --study so that the replay sends them as the study did",
            field="headers",
        )
