"""The store's methods, written once over SQL that every backend runs.

A backend (``bot.store.sqlite``, ``bot.store.postgres``) says how a batch of writes is
committed (``_commit``: the jobs, in order, in one transaction on its writer connection) and
how a read is made (``_read``: one consistent snapshot on its reader connection), and the few
things that are its own (``changes``, ``read_snapshot``, ``backup``, what an erasure must
wipe besides the rows). Everything else, every role's method and the group commit, is here:
the backends are peers, not ports.

Writes go through one writer task that commits the jobs waiting at that moment together
(group commit): each caller still returns only once its rows are durable, and two hundred
participants cost a handful of transactions instead of two hundred.

The modules that write an engine step's records (``applying``, ``annotation_flow``) are
imported by the methods that write them: a store opened to read (a report) never loads the
engine.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import logging
from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from bot.core.annotation import (
    AnnotatableSession,
    AnnotationJobRecord,
    AnnotationState,
    AnnotationTarget,
    AnnotationTask,
    Annotator,
    AssignmentPlan,
)
from bot.core.errors import StoreError, StoreUnreachable
from bot.core.vocabulary import (
    AnnotationLevel,
    AnnotatorClaim,
    CommandKind,
    CommandOutcome,
    ExperimenterRole,
    Gate,
    GateScope,
    Invitation,
    Origin,
    PaymentStatus,
    RatingOutcome,
    WrittenKind,
)
from bot.store import (
    accounts,
    annotating,
    annotation_ratings,
    annotator_erasure,
    annotator_payments,
    erasure,
    judges,
    loading,
    reads,
    recruiting,
    stress,
    written_files,
)
from bot.store import votes as votes_rows
from bot.store.definition import masked_definition
from bot.store.model import (
    AnnotationProgress,
    AnnotationRating,
    AnnotatorAnswer,
    AnnotatorErased,
    BulkRows,
    Command,
    Erased,
    ErasureRecord,
    ExperimenterAccount,
    ImportContext,
    ImportedAnswer,
    ImportedRating,
    ImportOutcome,
    JudgeCall,
    JudgeCost,
    JudgementRecord,
    LiveParticipant,
    MoneyStep,
    PaymentRecord,
    PlatformArrival,
    RatingsImported,
    SessionRecord,
    SignInLink,
    SnapshotInfo,
    SnapshotSink,
    StepCommit,
    StoredParticipant,
    SystemHealth,
    SystemSummary,
    Transcript,
    VotesImported,
    WrittenFile,
)
from bot.store.sql import Sql
from bot.store.stress_records import Judgement, Replay, Review, StressResult, StressTest
from bot.store.transaction import Tx

if TYPE_CHECKING:
    from bot.core.phenomena import StressType
    from bot.core.stress import Perturbation, Utterance
    from bot.core.votes import Vote
    from bot.engine import effects as fx
    from bot.engine.annotating.model import AnnotatorRecord

log = logging.getLogger(__name__)

T = TypeVar("T")
Job = Callable[[Tx], Any]
"""A write: plain, synchronous SQL on the writer's connection, inside its transaction."""
_BATCH = 500
REDELIVERY_WINDOW = 24 * 3600.0
"""Seconds Telegram keeps an update the bot has not confirmed: only within them can an id
come again as a redelivery (the Bot API documents "not kept longer than 24 hours")."""


class RelationalStore(ABC):
    """:class:`bot.store.interface.StudyStore` over a backend's two connections."""

    def __init__(self, name: str, clock: Callable[[], float], *, writable: bool) -> None:
        self.path = name
        """Where the study is, as it may be printed (a file, or a URL without password)."""
        self._clock = clock
        self._jobs: asyncio.Queue[tuple[Job, asyncio.Future[Any]] | None] = asyncio.Queue()
        self._writer: asyncio.Task[None] | None = None
        self._closed = False
        self._lost = asyncio.Event()
        if writable:
            self._writer = asyncio.create_task(self._write_loop(), name="ozlab-store-writer")

    # --- what each backend says ------------------------------------------------------

    @abstractmethod
    async def _commit(self, jobs: list[Job]) -> list[Any]:
        """Run ``jobs`` in order in one transaction on the writer; their results."""

    @abstractmethod
    async def _read(self, query: Callable[[Sql], T]) -> T:
        """``query`` inside one short, consistent read transaction on the reader."""

    @abstractmethod
    async def _close_connections(self) -> None:
        """Close the connections, once the writes asked for are done."""

    @abstractmethod
    async def _after_erasure(self) -> None:
        """Wipe what the backend keeps of deleted rows beside the live ones."""

    @abstractmethod
    async def changes(self) -> int:
        """A number that differs whenever someone else committed since it was last read."""

    @abstractmethod
    async def read_snapshot(self, sink: SnapshotSink) -> SnapshotInfo:
        """Every table analytics reads, from one consistent snapshot, a chunk at a time."""

    @abstractmethod
    async def backup(self, target: Path) -> None:
        """A consistent copy of the study, written to the SQLite file ``target``."""

    # --- lifetime --------------------------------------------------------------------

    async def close(self) -> None:
        """Finish the writes already asked for, then close (a second call does nothing)."""
        if self._closed:
            return
        self._closed = True
        if self._writer is not None and not self._writer.done():
            await self._jobs.put(None)
            await self._writer
        await self._close_connections()

    async def lost(self) -> None:
        """Returns once the database can no longer be reached through this store (its
        server restarted or stopped): nothing more is written through it."""
        await self._lost.wait()

    def _connection_lost(self, error: BaseException) -> StoreUnreachable:
        """What a backend raises when its connection is gone: the store tells ``lost``."""
        self._lost.set()
        said = " ".join(str(error).split())  # a server's message has lines of detail
        return StoreUnreachable(f"{self.path}: the connection to the database was lost ({said})")

    async def __aenter__(self) -> RelationalStore:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    # --- the writer ----------------------------------------------------------------

    async def write(self, job: Callable[[Tx], T]) -> T:
        """Run ``job`` inside a committed transaction; returns once it is durable."""
        future: asyncio.Future[T] = asyncio.get_running_loop().create_future()
        await self._jobs.put((job, future))
        return await future

    async def _write_loop(self) -> None:
        closing = False
        while not closing:
            first = await self._jobs.get()
            if first is None:
                return
            batch = [first]
            while not self._jobs.empty() and len(batch) < _BATCH:
                queued = self._jobs.get_nowait()
                if queued is None:
                    closing = True
                    break
                batch.append(queued)
            try:
                results = await self._commit([job for job, _ in batch])
            except StoreUnreachable as error:  # no job is at fault: each is told so
                for _, future in batch:
                    if not future.done():
                        future.set_exception(error)
                continue
            except Exception:
                # One bad job must not sink the others: run each alone to isolate it.
                for job, future in batch:
                    try:
                        (result,) = await self._commit([job])
                    except Exception as error:
                        if not isinstance(error, StoreError):  # that one is said in one line
                            log.exception("a database write failed")
                        if not future.done():
                            future.set_exception(error)
                    else:
                        if not future.done():
                            future.set_result(result)
                continue
            for (_, future), result in zip(batch, results, strict=True):
                if not future.done():
                    future.set_result(result)

    async def _write(self, job: Callable[[Tx], T]) -> T:
        if self._writer is None:
            raise StoreError(f"{self.path} was opened read-only: nothing can be written")
        return await self.write(job)

    # --- the bot: the hot path --------------------------------------------------------

    async def record_definition(self, study_id: str, definition: str) -> bool:
        """Keep the study as it ran, header values masked; True when the definition is new."""
        definition = masked_definition(definition)
        digest = hashlib.sha256(definition.encode()).hexdigest()
        now = self._clock()

        def job(tx: Tx) -> bool:
            latest = tx.conn.execute(
                "SELECT digest FROM studies WHERE study_id = ? ORDER BY id DESC LIMIT 1",
                (study_id,),
            ).fetchone()
            if latest is not None and latest[0] == digest:
                return False
            tx.conn.execute(
                "INSERT INTO studies (study_id, loaded_at, definition, digest) VALUES (?,?,?,?)",
                (study_id, now, definition, digest),
            )
            return True

        return await self._write(job)

    async def remember_updates(self, updates: Sequence[tuple[int, str]]) -> set[int]:
        """Store sealed updates; returns the ids that were new (a redelivery is not).

        A redelivery is an id seen within Telegram's retention of unconfirmed updates; an
        id handled longer ago than that is a new update (Telegram numbers on at random
        after a week without updates), which takes the old row's place."""
        now = self._clock()

        def job(tx: Tx) -> Callable[[], set[int]]:
            stored = [
                (
                    update_id,
                    tx.conn.execute(
                        "INSERT INTO inbox (update_id, received_at, payload) VALUES (?,?,?)"
                        " ON CONFLICT (update_id) DO UPDATE SET"
                        " received_at = excluded.received_at, payload = excluded.payload,"
                        " handled_at = NULL"
                        " WHERE inbox.handled_at IS NOT NULL AND inbox.received_at < ?",
                        (update_id, now, payload, now - REDELIVERY_WINDOW),
                    ),
                )
                for update_id, payload in updates
            ]
            # the answers read once the batch committed: no round trip in its middle
            return lambda: {update_id for update_id, cursor in stored if cursor.rowcount}

        return (await self._write(job))()

    async def kept_file(self, digest: str) -> bytes | None:
        def query(conn: Sql) -> bytes | None:
            row = conn.execute(
                "SELECT data FROM media_files WHERE digest = ?", (digest,)
            ).fetchone()
            return None if row is None else bytes(row[0])

        return await self._read(query)

    async def pending_updates(self) -> list[tuple[int, str]]:
        def query(conn: Sql) -> list[tuple[int, str]]:
            return [
                (int(update_id), str(payload))
                for update_id, payload in conn.execute(
                    "SELECT update_id, payload FROM inbox WHERE handled_at IS NULL"
                    " ORDER BY update_id"
                ).fetchall()
            ]

        return await self._read(query)

    async def highest_update_id(self) -> int:
        def query(conn: Sql) -> int:
            row = conn.execute("SELECT max(update_id) FROM inbox").fetchone()
            return int(row[0]) if row and row[0] is not None else 0

        return await self._read(query)

    async def load_participants(self, study_id: str) -> list[StoredParticipant]:
        """The participants the bot resumes: those who came through Telegram (imported
        ones answered on paper and have no state to resume)."""

        def query(conn: Sql) -> list[StoredParticipant]:
            rows = conn.execute(
                "SELECT id, chat_key, state, undelivered FROM participants"
                " WHERE study_id = ? AND origin = ?",
                (study_id, Origin.TELEGRAM.value),
            ).fetchall()
            return [StoredParticipant(*row) for row in rows]

        return await self._read(query)

    async def commit_step(self, commit: StepCommit) -> None:
        """The step's state, status, rows and consumed update, durable when this returns."""
        from bot.store import applying

        now = self._clock()
        await self._write(lambda tx: applying.commit_step(tx, commit, now))

    def delivered(self, participant_id: str, *, keep_chat: bool = True) -> None:
        """The messages of the last step went out. Not awaited: if the bot dies first, they
        are sent once more at start-up (at least once, never lost)."""

        def job(tx: Tx) -> None:
            tx.conn.execute(
                "UPDATE participants SET undelivered = NULL,"
                " chat_key = CASE WHEN ? = 1 THEN chat_key END WHERE id = ?",
                (keep_chat, participant_id),
            )

        future: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        future.add_done_callback(lambda done: done.cancelled() or done.exception())
        self._jobs.put_nowait((job, future))

    async def pending_commands(self, after: int) -> list[Command]:
        """Commands above ``after`` not applied yet, in order; one that no ozlab could apply
        (an unknown kind) is settled as rejected here."""
        from bot.store import applying

        commands, unreadable = await self._read(lambda c: reads.pending_commands(c, after))
        if unreadable:
            now = self._clock()
            rejected = CommandOutcome.REJECTED.value

            def job(tx: Tx) -> None:
                for command_id in unreadable:
                    applying.settle_command(tx.conn, command_id, rejected, now)

            await self._write(job)
        return commands

    async def gates(self) -> dict[GateScope, Gate]:
        return await self._read(reads.gates)

    async def settle(self, records: Sequence[fx.Record]) -> None:
        """Rows that belong to no participant (a command's outcome, a study's gate)."""
        from bot.store import applying

        now = self._clock()

        def job(tx: Tx) -> None:
            for record in records:
                applying.apply(tx, "", "", record, now)

        await self._write(job)

    async def check_invitation(self, code: str | None, participant_id: str) -> Invitation:
        return await self._read(lambda c: recruiting.check_invitation(c, code, participant_id))

    # --- recruitment --------------------------------------------------------------------

    async def add_invitations(self, codes: Sequence[str]) -> list[str]:
        now = self._clock()
        return await self._write(lambda tx: recruiting.add_invitations(tx.conn, codes, now))

    async def payments(self) -> list[PaymentRecord]:
        return await self._read(recruiting.payments)

    async def tasks_done(self) -> dict[int, tuple[int, int]]:
        return await self._read(recruiting.tasks_done)

    async def failed_checks(self) -> dict[int, int]:
        return await self._read(recruiting.failed_checks)

    async def note_submissions(self, seen: Sequence[tuple[int, str, str]]) -> None:
        await self._write(lambda tx: recruiting.note_submissions(tx.conn, seen))

    async def note_approvals(self, rows: Sequence[int]) -> None:
        now = self._clock()
        await self._write(lambda tx: recruiting.note_approvals(tx.conn, rows, now))

    async def record_intent(
        self,
        study_id: str,
        platform: str,
        platform_study: str,
        action: str,
        request: str,
        bulk_id: str | None,
    ) -> int:
        now, study = self._clock(), study_id
        return await self._write(
            lambda tx: recruiting.record_intent(
                tx.conn, study, platform, platform_study, action, request, bulk_id, now
            )
        )

    async def record_outcome(
        self, step_id: int, outcome: str, bulk_id: str | None, answer: str
    ) -> None:
        now = self._clock()
        await self._write(
            lambda tx: recruiting.record_outcome(tx.conn, step_id, outcome, bulk_id, answer, now)
        )

    async def money_path(self, platform: str) -> list[MoneyStep]:
        return await self._read(lambda c: recruiting.money_path(c, platform))

    # --- the console --------------------------------------------------------------------

    async def live_participants(self) -> list[LiveParticipant]:
        """Everyone who came through Telegram and where they stand, in arrival order."""
        return await self._read(reads.live_participants)

    async def waiting_replies(self) -> list[LiveParticipant]:
        """Participants whose reply is held for a wizard, oldest first."""
        return await self._read(lambda c: reads.live_participants(c, held_only=True))

    async def sessions(self, *, count_exchanges: bool = False) -> list[SessionRecord]:
        return await self._read(lambda c: reads.sessions(c, count_exchanges=count_exchanges))

    async def transcript(self, session_id: str) -> Transcript | None:
        return await self._read(lambda c: reads.transcript(c, session_id))

    async def latest_definitions(self) -> dict[str, str]:
        """The latest stored definition (JSON) of each study, by study id."""
        return await self._read(reads.latest_definitions)

    async def append_command(
        self,
        wizard: str,
        kind: CommandKind,
        session_id: str | None = None,
        payload: Mapping[str, object] | None = None,
    ) -> int:
        """A command for the bot (applied once, in order); returns its id."""
        now, data = self._clock(), json.dumps(dict(payload or {}))

        def job(tx: Tx) -> int:
            return int(
                tx.conn.execute(
                    "INSERT INTO commands (at, wizard, kind, session_id, payload)"
                    " VALUES (?,?,?,?,?) RETURNING id",
                    (now, wizard, kind.value, session_id, data),
                ).fetchone()[0]
            )

        return await self._write(job)

    async def command_outcomes(
        self, command_ids: Sequence[int]
    ) -> dict[int, CommandOutcome | None]:
        """What the bot made of each command; None while it has not come to it."""
        if not command_ids:
            return {}
        return await self._read(lambda c: reads.command_outcomes(c, command_ids))

    async def system_health(self, since: float) -> list[SystemHealth]:
        return await self._read(lambda c: reads.system_health(c, since))

    # --- analytics, importers, the demo -------------------------------------------------

    async def import_context(self, study_id: str) -> ImportContext:
        return await self._read(lambda c: reads.import_context(c, study_id))

    async def import_answers(
        self,
        study_id: str,
        answers: Sequence[ImportedAnswer],
        source: Mapping[str, object],
        *,
        dry_run: bool = False,
    ) -> ImportOutcome:
        """Answers collected outside Telegram, all or none (never on a dry run), with an
        event that records the import; new participants are marked as imported."""
        now = self._clock()
        return await self._write(
            lambda tx: loading.import_answers(tx, study_id, answers, source, now, dry_run=dry_run)
        )

    async def bulk_load(self, rows: BulkRows) -> None:
        """Made-up rows for tests and benchmarks, in one transaction."""
        await self._write(lambda tx: loading.bulk_load(tx, rows))

    async def system_summaries(self) -> list[SystemSummary]:
        """Per system: sessions, successes, mean exchanges and item means (``ozlab demo``)."""
        return await self._read(reads.system_summaries)

    # --- linguistic stress tests (bot.store.stress) ----------------------------------

    async def stress_utterances(self, session_ids: Sequence[str] = ()) -> list[Utterance]:
        return await self._read(lambda c: stress.utterances(c, session_ids))

    async def add_stress_tests(
        self, perturbations: Sequence[Perturbation], review: Review
    ) -> list[int]:
        now = self._clock()
        return await self._write(lambda tx: stress.add_tests(tx.conn, perturbations, review, now))

    async def review_stress_test(
        self, test_id: int, review: Review, perturbed: str | None = None
    ) -> bool:
        return await self._write(lambda tx: stress.review_test(tx.conn, test_id, review, perturbed))

    async def stress_tests(
        self, types: Sequence[StressType] = (), review: Review | None = None
    ) -> list[StressTest]:
        return await self._read(lambda c: stress.tests(c, types, review))

    async def replayed_stress_tests(self) -> set[tuple[int, str]]:
        return await self._read(stress.replayed)

    async def record_replay(self, replay: Replay, verdict: Judgement | None = None) -> bool:
        return await self._write(lambda tx: stress.record_replay(tx.conn, replay, verdict))

    async def record_stress_verdict(self, judgement: Judgement) -> None:
        await self._write(lambda tx: stress.record_judgement(tx.conn, judgement))

    async def stress_results(self) -> list[StressResult]:
        """Every replayed test with its verdicts; a file from before the stress tables
        (analytics reads older schemas) has none."""
        return await self._read(stress.results_if_any)

    # --- the operator -------------------------------------------------------------------

    async def erase_participant(
        self,
        participant_id: str,
        update_ids: Sequence[int] = (),
        *,
        command_id: int | None = None,
    ) -> Erased | None:
        """Everything of one participant, in one transaction, then wiped from where the
        backend keeps deleted rows (``_after_erasure``); None when nothing of theirs was
        stored."""
        now = self._clock()
        erased = await self._write(
            lambda tx: erasure.erase_participant(
                tx.conn, participant_id, update_ids, command_id=command_id, now=now
            )
        )
        await self._after_erasure()
        return erased

    async def erase_annotator(
        self, annotator_id: str, update_ids: Sequence[int] = ()
    ) -> AnnotatorErased | None:
        now = self._clock()
        erased = await self._write(
            lambda tx: annotator_erasure.erase_annotator(tx.conn, annotator_id, update_ids, now=now)
        )
        await self._after_erasure()
        return erased

    async def erasure_ledger(self) -> list[ErasureRecord]:
        return await self._read(erasure.ledger)

    async def drop_chat_keys(self) -> int:
        dropped = await self._write(lambda tx: erasure.drop_chat_keys(tx.conn))
        await self._after_erasure()
        return dropped

    # --- pilots -------------------------------------------------------------

    async def mark_simulated(self, participant_ids: Sequence[str]) -> int:
        return await self._simulated("participants", participant_ids)

    async def mark_simulated_annotators(self, annotator_ids: Sequence[str]) -> int:
        return await self._simulated("annotators", annotator_ids)

    async def _simulated(self, table: str, ids: Sequence[str]) -> int:
        """Rows of ``table`` (participants, annotators) marked as a simulation's: a demo
        replaces those, never people's. How many were found."""
        rows = list(ids)

        def job(tx: Tx) -> Callable[[], int]:
            marked = [
                tx.conn.execute(f"UPDATE {table} SET simulated = 1 WHERE id = ?", (row,))
                for row in rows
            ]
            return lambda: sum(cursor.rowcount for cursor in marked)

        return (await self._write(job))()

    async def inactive_since(self, study_id: str, before: float) -> list[str]:
        return await self._read(lambda c: erasure.expired_participants(c, study_id, before))

    # --- annotation: the SQL is in bot.store.annotating ------------------------

    async def save_annotation_job(self, job: AnnotationJobRecord) -> None:
        now = self._clock()
        await self._write(lambda tx: annotating.save_job(tx.conn, job, now))

    async def annotation_jobs(self) -> list[AnnotationJobRecord]:
        return await self._read(annotating.annotation_jobs)

    async def annotatable_sessions(self) -> list[AnnotatableSession]:
        return await self._read(annotation_ratings.annotatable_sessions)

    async def add_annotation_targets(self, job: str, targets: Sequence[AnnotationTarget]) -> int:
        return await self._write(lambda tx: annotating.add_targets(tx.conn, job, targets))

    async def annotation_targets(self, job: str) -> list[AnnotationTarget]:
        return await self._read(lambda c: annotating.targets(c, job))

    async def add_annotators(
        self, job: str, annotators: Sequence[tuple[str, str | None]]
    ) -> list[str]:
        now = self._clock()
        return await self._write(
            lambda tx: annotating.add_annotators(tx.conn, job, annotators, Origin.TELEGRAM, now)
        )

    async def annotators(self, job: str | None = None) -> list[Annotator]:
        return await self._read(lambda c: annotating.annotators(c, job))

    async def claim_annotator(
        self, code: str, chat_hash: str, chat_key: str | None = None
    ) -> tuple[AnnotatorClaim, Annotator | None]:
        now = self._clock()
        return await self._write(
            lambda tx: annotating.claim_annotator(tx.conn, code, chat_hash, chat_key, now)
        )

    # --- annotators recruited on a platform -------------------------------------------

    async def join_from_platform(
        self, arrival: PlatformArrival, pseudonyms: Sequence[str]
    ) -> tuple[AnnotatorClaim, Annotator | None]:
        now = self._clock()
        return await self._write(
            lambda tx: annotator_payments.join_from_platform(tx.conn, arrival, pseudonyms, now)
        )

    async def set_annotator_payment(
        self, annotator_id: str, status: PaymentStatus
    ) -> PaymentStatus | None:
        now = self._clock()
        return await self._write(
            lambda tx: annotator_payments.set_payment_status(tx.conn, annotator_id, status, now)
        )

    async def targets_rated(self, job: str) -> dict[int, int]:
        return await self._read(lambda c: annotator_payments.targets_rated(c, job))

    async def annotator_for_chat(self, chat_hash: str) -> Annotator | None:
        return await self._read(lambda c: annotating.annotator_for_chat(c, chat_hash))

    async def set_annotator_paused(self, annotator_id: str, paused: bool) -> bool:
        now = self._clock()
        return await self._write(
            lambda tx: annotating.set_paused(tx.conn, annotator_id, paused, now)
        )

    async def drop_annotator(self, annotator_id: str) -> bool:
        now = self._clock()
        return await self._write(lambda tx: annotating.drop_annotator(tx.conn, annotator_id, now))

    async def annotation_state(self, job: str) -> AnnotationState | None:
        return await self._read(lambda c: annotating.annotation_state(c, job))

    async def apply_assignment_plan(self, job: str, plan: AssignmentPlan, version: int) -> bool:
        now = self._clock()
        return await self._write(lambda tx: annotating.apply_plan(tx.conn, job, plan, version, now))

    async def next_annotation_target(self, annotator_id: str) -> AnnotationTask | None:
        from bot.store import annotation_flow

        return await self._read(lambda c: annotation_flow.next_target(c, annotator_id))

    async def holds_annotation_target(
        self, annotator_id: str, job: str, target: str, level: AnnotationLevel
    ) -> bool:
        from bot.store import annotation_flow

        return await self._read(
            lambda c: annotation_flow.holds_target(c, annotator_id, job, target, level)
        )

    async def record_annotation(
        self,
        annotator_id: str,
        job: str,
        target: str,
        level: AnnotationLevel,
        instrument_id: str,
        item_id: str,
        value: int | None = None,
        label: str | None = None,
        text: str | None = None,
    ) -> RatingOutcome:
        from bot.store import annotation_flow

        now, answer = self._clock(), (value, label, text)
        return await self._write(
            lambda tx: annotation_flow.record_rating(
                tx.conn, annotator_id, job, target, level, instrument_id, item_id, answer, now
            )
        )

    async def finish_annotation_target(
        self, annotator_id: str, job: str, target: str, level: AnnotationLevel
    ) -> bool:
        from bot.store import annotation_flow

        now = self._clock()
        return await self._write(
            lambda tx: annotation_flow.finish_target(tx.conn, annotator_id, job, target, level, now)
        )

    async def commit_annotator_step(
        self, records: Sequence[AnnotatorRecord], update_id: int | None
    ) -> list[AnnotatorAnswer]:
        from bot.engine.annotating.model import WithdrawAnnotator
        from bot.store import annotation_flow

        now = self._clock()
        answers = await self._write(
            lambda tx: annotation_flow.commit_step(tx.conn, records, update_id, now)
        )
        if any(isinstance(record, WithdrawAnnotator) for record in records):
            await self._after_erasure()
        return answers

    async def reopen_annotation_target(self, annotator_id: str) -> AnnotationTask | None:
        from bot.store import annotation_flow

        now = self._clock()
        return await self._write(lambda tx: annotation_flow.reopen_last(tx.conn, annotator_id, now))

    async def annotation_progress(self) -> list[AnnotationProgress]:
        from bot.store import annotation_flow

        return await self._read(annotation_flow.progress)

    async def annotation_ratings(self) -> list[AnnotationRating]:
        return await self._read(annotation_ratings.ratings)

    async def import_annotations(
        self,
        job: AnnotationJobRecord,
        ratings: Sequence[ImportedRating],
        *,
        dry_run: bool = False,
        origin: Origin = Origin.IMPORT,
    ) -> RatingsImported:
        now = self._clock()
        return await self._write(
            lambda tx: annotation_ratings.import_ratings(
                tx.conn, job, ratings, now, dry_run=dry_run, origin=origin
            )
        )

    async def judge_tasks(
        self, job: str, judge: str
    ) -> list[tuple[AnnotationTask, frozenset[str]]]:
        from bot.store import annotation_flow

        return await self._read(lambda c: annotation_flow.judge_tasks(c, job, judge))

    # --- pairwise votes: the SQL is in bot.store.votes ------------------------------------

    async def record_votes(
        self,
        study_id: str,
        votes: Sequence[Vote],
        update_id: int | None = None,
        *,
        origin: Origin = Origin.TELEGRAM,
    ) -> int:
        from bot.store import applying

        now, kept = self._clock(), list(votes)

        def job(tx: Tx) -> int:
            new = votes_rows.record(tx.conn, study_id, kept, origin, now)
            if update_id is not None:
                applying.consume(tx.conn, update_id, now)
            return new

        return await self._write(job)

    async def votes(self) -> list[tuple[str, Vote]]:
        return await self._read(votes_rows.stored)

    async def import_votes(
        self, study_id: str, votes: Sequence[tuple[int, Vote]], *, dry_run: bool = False
    ) -> VotesImported:
        now, rows = self._clock(), list(votes)
        return await self._write(
            lambda tx: votes_rows.import_votes(tx.conn, study_id, rows, now, dry_run=dry_run)
        )

    # --- model judges: the SQL is in bot.store.judges ---------------------------------

    async def judge_call(self, key: str) -> JudgeCall | None:
        return await self._read(lambda c: judges.cached(c, key))

    async def keep_judge_call(self, call: JudgeCall) -> bool:
        now = self._clock()
        return await self._write(lambda tx: judges.keep_call(tx.conn, call, now))

    async def keep_judgements(self, judgements: Sequence[JudgementRecord]) -> None:
        kept = list(judgements)
        await self._write(lambda tx: judges.keep_judgements(tx.conn, kept))

    async def judgements(self) -> list[JudgementRecord]:
        return await self._read(judges.judgements)

    async def judge_costs(self) -> list[JudgeCost]:
        return await self._read(judges.costs)

    # --- the register of files written: the SQL is in bot.store.written_files ---------

    async def register_files(self, kind: WrittenKind, paths: Sequence[str]) -> None:
        now, kept = self._clock(), list(paths)
        await self._write(lambda tx: written_files.register(tx.conn, kind, kept, now))

    async def registered_files(self) -> list[WrittenFile]:
        return await self._read(written_files.registered)

    # --- the experimenters' accounts: the SQL is in bot.store.accounts -----------------

    async def save_experimenter(
        self, name: str, role: ExperimenterRole, password_hash: str
    ) -> bool:
        now = self._clock()
        return await self._write(lambda tx: accounts.save(tx.conn, name, role, password_hash, now))

    async def experimenter(self, name: str) -> ExperimenterAccount | None:
        return await self._read(lambda conn: accounts.one(conn, name))

    async def experimenters(self) -> list[ExperimenterAccount]:
        return await self._read(accounts.every)

    async def remove_experimenter(self, name: str) -> bool:
        return await self._write(lambda tx: accounts.remove(tx.conn, name))

    async def failed_sign_in(self, name: str, lock_after: int, lock_for: float) -> float | None:
        now = self._clock()
        return await self._write(
            lambda tx: accounts.failed(tx.conn, name, lock_after, lock_for, now)
        )

    async def good_sign_in(self, name: str) -> None:
        await self._write(lambda tx: accounts.succeeded(tx.conn, name))

    async def add_sign_in_link(
        self, token_hash: str, name: str | None, role: ExperimenterRole, expires_at: float
    ) -> None:
        await self._write(lambda tx: accounts.add_link(tx.conn, token_hash, name, role, expires_at))

    async def use_sign_in_link(self, token_hash: str) -> SignInLink | None:
        now = self._clock()
        return await self._write(lambda tx: accounts.use_link(tx.conn, token_hash, now))
