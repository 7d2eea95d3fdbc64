"""What goes into the store and what comes out of it, as plain frozen records: no SQL.

The bot commits a ``StepCommit`` per engine step; the console reads ``ParticipantStatus``
rows (a read model the store keeps beside the engine's private snapshot, so that nobody
outside the engine parses that snapshot); commands travel as ``Command``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from bot.core.annotation import (
    AnnotationJobRecord,
    AnnotationTarget,
    AnnotationTask,
    TranscriptExchange,
)
from bot.core.participants import ParticipantStatus
from bot.core.vocabulary import (
    AnnotationRound,
    AnswerStatus,
    CommandKind,
    EndReason,
    EventKind,
    ExperimenterRole,
    Moment,
    PaymentStatus,
    RatingOutcome,
    SessionState,
    WrittenKind,
)

if TYPE_CHECKING:
    import pyarrow

    from bot.engine.effects import Record


@dataclass(frozen=True)
class StoredParticipant:
    """A participant as the bot last committed them, to resume after a restart."""

    participant_id: str
    chat_key: str | None  # the chat id, encrypted; None before consent or once dropped
    state: str  # the engine's snapshot (JSON): only the engine reads it
    undelivered: str | None  # messages committed but perhaps not sent (JSON), or None


@dataclass(frozen=True)
class EarlierStep:
    """A step that sent nothing (it only asked a system), committed with the participant's
    next step in its transaction: its rows and the update it consumed, stamped with the
    moment it was taken. Its state is not kept: the next step's replaces it."""

    records: Sequence[Record]
    update_id: int | None
    at: float


@dataclass(frozen=True)
class StepCommit:
    """One engine step, committed in one transaction before anything is sent."""

    study_id: str
    participant_id: str
    state: str | None  # the new snapshot; None: only rows (the step's own commit has it)
    status: ParticipantStatus | None
    chat_key: str | None  # kept once stored (the first one wins)
    records: Sequence[Record] = ()
    update_id: int | None = None  # the Telegram update this step consumed
    undelivered: str | None = None  # the messages about to be sent, until ``delivered``
    earlier: EarlierStep | None = None  # committed first, in the same transaction
    files: Mapping[str, bytes] = field(default_factory=dict)
    """The bytes of the files this step keeps (``RecordMedia(kept=True)``), by content hash."""


@dataclass(frozen=True)
class Erased:
    """What an erasure removed (counts only: the rows themselves are gone)."""

    study_id: str
    sessions: int
    exchanges: int
    responses: int
    events: int
    commands: int
    pending_updates: int
    votes: int = 0


@dataclass(frozen=True)
class AnnotatorErased:
    """What an annotator's erasure did (counts only): their ratings and votes erased, or
    kept under a new pseudonym nothing links to them (``kept_unlinked``, as the job's
    consent says); ``targets``: their assignments taken back (to the pool)."""

    job: str
    study_id: str
    ratings: int
    votes: int
    targets: int
    pending_updates: int
    kept_unlinked: bool


@dataclass(frozen=True)
class WrittenFile:
    """One line of the register of files written with participants' data: where (an
    absolute path on the machine that wrote it), what, and when last."""

    path: str
    kind: WrittenKind
    written_at: float


@dataclass(frozen=True)
class ErasureRecord:
    """One line of the erasure ledger: enough to erase the same person from a backup,
    nothing of what they said. ``digest`` is a one-way digest of the pseudonym."""

    study_id: str
    digest: str
    erased_at: float


@dataclass(frozen=True)
class BackupErased:
    """What applying the ledger did to one backup file."""

    participants: int  # erased from it now
    recorded: int  # ledger lines it did not have yet
    migrated_from: int | None = None  # its schema version before, when it was older


@dataclass(frozen=True)
class Command:
    """An experimenter's command, appended by a console and applied once by the bot."""

    id: int
    at: float
    wizard: str
    kind: CommandKind
    session_id: str | None  # None for commands about a system or the whole study
    payload: Mapping[str, object] = field(default_factory=dict)


# --- what the console reads -------------------------------------------------------------


@dataclass(frozen=True)
class LiveParticipant:
    """A participant who came through Telegram, where they stand, and how their last
    turn went (imported participants never appear: they have no place in a study)."""

    participant_id: str
    study_id: str
    status: ParticipantStatus
    last_error: str | None = None  # the system's error on the latest turn, when it failed


@dataclass(frozen=True)
class SessionRecord:
    """A session as stored (the task, the system, how it ended)."""

    session_id: str
    participant_id: str
    study_id: str
    scenario_id: str
    system_id: str
    state: SessionState
    started_at: float
    ended_at: float | None = None
    end_reason: EndReason | None = None
    success: bool | None = None
    exchanges: int | None = None  # exchanges the system answered, when they were counted


@dataclass(frozen=True)
class TranscriptEvent:
    """An event of the session (an unknown kind, from an older ozlab, stays a string)."""

    event_id: int
    seq: int | None
    at: float
    kind: EventKind | str
    data: Mapping[str, object] = field(default_factory=dict)


@dataclass(frozen=True)
class Transcript:
    """Everything a session's transcript is made of; ``seq`` orders lines as committed."""

    session_id: str
    exchanges: tuple[TranscriptExchange, ...] = ()
    events: tuple[TranscriptEvent, ...] = ()
    ended_at: float | None = None
    end_reason: EndReason | str | None = None
    end_seq: int | None = None


# --- answers from outside Telegram -------------------------------------------------------


@dataclass(frozen=True)
class ImportedAnswer:
    """One answer collected outside Telegram, checked, as the bot would have stored it."""

    line: int  # where it came from (the file's line), to report a duplicate
    participant_id: str
    questionnaire_id: str
    item_id: str
    status: AnswerStatus
    moment: Moment
    scope: str  # the uniqueness key (never parsed back)
    shown_at: float
    answered_at: float
    session_id: str | None = None  # only a session stored in this database
    system_id: str | None = None  # the system the answer is about, when known
    value: int | None = None
    label: str | None = None
    text: str | None = None
    turn: int | None = None
    stimulus_id: str | None = None
    attention_ok: bool | None = None


@dataclass(frozen=True)
class ImportContext:
    """What an import is checked against besides the study definition."""

    sessions: Mapping[str, tuple[str, str]]  # session id -> (participant id, system id)
    participants: Mapping[str, str]  # participant id -> study id


@dataclass(frozen=True)
class VotesImported:
    """What an import of votes did: how many were (or, on a dry run, would be) kept, or
    the file's lines whose vote ids are kept already (then none is)."""

    votes: int
    duplicates: tuple[int, ...]
    erased: tuple[int, ...] = ()
    """Lines by a rater the erasure ledger names: never brought back (none written)."""


@dataclass(frozen=True)
class ImportOutcome:
    """What an import did: written, or rolled back (a dry run, or answers already stored)."""

    written: bool
    answers: int
    participants: int
    new_participants: int
    duplicates: tuple[int, ...] = ()  # lines whose answer is already in the database


# --- the demo's summary, analytics' snapshot, test data ----------------------------------


@dataclass(frozen=True)
class SystemHealth:
    """One system's answers since a time (the console's and the web page's last hour): how
    many exchanges it had, how many failed, and how long its answers took."""

    system_id: str
    exchanges: int
    failures: int
    median_ms: float | None  # None: no answer with a latency
    p95_ms: float | None  # nearest rank


@dataclass(frozen=True)
class SystemSummary:
    """One system at a glance: what ``ozlab demo`` prints after a study."""

    system_id: str
    sessions: int
    succeeded: int
    ended: int
    mean_exchanges: float
    item_means: Mapping[str, float]
    side_by_side: bool = False
    """A row of side-by-side sessions: ``system_id`` names both systems ("a + b"), each
    session met both at once, and a side-by-side task has no success of its own."""

    @property
    def completion_rate(self) -> float:
        return self.succeeded / self.sessions if self.sessions else 0.0


# fmt: off
SNAPSHOT_COLUMNS: Mapping[str, tuple[str, ...]] = {
    "sessions": (
        "session_id", "participant_id", "study_id", "scenario_id", "system_id", "task_index",
        "design", "seed", "state", "started_at", "ended_at", "end_reason", "success", "correct",
    ),
    "exchanges": (
        "exchange_id", "session_id", "turn", "user_text", "user_at", "system_text",
        "system_at", "latency_ms", "error", "source", "original_text", "wizard",
    ),
    "responses": (
        "response_id", "participant_id", "session_id", "scope", "questionnaire_id", "item_id",
        "value", "label", "text", "status", "shown_at", "answered_at", "turn", "stimulus_id",
        "attention_ok", "moment", "origin", "system_id",
    ),
    "events": ("event_id", "at", "participant_id", "session_id", "kind", "data"),
    "participants": (
        "participant_id", "study_id", "consent", "consent_at", "created_at", "updated_at",
        "simulated",
    ),
    "commands": (
        "command_id", "at", "wizard", "kind", "session_id", "payload", "applied_at", "outcome",
    ),
    "votes": (
        "vote_id", "study_id", "source", "rater", "rater_kind", "system_a", "system_b",
        "winner", "strength", "question", "scenario_id", "session_id", "turn", "session_a",
        "session_b", "flag_reason", "onboarding", "expected", "onboarding_correct", "job",
        "origin", "voted_at",
    ),
    "media": (
        "media_id", "participant_id", "session_id", "turn", "kind", "mime", "duration",
        "width", "height", "size", "digest", "kept", "transcript", "engine", "model",
        "fetch_ms", "transcribe_ms", "at",
    ),
}
"""The tables of a snapshot and their columns, in order: every row a sink gets has these."""
# fmt: on

SnapshotSink = Callable[[str, "pyarrow.Table"], None]
"""Takes one whole table of a snapshot as Arrow columns (names and order as in
``SNAPSHOT_COLUMNS``): numbers as int64 or double, words as strings, a column without a value
of any type as it comes (all null), and a column whose values have several types (only a file
written by hand has one) as a dense union of int64, double and string, so that no value is
turned into another."""


@dataclass(frozen=True)
class SnapshotInfo:
    """What came with a snapshot beside the rows."""

    schema_version: int  # of the file as found (a snapshot of an older one is upgraded in memory)
    has_tables: bool  # False: the bot has never run on this file
    definitions: tuple[tuple[str, str], ...] = ()  # (study id, definition JSON), oldest first
    withdrawals: tuple[tuple[str, str, int], ...] = ()  # (study, system or '', count)
    annotations: tuple[AnnotationRating, ...] = ()
    """Every annotator's rating, as ``annotation_ratings()`` gives them, from the same
    snapshot as the rows."""
    annotation_jobs: tuple[AnnotationJobRecord, ...] = ()
    """The jobs as stored (``annotation_jobs()``): an imported job's definition holds the
    instruments its ratings were checked against, which no study may name."""
    judgements: tuple[JudgementRecord, ...] = ()
    """Model judges' judgements with their provenance (``judgements()``)."""
    judge_costs: tuple[JudgeCost, ...] = ()
    """Model judges' calls and tokens (``judge_costs()``)."""


@dataclass(frozen=True)
class BulkRows:
    """Rows loaded at once (synthetic studies for tests and benchmarks), columns in order:

    - participants: participant_id, study_id, consent, consent_at, created_at
    - sessions: as ``SNAPSHOT_COLUMNS["sessions"]``
    - exchanges: session_id, turn, user_text, user_at, system_text, system_at, latency_ms,
      error, source
    - responses: participant_id, session_id, scope, questionnaire_id, item_id, value, label,
      text, status, shown_at, answered_at, turn, stimulus_id, attention_ok, moment
    - events: at, participant_id, session_id, kind, data (JSON)
    """

    participants: Sequence[tuple[object, ...]] = ()
    sessions: Sequence[tuple[object, ...]] = ()
    exchanges: Sequence[tuple[object, ...]] = ()
    responses: Sequence[tuple[object, ...]] = ()
    events: Sequence[tuple[object, ...]] = ()


@dataclass(frozen=True)
class PaymentRecord:
    """A recruited participant's (or a recruiting job's annotator's) payment record
    (``ozlab export payments``): the platform id still sealed, how their part ended, and
    when they arrived and were last active."""

    study_id: str
    platform: str
    platform_key: str
    status: PaymentStatus
    arrived_at: float
    last_at: float
    row: int = 0  # the record's own id, to note what the platform said of it
    submission_key: str | None = None  # the platform's submission id, sealed
    platform_status: str | None = None  # the submission's status when last asked
    approved_at: float | None = None  # when ozlab approved the submission
    job: str | None = None  # an annotation job's annotator's record; None: a participant's

    @property
    def seconds(self) -> float:
        """The time they gave the study."""
        return max(0.0, self.last_at - self.arrived_at)


@dataclass(frozen=True)
class MoneyStep:
    """One request of the money path (``ozlab prolific bonus``): its intent, sealed, and
    its outcome once known (None: sent, and the platform must be asked what happened)."""

    id: int
    platform_study: str
    action: str
    request: str  # sealed
    bulk_id: str | None
    intent_at: float
    outcome: str | None
    answer: str | None
    outcome_at: float | None = None


# --- annotation: annotators are not participants ------------------------------


@dataclass(frozen=True)
class AnnotationRating:
    """One rating of one item by one annotator: what analytics reads (``annotation_ratings``).

    ``level`` is ``exchange`` or ``session``; ``target`` is ``SESSION#TURN`` for an
    exchange, the session id for a session, or an outside id (imported); ``round`` is
    ``first`` or ``adjudication``; ``origin`` is ``telegram`` or ``import``; ``value`` is
    the answer as stored (the point of a scale, 1/0 for yes/no, the text of free text);
    ``recorded_at`` is ISO 8601 in UTC."""

    job: str
    level: str
    target: str
    session_id: str | None
    turn: int | None
    system: str | None
    scenario: str | None
    annotator: str
    instrument_id: str
    item_id: str
    value: str
    round: str
    origin: str
    recorded_at: str


AnnotatorAnswer = RatingOutcome | bool | int | AnnotationTask | AnnotatorErased | None
"""The store's answer to one record of an annotator's step: a rating's outcome, whether a
pause or a finish took, the target ``/back`` opened again, what a withdrawal erased."""


@dataclass(frozen=True)
class AnnotationProgress:
    """One annotator's progress in one job (the console)."""

    job: str
    annotator: str
    assigned: int
    done: int
    conversations: int
    conversations_done: int
    joined: bool
    paused: bool
    dropped: bool
    last_active_at: float | None
    imported: int = 0
    """Targets this annotator rated in a file brought in by ``ozlab import annotations``
    (never assigned: they were rated outside Telegram)."""


@dataclass(frozen=True)
class ImportedRating:
    """One rating from a file (``ozlab import annotations``), checked against its
    instrument, as the store keeps it."""

    line: int
    target: AnnotationTarget
    annotator: str
    instrument_id: str
    item_id: str
    value: int | None = None
    label: str | None = None
    text: str | None = None
    round: AnnotationRound = AnnotationRound.FIRST
    recorded_at: float | None = None


@dataclass(frozen=True)
class RatingsImported:
    """What an import of ratings did: written, or not (a dry run, or ratings already
    stored: the lines of those)."""

    written: bool
    ratings: int
    targets: int
    annotators: int
    new_annotators: int
    duplicates: tuple[int, ...] = ()
    erased: tuple[int, ...] = ()
    """Lines by an annotator the erasure ledger names: never brought back (none written)."""


@dataclass(frozen=True)
class JudgeCall:
    """One call to a model judge, kept by its exact request (``key``: its digest), so that
    the same request is never sent twice; ``session_id`` and ``paired_session``: the
    conversations whose words the request holds (an erasure takes the call along)."""

    key: str
    judge: str
    request: str
    answer: str
    prompt_tokens: int | None
    completion_tokens: int | None
    session_id: str | None = None
    paired_session: str | None = None


@dataclass(frozen=True)
class JudgementRecord:
    """Where one judgement of a model judge came from, and how it ended (``outcome``:
    rated | unparseable | failed): the report's provenance of the judge."""

    job: str
    judge: str
    target: str
    level: str
    item_id: str
    model: str
    host: str
    prompt_hash: str
    temperature: float
    seed: int | None
    outcome: str
    said: str
    retried: bool
    call_key: str | None
    at: float
    session_id: str | None = None
    paired_session: str | None = None


@dataclass(frozen=True)
class JudgeCost:
    """One judge's calls and the tokens they cost (a call found again by a rerun, once)."""

    judge: str
    calls: int
    prompt_tokens: int
    completion_tokens: int


@dataclass(frozen=True)
class PlatformArrival:
    """Who opened a recruiting job's link: the chat, and the platform id sealed and hashed."""

    job: str
    study_id: str
    platform: str
    chat_hash: str
    chat_key: str | None
    platform_key: str
    platform_tag: str


@dataclass(frozen=True)
class ExperimenterAccount:
    """An experimenter's account on one study's web page: the password only as its slow
    hash; failed sign-ins since the last good one, and the time a lock-out ends."""

    name: str
    role: ExperimenterRole
    password_hash: str
    failures: int = 0
    locked_until: float | None = None
    created_at: float = 0.0


@dataclass(frozen=True)
class SignInLink:
    """What a one-time sign-in link grants: the account it signs in (None: a new one, which
    its user names, as the first user does) with its role."""

    name: str | None
    role: ExperimenterRole
    expires_at: float
