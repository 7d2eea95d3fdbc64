"""The study database as tidy DataFrames, read from one consistent snapshot.

The bot keeps writing while a researcher analyses, so everything comes from one read
snapshot the store gives (``read_snapshot``: one read transaction, read-only, each table as
Arrow columns, made frames here without a Python object per value): the tables agree with
each other, the file is never written, and nothing is held open to hold back WAL
checkpoints. Encrypted chat ids and engine snapshots are never loaded.

An empty or partial database (no tables yet, an older schema, no study definition) gives
empty frames with the usual columns and a note in ``StudyData.notes``, never an exception.
"""

from __future__ import annotations

import contextlib
import ctypes
import ctypes.util
import hashlib
import json
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import astuple, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, cast

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from analytics.data.votes import no_votes, votes_frame
from bot.core.annotation import AnnotationJobRecord
from bot.core.vocabulary import AnnotationLevel, AnswerStatus, EndReason, Moment, Origin
from bot.store import Access, open_store
from bot.store.blocking import run_blocking
from bot.store.interface import AnalyticsSnapshot, StressTests
from bot.store.model import (
    SNAPSHOT_COLUMNS,
    AnnotationRating,
    JudgeCost,
    JudgementRecord,
    SnapshotInfo,
)
from bot.store.stress_records import StressResult

if TYPE_CHECKING:
    from questionnaires.models import Questionnaire
    from scenarios.models import StudyBundle

NO_SYSTEM = "(no system)"
"""System of answers given before any task (screening) or by participants without a task."""
SEVERAL_SYSTEMS = "(several systems)"
"""System of answers that rate more than one system: post-study answers from a participant
who met more than one system, and every answer given in or after a side-by-side session
(which met two systems at once)."""
NUMERIC_TYPES = ("scale", "yes_no", "thumbs", "slider")
"""Item types whose stored value is a number on an ordered scale."""
ORDER_TYPES = ("ranking",)
"""Item types whose answer is an order of options (stored as their codes, first to last):
summarised by each option's rank, not as one answer."""
POINT_TYPES = ("scale", "yes_no", "thumbs")
"""Numeric item types with few points, each counted even when nobody chose it (a slider's
101 are not)."""
# fmt: off
_CATEGORIES = [
    "participant_id", "session_id", "questionnaire_id", "item_id", "status", "label",
    "system_id", "scenario_id", "kind", "moment", "origin", "scope",
]
ITEM_COLUMNS = [
    "questionnaire_id", "item_id", "position", "type", "text", "min", "max", "reverse",
    "construct", "attention", "required",
]
CHOICE_COLUMNS = ["questionnaire_id", "item_id", "position", "value", "label"]
ANNOTATION_COLUMNS = [
    "job", "level", "target", "session_id", "turn", "system", "scenario", "annotator",
    "instrument_id", "item_id", "value", "round", "origin", "recorded_at",
]
"""Annotators' ratings: the fields of the store's ``AnnotationRating``, in its order."""
# fmt: on


def no_annotations() -> pd.DataFrame:
    """The annotation ratings of a study without annotation jobs: no rows, every column."""
    return pd.DataFrame({name: pd.Series(dtype=object) for name in ANNOTATION_COLUMNS})


@dataclass(frozen=True)
class StudyData:
    """Everything the report needs, as tidy frames (one row per observation)."""

    sessions: pd.DataFrame
    exchanges: pd.DataFrame
    responses: pd.DataFrame
    events: pd.DataFrame
    participants: pd.DataFrame
    items: pd.DataFrame
    """The codebook: one row per questionnaire item (wording, scale, reverse, construct)."""
    choices: pd.DataFrame
    """Answer options of closed items, in asking order: for distributions and plots."""
    bundles: dict[str, StudyBundle] = field(default_factory=dict)
    """The latest stored definition of each study, by study id."""
    notes: tuple[str, ...] = ()
    """What is missing or could not be read, in words for the report."""
    schema_version: int = 0
    has_wizard_source: bool = False
    """Whether ``exchanges.source`` (system | edited | wizard) exists in this database."""
    definition_digests: dict[str, str] = field(default_factory=dict)
    """sha256 of each study's latest stored definition, as the store's ``studies.digest``:
    which version of the study the report describes."""
    withdrawals: tuple[tuple[str, str, int], ...] = ()
    """(study, system or '' for the whole study, count): participants who withdrew and were
    erased (GDPR art. 17). Nothing else of theirs is left, so only this count tells of them."""
    commands: pd.DataFrame = field(
        default_factory=lambda: pd.DataFrame(columns=list(SNAPSHOT_COLUMNS["commands"]))
    )
    """The experimenters' commands from the console, as written, with what the bot made of
    them (applied, expired, rejected; none yet): the log behind the wizard's actions."""
    stress: tuple[StressResult, ...] = ()
    """Replayed linguistic stress tests with their verdicts (``ozlab stress``); none when
    no test was run."""
    annotations: pd.DataFrame = field(default_factory=no_annotations)
    """Annotators' ratings of sessions, exchanges or outside material (``ANNOTATION_COLUMNS``,
    one row per rating, as ``StudyStore.annotation_ratings()`` gives them)."""
    imported_instruments: dict[str, Questionnaire] = field(default_factory=dict)
    """Instruments that imported ratings were checked against (``ozlab import annotations
    --instrument FILE``), as their jobs stored them, by id: no study names them."""
    votes: pd.DataFrame = field(default_factory=no_votes)
    """Every pairwise judgement (side by side, preference items, ACUTE pairs): the votes
    frame, ``analytics.data.votes.VOTE_COLUMNS``."""
    vote_studies: tuple[str, ...] = ()
    """The study of each row of ``votes``, in its order (the frame itself has no study)."""
    judgements: tuple[JudgementRecord, ...] = ()
    """Model judges' judgements with their provenance (``ozlab judge run``)."""
    judge_costs: tuple[JudgeCost, ...] = ()
    """Model judges' calls and the tokens they cost, per judge."""
    media: pd.DataFrame = field(
        default_factory=lambda: pd.DataFrame(columns=list(SNAPSHOT_COLUMNS["media"]))
    )
    """The voice notes and photos participants sent (``SNAPSHOT_COLUMNS["media"]``): what
    each was, its content hash, whether it is kept, its transcript."""

    @property
    def bundle(self) -> StudyBundle | None:
        """The study, when the database holds exactly one (the usual case)."""
        return next(iter(self.bundles.values())) if len(self.bundles) == 1 else None


def load_study_data(db: Path | str, study: str | None = None) -> StudyData:
    """Read ``db`` (a path or a database URL; on a server, ``study``'s schema) from one
    read-only snapshot; an absent study is an error, an empty one not."""
    read = run_blocking(lambda: _read_all(db, study))
    _give_back_freed()
    data = _assemble(**read)
    _give_back_freed()
    return data


def _give_back_freed() -> None:
    """Memory the read freed, returned to the system: the Arrow pool keeps what the frames'
    conversion freed, and glibc what the driver's threads freed (each thread allocates from
    an arena of its own), where the statistics after it never reuse it. On a server (two
    threads read) the report's peak was 60 MB higher without; elsewhere than glibc, the
    pool alone."""
    pa.default_memory_pool().release_unused()
    if _TRIM is not None:
        _TRIM(0)


def _glibc_trim() -> Callable[[int], int] | None:
    name = ctypes.util.find_library("c")
    library = ctypes.CDLL(name) if name else None
    trim = getattr(library, "malloc_trim", None)
    if trim is None:
        return None
    trim.argtypes, trim.restype = [ctypes.c_size_t], ctypes.c_int
    return cast(Callable[[int], int], trim)


_TRIM = _glibc_trim()


class _Frames:
    """Each snapshot table turned into a frame as it arrives, typed as pandas types rows of
    Python values (``DataFrame.from_records``), which the report's numbers were made with:
    a column of integers with a gap is floats, a column without any value is objects, words
    are ``str``; ids and labels of the large tables are categoricals with sorted categories."""

    def __init__(self) -> None:
        self.frames: dict[str, pd.DataFrame] = {}

    def __call__(self, table: str, columns: pa.Table) -> None:
        categorical = table in _CATEGORICAL
        self.frames[table] = pd.DataFrame(
            {
                name: _series(column, categorical and name in _CATEGORIES, len(columns))
                for name, column in zip(columns.column_names, columns.columns, strict=True)
            },
            copy=False,  # each column its own block: not copied again into 2-D blocks
        )

    def frame(self, table: str) -> pd.DataFrame:
        found = self.frames.get(table)
        if found is None:
            empty = pd.DataFrame({c: pd.Series(dtype=object) for c in SNAPSHOT_COLUMNS[table]})
            return _compact(empty) if table in _CATEGORICAL else empty
        return found


def _series(column: pa.ChunkedArray, categorical: bool, rows: int) -> pd.Series:
    if rows == 0 or column.null_count == rows:  # no value: objects, as pandas makes of None
        if categorical:
            nothing = pd.Index([], dtype=object)
            return pd.Series(pd.Categorical.from_codes(np.full(rows, -1), nothing))
        return pd.Series(np.full(rows, None, dtype=object), dtype=object)
    if pa.types.is_union(column.type):  # several types: each value as it was stored
        values = pd.Series(column.to_pylist(), dtype=object)
        return values.astype("category") if categorical else values
    if not categorical:
        # Copied out of the driver's batch, which stays in memory whole (every column of it)
        # while any frame refers to it: with the batch gone, the report's peak is lower than
        # when rows were read as tuples.
        return pa.chunked_array([pa.concat_arrays(column.chunks)], column.type).to_pandas()
    encoded = pc.dictionary_encode(column.combine_chunks())
    words = encoded.dictionary.to_pandas()
    order = np.argsort(words.to_numpy(dtype=object), kind="stable")
    place = np.empty(len(order), dtype=np.int64)
    place[order] = np.arange(len(order))  # each word's place among the sorted words
    codes = place[encoded.indices.fill_null(0).to_numpy()]
    if encoded.null_count:
        codes[encoded.is_null().to_numpy(zero_copy_only=False)] = -1
    return pd.Series(pd.Categorical.from_codes(codes, words.iloc[order].reset_index(drop=True)))


_CATEGORICAL = ("exchanges", "responses", "events")
"""Tables read with categorical ids (sessions and participants are small: kept as objects)."""


class ReportedStore(AnalyticsSnapshot, StressTests, Protocol):
    """The roles analytics reads: the snapshot, and the stress tests' results."""


async def _read_all(db: Path | str, study: str | None) -> dict[str, Any]:
    store = await open_store(db, access=Access.READ, study=study)
    try:
        return await _read(store)
    finally:
        await store.close()


async def _read(store: ReportedStore) -> dict[str, Any]:
    frames = _Frames()
    info: SnapshotInfo = await store.read_snapshot(frames)
    stress = tuple(await store.stress_results())
    notes: list[str] = []
    if not info.has_tables:
        notes.append("The database has no tables yet: the bot has never run on it.")
    return {
        **{table: frames.frame(table) for table in SNAPSHOT_COLUMNS},
        "definitions": list(info.definitions),
        "withdrawals": info.withdrawals,
        "annotations": _annotations(info.annotations),
        "imported_instruments": _imported_instruments(info.annotation_jobs),
        "version": info.schema_version,
        "notes": notes,
        "has_source": info.schema_version >= 5,  # who wrote each reply: since the console
        "stress": stress,
        "judgements": info.judgements,
        "judge_costs": info.judge_costs,
    }


def _compact(frame: pd.DataFrame) -> pd.DataFrame:
    for name in _CATEGORIES:
        if name in frame.columns:
            frame[name] = frame[name].astype("category")
    return frame


def _bundles(definitions: Iterable[tuple[str, str]], notes: list[str]) -> dict[str, Any]:
    """The latest definition of each study: validated, or at least its raw questionnaires.
    The study's models are imported here, after the read, not with this module: the report
    imports them on a thread while the database is read."""
    from scenarios.stored import UnreadableDefinition, read_definition

    bundles: dict[str, StudyBundle] = {}
    raw_questionnaires: dict[str, Mapping[str, Any]] = {}
    for study_id, definition in definitions:
        stored = read_definition(study_id, definition)
        try:
            bundle = stored.bundle()
        except UnreadableDefinition as error:
            notes.append(
                f"The stored definition of study {study_id!r} does not validate with this "
                f"version of ozlab ({error.problems} problems): its items are read as "
                "stored, and scenario details (expected times) are unknown."
            )
            raw_questionnaires.update(stored.questionnaires)
            continue
        bundles[study_id] = bundle
        raw_questionnaires.update(
            {q_id: q.model_dump(by_alias=True) for q_id, q in bundle.questionnaires.items()}
        )
    return {"bundles": bundles, "questionnaires": raw_questionnaires}


def _codebook(questionnaires: Mapping[str, Mapping[str, Any]]) -> tuple[pd.DataFrame, pd.DataFrame]:
    items, choices = [], []
    for q_id, questionnaire in questionnaires.items():
        stored = (
            (position, entry)
            for position, asked in enumerate(questionnaire.get("items", ()))
            for entry in stored_items(asked)
        )
        for position, item in stored:
            kind = item.get("type")
            items.append(
                {
                    "questionnaire_id": q_id,
                    "item_id": item.get("id"),
                    "position": position,
                    "type": kind,
                    "text": item.get("text", ""),
                    "min": item.get("min", _LOWEST.get(str(kind), np.nan)),
                    "max": item.get("max", _highest(item)),
                    "reverse": bool(item.get("reverse", False)),
                    "construct": item.get("construct"),
                    "attention": item.get("attention"),
                    "required": item.get("required"),
                }
            )
            for index, (value, label) in enumerate(item_choices(item)):
                choices.append([q_id, item.get("id"), index, value, label])
    items_frame = pd.DataFrame(items, columns=ITEM_COLUMNS)
    for name in ("min", "max"):
        items_frame[name] = items_frame[name].astype(float)
    return items_frame, pd.DataFrame(choices, columns=CHOICE_COLUMNS)


def stored_items(item: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    """The items an asked item's answers are stored as: itself, or a matrix's statements,
    each a scale item of its own (its construct, else the matrix's; the codebook's text
    names the matrix it was asked in)."""
    if item.get("type") != "matrix":
        return [item]
    shared = {k: item.get(k) for k in ("min", "max", "labels", "required")}
    return [
        {
            **shared,
            "type": "scale",
            "id": statement.get("id"),
            "text": f"{statement.get('text', '')} (matrix {item.get('id')}: {item.get('text')})",
            "reverse": statement.get("reverse", False),
            "construct": statement.get("construct") or item.get("construct"),
        }
        for statement in item.get("statements", ())
    ]


_LOWEST = {"yes_no": 0, "thumbs": 0, "ranking": 1}
"""The lowest point of items whose file states none: a ranking's first place is 1."""


def _highest(item: Mapping[str, Any]) -> float:
    """The highest point of an item whose file states none: 1 (yes, thumbs up), or a
    ranking's last place."""
    kind = item.get("type")
    if kind in ("yes_no", "thumbs"):
        return 1
    if kind in ORDER_TYPES:
        return len(item.get("options", ()))
    return np.nan


def item_choices(item: Mapping[str, Any]) -> list[tuple[Any, str]]:
    kind = item.get("type")
    if kind == "scale":
        labels = {int(k): v for k, v in item.get("labels", {}).items()}
        return [(v, labels.get(v, str(v))) for v in range(item["min"], item["max"] + 1)]
    if kind == "yes_no":
        return [(1, item.get("yes", "Yes")), (0, item.get("no", "No"))]
    if kind == "thumbs":
        return [(1, item.get("up", "👍")), (0, item.get("down", "👎"))]
    if kind in ("choice", "multi_choice", *ORDER_TYPES):
        return [(o["value"], o["label"]) for o in item.get("options", ())]
    if kind == "slider":  # only its ends have words
        ends = ((0, item.get("left")), (100, item.get("right")))
        return [(v, words) for v, words in ends if words]
    return []


def _sessions(sessions: pd.DataFrame, exchanges: pd.DataFrame, bundles: dict) -> pd.DataFrame:
    failed = exchanges["system_text"].isna().rename("failed")
    counts = (
        pd.concat([exchanges["session_id"], failed], axis=1)
        .groupby("session_id")
        .agg(n_exchanges=("failed", "size"), n_failed_replies=("failed", "sum"))
    )
    sessions = sessions.join(counts, on="session_id")
    for name in ("n_exchanges", "n_failed_replies"):
        sessions[name] = sessions[name].fillna(0).astype(int)
    sessions["duration_s"] = sessions["ended_at"] - sessions["started_at"]
    scenario_rows = [
        {
            "study_id": study_id,
            "scenario_id": s_id,
            "scenario_kind": s.kind,
            "expected_duration_s": s.expected_duration,
            "time_limit_s": s.time_limit,
            "max_exchanges": s.max_exchanges,
        }
        for study_id, bundle in bundles.items()
        for s_id, s in bundle.scenarios.items()
    ]
    columns = ["study_id", "scenario_id", "scenario_kind", "expected_duration_s"]
    scenarios = pd.DataFrame(scenario_rows, columns=[*columns, "time_limit_s", "max_exchanges"])
    keys = sessions[["study_id", "scenario_id"]].astype(object)
    merged = keys.merge(scenarios.astype({"study_id": object, "scenario_id": object}), how="left")
    for name in scenarios.columns[2:]:
        sessions[name] = merged[name].to_numpy()
    # Without a definition, a session closed as "completed" is a rating task.
    unknown = sessions["scenario_kind"].isna()
    rating = sessions["end_reason"].astype(object) == EndReason.COMPLETED.value
    sessions["scenario_kind"] = np.where(
        unknown, np.where(rating, "rating", "dialogue"), sessions["scenario_kind"]
    )
    for name in ("expected_duration_s", "time_limit_s", "max_exchanges", "success", "correct"):
        sessions[name] = pd.to_numeric(sessions[name], errors="coerce").astype(float)
    return sessions


def _take(keys: pd.Series, table: pd.DataFrame) -> dict[str, Any]:
    """Every column of ``table`` (indexed by key) for every key: looked up once per distinct
    key, then spread by category codes, which is what keeps a million answers fast. Numbers
    come back as float arrays (NaN for a key not in ``table``), words as categoricals with
    their sorted values as categories, so that a million strings are never made."""
    keys = keys if isinstance(keys.dtype, pd.CategoricalDtype) else keys.astype("category")
    table = table.set_axis(table.index.astype(object))
    small = table.reindex(pd.Index(keys.cat.categories, dtype=object))
    codes = keys.cat.codes.to_numpy()  # -1 (no key) picks the appended "not found" entry
    found: dict[str, Any] = {}
    for name in small.columns:
        column = small[name]
        if pd.api.types.is_numeric_dtype(column):  # booleans too: True is 1.0
            found[name] = np.append(column.to_numpy(dtype=float, na_value=np.nan), np.nan)[codes]
            continue
        words, categories = pd.factorize(column.to_numpy(dtype=object), sort=True)
        found[name] = _categorical(np.append(words, -1)[codes], categories)
    return found


def _categorical(
    codes: np.ndarray, categories: pd.Index | np.ndarray, dtype: Any = None
) -> pd.Categorical:
    """``codes`` into ``categories`` (−1: missing), keeping only the categories used, in
    their order: with sorted categories, what ``pd.Categorical`` of the values gives,
    without hashing a million values."""
    used = np.bincount(codes[codes >= 0], minlength=len(categories)) > 0
    renumbered = np.append(np.cumsum(used) - 1, -1)[codes]
    kept = np.asarray(categories, dtype=object)[used]
    return pd.Categorical.from_codes(renumbered, pd.Index(kept, dtype=dtype))


def _sorted_categories(values: pd.Series, dtype: Any = None) -> pd.Categorical:
    """``values`` with the categories they use, sorted (as ``pd.Categorical`` makes them)."""
    order = values.cat.categories.argsort()
    place = np.append(np.argsort(order), -1)  # each category's place in sorted order
    return _categorical(place[values.cat.codes.to_numpy()], values.cat.categories[order], dtype)


def _codes(values: pd.Series | pd.Categorical, categories: pd.Index) -> np.ndarray:
    """The codes of categorical ``values`` in ``categories`` (a superset), −1 for missing."""
    values = pd.Categorical(values)
    return np.append(categories.get_indexer(values.categories), -1)[values.codes]


def _responses(
    responses: pd.DataFrame, sessions: pd.DataFrame, items: pd.DataFrame
) -> pd.DataFrame:
    """Answers with their item's metadata, the moment asked, the system, and a score in
    which reverse items are recoded (min + max − answer) so that high always means good."""
    meta = items.assign(pair=items["questionnaire_id"] + "\x1f" + items["item_id"])
    meta = meta.drop_duplicates("pair", keep="last").set_index("pair")
    found = _take(_pairs(responses), meta[["type", "min", "max", "reverse", "construct"]])
    found["reverse"] = found["reverse"] == 1  # an item not in the codebook is scored as given
    for name, column in found.items():
        responses[name] = column
    for name in ("value", "shown_at", "answered_at", "turn", "attention_ok"):
        # a copy even of floats: the read's columns may be read-only views of Arrow's memory
        responses[name] = pd.to_numeric(responses[name], errors="coerce").astype(float)
    type_known = responses["type"].notna()
    numeric = responses["type"].isin(NUMERIC_TYPES) | ~type_known
    usable = (numeric & (responses["status"] == AnswerStatus.ANSWERED.value)).to_numpy()
    value = np.where(usable, responses["value"].to_numpy(), np.nan)
    recoded = found["min"] + found["max"] - value  # arrays: no index to align a million times
    responses["score"] = np.where(found["reverse"], recoded, value)

    has_session = responses["session_id"].notna().to_numpy()
    is_screening = (responses["moment"] == Moment.SCREENING.value).to_numpy(dtype=bool)
    responses["moment"] = _sorted_categories(responses["moment"], dtype=object)

    # A side-by-side session met two systems at once: its answers are no one system's.
    both = sessions["scenario_kind"].astype(object) == "side_by_side"
    shown = sessions["system_id"].astype(object).where(~both, SEVERAL_SYSTEMS)
    by_session = sessions.assign(system_id=shown).set_index("session_id")
    attached = _take(
        responses["session_id"], by_session[["system_id", "scenario_id"]].astype(object)
    )
    met = sessions.assign(system_id=shown).groupby("participant_id")["system_id"]
    per_participant = met.first().where(met.nunique() == 1, SEVERAL_SYSTEMS)
    own = _take(responses["participant_id"], per_participant.to_frame())["system_id"]
    imported = (responses.pop("origin") == Origin.IMPORT.value).to_numpy(bool)
    named = responses.pop("system_id")
    responses["imported"] = imported
    # The system of each answer, in codes: its session's, else its participant's.
    sources = (attached["system_id"], own, named.array)
    names = sorted({NO_SYSTEM, *(s for v in sources for s in v.categories)})
    systems = pd.Index(names)
    session_system, own_system, named_system = (_codes(v, systems) for v in sources)
    system = np.where(has_session, session_system, own_system)
    if imported.any():
        # Imported answers without a session carry the system they rate; their timing may
        # be unknown (stored as shown = answered), which must not read as too fast.
        system = np.where(imported & ~has_session & (named_system >= 0), named_system, system)
        untimed = imported & (responses["shown_at"] == responses["answered_at"]).to_numpy()
        responses.loc[untimed, "shown_at"] = np.nan
    no_system = names.index(NO_SYSTEM)
    system = np.where(is_screening | (system < 0), no_system, system)
    responses["system_id"] = _categorical(system, systems)
    responses["scenario_id"] = attached["scenario_id"]
    return responses


def _pairs(responses: pd.DataFrame) -> pd.Series:
    """``questionnaire_id␟item_id`` as a categorical, built from the few distinct pairs."""
    q, i = responses["questionnaire_id"], responses["item_id"]
    code = (
        q.cat.codes.to_numpy().astype(np.int64) * (len(i.cat.categories) + 1)
        + i.cat.codes.to_numpy()
    )
    inverse, unique = pd.factorize(code, sort=True)
    q_cat = np.asarray(q.cat.categories, dtype=object)
    i_cat = np.asarray(i.cat.categories, dtype=object)
    names = [f"{q_cat[c // (len(i_cat) + 1)]}\x1f{i_cat[c % (len(i_cat) + 1)]}" for c in unique]
    return pd.Series(pd.Categorical.from_codes(inverse.ravel(), categories=pd.Index(names)))


def _assemble(
    *,
    sessions: pd.DataFrame,
    exchanges: pd.DataFrame,
    responses: pd.DataFrame,
    events: pd.DataFrame,
    participants: pd.DataFrame,
    commands: pd.DataFrame,
    votes: pd.DataFrame,
    media: pd.DataFrame,
    definitions: list[tuple[str, str]],
    withdrawals: tuple[tuple[str, str, int], ...],
    annotations: pd.DataFrame,
    imported_instruments: dict[str, Questionnaire],
    version: int,
    notes: list[str],
    has_source: bool,
    stress: tuple[StressResult, ...] = (),
    judgements: tuple[JudgementRecord, ...] = (),
    judge_costs: tuple[JudgeCost, ...] = (),
) -> StudyData:
    found = _bundles(definitions, notes)
    bundles: dict[str, StudyBundle] = found["bundles"]
    if not definitions and version:
        notes.append(
            "The study definition is not stored in this database (the bot stores it when it "
            "starts; versions before schema 4 did not): item scales, reverse items and "
            "constructs are unknown, so answers are scored as given and no construct scores "
            "or alphas are computed."
        )
    items, choices = _codebook(found["questionnaires"])
    for name in ("started_at", "ended_at", "task_index"):
        sessions[name] = pd.to_numeric(sessions[name], errors="coerce").astype(float)
    sessions = _sessions(sessions, exchanges, bundles)
    by_session = sessions.set_index("session_id")[["participant_id", "system_id", "scenario_id"]]
    attached = by_session.astype(object).reindex(exchanges["session_id"].astype(object))
    for name in by_session.columns:
        exchanges[name] = attached[name].to_numpy()
    responses = _responses(responses, sessions, items)
    events["at"] = pd.to_numeric(events["at"], errors="coerce").astype(float)
    return StudyData(
        sessions=sessions,
        exchanges=exchanges,
        responses=responses,
        events=events,
        participants=participants,
        items=items,
        choices=choices,
        bundles=bundles,
        notes=tuple(notes),
        schema_version=version,
        has_wizard_source=has_source,
        definition_digests={
            study_id: hashlib.sha256(definition.encode()).hexdigest()
            for study_id, definition in definitions  # oldest first: the latest wins
        },
        withdrawals=withdrawals,
        commands=commands,
        stress=stress,
        annotations=annotations,
        imported_instruments=imported_instruments,
        votes=votes_frame(votes),
        vote_studies=tuple(str(study) for study in votes["study_id"].astype(object)),
        judgements=judgements,
        judge_costs=judge_costs,
        media=media,
    )


def _imported_instruments(jobs: Sequence[AnnotationJobRecord]) -> dict[str, Questionnaire]:
    """The instruments imported jobs keep in their definition (``{"imported": true,
    "instruments": {id: questionnaire}}``); one that no longer validates is left out."""
    from pydantic import ValidationError

    from questionnaires.models import Questionnaire

    found: dict[str, Questionnaire] = {}
    for job in jobs:
        try:
            definition = json.loads(job.definition)
        except ValueError:
            continue
        kept = definition.get("instruments") if isinstance(definition, dict) else None
        for instrument_id, instrument in (kept if isinstance(kept, dict) else {}).items():
            with contextlib.suppress(ValidationError):
                found.setdefault(str(instrument_id), Questionnaire.model_validate(instrument))
    return found


def _annotations(ratings: Sequence[AnnotationRating]) -> pd.DataFrame:
    """The store's annotation ratings as a frame (``ANNOTATION_COLUMNS``, plain objects).
    A pair's forced choices (ACUTE-Eval) rate no one conversation: they are the votes frame's
    (``votes``), analysed as comparisons, never as ratings with an agreement."""
    ratings = [rating for rating in ratings if rating.level != AnnotationLevel.PAIR.value]
    if not ratings:
        return no_annotations()
    return pd.DataFrame(
        [astuple(rating) for rating in ratings], columns=ANNOTATION_COLUMNS, dtype=object
    )
