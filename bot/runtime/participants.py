"""The participants' flow behind the one driver (``bot.runtime.driver``): for one delivery
at a time per chat the engine steps, the new journey is committed with the rows it produced
and the Telegram update it consumed (one transaction), and only then does the driver talk to
the participant or the system under test; what those calls return (a reply, a message id)
goes back into the engine as the next event. The runner decides nothing about the study:
what it observes (the console's gates, the systems' health, everyone's tasks) goes into the
engine's ``Context`` with each event, as the clock does.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import time
from collections import Counter
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import replace
from typing import Any, Protocol, assert_never

from bot.core.conversation import SystemReply, ToolCall
from bot.core.errors import StoreUnreachable
from bot.core.media import Speaker
from bot.core.privacy import Privacy
from bot.core.storable_text import storable, storable_reply
from bot.core.vocabulary import CommandKind, CommandOutcome, EventKind, Gate, GateScope, Invitation
from bot.engine import effects as fx
from bot.engine import events as ev
from bot.engine.assignment import Cell
from bot.engine.context import Context
from bot.engine.delivery import Delivery
from bot.engine.flow import next_deadline, step
from bot.engine.journey import Journey, Stage, forget_encoded_turns
from bot.engine.phases.assignment import cells_held, place_held, waiting
from bot.engine.recruitment import platform_id
from bot.engine.wizard import on_study_command
from bot.rights import erasure
from bot.rights.erasure import ErasingStore
from bot.runtime.driver import Committed, Opening, Outbox, Stepped, drive
from bot.runtime.media import MediaIntake
from bot.store.interface import ConsoleReadModel, Recruitment
from bot.store.model import EarlierStep, StepCommit
from bot.systems.base import System, SystemFailure, SystemTimeout
from bot.systems.health import SystemHealth
from bot.telegram.inbound import Inbound
from bot.telegram.outbox import ParticipantUnreachable
from scenarios.models import StudyBundle

log = logging.getLogger(__name__)

_TYPING_EVERY = 4.5  # Telegram shows "typing…" for about five seconds
_TYPING_AFTER = 0.3  # a system that answers sooner needs no "typing…" (a request saved)
_DEFAULT_TIMEOUT = 30.0
_NO_CHAT_KEPT = (Stage.CONSENT, Stage.DECLINED)  # no consent yet: no chat id kept for long


class RunnerStore(ErasingStore, ConsoleReadModel, Recruitment, Protocol):
    """The roles the participants' runner uses: the hot path, the gates and commands the
    console set, invitation codes, and erasure."""


class StudyRunner:
    def __init__(
        self,
        bundle: StudyBundle,
        store: RunnerStore,
        privacy: Privacy,
        systems: Mapping[str, System],
        outbox: Outbox,
        *,
        media: MediaIntake,
        speaker: Speaker | None = None,
        clock: Callable[[], float] = time.time,
        timeouts: Mapping[str, float] | None = None,
        timer: Callable[[], float] = time.perf_counter,
    ) -> None:
        self._bundle = bundle
        self._media = media  # participants' voice notes and photos, fetched and transcribed
        self._speaker = speaker  # the systems' replies spoken, in tasks that speak them
        self._files: dict[str, dict[str, bytes]] = {}
        """Pseudonym -> the bytes of the files fetched in the delivery being handled, by
        content hash: kept with its step if the study keeps them, and forgotten with the
        delivery either way."""
        self._timer = timer  # measures system latency (a simulation's clock in a demo)
        self._store = store
        self._privacy = privacy
        self._systems = systems
        self._outbox = outbox
        self._clock = clock
        self._timeouts = dict(timeouts or {})  # per system; adapters also time their calls
        self._health = SystemHealth()
        self._journeys: dict[str, Journey] = {}
        self._chats: dict[str, int] = {}  # pseudonym -> chat id, in memory only
        self._unreachable: set[str] = set()
        self._ticking: set[str] = set()  # a tick is queued: do not queue another
        self._gates: dict[GateScope, Gate] = {}
        self._cells: Counter[Cell] = Counter()  # what each participant holds, for the design
        self._arrivals = 0  # participants assigned tasks so far
        self._places: Counter[str] = Counter()  # places taken per cell, for a quota
        self._waiting = 0  # consented, not assigned yet: each will take a place
        self._last_command = 0
        self._sealed: dict[str, str] = {}  # pseudonym -> encrypted chat id, once computed
        self._undelivered: dict[str, list[fx.Send | fx.Edit]] = {}  # found at start-up
        self._claims: dict[str, str] = {}  # invitation code -> the participant who took it
        self._pseudonyms: dict[int, str] = {}  # chat id -> pseudonym: a keyed hash, made once
        self._made_context: Context | None = None

    # --- start-up ------------------------------------------------------------------

    async def load(self) -> list[Delivery]:
        """Rebuild every participant from the store; returns the work to redo, in order:
        interrupted steps first, then the updates that were stored but not handled."""
        todo: list[Delivery] = []
        for stored in await self._store.load_participants(self._bundle.study.id):
            journey = Journey.from_json(stored.state)
            self._remember(stored.participant_id, None, journey)
            sealed = None if stored.chat_key is None else self._privacy.reachable(stored.chat_key)
            if sealed is None:
                continue
            chat_id = int(sealed)
            self._chats[stored.participant_id] = chat_id
            if stored.undelivered:
                self._undelivered[stored.participant_id] = _messages_from_json(stored.undelivered)
            interrupted = journey.stage is Stage.ASSIGNING or journey.pending_message is not None
            if interrupted or stored.undelivered:
                todo.append(Delivery(chat_id, ev.Recovered()))
        for _update_id, payload in await self._store.pending_updates():
            if (update := self._privacy.reachable(payload)) is not None:
                todo.append(Inbound.from_json(update).to_delivery())
        return todo

    def due(self, now: float) -> list[Delivery]:
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
                ticks.append(Delivery(chat_id, ev.Tick()))
        return ticks

    def _context(self, invitation: Invitation = Invitation.NONE_HELD) -> Context:
        """What the engine is told beyond the participant; made again only when it changed
        (the gates and the cells are the runner's own mappings, seen as they are now)."""
        unavailable = self._health.unavailable
        made = self._made_context
        if (
            made is None
            or made.invitation is not invitation
            or made.arrival != self._arrivals
            or made.waiting != self._waiting
            or made.gates is not self._gates
            or made.unavailable != unavailable
        ):
            made = self._made_context = Context(
                self._bundle,
                gates=self._gates,
                unavailable=unavailable,
                arrival=self._arrivals,
                cells=self._cells,
                places=self._places,
                waiting=self._waiting,
                invitation=invitation,
            )
        return made

    def _pseudonym(self, chat_id: int) -> str:
        pseudonym = self._pseudonyms.get(chat_id)
        if pseudonym is None:
            pseudonym = self._pseudonyms[chat_id] = self._privacy.pseudonym(chat_id)
        return pseudonym

    def _sealed_id(self, event: ev.Event) -> ev.Event:
        """A platform id in any ``/start`` (the first or a later one) is sealed before the
        engine sees it, with its keyed hash to compare it by: never stored or logged in
        the clear."""
        code = event.code if isinstance(event, ev.StartCommand) else None
        found = platform_id(code) if self._bundle.study.recruitment is not None else None
        if not isinstance(event, ev.StartCommand) or found is None:
            return event
        key, tag = self._privacy.seal(found), self._privacy.platform_tag(found)
        return replace(event, code=None, platform_key=key, platform_tag=tag)

    async def _newcomer(self, participant: str, event: ev.Event) -> Invitation:
        """Someone the bot does not know yet: their invitation code looked up in the store."""
        code = event.code if isinstance(event, ev.StartCommand) else None
        return await self._store.check_invitation(code, participant)

    def _claimed(self, invitation: Invitation, event: ev.Event, participant: str) -> Invitation:
        """The store's answer, with the codes taken since it was read (not yet committed)."""
        code = event.code if isinstance(event, ev.StartCommand) else None
        taker = self._claims.get(code) if code else None
        if invitation is not Invitation.FREE or taker is None:
            return invitation
        return Invitation.YOURS if taker == participant else Invitation.TAKEN

    def _remember(self, participant: str, old: Journey | None, new: Journey | None) -> None:
        """Keep the journey, and the counts the design decides on, in step with it. Called
        with no await since the step: two participants consenting at once cannot both take
        the emptiest cell."""
        if new is None:
            return
        self._journeys[participant] = new
        if old is not None and _holds_the_same(old, new):
            return
        before = cells_held(old) if old is not None else ()
        after = cells_held(new)
        if before != after:
            self._cells.subtract(before)
            self._cells.update(after)
        self._count_place(old, -1)
        self._count_place(new, +1)
        if new.tasks and (old is None or not old.tasks):
            self._arrivals += 1

    def _count_place(self, journey: Journey | None, sign: int) -> None:
        """The places of the design's cells and the participants waiting for one, with
        ``journey`` counted in (+1) or out (-1)."""
        if journey is None:
            return
        if (cell := place_held(journey)) is not None:
            self._places[cell] += sign
        self._waiting += sign * waiting(journey)

    # --- one delivery ----------------------------------------------------------------

    def knows(self, chat_id: int) -> bool:
        """Whether the chat is a participant's the bot holds (who cannot annotate too)."""
        return self._pseudonym(chat_id) in self._journeys

    async def handle(self, delivery: Delivery) -> None:
        participant = self._pseudonym(delivery.chat_id)
        if isinstance(delivery.event, ev.Tick):
            self._ticking.discard(participant)
        elif isinstance(delivery.event, ev.PARTICIPANT_EVENTS):
            self._chats[participant] = delivery.chat_id
            self._unreachable.discard(participant)
        turn = _ParticipantTurn(self, participant, delivery)
        try:
            await drive(
                turn,
                self._outbox,
                self._bundle.study.texts.system_error,
                update_id=delivery.update_id,
                toast_owed=delivery.callback_id,
            )
        except StoreUnreachable:
            with contextlib.suppress(StoreUnreachable):
                await turn.settled()  # a commit under way is waited for; nothing is kept
            raise
        finally:
            self._files.pop(participant, None)  # a file's bytes live one delivery at most
        await turn.settled()

    def _delivered(self, participant: str) -> None:
        journey = self._journeys.get(participant)
        keep = journey is not None and journey.stage not in _NO_CHAT_KEPT
        if not keep:
            self._sealed.pop(participant, None)
        self._store.delivered(participant, keep_chat=keep)

    async def _commit(
        self,
        participant: str,
        chat_id: int,
        journey: Journey | None,
        records: list[fx.Record],
        update_id: int | None,
        undelivered: str | None = None,
        earlier: EarlierStep | None = None,
    ) -> None:
        fetched = self._files.get(participant, {})
        files = {
            r.digest: fetched[r.digest]
            for r in records
            if isinstance(r, fx.RecordMedia) and r.kept and r.digest in fetched
        }
        # Before consent the chat id is kept only while messages wait to be delivered.
        keep_chat = journey is not None and (journey.stage not in _NO_CHAT_KEPT or undelivered)
        chat_key = None
        if keep_chat:  # sealed once per participant: the row keeps the first one anyway
            chat_key = self._sealed.get(participant)
            if chat_key is None:
                chat_key = self._sealed[participant] = self._privacy.seal(str(chat_id))
        await self._store.commit_step(
            StepCommit(
                study_id=self._bundle.study.id,
                participant_id=participant,
                state=journey.to_json() if journey is not None else None,
                status=journey.status() if journey is not None else None,
                chat_key=chat_key,
                records=records,
                update_id=update_id,
                undelivered=undelivered,
                earlier=earlier,
                files=files,
            )
        )

    async def _carry_out(
        self,
        participant: str,
        chat_id: int,
        effect: fx.Outbound,
        before_typing: Callable[[], Awaitable[None]] | None = None,
    ) -> ev.Event | None:
        match effect:
            case fx.Send(text=text, buttons=buttons, remember=remember, format=form):
                message_id = await self._outbox.send(chat_id, text, buttons, form)
                if message_id is not None and remember:
                    return ev.MessageSent(message_id)
                if message_id is not None and effect.until is not None:
                    return ev.KeyboardShown(message_id, effect.until, fx.callback_data(buttons))
            case fx.SendFile(kind=kind, data=data, mime=mime, caption=caption):
                await self._outbox.send_file(chat_id, kind, data, mime, caption)
            case fx.SpeakReply():
                return await self._speak(chat_id, effect)
            case fx.Edit(message_id=message_id, text=text, buttons=buttons):
                await self._outbox.edit(chat_id, message_id, text, buttons)
            case fx.RemoveButtons(message_id=message_id):
                await self._outbox.remove_buttons(chat_id, message_id)
            case fx.ShowTyping():
                await self._outbox.typing(chat_id)
            case fx.Toast():
                pass  # answered by ``handle``, which holds the tap's id
            case fx.CallSystem():
                given = await self._given(participant, effect)
                return await self._call_system(chat_id, given, before_typing)
            case fx.CallSides(calls=calls):
                answers = await asyncio.gather(
                    *(self._call_system(chat_id, call, before_typing) for call in calls)
                )
                return ev.SidesAnswered(tuple(answers))
            case fx.FetchMedia():
                fetched, data = await self._media.fetch(effect)
                if data:
                    self._files.setdefault(participant, {})[fetched.digest] = data
                return fetched
            case fx.Erase(command_id=command_id):
                await self._erase(participant, command_id)
            case _:
                assert_never(effect)
        return None

    async def _speak(self, chat_id: int, effect: fx.SpeakReply) -> ev.ReplySpoken:
        """The reply as a voice note; the text instead when it cannot be spoken."""
        data = fx.callback_data(effect.buttons)
        started = self._timer()
        try:
            if self._speaker is None:
                raise LookupError("no text-to-speech engine")
            spoken = await self._speaker.speak(effect.text)
        except Exception as error:  # an engine's failure: the participant gets the words
            log.warning("a reply could not be spoken (%s): sent as text", type(error).__name__)
            elapsed = (self._timer() - started) * 1000
            message_id = await self._outbox.send(chat_id, effect.text, effect.buttons)
            return ev.ReplySpoken(message_id, effect.until, data, elapsed, failed=True)
        elapsed = (self._timer() - started) * 1000
        caption = effect.text if effect.beside else ""
        message_id = await self._outbox.send_file(
            chat_id, "voice", spoken.audio, spoken.mime, caption, effect.buttons
        )
        return ev.ReplySpoken(message_id, effect.until, data, elapsed, spoken.engine, spoken.model)

    async def _given(self, participant: str, call: fx.CallSystem) -> fx.CallSystem:
        """The call with the bytes of the file its message came with: fetched in this
        delivery, or (the call made again after a restart) kept by the study; a file
        discarded meanwhile is left out, and the system gets the words alone."""
        asked = call.conversation
        if not asked.attachments:
            return call
        fetched = self._files.get(participant, {})
        given = []
        for attachment in asked.attachments:
            data = fetched.get(attachment.digest) or await self._store.kept_file(attachment.digest)
            if data:
                given.append(replace(attachment, data=data))
        return replace(call, conversation=replace(asked, attachments=tuple(given)))

    async def _erase(self, participant: str, command_id: int | None) -> None:
        """The participant withdrew: their rows go in one transaction (with the updates of
        theirs still waiting in the inbox), then the bot forgets them."""
        await erasure.erase_participant(self._store, participant, self._privacy, command_id)
        self.forget(participant)
        log.info("a participant withdrew: their data is erased")

    def forget(self, participant: str) -> None:
        """Drop everything the bot holds in memory about an erased participant (their cells
        of the design are free again; the arrival count stays, as assignment's order)."""
        journey = self._journeys.pop(participant, None)
        if journey is not None:
            self._cells.subtract(cells_held(journey))
            self._count_place(journey, -1)
        chat_id = self._chats.pop(participant, None)
        if chat_id is not None:
            self._pseudonyms.pop(chat_id, None)
        self._sealed.pop(participant, None)
        self._undelivered.pop(participant, None)
        self._unreachable.discard(participant)
        self._ticking.discard(participant)
        forget_encoded_turns()

    async def _call_system(
        self,
        chat_id: int,
        call: fx.CallSystem,
        before_typing: Callable[[], Awaitable[None]] | None = None,
    ) -> ev.SystemReplied | ev.SystemFailed:
        """Never raises: a slow, failing or broken system becomes ``SystemFailed``."""
        system = self._systems[call.system_id]
        limit = self._timeouts.get(call.system_id, _DEFAULT_TIMEOUT)
        started = self._timer()
        # A moment beyond the limit, so an adapter that times itself reports first. The
        # deadline is set when "typing…" starts: a system that answers sooner costs one
        # timer, not two (bench/); a limit shorter than that moment is set at once.
        beyond = limit + 0.2
        now_set = beyond <= _TYPING_AFTER
        deadline_at = asyncio.get_running_loop().time() + beyond
        typing: _Typing | None = None
        slow = False
        reply: Any = None
        calls: tuple[ToolCall, ...] = ()
        try:
            async with asyncio.timeout_at(deadline_at if now_set else None) as deadline:
                typing = _Typing(self._outbox, chat_id, before_typing)
                if not now_set:
                    typing.also(lambda: deadline.reschedule(deadline_at))
                reply = await system.respond(call.conversation)
            problem = _check_reply(reply)
        except TimeoutError:
            problem, slow = f"no reply within {limit:g} s", True
        except SystemTimeout as error:
            problem, slow, calls = str(error), True, error.tool_calls
        except SystemFailure as error:
            log.warning("system %s failed: %s", call.system_id, error)
            problem, calls = f"{type(error).__name__}: {error}", error.tool_calls
        except Exception as error:
            log.warning("system %s failed: %s", call.system_id, error)
            problem = f"{type(error).__name__}: {error}"
        finally:
            if typing is not None:
                typing.stop()
        latency_ms = (self._timer() - started) * 1000
        system_id = call.system_id
        if problem is not None:
            problem = storable(problem)  # a failure's words may quote the system's
            unavailable = self._health.failed(system_id)
            if unavailable:
                log.warning("system %s is now unavailable", system_id)
            failures = self._health.failures(system_id)
            return ev.SystemFailed(problem, latency_ms, slow, unavailable, failures, calls)
        recovered = self._health.succeeded(system_id)
        if recovered:
            log.warning("system %s is now available", system_id)
        return ev.SystemReplied(storable_reply(reply), latency_ms, recovered)

    # --- the wizard console's commands ------------------------------------------------

    async def load_gates(self) -> None:
        self._gates = await self._store.gates()

    async def poll_commands(self) -> list[Delivery]:
        """New commands from the console: a participant's go to their chat, in order; a gate
        on a system or the study is applied here. Each is applied exactly once."""
        todo: list[Delivery] = []
        for command in await self._store.pending_commands(self._last_command):
            self._last_command = command.id
            event = ev.WizardCommand(command.id, command.kind, command.wizard, command.payload)
            if command.kind is CommandKind.ERASE:
                erasing = str(command.payload.get("participant", ""))
                if (chat_id := self._chats.get(erasing)) is not None:
                    todo.append(Delivery(chat_id, event))  # in turn with the chat's updates
                else:  # no chat to wait for: nothing of theirs can be in flight
                    await self._erase(erasing, command.id)
                continue
            if command.session_id is None:
                records = on_study_command(self._context(), event)
                for record in records:
                    if isinstance(record, fx.RecordGate):
                        self._gates[record.scope] = Gate(
                            record.scope, record.gated, record.auto_send_after, record.wizard
                        )
                await self._store.settle(records)
                continue
            participant = next(
                (
                    p
                    for p, j in self._journeys.items()
                    if j.tasks and j.session_id == command.session_id
                ),
                None,
            )
            chat_id = self._chats.get(participant) if participant else None
            if chat_id is None:
                await self._store.settle([fx.RecordCommand(command.id, CommandOutcome.EXPIRED)])
                continue
            todo.append(Delivery(chat_id, event))
        return todo


class _Typing:
    """Show "typing…" while a system works, from the moment a wait becomes noticeable,
    renewed before Telegram lets it fade. Measured: one request less per exchange took the
    bot past the bare aiogram echo bot (bench/exchanges.py). A timer, not a task, until the
    wait is noticeable: most systems answer before it and then cost no task at all."""

    def __init__(
        self,
        outbox: Outbox,
        chat_id: int,
        before: Callable[[], Awaitable[None]] | None = None,
    ) -> None:
        self._outbox = outbox
        self._chat_id = chat_id
        self._before = before  # what must be durable before the chat shows anything
        self._also: Callable[[], object] | None = None
        self._task: asyncio.Task[None] | None = None
        self._timer = asyncio.get_running_loop().call_later(_TYPING_AFTER, self._start)

    def also(self, then: Callable[[], object]) -> None:
        """Call ``then`` too once the wait is noticeable (never after :meth:`stop`)."""
        self._also = then

    def _start(self) -> None:
        if self._also is not None:
            self._also()
        self._task = asyncio.create_task(self._keep_typing())

    async def _keep_typing(self) -> None:
        with contextlib.suppress(Exception):
            if self._before is not None:
                await self._before()
            while True:
                await self._outbox.typing(self._chat_id)
                await asyncio.sleep(_TYPING_EVERY)

    def stop(self) -> None:
        self._timer.cancel()
        self._also = None
        if self._task is not None:
            self._task.cancel()


class _ParticipantTurn:
    """One delivery of a participant's chat: the engine's step with its context, the
    journey and rows committed with the update, the messages kept until delivered."""

    def __init__(self, runner: StudyRunner, participant: str, delivery: Delivery) -> None:
        self._runner = runner
        self._participant = participant
        self._delivery = delivery
        self.chat_id = delivery.chat_id
        self._invitation = Invitation.NONE_HELD
        self._before: Journey | None = None
        self._after: Journey | None = None
        self._held: tuple[Journey, EarlierStep] | None = None
        """A step that only asked a system, not committed yet: it goes with the next step's
        commit (one transaction an exchange), or on its own once the system takes long
        enough for "typing…" to show."""
        self._flushing: asyncio.Task[None] | None = None

    async def opening(self) -> Opening[ev.Event]:
        runner, participant = self._runner, self._participant
        opening: Opening[ev.Event] = Opening()
        # Messages committed before a crash but perhaps never sent go out first.
        if (undelivered := runner._undelivered.pop(participant, None)) is not None:
            for message in undelivered:
                answer = await runner._carry_out(participant, self.chat_id, message)
                if isinstance(answer, ev.MessageSent | ev.KeyboardShown):
                    opening.events.append(replace(answer, resent=True))
                elif answer is not None:
                    opening.events.append(answer)
            opening.resent = True
        first = runner._sealed_id(self._delivery.event)
        if participant not in runner._journeys and isinstance(first, ev.PARTICIPANT_EVENTS):
            self._invitation = await runner._newcomer(participant, first)
        opening.events.append(first)
        return opening

    def step(self, event: ev.Event) -> Stepped[fx.Record, fx.Outbound]:
        runner, participant = self._runner, self._participant
        journey = runner._journeys.get(participant)
        context = runner._context(runner._claimed(self._invitation, event, participant))
        result = step(runner._bundle, participant, journey, event, runner._clock(), context)
        runner._remember(participant, journey, result.journey)
        for effect in result.effects:  # no await since the step: the first one wins
            if isinstance(effect, fx.ClaimInvitation):
                runner._claims[effect.code] = participant
        records, outbound = fx.split(result.effects)
        if any(isinstance(e, fx.CallSystem | fx.CallSides) for e in outbound):
            # The system call shows "typing…" itself, once it is worth showing.
            outbound = [e for e in outbound if not isinstance(e, fx.ShowTyping)]
        self._before, self._after = journey, result.journey
        changed = result.journey is not journey and result.journey != journey
        return Stepped(records, outbound, changed=changed)

    async def commit(
        self, stepped: Stepped[fx.Record, fx.Outbound], update_id: int | None
    ) -> Committed[ev.Event]:
        await self._flushed()
        if self._held is None and self._after is not None and self._asks_only(stepped):
            step = EarlierStep(stepped.records, update_id, self._runner._clock())
            self._held = (self._after, step)
            return Committed()
        held = self._take_held()
        messages = [_as_text(e) for e in stepped.outbound if isinstance(e, _KEPT_UNTIL_SENT)]
        await self._runner._commit(
            self._participant,
            self.chat_id,
            self._after,
            stepped.records,
            update_id,
            _messages_to_json(messages),
            earlier=held[1] if held is not None else None,
        )
        return Committed(undelivered=bool(messages) and self._after is not None)

    def _asks_only(self, stepped: Stepped[fx.Record, fx.Outbound]) -> bool:
        """The step only asks a system (or fetches a file), of a participant stored before:
        nothing reaches the chat until the answer is stepped and committed, so this step's
        rows and update can be committed with it. A crash meanwhile leaves the update in the
        inbox: handled again at start-up, nothing lost and nothing twice."""
        outbound = stepped.outbound
        return (
            self._before is not None
            and len(outbound) == 1
            and isinstance(outbound[0], fx.CallSystem | fx.CallSides | fx.FetchMedia)
        )

    def _take_held(self) -> tuple[Journey, EarlierStep] | None:
        held, self._held = self._held, None
        return held

    async def _before_typing(self) -> None:
        """The system takes a moment: the step that asked it is committed on its own before
        the chat shows "typing…" (and the console sees the message waiting)."""
        if self._held is not None and self._flushing is None:
            self._flushing = asyncio.ensure_future(self._flush())
        if self._flushing is not None:
            await asyncio.shield(self._flushing)  # stopping "typing…" does not stop it

    async def _flush(self) -> None:
        held = self._take_held()
        if held is None:
            return
        journey, step = held
        try:
            await self._runner._commit(
                self._participant, self.chat_id, journey, [], None, earlier=step
            )
        except BaseException:
            self._held = held  # not durable: it goes with the next commit, or ``failed``'s
            raise

    async def _flushed(self) -> None:
        """A held step on its way to the store is durable before anything follows."""
        flushing, self._flushing = self._flushing, None
        if flushing is not None:
            await flushing

    async def settled(self) -> None:
        """Nothing stays held once the delivery is done (a held step is always followed by
        the system's answer, committed with it: this is the guard)."""
        await self._flushed()
        await self._flush()

    async def carry_out(self, effect: fx.Outbound) -> ev.Event | None:
        return await self._runner._carry_out(
            self._participant, self.chat_id, effect, self._before_typing
        )

    async def delivered(self) -> None:
        self._runner._delivered(self._participant)

    async def unreachable(self, error: ParticipantUnreachable) -> None:
        runner, participant = self._runner, self._participant
        runner._unreachable.add(participant)
        log.info("participant %s cannot be reached: %s", participant, error)
        record = fx.RecordEvent(EventKind.PARTICIPANT_UNREACHABLE, None, {"error": str(error)})
        journey = runner._journeys.get(participant)
        await self._flushed()
        held = self._take_held()
        earlier = held[1] if held is not None else None
        await runner._commit(participant, self.chat_id, journey, [record], None, earlier=earlier)

    async def failed(self, update_id: int | None) -> None:
        runner, participant = self._runner, self._participant
        log.exception("handling an update of %s failed", participant)
        with contextlib.suppress(Exception):
            await self._flushed()  # durable, or held again
        if (held := self._take_held()) is not None:
            # What it would have been had the step been committed on its own: its rows and
            # update kept; if they cannot be, the update consumed with the error, as then.
            asked, step = held
            try:
                await runner._commit(participant, self.chat_id, asked, [], None, earlier=step)
                return
            except Exception:
                log.exception("the step of %s before it could not be committed", participant)
                update_id = step.update_id
        if update_id is not None:
            kind = type(self._delivery.event).__name__
            record = fx.RecordEvent(EventKind.INTERNAL_ERROR, None, {"kind": kind})
            journey = runner._journeys.get(participant)
            await runner._commit(participant, self.chat_id, journey, [record], update_id)


def _holds_the_same(old: Journey, new: Journey) -> bool:
    """Whether the cells and the place of the design ``new`` holds are ``old``'s without
    looking: what ``cells_held``, ``place_held`` and ``waiting`` read did not change (most
    steps)."""
    return old.tasks is new.tasks and old.abandoned == new.abandoned and old.stage is new.stage


_KEPT_UNTIL_SENT = (fx.Send, fx.Edit, fx.SpeakReply)


def _as_text(message: fx.Send | fx.Edit | fx.SpeakReply) -> fx.Send | fx.Edit:
    """What is sent again after a crash: a spoken reply as its text."""
    if isinstance(message, fx.SpeakReply):
        return fx.Send(message.text, message.buttons, until=message.until)
    return message


def _messages_to_json(messages: list[fx.Send | fx.Edit]) -> str | None:
    if not messages:
        return None
    return json.dumps([{"kind": type(m).__name__, **vars(m)} for m in messages])


def _messages_from_json(raw: str) -> list[fx.Send | fx.Edit]:
    messages: list[fx.Send | fx.Edit] = []
    for item in json.loads(raw):
        kind = item.pop("kind")
        if item.get("until"):
            item["until"] = fx.Until(item["until"])
        item["buttons"] = tuple(
            tuple((label, data) for label, data in row) for row in item["buttons"]
        )
        messages.append(fx.Send(**item) if kind == "Send" else fx.Edit(**item))
    return messages


def _check_reply(reply: object) -> str | None:
    if not isinstance(reply, SystemReply):
        return f"the system returned {type(reply).__name__}, not a reply"
    if reply.events and not any(t.strip() for t in reply.texts):
        return None  # e.g. Rasa ending the task without a word: the events still count
    if reply.pictures and not any(t.strip() for t in reply.texts):
        return None  # pictures alone are an answer
    if not reply.texts or not any(t.strip() for t in reply.texts):
        return "the system returned an empty reply"
    return None
