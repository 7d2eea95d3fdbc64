"""The annotators' flow (``bot.engine.annotating``) behind the one driver
(``bot.runtime.driver``): it tells annotators' chats from participants' (asked by the
dispatcher, ``bot.runtime.dispatch``), reads the store into events (a claimed code, the next
target), and commits a step's records (ratings, a finish, a pause, a ``/back``) with the
Telegram update it consumed in one transaction before anything is said.

After every finished target the job's assignment is planned again
(``bot.annotation.jobs.assign``): where two annotators disagree a third one is asked, and a
dropped annotator's open targets go to someone else. So it is on the bot's clock when a
silent annotator's deadline passes (``bot.annotation.deadlines``), even when everyone else
waits and nobody finishes anything. Whoever got new work while waiting is written to at
once (in a task of its own, so two chats never wait on each other).

Annotators' chats are known by a keyed hash of their own (``Privacy.annotator_chat``),
never by the participants' pseudonym; their state lives in memory and is rebuilt from the
store (the open target and the items answered) after a restart.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable, Coroutine
from typing import Any, Protocol, assert_never

from bot.annotation.deadlines import RECHECK, DropOutWatch
from bot.annotation.information import informed
from bot.annotation.invitations import ANNOTATOR_CODE_PREFIX, new_pseudonym
from bot.annotation.jobs import (
    assign,
    assign_on_the_clock,
    prepare_job,
    share_rated,
    unqualified,
)
from bot.core.annotation import AnnotationTask, Annotator, AssignmentPlan
from bot.core.errors import StoreUnreachable, StudyDataError
from bot.core.privacy import Privacy
from bot.core.vocabulary import AnnotatorClaim, PaymentStatus, RatingOutcome
from bot.engine import effects as fx
from bot.engine import events as ev
from bot.engine.annotating.flow import step
from bot.engine.annotating.model import (
    Annotating,
    AnnotatorEffect,
    AnnotatorEvent,
    AnnotatorRecord,
    Claimed,
    FinishTarget,
    RecordRating,
    RecordVotes,
    Reloaded,
    Reopened,
    ReopenLast,
    SetCommands,
    SetPaused,
    TargetGone,
    TargetLoaded,
    WithdrawAnnotator,
)
from bot.engine.callbacks import WithdrawTap
from bot.engine.delivery import Delivery
from bot.engine.recruitment import job_platform_id
from bot.runtime.driver import Committed, Opening, Outbox, Stepped, drive
from bot.store.interface import AnnotationPlanning, AnnotatorRecruitment, AnnotatorWork, HotPath
from bot.store.model import AnnotatorAnswer, PlatformArrival
from bot.telegram.outbox import ParticipantUnreachable
from scenarios.models import StudyBundle

log = logging.getLogger(__name__)


class AnnotatingStore(AnnotatorWork, AnnotatorRecruitment, AnnotationPlanning, HotPath, Protocol):
    """The roles annotators' chats use: their own work (and, recruited on a platform,
    their payment record), the plan it follows (assigned again when someone drops out),
    and the inbox an update is consumed from."""


_PSEUDONYMS_TRIED = 8
"""Pseudonyms drawn for a newcomer from a job's link: the store takes the first free one."""
_ENDINGS_WITH_CODES = (PaymentStatus.COMPLETED, PaymentStatus.SCREENED_OUT)


class AnnotationRunner:
    def __init__(
        self,
        bundle: StudyBundle,
        store: AnnotatingStore,
        privacy: Privacy,
        outbox: Outbox,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self._bundle = bundle
        self._store = store
        self._privacy = privacy
        self._outbox = outbox
        self._clock = clock
        self._states: dict[str, Annotating] = {}  # annotator chat hash -> state
        self._chats: dict[str, int] = {}  # annotator id -> chat id, in memory only
        self._locks: dict[str, asyncio.Lock] = {}
        self._pushes: set[asyncio.Task[None]] = set()
        self._watch = DropOutWatch(bundle.jobs)
        self._replanning: asyncio.Task[None] | None = None
        # chats of annotators dropped while the bot ran -> their Telegram's language
        self._dropped: dict[str, str | None] = {}
        self._hashes: dict[int, str] = {}  # chat id -> its annotator hash, made once

    async def takes(self, delivery: Delivery, participant: bool) -> bool:
        """Handle the delivery when it is an annotator's (True); ``participant``: the chat
        is a participant's, who cannot annotate from the same account."""
        event = delivery.event
        if not isinstance(event, ev.PARTICIPANT_EVENTS):
            return False
        chat = self._hashes.get(delivery.chat_id)
        if chat is None:  # every delivery asks: a keyed hash made once per chat
            chat = self._hashes[delivery.chat_id] = self._privacy.annotator_chat(delivery.chat_id)
        code = event.code if isinstance(event, ev.StartCommand) else None
        claiming = code is not None and code.lower().startswith(ANNOTATOR_CODE_PREFIX)
        language = event.language if isinstance(event, ev.StartCommand) else None
        withdrawing = _withdrawing(event)  # a dropped annotator keeps that right
        if chat in self._dropped and not (claiming or withdrawing):
            told = self._bundle.texts_for(language or self._dropped[chat])
            await self._answer_only(delivery, told.ann_code_dropped)
            return True
        if participant and chat not in self._states:
            if not claiming:
                return False
            await self._answer_only(delivery, self._bundle.texts_for(language).ann_participant_chat)
            return True
        if not (chat in self._states or claiming):
            known = await self._known(chat)
            if known is None:
                return False
            if known.dropped and not withdrawing:  # after a restart: told as while it ran
                self._dropped[chat] = language
                await self._answer_only(delivery, self._bundle.texts_for(language).ann_code_dropped)
                return True
        first: AnnotatorEvent | ev.Event = event
        async with self._lock(chat):
            if claiming and isinstance(event, ev.StartCommand) and code is not None:
                linked = job_platform_id(code)
                first = await (
                    self._claim(code, chat, delivery.chat_id, event.language)
                    if linked is None
                    else self._join(*linked, chat, delivery.chat_id, event.language)
                )
            await self._delivered(chat, delivery, first)
        return True

    async def _known(self, chat: str) -> Annotator | None:
        """The annotator (dropped ones too) a chat the bot holds nothing of is (after a
        restart); None: a participant's chat, or an annotator of another study."""
        if not self._bundle.jobs:
            return None  # a study without annotation jobs: no look-up for anyone
        known = await self._store.annotator_for_chat(chat)
        return known if known is not None and known.job in self._bundle.jobs else None

    # --- one delivery -------------------------------------------------------------------

    def _lock(self, chat: str) -> asyncio.Lock:
        return self._locks.setdefault(chat, asyncio.Lock())

    async def _claim(self, code: str, chat: str, chat_id: int, language: str | None) -> Claimed:
        elsewhere = [a for a in await self._store.annotators() if a.code == code]
        if any(a.job not in self._bundle.jobs for a in elsewhere):
            # A code of a job another study of this database runs: not taken from here.
            return Claimed(AnnotatorClaim.UNKNOWN, language=language)
        claim, annotator = await self._store.claim_annotator(
            code, chat, self._privacy.seal(str(chat_id))
        )
        return await self._claimed(claim, annotator, chat, chat_id, language)

    async def _join(
        self, job_id: str, platform_id: str, chat: str, chat_id: int, language: str | None
    ) -> Claimed:
        """A recruiting job's link (``/start ann-JOB_pid_ID``): the platform id sealed (never
        kept or logged in the clear), the job brought up to date, then a new annotator of
        it, the chat's own one (the id bound to them now, if they had none), or refused."""
        job = self._bundle.jobs.get(job_id)
        if job is None or job.recruitment is None:
            return Claimed(AnnotatorClaim.UNKNOWN, language=language)
        await prepare_job(self._store, self._bundle, job)
        arrival = PlatformArrival(
            job=job.id,
            study_id=self._bundle.study.id,
            platform=job.recruitment.platform,
            chat_hash=chat,
            chat_key=self._privacy.seal(str(chat_id)),
            platform_key=self._privacy.seal(platform_id),
            platform_tag=self._privacy.platform_tag(platform_id),
        )
        pseudonyms = [new_pseudonym() for _ in range(_PSEUDONYMS_TRIED)]
        claim, annotator = await self._store.join_from_platform(arrival, pseudonyms)
        if claim is AnnotatorClaim.JOINED and annotator is not None:  # work for the newcomer
            await self._plan(job.id, self._clock(), annotator.annotator_id)
        if annotator is None:
            return Claimed(claim, job=job.id, language=language)
        return await self._claimed(claim, annotator, chat, chat_id, language)

    async def _claimed(
        self,
        claim: AnnotatorClaim,
        annotator: Annotator | None,
        chat: str,
        chat_id: int,
        language: str | None,
    ) -> Claimed:
        """What a code or a job's link claimed, with the annotator's next target."""
        resumed = (AnnotatorClaim.JOINED, AnnotatorClaim.RETURNING, AnnotatorClaim.ALREADY)
        if claim not in resumed or annotator is None:
            return Claimed(claim, language=language)
        self._chats[annotator.annotator_id] = chat_id
        self._dropped.pop(chat, None)
        loaded = await self._loaded(annotator.annotator_id, annotator.job)
        return Claimed(
            claim,
            annotator.annotator_id,
            annotator.job,
            annotator.paused,
            loaded.task,
            language,
            loaded.unqualified,
            loaded.ended,
        )

    async def _unqualified(self, annotator: str, job_id: str) -> bool:
        """Below a pairwise job's onboarding threshold (told so when nothing is left)."""
        job = self._bundle.jobs[job_id]
        return await unqualified(self._store, self._bundle, job, annotator)

    async def _loaded(self, annotator: str, job_id: str) -> TargetLoaded:
        """The annotator's next target, or why there is none; a recruited annotator's part
        followed in their payment record (ended once their share is rated, or their
        onboarding failed: the platform's code is shown)."""
        task = await self._next_target(annotator)
        below = task is None and await self._unqualified(annotator, job_id)
        job = self._bundle.jobs[job_id]
        if job.recruitment is None:
            return TargetLoaded(task, unqualified=below)
        status = PaymentStatus.STARTED
        if below:
            status = PaymentStatus.SCREENED_OUT
        elif task is None and await share_rated(self._store, job, annotator):
            status = PaymentStatus.COMPLETED
        recorded = await self._store.set_annotator_payment(annotator, status)
        ended = recorded if task is None and recorded in _ENDINGS_WITH_CODES else None
        return TargetLoaded(task, unqualified=below, ended=ended)

    async def _next_target(self, annotator: str) -> AnnotationTask | None:
        """The annotator's next target, with what its rated reply recommends."""
        return informed(await self._store.next_annotation_target(annotator))

    async def _reloaded(self, chat: str, withdrawing: bool) -> Reloaded | None:
        """Who the chat's annotator is, from the store; a dropped one only to withdraw
        (with nothing in front of them)."""
        known = await self._store.annotator_for_chat(chat)
        if known is None or known.job not in self._bundle.jobs:
            return None
        if known.dropped:
            return Reloaded(known.annotator_id, known.job, False, None) if withdrawing else None
        task = await self._next_target(known.annotator_id)
        return Reloaded(known.annotator_id, known.job, known.paused, task)

    async def _delivered(
        self, chat: str, delivery: Delivery, first: AnnotatorEvent | ev.Event
    ) -> None:
        """One delivery of an annotator's chat: their state rebuilt first when the bot does
        not hold it (a restart); when they wait for work, a message is a look for it."""
        queue: list[AnnotatorEvent | ev.Event] = [first]
        withdrawing = _withdrawing(first)  # asked whether or not they still hold a target
        if chat not in self._states and not isinstance(first, Claimed):
            reloaded = await self._reloaded(chat, withdrawing)
            if reloaded is not None:
                queue.insert(0, reloaded)
                if reloaded.task is None and _asks_for_work(first):  # as before the restart
                    queue[-1] = await self._loaded(reloaded.annotator, reloaded.job)
                elif isinstance(first, ev.TextReceived):
                    queue[-1] = ev.StartCommand()  # after a restart: the item shown again
        state = self._states.get(chat)
        if state is not None and state.task is None and _asks_for_work(first):
            queue[-1] = await self._loaded(state.annotator, state.job)
        if state is not None and state.task is not None and _returns(first) and not withdrawing:
            target = state.task.target
            if not await self._store.holds_annotation_target(
                state.annotator, state.job, target.target, target.level
            ):  # it went to someone else while they were away: said once, not resumed
                moved = await self._elsewhere(chat, delivery.chat_id)
                if not moved:  # dropped: told so
                    if delivery.update_id is not None:
                        await self._handled(chat, delivery.update_id)
                    return
                # a command still does what it says, after; a message was only a return
                queue = moved if _asks_for_work(first) else [*moved, first]
        await self._run(chat, delivery.chat_id, queue, delivery.update_id, delivery.callback_id)

    async def _run(
        self,
        chat: str,
        chat_id: int,
        queue: list[AnnotatorEvent | ev.Event],
        update_id: int | None = None,
        toast_owed: str | None = None,
    ) -> None:
        turn = _AnnotatorTurn(self, chat, chat_id, queue)
        apology = self._bundle.study.texts.system_error
        await drive(turn, self._outbox, apology, update_id=update_id, toast_owed=toast_owed)

    async def _elsewhere(self, chat: str, chat_id: int) -> list[AnnotatorEvent | ev.Event]:
        """A rating refused as not theirs: the annotator was dropped (told so, forgotten),
        or their open target went to someone else (their next one, explained)."""
        known = await self._store.annotator_for_chat(chat)
        if known is None or known.dropped:
            held = self._states.pop(chat, None)
            language = held.language if held is not None else None
            self._dropped[chat] = language
            refusal = Claimed(AnnotatorClaim.DROPPED, language=language)
            _, said = step(self._bundle, None, refusal, self._clock())
            for effect in said:
                await self._say(chat_id, effect)
            return []
        return [TargetGone(await self._next_target(known.annotator_id))]

    async def _answer_only(self, delivery: Delivery, text: str) -> None:
        try:
            if delivery.update_id is not None:
                await self._handled(
                    self._privacy.annotator_chat(delivery.chat_id), delivery.update_id
                )
            if delivery.callback_id is not None:  # a tap is answered, or its spinner stays
                await self._outbox.toast(delivery.callback_id)
            await self._outbox.send(delivery.chat_id, text)
        except ParticipantUnreachable as error:
            log.info("a chat cannot be reached: %s", error)

    async def _handled(self, chat: str, update_id: int) -> None:
        """The Telegram update is consumed (an annotator has no participant row)."""
        await self._store.commit_annotator_step((), update_id)

    async def _answered(
        self,
        chat: str,
        chat_id: int,
        records: list[AnnotatorRecord],
        answers: list[AnnotatorAnswer],
    ) -> Committed[AnnotatorEvent | ev.Event]:
        """What the store's answers to a step's records lead to: the next target after a
        finished one (planned again first), the one ``/back`` opened; a rating refused as
        not theirs ends the step unsaid (:meth:`_elsewhere` instead)."""
        then: list[AnnotatorEvent | ev.Event] = []
        for record, answer in zip(records, answers, strict=False):
            match record:
                case RecordRating():
                    if answer is RatingOutcome.NOT_ASSIGNED:
                        return Committed(instead=await self._elsewhere(chat, chat_id))
                    if answer is RatingOutcome.LOCKED:
                        log.info("an annotator's rating of a target seen once and done: not kept")
                case SetPaused() | RecordVotes():
                    pass
                case FinishTarget():
                    await self._plan(record.job, self._clock(), record.annotator)
                    then.append(await self._loaded(record.annotator, record.job))
                case ReopenLast():
                    then.append(
                        Reopened(informed(answer if isinstance(answer, AnnotationTask) else None))
                    )
                case WithdrawAnnotator():  # gone: their targets go to others at once
                    self._states.pop(chat, None)
                    self._dropped.pop(chat, None)
                    self._chats.pop(record.annotator, None)
                    log.info("an annotator withdrew from annotation job %r", record.job)
                    await self._plan(record.job, self._clock(), record.annotator)
                case _:
                    assert_never(record)
        return Committed(then)

    async def _say(self, chat_id: int, effect: AnnotatorEffect) -> int | None:
        """An outbound effect; the message id when the flow asked to remember it."""
        match effect:
            case fx.Send(text=text, buttons=buttons, remember=remember, format=form):
                message_id = await self._outbox.send(chat_id, text, buttons, form)
                return message_id if remember else None
            case fx.Edit(message_id=message_id, text=text, buttons=buttons):
                await self._outbox.edit(chat_id, message_id, text, buttons)
            case fx.RemoveButtons(message_id=message_id):
                await self._outbox.remove_buttons(chat_id, message_id)
            case fx.Toast():
                pass  # answered by ``_run``, which holds the tap's id
            case SetCommands(commands=commands):
                await self._outbox.chat_commands(chat_id, commands)
            case (
                RecordRating()
                | RecordVotes()
                | SetPaused()
                | FinishTarget()
                | ReopenLast()
                | WithdrawAnnotator()
            ):
                raise AssertionError(f"{type(effect).__name__} is committed, not said")
            case _:
                assert_never(effect)
        return None

    # --- planning, and work that reaches a waiting annotator ----------------------------

    async def _plan(self, job_id: str, now: float, finished_by: str) -> None:
        plan = await assign(self._store, self._bundle, self._bundle.jobs[job_id], now)
        self._hand_out(job_id, plan, now, finished_by)

    def _hand_out(
        self, job_id: str, plan: AssignmentPlan, now: float, finished_by: str | None = None
    ) -> None:
        """New work, written at once to whoever got it while waiting."""
        if plan.assign:
            self._watch.assigned(job_id, now)
        others = {annotator for *_, annotator, _ in plan.assign} - {finished_by}
        for annotator in sorted(others):
            self._spawn(self._push(job_id, annotator))

    def _spawn(self, work: Coroutine[Any, Any, None]) -> asyncio.Task[None]:
        task = asyncio.create_task(work)
        self._pushes.add(task)
        task.add_done_callback(self._pushes.discard)
        return task

    def on_clock(self, now: float) -> None:
        """The bot's tick: the jobs whose drop-out deadline passed are planned again (in a
        task of their own, one look at a time), so a silent annotator's open targets go to
        someone else even while nobody finishes anything."""
        if self._replanning is not None and not self._replanning.done():
            return
        due = self._watch.due(now)
        if due:
            self._replanning = self._spawn(self._replan(due, now))

    async def _replan(self, jobs: list[str], now: float) -> None:
        for job_id in jobs:
            try:
                job = self._bundle.jobs[job_id]
                plan, deadline = await assign_on_the_clock(self._store, self._bundle, job, now)
                self._hand_out(job_id, plan, now)
            except StudyDataError as error:  # not invited yet, or changing under the plan
                log.info("annotation job %r not planned on the clock: %s", job_id, error)
                deadline = now + RECHECK
            except StoreUnreachable:  # the bot reconnects, and plans again from the store
                return
            except Exception:
                log.exception("planning annotation job %r on the clock failed", job_id)
                deadline = now + RECHECK
            self._watch.planned(job_id, now, deadline)

    async def _push(self, job_id: str, annotator_id: str) -> None:
        """New targets for an annotator: shown at once when they are waiting for work."""
        found = [a for a in await self._store.annotators(job_id) if a.annotator_id == annotator_id]
        if not found or found[0].dropped or found[0].paused:
            return  # paused or gone: the work waits for them
        chat_id = self._chats.get(annotator_id)
        if chat_id is None and found[0].chat_key is not None:
            sealed = self._privacy.reachable(found[0].chat_key)
            chat_id = None if sealed is None else int(sealed)
        if chat_id is None:
            return  # not joined yet: the work is there when they start
        chat = self._privacy.annotator_chat(chat_id)
        try:
            async with self._lock(chat):
                state = self._states.get(chat)
                if state is not None and state.task is not None:
                    return  # busy: they reach it after the target in front of them
                queue: list[AnnotatorEvent | ev.Event] = []
                if state is None:
                    queue.append(Reloaded(annotator_id, job_id, False, None))
                task = await self._next_target(annotator_id)
                if task is None:
                    return
                queue.append(TargetLoaded(task, pushed=True))
                await self._run(chat, chat_id, queue)
        except StoreUnreachable:
            return  # the database is gone for now: the work is there when they come back
        except Exception:
            log.exception("new work could not reach an annotator")

    async def settled(self) -> None:
        """Wait for the writes to annotators still under way (tests, a clean stop)."""
        while self._pushes:
            await asyncio.gather(*self._pushes, return_exceptions=True)


_RECORDS = (RecordRating, RecordVotes, SetPaused, FinishTarget, ReopenLast, WithdrawAnnotator)
"""What of a step the store keeps (the rest is said)."""


class _AnnotatorTurn:
    """One delivery (or pushed work) of an annotator's chat: the flow's step, its records
    committed with the update in one store call, then what is said."""

    def __init__(
        self,
        runner: AnnotationRunner,
        chat: str,
        chat_id: int,
        queue: list[AnnotatorEvent | ev.Event],
    ) -> None:
        self._runner = runner
        self._chat = chat
        self.chat_id = chat_id
        self._queue = queue

    async def opening(self) -> Opening[AnnotatorEvent | ev.Event]:
        return Opening(self._queue)

    def step(self, event: AnnotatorEvent | ev.Event) -> Stepped[AnnotatorRecord, AnnotatorEffect]:
        runner = self._runner
        new, effects = step(runner._bundle, runner._states.get(self._chat), event, runner._clock())
        if new is not None:
            runner._states[self._chat] = new
            runner._chats[new.annotator] = self.chat_id
        else:  # withdrawn (or never known): the chat is nobody's now
            runner._states.pop(self._chat, None)
        records: list[AnnotatorRecord] = []
        said: list[AnnotatorEffect] = []
        for effect in effects:
            if isinstance(effect, _RECORDS):
                records.append(effect)
            else:
                said.append(effect)
        return Stepped(records, said)

    async def commit(
        self, stepped: Stepped[AnnotatorRecord, AnnotatorEffect], update_id: int | None
    ) -> Committed[AnnotatorEvent | ev.Event]:
        records = stepped.records
        answers = await self._runner._store.commit_annotator_step(records, update_id)
        return await self._runner._answered(self._chat, self.chat_id, records, answers)

    async def carry_out(self, effect: AnnotatorEffect) -> AnnotatorEvent | ev.Event | None:
        sent = await self._runner._say(self.chat_id, effect)
        return ev.MessageSent(sent) if sent is not None else None

    async def delivered(self) -> None:
        """Nothing kept until delivered: a restart shows the item in front of them again."""

    async def unreachable(self, error: ParticipantUnreachable) -> None:
        log.info("an annotator cannot be reached: %s", error)

    async def failed(self, update_id: int | None) -> None:
        log.exception("handling an annotator's update failed")
        if update_id is not None:
            await self._runner._handled(self._chat, update_id)


def _returns(event: AnnotatorEvent | ev.Event) -> bool:
    """A message or command (not a tap, whose rating the store refuses when the target is
    not theirs): what a silent annotator comes back with."""
    return _asks_for_work(event) or isinstance(
        event, ev.UnknownCommand | ev.HelpCommand | ev.DoneCommand | ev.WithdrawCommand
    )


def _withdrawing(event: AnnotatorEvent | ev.Event) -> bool:
    """``/withdraw`` or an answer to it: what a dropped annotator may still do."""
    if isinstance(event, ev.ButtonTapped):
        return isinstance(event.tap, WithdrawTap)
    return isinstance(event, ev.WithdrawCommand)


def _asks_for_work(event: AnnotatorEvent | ev.Event) -> bool:
    return isinstance(event, ev.TextReceived) or (
        isinstance(event, ev.StartCommand) and event.code is None
    )
