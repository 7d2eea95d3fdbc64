"""The store as roles: everything the bot, the console, analytics and importers ask of the
study database, cut into small protocols the way aiogram cuts ``BaseStorage`` from
``BaseEventIsolation``. A client names the roles it uses (the console a
:class:`ConsoleReadModel`, analytics an :class:`AnalyticsSnapshot`); a backend implements
them all, which :class:`StudyStore` says in one name, and ``bot.store.open_store`` picks it
by the database's URL. SQL lives only behind the roles (the SQLite backend and its
migrations); a PostgreSQL backend implements the same methods and passes the same contract
suite (tests/store_contract/, one module per role).

Nothing in a role means one backend: no file, no pragma, no connection. ``changes`` is a
number that moves on every commit by someone else; ``backup`` writes a copy to a file
whatever keeps the study; ``delivered`` is the one synchronous method, on purpose: it only
asks for a write that nothing waits for, which any backend can queue without making the
hot path await it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from bot.core.annotation import (
    AnnotatableSession,
    AnnotationJobRecord,
    AnnotationState,
    AnnotationTarget,
    AnnotationTask,
    Annotator,
    AssignmentPlan,
)
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

__all__ = [
    "ROLES",
    "AnalyticsSnapshot",
    "AnnotationPlanning",
    "AnnotatorRecruitment",
    "AnnotatorWork",
    "ConsoleReadModel",
    "FileRegister",
    "HotPath",
    "Imports",
    "OperatorTasks",
    "PairwiseVotes",
    "Recruitment",
    "StoreLifetime",
    "StressTests",
    "StudyDefinitions",
    "StudyStore",
]

if TYPE_CHECKING:
    from bot.core.phenomena import StressType
    from bot.core.stress import Perturbation, Utterance
    from bot.core.votes import Vote
    from bot.engine.annotating.model import AnnotatorRecord
    from bot.engine.effects import Record
    from bot.store.stress_records import Judgement, Replay, Review, StressResult, StressTest


class StoreLifetime(Protocol):
    """Whoever opened a store lets go of it: the one method every backend shares."""

    async def close(self) -> None:
        """Finish the writes already asked for, then let go of the database."""
        ...

    async def lost(self) -> None:
        """Returns once the database can no longer be reached through this store (a
        server restarted): the bot opens another (a file never returns)."""
        ...


class StudyDefinitions(Protocol):
    """The study as it ran, kept with its data: written when the bot starts on a
    study, read by every command that needs what the study said."""

    async def record_definition(self, study_id: str, definition: str) -> bool:
        """Keep the study as it ran; True when this definition is new."""
        ...

    async def latest_definitions(self) -> dict[str, str]:
        """The latest stored definition (JSON, headers masked) of each study."""
        ...


class HotPath(Protocol):
    """The bot's hot path: the durable inbox, a participant's step committed with the
    update it consumed, and the console's commands taken in order."""

    async def remember_updates(self, updates: Sequence[tuple[int, str]]) -> set[int]:
        """Store sealed updates before Telegram forgets them; the ids that were new (an id
        handled more than Telegram's 24 hours of redelivery ago is new again)."""
        ...

    async def pending_updates(self) -> list[tuple[int, str]]:
        """Updates stored but not yet handled (after a crash), in order."""
        ...

    async def highest_update_id(self) -> int:
        """The highest update id the inbox has seen (0 for none): a local Bot API emulator
        started on this database numbers its updates after it."""
        ...

    async def load_participants(self, study_id: str) -> list[StoredParticipant]:
        """The participants to resume: only those who came through Telegram."""
        ...

    async def kept_file(self, digest: str) -> bytes | None:
        """The bytes of a voice note or photo the study keeps, by content hash (a system
        asked again after a restart is given it); None when it is not kept."""
        ...

    async def commit_step(self, commit: StepCommit) -> None:
        """The step's state, rows and consumed update (with those of ``commit.earlier``,
        stamped at its own moment), one transaction, durable when this returns."""
        ...

    def delivered(self, participant_id: str, *, keep_chat: bool = True) -> None:
        """The messages of the last step went out (asked for, not awaited: at least once);
        without ``keep_chat`` the sealed chat id, kept only to deliver them, is dropped too."""
        ...

    async def pending_commands(self, after: int) -> list[Command]:
        """Commands with an id above ``after`` not applied yet, in order (one whose kind
        this ozlab does not know is settled as rejected by the store)."""
        ...

    async def settle(self, records: Sequence[Record]) -> None:
        """Rows that belong to no participant (a command's outcome, a study's gate)."""
        ...


class ConsoleReadModel(Protocol):
    """The console's read model (where everyone stands, the gates it set) and the
    commands it appends for the bot: the two processes meet here."""

    async def changes(self) -> int:
        """A number that moves whenever someone else committed since it was last read:
        a console polling an idle study re-reads nothing."""
        ...

    async def live_participants(self) -> list[LiveParticipant]:
        """Everyone who came through Telegram and where they stand, in arrival order."""
        ...

    async def waiting_replies(self) -> list[LiveParticipant]:
        """Participants whose reply is held for a wizard, oldest first."""
        ...

    async def sessions(self, *, count_exchanges: bool = False) -> list[SessionRecord]:
        """Every session, in the order they started."""
        ...

    async def transcript(self, session_id: str) -> Transcript | None:
        """A session's exchanges, events and end, each with its place in commit order."""
        ...

    async def gates(self) -> dict[GateScope, Gate]:
        """The gates of whole studies and systems, as the console last set them."""
        ...

    async def append_command(
        self,
        wizard: str,
        kind: CommandKind,
        session_id: str | None = None,
        payload: Mapping[str, object] | None = None,
    ) -> int:
        """An experimenter's command for the bot (applied once, in order); its id."""
        ...

    async def command_outcomes(
        self, command_ids: Sequence[int]
    ) -> dict[int, CommandOutcome | None]:
        """What the bot made of each command; None while it has not come to it."""
        ...

    async def system_health(self, since: float) -> list[SystemHealth]:
        """Per system, the exchanges begun since ``since`` (a time on the store's clock):
        how many, how many failed, and their latency's median and 95th percentile."""
        ...


class AnalyticsSnapshot(Protocol):
    """What analytics and the demo's summary read: never the live tables row by
    row, always one consistent snapshot."""

    async def read_snapshot(self, sink: SnapshotSink) -> SnapshotInfo:
        """Every table analytics reads, from one consistent read transaction, each given to
        ``sink`` whole as an Arrow table (the types ``SnapshotSink`` says); a backend imports
        pyarrow only here, so that the bot never does."""
        ...

    async def annotation_ratings(self) -> list[AnnotationRating]:
        """Every rating of every job, each with its job, target, level, session, turn,
        system and scenario: what analytics reads (not the partial ratings of a target
        that was given to someone else when its annotator dropped out)."""
        ...

    async def system_summaries(self) -> list[SystemSummary]:
        """Per system: sessions, successes, mean exchanges, item means (``ozlab demo``)."""
        ...


class Imports(Protocol):
    """Rows that come from outside the bot: answers and ratings from files, made-up
    studies for tests and benchmarks."""

    async def import_context(self, study_id: str) -> ImportContext:
        """The sessions and participants an import is checked against."""
        ...

    async def import_answers(
        self,
        study_id: str,
        answers: Sequence[ImportedAnswer],
        source: Mapping[str, object],
        *,
        dry_run: bool = False,
    ) -> ImportOutcome:
        """Answers from outside Telegram: all or none, recorded with an event."""
        ...

    async def import_annotations(
        self,
        job: AnnotationJobRecord,
        ratings: Sequence[ImportedRating],
        *,
        dry_run: bool = False,
        origin: Origin = Origin.IMPORT,
    ) -> RatingsImported:
        """Ratings from a file (or a model judge's, ``origin`` model): all or none (never
        on a dry run), with the job, targets and annotators they need; ratings stored
        already refuse the whole import."""
        ...

    async def judge_tasks(
        self, job: str, judge: str
    ) -> list[tuple[AnnotationTask, frozenset[str]]]:
        """Every target of a stored job with what an annotator would read of it, in the
        job's order, and what the judge ``judge`` answered of it already (item ids it
        rated; a pair's questions it gave a verdict on)."""
        ...

    async def bulk_load(self, rows: BulkRows) -> None:
        """Made-up rows (synthetic studies for tests and benchmarks), in one transaction."""
        ...


class Recruitment(Protocol):
    """Invitation codes and the payments of recruited participants."""

    async def check_invitation(self, code: str | None, participant_id: str) -> Invitation:
        """What a newcomer's invitation code is (free, theirs, taken, unknown), or that the
        study holds no single-use codes at all."""
        ...

    async def add_invitations(self, codes: Sequence[str]) -> list[str]:
        """Single-use invitation codes (``ozlab invite``); those that were new (a code
        stored already is left as it is)."""
        ...

    async def payments(self) -> list[PaymentRecord]:
        """Every recruited participant's payment record, platform ids still sealed (those
        of withdrawn participants too: their time is paid)."""
        ...

    async def tasks_done(self) -> dict[int, tuple[int, int]]:
        """Per payments row, its participant's sessions that ended, and done successfully."""
        ...

    async def failed_checks(self) -> dict[int, int]:
        """Per payments row, the attention checks its participant failed (if any)."""
        ...

    async def note_submissions(self, seen: Sequence[tuple[int, str, str]]) -> None:
        """What the platform listed: (payments row, sealed submission id, its status)."""
        ...

    async def note_approvals(self, rows: Sequence[int]) -> None:
        """The payments rows whose submissions ozlab approved, now."""
        ...

    async def record_intent(
        self,
        study_id: str,
        platform: str,
        platform_study: str,
        action: str,
        request: str,
        bulk_id: str | None,
    ) -> int:
        """A request that moves money, recorded (committed) before it is sent; its id."""
        ...

    async def record_outcome(
        self, step_id: int, outcome: str, bulk_id: str | None, answer: str
    ) -> None:
        """What became of it, recorded (committed) once known."""
        ...

    async def money_path(self, platform: str) -> list[MoneyStep]:
        """Every request of the money path to ``platform``, in the order they were made."""
        ...


class StressTests(Protocol):
    """Linguistic stress tests: their own records, never the live sessions."""

    async def stress_utterances(self, session_ids: Sequence[str] = ()) -> list[Utterance]:
        """Participants' logged lines a system answered (of ``session_ids``, or all), each
        with the system reply before it, in session and turn order."""
        ...

    async def add_stress_tests(
        self, perturbations: Sequence[Perturbation], review: Review
    ) -> list[int]:
        """Each perturbation's test id; a test stored already keeps its id and review."""
        ...

    async def review_stress_test(
        self, test_id: int, review: Review, perturbed: str | None = None
    ) -> bool:
        """A person accepted, edited (``perturbed``) or rejected a test; False: no such test."""
        ...

    async def stress_tests(
        self, types: Sequence[StressType] = (), review: Review | None = None
    ) -> list[StressTest]:
        """Stored tests of ``types`` (all when empty), by id."""
        ...

    async def replayed_stress_tests(self) -> set[tuple[int, str]]:
        """(test, system) pairs whose replay is finished and stored: never run again."""
        ...

    async def record_replay(self, replay: Replay, verdict: Judgement | None = None) -> bool:
        """A finished replay, stored once with its automatic verdict; False if it was
        stored already."""
        ...

    async def record_stress_verdict(self, judgement: Judgement) -> None:
        """A person's or a language model's verdict (replacing that judge's earlier one)."""
        ...

    async def stress_results(self) -> list[StressResult]:
        """Every replayed test with its verdicts (the report, the judges)."""
        ...


class OperatorTasks(Protocol):
    """What the operator does to a whole study: erasure and its ledger, retention,
    chat keys, backups, marking simulated participants."""

    async def erase_participant(
        self,
        participant_id: str,
        update_ids: Sequence[int] = (),
        *,
        command_id: int | None = None,
    ) -> Erased | None:
        """Everything of one participant gone from the file, in one transaction (their
        sessions and all that hangs on them, their pending ``update_ids``); an anonymous
        withdrawal is counted for the study (and each of their systems when the study as
        stored asks for it), and the erasure goes into the ledger (a digest of the
        pseudonym, the time); the erase command ``command_id`` is settled with it. None
        when nothing of theirs was stored. Callers go through ``bot.rights.erasure``."""
        ...

    async def erase_annotator(
        self, annotator_id: str, update_ids: Sequence[int] = ()
    ) -> AnnotatorErased | None:
        """An annotator erased in one transaction (``ozlab erase A-7KQ2``): their row
        (sealed chat id, code), assignments (the targets back to the pool), pending
        ``update_ids``, and their ratings and votes, or these kept under a new pseudonym
        nothing links to them where the job's consent says so; a line in the ledger. None
        when no such annotator is stored."""
        ...

    async def erasure_ledger(self) -> list[ErasureRecord]:
        """Every erasure of the study, oldest first: what backups are to be erased of."""
        ...

    async def inactive_since(self, study_id: str, before: float) -> list[str]:
        """Participants of a study last active before ``before`` (retention)."""
        ...

    async def drop_chat_keys(self) -> int:
        """Forget every encrypted chat id (a closed study writes to nobody); how many."""
        ...

    async def mark_simulated(self, participant_ids: Sequence[str]) -> int:
        """Mark participants as played by a simulation (``ozlab demo``, ``ozlab pilot``),
        so reports tell them from people; how many were found."""
        ...

    async def mark_simulated_annotators(self, annotator_ids: Sequence[str]) -> int:
        """Mark annotators as played by a simulation (``ozlab demo``), so that a later demo
        may replace them, their ratings and votes; how many were found."""
        ...

    async def backup(self, target: Path) -> None:
        """A copy of the whole study as it stood at one instant, taken while the bot runs
        (``ozlab backup``, from cron), written to the file ``target`` in a form this
        backend opens again like the original. ``target`` is replaced only by a complete,
        checked copy; the study's own storage is refused as a target."""
        ...


class AnnotationPlanning(Protocol):
    """Annotation jobs and who rates what: planned outside the store
    (``bot.engine.annotating.assignment``) from ``annotation_state`` and applied with
    ``apply_assignment_plan``. Annotators are not participants: never in the participant
    tables or counts."""

    async def save_annotation_job(self, job: AnnotationJobRecord) -> None:
        """Keep an annotation job as its file now says (targets and ratings stay)."""
        ...

    async def annotation_jobs(self) -> list[AnnotationJobRecord]:
        """Every annotation job stored, oldest first."""
        ...

    async def annotatable_sessions(self) -> list[AnnotatableSession]:
        """Every session with the turns the system answered: what targets are built from."""
        ...

    async def add_annotation_targets(self, job: str, targets: Sequence[AnnotationTarget]) -> int:
        """Targets new to a stored job (one stored already stays as it is); how many."""
        ...

    async def annotation_targets(self, job: str) -> list[AnnotationTarget]:
        """A job's targets in the order they are shown."""
        ...

    async def add_annotators(
        self, job: str, annotators: Sequence[tuple[str, str | None]]
    ) -> list[str]:
        """Annotators (pseudonym, invitation code) of a stored job; the pseudonyms that
        were new (a pseudonym or code stored already is left as it is)."""
        ...

    async def drop_annotator(self, annotator_id: str) -> bool:
        """Declared dropped: open targets go to others at the next planning, finished
        ratings stay; False when unknown or dropped already."""
        ...

    async def annotation_state(self, job: str) -> AnnotationState | None:
        """What a job's assignment is planned from, read at one instant; None: no such job."""
        ...

    async def apply_assignment_plan(self, job: str, plan: AssignmentPlan, version: int) -> bool:
        """The plan, when the job is still at ``version`` (the state it was made from);
        False: something changed, plan again from a fresh state."""
        ...

    async def annotation_progress(self) -> list[AnnotationProgress]:
        """Per job and annotator: targets and conversations assigned and done (console)."""
        ...


class AnnotatorWork(Protocol):
    """An annotator's own work over Telegram: joining with a code, pausing, taking
    the next target, rating it, finishing or reopening it."""

    async def claim_annotator(
        self, code: str, chat_hash: str, chat_key: str | None = None
    ) -> tuple[AnnotatorClaim, Annotator | None]:
        """``/start ann-CODE`` from a chat (its keyed hash; its id sealed, to write to it
        after a restart): a free code becomes that chat's annotator; the same chat again is
        returning; another chat is refused; a chat already an active annotator of the
        code's job is that one (``ALREADY``), the code left unused."""
        ...

    async def annotator_for_chat(self, chat_hash: str) -> Annotator | None:
        """The annotator a chat is: the one it joined last, one not dropped first; a
        dropped one too (``dropped``), so that they are told so after a restart."""
        ...

    async def annotators(self, job: str | None = None) -> list[Annotator]:
        """The annotators of a job (of every job without one), in the order they were made."""
        ...

    async def set_annotator_paused(self, annotator_id: str, paused: bool) -> bool:
        """An annotator paused or resumed; False for an unknown annotator."""
        ...

    async def next_annotation_target(self, annotator_id: str) -> AnnotationTask | None:
        """The annotator's first open target with its conversation up to and including the
        exchange, their earlier answers and their progress; None when nothing is open."""
        ...

    async def holds_annotation_target(
        self, annotator_id: str, job: str, target: str, level: AnnotationLevel
    ) -> bool:
        """Whether the target is still the annotator's to rate: assigned, not released, not
        done, and they are not dropped (asked when a silent annotator comes back)."""
        ...

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
        """One item's rating, in the round the target is assigned in: once per annotator,
        target, item and round (the same again changes nothing); refused for a target not
        assigned to the annotator or once they are dropped, and (locked) for a target
        done, until it is reopened."""
        ...

    async def finish_annotation_target(
        self, annotator_id: str, job: str, target: str, level: AnnotationLevel
    ) -> bool:
        """The annotator is done with the target; False when not theirs or done already."""
        ...

    async def commit_annotator_step(
        self, records: Sequence[AnnotatorRecord], update_id: int | None
    ) -> list[AnnotatorAnswer]:
        """An annotator's step: its records in order (ratings, a finish, a pause, a
        ``/back``) and the Telegram update it consumed, in one transaction, durable when
        this returns; the store's answer to each record. A rating refused as not theirs is
        the last record applied; the update is consumed all the same."""
        ...

    async def reopen_annotation_target(self, annotator_id: str) -> AnnotationTask | None:
        """``/back``: the target the annotator finished last, open again; None when the
        job is seen-once, nothing is done yet, or its adjudication has started."""
        ...


class AnnotatorRecruitment(Protocol):
    """Annotators recruited on a platform through a job's link: joining with a platform id
    (sealed, never in the clear), how their part stands, what they rated for their pay."""

    async def join_from_platform(
        self, arrival: PlatformArrival, pseudonyms: Sequence[str]
    ) -> tuple[AnnotatorClaim, Annotator | None]:
        """The job's link opened from a chat: a new annotator (the first of ``pseudonyms``
        not taken), the chat's annotator (the same id, or bound now), or refused (another
        id for a bound annotator; an id another chat's annotator holds; a dropped one)."""
        ...

    async def set_annotator_payment(
        self, annotator_id: str, status: PaymentStatus
    ) -> PaymentStatus | None:
        """The annotator's part still at work (STARTED: time given follows) or ended as
        ``status`` (a completed part stays so); the record's status after it (None: no
        record)."""
        ...

    async def targets_rated(self, job: str) -> dict[int, int]:
        """Per payments row of the job's annotators, the targets their annotator finished."""
        ...


class PairwiseVotes(Protocol):
    """Pairwise judgements outside a participant's step (a participant's come as the
    step's ``RecordVote`` records): an annotator's ACUTE pairs, a file's votes, the votes
    read back."""

    async def record_votes(
        self,
        study_id: str,
        votes: Sequence[Vote],
        update_id: int | None = None,
        *,
        origin: Origin = Origin.TELEGRAM,
    ) -> int:
        """Keep ``votes`` (a vote id kept already changes nothing) and consume the update
        ``update_id`` in the same transaction; how many were new. ``origin`` model: a
        model judge's votes."""
        ...

    async def votes(self) -> list[tuple[str, Vote]]:
        """Every vote with its study, oldest first."""
        ...

    async def import_votes(
        self, study_id: str, votes: Sequence[tuple[int, Vote]], *, dry_run: bool = False
    ) -> VotesImported:
        """Votes from a file (each with its line), all or none: none when any vote id is
        kept already (those lines are given back), none on a dry run."""
        ...


class ModelJudges(Protocol):
    """A model judge's calls and the provenance of its judgements (``ozlab judge run``), in
    the study's database: a call kept by its exact request is never made again, and an
    erasure takes every call and judgement that shows one of the participant's sessions."""

    async def judge_call(self, key: str) -> JudgeCall | None:
        """The call kept under the request digest ``key``; None when never made."""
        ...

    async def keep_judge_call(self, call: JudgeCall) -> bool:
        """Keep ``call`` (its request and answer, its tokens, the sessions it shows);
        False when a call of that request is kept already."""
        ...

    async def keep_judgements(self, judgements: Sequence[JudgementRecord]) -> None:
        """Keep each judgement's provenance and outcome, in place of an earlier run's of
        the same job, judge, target and item."""
        ...

    async def judgements(self) -> list[JudgementRecord]:
        """Every judgement kept, by job, judge, target, level and item."""
        ...

    async def judge_costs(self) -> list[JudgeCost]:
        """Per judge, the calls kept and the tokens they cost."""
        ...


class FileRegister(Protocol):
    """The register of files ozlab wrote with participants' data (exports, reports,
    figures, payments), which an erasure cannot reach and so names."""

    async def register_files(self, kind: WrittenKind, paths: Sequence[str]) -> None:
        """``paths`` (absolute) written now as ``kind``; a path written again keeps its
        latest time."""
        ...

    async def registered_files(self) -> list[WrittenFile]:
        """Every file in the register, oldest first."""
        ...


class ExperimenterAccounts(Protocol):
    """The experimenters' accounts of the web page on this study: a role each, the password
    as a slow hash (made and checked outside the store), failed sign-ins that lock an
    account out for a while, and one-time sign-in links kept as their token's digest."""

    async def save_experimenter(
        self, name: str, role: ExperimenterRole, password_hash: str
    ) -> bool:
        """The account with this role and password hash (a new one ends a lock-out); True
        when the name is new."""
        ...

    async def experimenter(self, name: str) -> ExperimenterAccount | None:
        """The account of this name; None when there is none."""
        ...

    async def experimenters(self) -> list[ExperimenterAccount]:
        """Every account, by name."""
        ...

    async def remove_experimenter(self, name: str) -> bool:
        """The account is gone; False when there was none."""
        ...

    async def failed_sign_in(self, name: str, lock_after: int, lock_for: float) -> float | None:
        """One more failed sign-in to the account; the ``lock_after``-th in a row locks it
        for ``lock_for`` seconds: the time the lock ends, or None."""
        ...

    async def good_sign_in(self, name: str) -> None:
        """A sign-in succeeded: the count of failed ones starts again."""
        ...

    async def add_sign_in_link(
        self, token_hash: str, name: str | None, role: ExperimenterRole, expires_at: float
    ) -> None:
        """A one-time link, kept as its token's digest: for the account ``name``, or (None)
        for a new one its user names."""
        ...

    async def use_sign_in_link(self, token_hash: str) -> SignInLink | None:
        """The link of this token's digest, used now: None when unknown, used or expired."""
        ...


class StudyStore(
    StoreLifetime,
    StudyDefinitions,
    HotPath,
    ConsoleReadModel,
    AnalyticsSnapshot,
    Imports,
    Recruitment,
    StressTests,
    OperatorTasks,
    AnnotationPlanning,
    AnnotatorWork,
    AnnotatorRecruitment,
    PairwiseVotes,
    ModelJudges,
    FileRegister,
    ExperimenterAccounts,
    Protocol,
):
    """The study database, whatever holds it (SQLite today: ``bot.store.sqlite``): every
    role at once, which a backend implements and only the composition roots hold."""


ROLES: tuple[type, ...] = (
    StoreLifetime,
    StudyDefinitions,
    HotPath,
    ConsoleReadModel,
    AnalyticsSnapshot,
    Imports,
    Recruitment,
    StressTests,
    OperatorTasks,
    AnnotationPlanning,
    AnnotatorWork,
    AnnotatorRecruitment,
    PairwiseVotes,
    ModelJudges,
    FileRegister,
    ExperimenterAccounts,
)
"""Every role, in the order of the contract suite: what a new backend implements."""
