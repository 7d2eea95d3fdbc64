"""The experimenter's side of the study database: what the bot wrote, and commands to it.

The console and the bot are separate processes that meet in the store: the console reads
the read model the bot keeps (``live_participants``: where each participant stands) and
appends commands the bot applies once. Nothing here parses the engine's own state or
knows a table. The store says whether anything was committed since the last look
(``changes``): an idle console polling four times a second re-reads nothing.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

from bot.core.errors import StudyDataError
from bot.core.storable_text import storable, storable_data
from bot.core.vocabulary import CommandKind, CommandOutcome, Gate, GateLevel, GateScope
from bot.desk import sessions as rows
from bot.desk import transcript as lines
from bot.desk.model import Line, LiveSession, WaitingReply
from bot.engine.assignment import CellProgress, progress
from bot.store import (
    Access,
    AnnotationPlanning,
    ConsoleReadModel,
    StoreLifetime,
    StressTests,
    StudyDefinitions,
    open_store,
)
from bot.store.model import LiveParticipant, SessionRecord
from scenarios.models import Study
from scenarios.stored import UnreadableDefinition, read_definition


class ConsoleStore(
    ConsoleReadModel, StudyDefinitions, AnnotationPlanning, StressTests, StoreLifetime, Protocol
):
    """The roles the console uses: its read model and commands, the studies' definitions,
    and the annotation and stress screens opened from it."""


OUTCOME_WORDS: dict[CommandOutcome, str] = {
    CommandOutcome.APPLIED: "applied",
    CommandOutcome.EXPIRED: (
        "expired: no longer possible (the session ended, or another wizard was first)"
    ),
    CommandOutcome.REJECTED: "rejected by the bot (unknown system or study?)",
}
"""What became of a command, in the words every face shows."""
NOT_YET_WORDS = "not applied yet: the bot applies it when it runs"


class DeskError(StudyDataError):
    """A command the experimenter can correct (an unknown kind, a missing session)."""


@dataclass
class _Snapshot:
    """Everything the sessions table needs, as of one change token."""

    participants: list[LiveParticipant] = field(default_factory=list)
    sessions: dict[str, SessionRecord] = field(default_factory=dict)
    by_participant: dict[str, list[SessionRecord]] = field(default_factory=dict)
    gates: dict[GateScope, Gate] = field(default_factory=dict)
    counted: bool = False  # the sessions carry their exchange counts


class Desk:
    """One experimenter's view of a study database, and their commands to the bot."""

    def __init__(
        self, store: ConsoleStore, wizard: str, *, clock: Callable[[], float] = time.time
    ) -> None:
        self.store = store
        self.wizard = wizard
        self._clock = clock
        self._token: int | None = None
        self._snap = _Snapshot()
        self._definitions: dict[str, str] = {}
        self._studies: dict[str, rows.StudyInfo] = {}
        self._quotas: dict[str, Study] = {}  # the studies whose design has a quota

    @classmethod
    async def open(
        cls, db: Path | str, wizard: str, *, clock: Callable[[], float] = time.time
    ) -> Desk:
        """The desk on the database a bot runs with (never created or upgraded here)."""
        return cls(await open_store(db, clock, access=Access.ATTACH), wizard, clock=clock)

    async def close(self) -> None:
        await self.store.close()

    async def __aenter__(self) -> Desk:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    # --- reading ------------------------------------------------------------------------

    async def changes(self) -> int:
        """Changes whenever another process (the bot) commits: nothing to re-read if not."""
        return await self.store.changes()

    async def _snapshot(self, *, counted: bool = False) -> _Snapshot:
        token = await self.store.changes()
        if token == self._token and (self._snap.counted or not counted):
            return self._snap
        new = _Snapshot(counted=counted)
        new.participants = await self.store.live_participants()
        for stored in await self.store.sessions(count_exchanges=counted):
            new.sessions[stored.session_id] = stored
            new.by_participant.setdefault(stored.participant_id, []).append(stored)
        new.gates = await self.store.gates()
        definitions = await self.store.latest_definitions()
        for study_id, raw in definitions.items():
            if self._definitions.get(study_id) != raw:
                definition = read_definition(study_id, raw)
                self._studies[study_id] = rows.StudyInfo.from_definition(definition)
                self._quotas.pop(study_id, None)
                with contextlib.suppress(UnreadableDefinition):
                    study = definition.bundle().study
                    if study.design.quota is not None:
                        self._quotas[study_id] = study
        self._definitions = definitions
        self._snap, self._token = new, token
        return new

    async def live_sessions(
        self,
        *,
        include_ended: bool = False,
        study: str | None = None,
        system: str | None = None,
        state: str | None = None,
    ) -> list[LiveSession]:
        """Every participant's current session (ended ones and past sessions only when
        asked), in the order participants arrived; filters match exactly."""
        snap = await self._snapshot(counted=include_ended)
        now = self._clock()
        found: list[LiveSession] = []
        for p in snap.participants:
            info = self._studies.get(p.study_id, rows.StudyInfo())
            current = p.status.session_id
            if include_ended:
                for past in snap.by_participant.get(p.participant_id, ()):
                    if past.session_id != current:
                        found.append(rows.past_session(past, info))
            stored = snap.sessions.get(current) if current else None
            found.append(rows.current_session(p, stored, info, snap.gates, now))
        return [
            s
            for s in found
            if (include_ended or not s.ended)
            and study in (None, s.study)
            and system in (None, s.system)
            and state in (None, s.state)
        ]

    async def cells(self) -> list[CellProgress]:
        """Each cell of the design of a study with a quota: completed of the quota, and
        under way (empty when no study has a quota)."""
        snap = await self._snapshot()
        return [
            cell
            for study_id, study in self._quotas.items()
            for cell in progress(
                study, (p.status for p in snap.participants if p.study_id == study_id)
            )
        ]

    async def waiting_replies(self) -> list[WaitingReply]:
        """Turns waiting for a wizard, oldest first: the queue that wizards share."""
        snap = await self._snapshot()
        waiting = [rows.waiting_reply(p) for p in snap.participants]
        return sorted((w for w in waiting if w is not None), key=lambda w: w.since)

    async def gates(self) -> dict[GateScope, Gate]:
        return dict((await self._snapshot()).gates)

    async def knows(self, session_id: str) -> bool:
        """Whether a session of this id exists, or is a participant's current one."""
        snap = await self._snapshot()
        return session_id in snap.sessions or any(
            rows.row_key(p) == session_id for p in snap.participants
        )

    async def transcript(self, session_id: str, after: float | None = None) -> list[Line]:
        """The session's lines in the order they were committed; with ``after``, only the
        ones after that time."""
        found = await self.store.transcript(session_id)
        return [] if found is None else lines.lines(found, after)

    # --- commands ------------------------------------------------------------------------

    async def command(self, kind: str, session_id: str | None = None, **payload: object) -> int:
        """Append a command for the bot (applied once, in order); returns its id."""
        try:
            known = CommandKind(kind)
        except ValueError:
            choices = ", ".join(sorted(k.value for k in CommandKind))
            raise DeskError(f"unknown command {kind!r}; one of {choices}") from None
        if session_id is None and known is not CommandKind.GATE:
            raise DeskError(f"the command {kind!r} needs a session")
        # what the wizard typed is outside text like a participant's: made storable here
        kept = {key: storable_data(value) for key, value in payload.items()}
        return await self.store.append_command(storable(self.wizard), known, session_id, kept)

    async def session_command(self, kind: str, session_id: str, **payload: object) -> int:
        """A command about one session, checked as every face checks it: a session the
        store does not know is the experimenter's mistake, said before anything is written."""
        if not await self.knows(session_id):
            raise DeskError(f"no session {session_id!r} (ozlab wizard sessions lists them)")
        return await self.command(kind, session_id, **payload)

    async def gate(self, scope: str, on: bool, auto_send_after: float | None = None) -> int:
        """Gate (or ungate) ``session:<id>``, ``system:<id>`` or ``study:<id>``."""
        try:
            parsed = GateScope.parse(scope)
        except StudyDataError as error:
            raise DeskError(str(error)) from None
        if parsed.level is GateLevel.SESSION:
            return await self.command("gate", parsed.target, on=on, auto_send_after=auto_send_after)
        return await self.command(
            "gate", None, scope=str(parsed), on=on, auto_send_after=auto_send_after
        )

    async def outcome(self, command_id: int) -> CommandOutcome | None:
        """applied, expired or rejected once the bot has dealt with it; None until then."""
        return (await self.outcomes([command_id])).get(command_id)

    async def outcomes(self, command_ids: Iterable[int]) -> dict[int, CommandOutcome | None]:
        return await self.store.command_outcomes(list(command_ids))

    async def wait(
        self, command_id: int, seconds: float = 5.0, interval: float = 0.05
    ) -> CommandOutcome | None:
        """For scripts and tests: the outcome once the bot applied the command, or None
        when ``seconds`` passed first (the bot may be down; it applies it when it returns)."""
        deadline = time.monotonic() + seconds
        while True:
            found = await self.outcome(command_id)
            if found is not None or time.monotonic() >= deadline:
                return found
            await asyncio.sleep(interval)
