"""The driver around the pure engine: it feeds events in and carries effects out.

For one inbound at a time per chat it steps the engine, commits the new state with the
rows it produced (and marks the Telegram update handled) in one transaction, and only then
talks to the participant or the system under test. What those calls return (a reply, a
message id, an assignment) goes back into the engine as the next event.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import time
from collections.abc import Callable, Mapping
from typing import Protocol

from bot.engine import effects as fx
from bot.engine import events as ev
from bot.engine.flow import next_deadline, step
from bot.engine.journey import Journey, Stage
from bot.privacy import Privacy
from bot.store.store import Store
from bot.systems.base import System, SystemReply, SystemTimeout
from bot.systems.health import SystemHealth
from bot.telegram.inbound import Inbound
from bot.telegram.outbox import ParticipantUnreachable
from scenarios.assignment import Assignment, cell_counts
from scenarios.models import StudyBundle

log = logging.getLogger(__name__)

_TYPING_EVERY = 4.5  # Telegram shows "typing…" for about five seconds
_TYPING_AFTER = 0.3  # a system that answers sooner needs no "typing…" (a request saved)
_DEFAULT_TIMEOUT = 30.0
_RECORDS = (
    fx.SetSuccess,
    fx.RecordCommand,
    fx.RecordGate,
    fx.RecordConsent,
    fx.OpenSession,
    fx.SetSessionState,
    fx.CloseSession,
    fx.RecordUserTurn,
    fx.RecordSystemTurn,
    fx.RecordResponse,
    fx.RecordEvent,
)
_KEEP_CHAT = (Stage.CONSENT, Stage.DECLINED)  # no consent yet: the chat id is not stored


class Outbox(Protocol):
    async def send(
        self, chat_id: int, text: str, buttons: fx.Buttons = (), format: str = "plain"
    ) -> int | None: ...
    async def edit(
        self, chat_id: int, message_id: int, text: str, buttons: fx.Buttons = ()
    ) -> None: ...
    async def toast(self, callback_id: str, text: str | None = None) -> None: ...
    async def typing(self, chat_id: int) -> None: ...


class StudyRunner:
    def __init__(
        self,
        bundle: StudyBundle,
        store: Store,
        privacy: Privacy,
        systems: Mapping[str, System],
        outbox: Outbox,
        *,
        assign: Callable[..., Assignment],
        clock: Callable[[], float] = time.time,
        timeouts: Mapping[str, float] | None = None,
    ) -> None:
        self._bundle = bundle
        self._store = store
        self._privacy = privacy
        self._systems = systems
        self._outbox = outbox
        self._assign = assign
        self._clock = clock
        self._timeouts = dict(timeouts or {})  # per system; adapters also time their calls
        self._health = SystemHealth()
        self._journeys: dict[str, Journey] = {}
        self._chats: dict[str, int] = {}  # pseudonym -> chat id, in memory only
        self._unreachable: set[str] = set()
        self._ticking: set[str] = set()  # a tick is queued: do not queue another
        self._reserved: dict[str, tuple[tuple[str, str], ...]] = {}  # assigned, not yet stored
        self._gates: dict[str, tuple[bool, float | None]] = {}  # scope -> (gated, auto-send)
        self._last_command = 0
        self._sealed: dict[str, str] = {}  # pseudonym -> encrypted chat id, once computed
        self._undelivered: dict[str, list[fx.Send | fx.Edit]] = {}  # found at start-up

    # --- start-up ------------------------------------------------------------------

    async def load(self) -> list[Inbound]:
        """Rebuild every participant from the store; returns the work to redo, in order:
        interrupted steps first, then the updates that were stored but not handled."""
        todo: list[Inbound] = []
        for stored in await self._store.load_participants(self._bundle.study.id):
            journey = Journey.from_json(stored.state)
            self._journeys[stored.participant_id] = journey
            if stored.chat_key is None:
                continue
            chat_id = int(self._privacy.unseal(stored.chat_key))
            self._chats[stored.participant_id] = chat_id
            if stored.undelivered:
                self._undelivered[stored.participant_id] = _messages_from_json(stored.undelivered)
            interrupted = journey.stage is Stage.ASSIGNING or journey.pending_message is not None
            if interrupted or stored.undelivered:
                todo.append(Inbound(chat_id, "recover"))
        for _update_id, payload in await self._store.pending_updates():
            todo.append(Inbound.from_json(self._privacy.unseal(payload)))
        return todo

    def due(self, now: float) -> list[Inbound]:
        """Ticks for participants whose reminder, abandonment or time limit has come."""
        ticks = []
        for participant, journey in self._journeys.items():
            deadline = next_deadline(self._bundle, journey)
            chat_id = self._chats.get(participant)
            if (
                deadline is not None
                and deadline <= now
                and chat_id is not None
                and participant not in self._ticking
                and participant not in self._unreachable
            ):
                self._ticking.add(participant)
                ticks.append(Inbound(chat_id, "tick"))
        return ticks

    # --- one inbound -----------------------------------------------------------------

    async def handle(self, inbound: Inbound) -> None:
        participant = self._privacy.pseudonym(inbound.chat_id)
        if inbound.kind == "tick":
            self._ticking.discard(participant)
        elif inbound.kind not in ("recover", "wizard"):
            self._chats[participant] = inbound.chat_id
            self._unreachable.discard(participant)
        toast_owed = inbound.callback_id
        update_id = inbound.update_id
        queue: list[ev.Event] = []
        try:
            # Messages committed before a crash but perhaps never sent go out first.
            if (undelivered := self._undelivered.pop(participant, None)) is not None:
                for message in undelivered:
                    follow_up = await self._carry_out(participant, inbound.chat_id, message)
                    if follow_up is not None:
                        queue.append(follow_up)
                self._store.delivered(participant)
            queue.append(inbound.to_event())
            while queue:
                event = queue.pop(0)
                journey = self._journeys.get(participant)
                result = step(self._bundle, participant, journey, event, self._clock())
                records = [e for e in result.effects if isinstance(e, _RECORDS)]
                outbound = [e for e in result.effects if not isinstance(e, _RECORDS)]
                messages = [e for e in outbound if isinstance(e, fx.Send | fx.Edit)]
                committed = result.journey != journey or records or update_id is not None
                if committed:
                    await self._commit(
                        participant,
                        inbound.chat_id,
                        result.journey,
                        records,
                        update_id,
                        _messages_to_json(messages),
                    )
                    update_id = None
                if result.journey is not None:
                    self._journeys[participant] = result.journey
                    if result.journey.tasks:
                        self._reserved.pop(participant, None)
                # Answer a button tap before anything else: Telegram expires it quickly.
                outbound.sort(key=lambda e: not isinstance(e, fx.Toast))
                if any(isinstance(e, fx.CallSystem) for e in outbound):
                    # The system call shows "typing…" itself, once it is worth showing.
                    outbound = [e for e in outbound if not isinstance(e, fx.ShowTyping)]
                for effect in outbound:
                    if isinstance(effect, fx.Toast):
                        if toast_owed is not None:
                            await self._outbox.toast(toast_owed, effect.text)
                            toast_owed = None
                        continue
                    follow_up = await self._carry_out(participant, inbound.chat_id, effect)
                    if follow_up is not None:
                        queue.append(follow_up)
                if committed and messages and result.journey is not None:
                    self._store.delivered(participant)
        except ParticipantUnreachable as error:
            self._unreachable.add(participant)
            log.info("participant %s cannot be reached: %s", participant, error)
            await self._commit(
                participant,
                inbound.chat_id,
                self._journeys.get(participant),
                [fx.RecordEvent("participant_unreachable", None, {"error": str(error)})],
                None,
            )
        except Exception:
            log.exception("handling an update of %s failed", participant)
            if update_id is not None:
                await self._commit(
                    participant,
                    inbound.chat_id,
                    self._journeys.get(participant),
                    [fx.RecordEvent("internal_error", None, {"kind": inbound.kind})],
                    update_id,
                )
            with contextlib.suppress(Exception):
                await self._outbox.send(inbound.chat_id, self._bundle.study.texts.system_error)
        finally:
            if toast_owed is not None:
                with contextlib.suppress(Exception):
                    await self._outbox.toast(toast_owed)

    async def _commit(
        self,
        participant: str,
        chat_id: int,
        journey: Journey | None,
        records: list[fx.Record],
        update_id: int | None,
        undelivered: str | None = None,
    ) -> None:
        keep_chat = journey is not None and journey.stage not in _KEEP_CHAT
        chat_key = None
        if keep_chat:  # sealed once per participant: the row keeps the first one anyway
            chat_key = self._sealed.get(participant)
            if chat_key is None:
                chat_key = self._sealed[participant] = self._privacy.seal(str(chat_id))
        await self._store.commit_step(
            study_id=self._bundle.study.id,
            participant_id=participant,
            state=journey.to_json() if journey is not None else None,
            chat_key=chat_key,
            records=records,
            update_id=update_id,
            undelivered=undelivered,
        )

    async def _carry_out(
        self, participant: str, chat_id: int, effect: fx.Outbound
    ) -> ev.Event | None:
        match effect:
            case fx.Send(text=text, buttons=buttons, remember=remember, format=form):
                message_id = await self._outbox.send(chat_id, text, buttons, form)
                if remember and message_id is not None:
                    return ev.MessageSent(message_id)
            case fx.Edit(message_id=message_id, text=text, buttons=buttons):
                await self._outbox.edit(chat_id, message_id, text, buttons)
            case fx.ShowTyping():
                await self._outbox.typing(chat_id)
            case fx.CallSystem():
                result = await self._call_system(chat_id, effect)
                await self._note_health(participant, chat_id, effect, result)
                return result
            case fx.AssignTasks():
                assignment = self._assign_now(participant)
                return ev.TasksAssigned(assignment.tasks, assignment.design, assignment.seed)
        return None

    def _assign_now(self, participant: str) -> Assignment:
        """The design's choice given everyone assigned so far. No await between counting and
        reserving: two participants consenting at once cannot both take the emptiest cell."""
        assigned = [
            (p, j) for p, j in self._journeys.items() if j.tasks and p not in self._reserved
        ]
        active = [
            [(t.scenario_id, t.system_id) for t in j.tasks]
            for _, j in assigned
            if not j.abandoned and j.stage is not Stage.CLOSED
        ]
        active += [list(tasks) for tasks in self._reserved.values()]
        assignment = self._assign(
            self._bundle.study,
            participant,
            self._health.unavailable,
            arrival=len(assigned) + len(self._reserved),
            cells=cell_counts(active),
        )
        self._reserved[participant] = assignment.tasks
        return assignment

    async def _call_system(self, chat_id: int, call: fx.CallSystem) -> ev.Event:
        """Never raises: a slow, failing or broken system becomes ``SystemFailed``."""
        system = self._systems[call.system_id]
        gated, auto = self._gate_for(call.system_id)
        if getattr(system, "needs_wizard", False):
            return ev.SystemReplied(SystemReply(texts=()), 0.0, gated=True)
        limit = self._timeouts.get(call.system_id, _DEFAULT_TIMEOUT)
        started = time.perf_counter()
        typing = asyncio.create_task(self._keep_typing(chat_id))
        slow = False
        try:
            # A moment beyond the limit, so an adapter that times itself reports first.
            reply = await asyncio.wait_for(system.respond(call.conversation), limit + 0.2)
            problem = _check_reply(reply)
        except TimeoutError:
            problem, slow = f"no reply within {limit:g} s", True
        except SystemTimeout as error:
            problem, slow = str(error), True
        except Exception as error:
            log.warning("system %s failed: %s", call.system_id, error)
            problem = f"{type(error).__name__}: {error}"
        finally:
            typing.cancel()
        latency_ms = (time.perf_counter() - started) * 1000
        if problem is not None:
            return ev.SystemFailed(problem, latency_ms, slow=slow)
        return ev.SystemReplied(reply, latency_ms, gated=gated, auto_send_after=auto)

    # --- the wizard console's commands ------------------------------------------------

    def _gate_for(self, system_id: str) -> tuple[bool, float | None]:
        """The gate of the whole study, or else of the system (a session's own gate is in
        the participant's state)."""
        for scope in (f"study:{self._bundle.study.id}", f"system:{system_id}"):
            gated, auto = self._gates.get(scope, (False, None))
            if gated:
                return True, auto
        return False, None

    async def load_gates(self) -> None:
        self._gates = await self._store.gates()

    async def poll_commands(self) -> list[Inbound]:
        """New commands from the console: a participant's go to their chat, in order; a gate
        on a system or the study is applied here. Each is applied exactly once."""
        todo: list[Inbound] = []
        for command_id, kind, wizard, session_id, payload in await self._store.pending_commands(
            self._last_command
        ):
            self._last_command = command_id
            data = json.loads(payload or "{}")
            if session_id is None:
                await self._apply_global(command_id, kind, wizard, data)
                continue
            participant = next(
                (p for p, j in self._journeys.items() if j.tasks and j.session_id == session_id),
                None,
            )
            chat_id = self._chats.get(participant) if participant else None
            if chat_id is None:
                await self._store.settle_command([fx.RecordCommand(command_id, "expired")])
                continue
            command = {"id": command_id, "kind": kind, "wizard": wizard, "payload": data}
            todo.append(Inbound(chat_id, "wizard", json.dumps(command)))
        return todo

    async def _apply_global(
        self, command_id: int, kind: str, wizard: str, data: dict[str, object]
    ) -> None:
        scope = str(data.get("scope") or f"study:{self._bundle.study.id}")
        known = {f"study:{self._bundle.study.id}"} | {f"system:{s}" for s in self._systems}
        if kind != "gate" or scope not in known:
            await self._store.settle_command([fx.RecordCommand(command_id, "rejected")])
            return
        on = bool(data.get("on", True))
        auto = data.get("auto_send_after")
        seconds = float(auto) if isinstance(auto, int | float) and auto > 0 else None
        self._gates[scope] = (on, seconds)
        await self._store.settle_command(
            [fx.RecordGate(scope, on, seconds, wizard), fx.RecordCommand(command_id, "applied")]
        )

    async def _note_health(
        self, participant: str, chat_id: int, call: fx.CallSystem, result: ev.Event
    ) -> None:
        """Log when a system starts or stops failing; the design then avoids or uses it."""
        system_id = call.system_id
        if isinstance(result, ev.SystemFailed):
            changed, kind = self._health.failed(system_id), "system_unavailable"
        else:
            changed, kind = self._health.succeeded(system_id), "system_available"
        if changed:
            log.warning("system %s is now %s", system_id, kind.split("_")[1])
            data = {"system": system_id, "failures": self._health.failures(system_id)}
            # Rows only (no state): this step's own commit already holds the state.
            records: list[fx.Record] = [fx.RecordEvent(kind, call.conversation.session_id, data)]
            await self._commit(participant, chat_id, None, records, None)

    async def _keep_typing(self, chat_id: int) -> None:
        """Show "typing…" while a system works, from the moment a wait becomes noticeable,
        renewed before Telegram lets it fade. Measured: one request less per exchange took
        the bot past the bare aiogram echo bot (bench/exchanges.py)."""
        with contextlib.suppress(Exception):
            await asyncio.sleep(_TYPING_AFTER)
            while True:
                await self._outbox.typing(chat_id)
                await asyncio.sleep(_TYPING_EVERY)


def _messages_to_json(messages: list[fx.Send | fx.Edit]) -> str | None:
    if not messages:
        return None
    return json.dumps([{"kind": type(m).__name__, **vars(m)} for m in messages])


def _messages_from_json(raw: str) -> list[fx.Send | fx.Edit]:
    def buttons(rows: list) -> fx.Buttons:
        return tuple(tuple((label, data) for label, data in row) for row in rows)

    messages: list[fx.Send | fx.Edit] = []
    for item in json.loads(raw):
        kind = item.pop("kind")
        item["buttons"] = buttons(item["buttons"])
        messages.append(fx.Send(**item) if kind == "Send" else fx.Edit(**item))
    return messages


def _check_reply(reply: object) -> str | None:
    if not isinstance(reply, SystemReply):
        return f"the system returned {type(reply).__name__}, not a reply"
    if reply.events and not any(t.strip() for t in reply.texts):
        return None  # e.g. Rasa ending the task without a word: the events still count
    if not reply.texts or not any(t.strip() for t in reply.texts):
        return "the system returned an empty reply"
    return None
