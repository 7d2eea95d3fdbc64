"""``analytics export``: the study as tidy tables and a codebook, for R, SPSS or a paper.

Long format by default: one row per session, per exchange, per answer, per wizard action
(one observation per row, no pivoting), every time both as Unix seconds and as ISO 8601 UTC
beside it. ``--wide`` adds ``responses_wide``: one row per participant × session, one
column per item, the layout SPSS users analyse. Formats: UTF-8 CSV, Parquet, or SPSS
``.sav`` with variable and value labels (read directly by SPSS, and by R's ``haven``).

Every column has one declared type, also when it is empty (an ``error`` column without
errors is still text), and a meaning in ``columns``; the codebook says what each item asked,
on which scale, with which labels, whether it is reverse-worded, to which construct it
belongs and which wide column holds it. The responses file is also what ``ozlab import
responses`` reads back. A study with annotation ratings also gets the annotators' tables
(``analytics.io.export_annotations``), a study with pairwise votes the votes, one row per
vote (``analytics.io.export_votes``).

The same database gives the same bytes: rows and columns come in a fixed order, and the
one time a format writes of its own (the ``.sav`` header's creation time) is
``SOURCE_DATE_EPOCH`` when that is set, as reproducible builds do.

The files hold participants' words: each is its owner's only (0600, the folders made for them
0700) and entered in the study's register of files written (an erasure names them); a CSV's
text cell that a spreadsheet would evaluate as a formula (``=``, ``+``, ``-``, ``@``, a tab
or a carriage return first, on any of its lines) starts that line with ``'``
(:mod:`bot.core.researcher_files`; numbers are never touched). Parquet, ``.sav`` and
``raw_csv`` keep every text as written.
"""

from __future__ import annotations

import importlib.util
import json
import os
import re
from collections.abc import Iterable
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal

import numpy as np
import pandas as pd

from analytics.data.loading import NUMERIC_TYPES, ORDER_TYPES, StudyData
from analytics.data.selecting import load_study
from analytics.io.progress import steps
from bot.core.errors import StudyDataError
from bot.core.researcher_files import private_file, private_folder, private_path, write_rows
from bot.core.vocabulary import AnswerStatus, CommandKind, EventKind, Moment, WrittenKind
from bot.rights.register import register_written

FORMATS = ("csv", "parquet", "sav")


class ParquetUnavailable(StudyDataError):
    """Parquet was asked for and pyarrow is not installed."""


Kind = Literal["string", "integer", "number", "time"]


@dataclass(frozen=True)
class Column:
    """One exported column: its type, whatever the data, and what it means."""

    name: str
    kind: Kind
    meaning: str
    labels: dict[int, str] | dict[str, str] | None = None
    """Value labels (``.sav``): what each code means."""


def timed_columns(name: str, what: str) -> list[Column]:
    return [
        Column(name, "number", f"{what}, in Unix seconds (UTC)"),
        Column(f"{name}_iso", "time", f"{what}, as an ISO 8601 UTC time"),
    ]


_YES_NO = {1: "yes", 0: "no"}
_PARTICIPANT = Column(
    "participant_id", "string", "pseudonym of the participant (never the Telegram id)"
)
_SESSION = Column("session_id", "string", "one task of one participant: a scenario with one system")
_SYSTEM = Column(
    "system_id",
    "string",
    "the system under test; (no system) for answers given before any task, (several "
    "systems) for post-study answers of a participant who met more than one",
)
_SCENARIO = Column("scenario_id", "string", "the task's scenario")

SESSIONS = [
    _SESSION,
    _PARTICIPANT,
    Column("study_id", "string", "the study, as its definition names it"),
    _SYSTEM,
    _SCENARIO,
    Column("scenario_kind", "string", "dialogue (chat with the system) or rating (rate rows)"),
    Column("task_index", "integer", "the task's place in the participant's sequence, from 0"),
    Column("design", "string", "the assignment design: random, balanced or latin_square"),
    Column("seed", "string", "the seed the assignment was drawn with (reproduces it)"),
    Column("state", "string", "dialogue, questionnaire, ended or abandoned"),
    *timed_columns("started_at", "when the task started"),
    *timed_columns("ended_at", "when the task ended (empty: not ended)"),
    Column("duration_s", "number", "seconds from the start of the task to its end"),
    Column("expected_duration_s", "number", "the scenario's expected duration in seconds"),
    Column(
        "end_reason",
        "string",
        "why the task ended: success, system_ended, exchange_limit, time_limit, "
        "participant (/done), wizard, completed (rating task) or abandoned",
    ),
    Column(
        "success",
        "integer",
        "the system (or a wizard) reported the task done: 1 yes, 0 no, empty unknown",
        _YES_NO,
    ),
    Column(
        "correct",
        "integer",
        "the task was done correctly as the protocol defines it (the scenario's success_if "
        "on what the system reported, or a wizard's judgement): 1 yes, 0 no, empty not defined",
        _YES_NO,
    ),
    Column("n_exchanges", "integer", "exchanges (a participant's turn and the reply) in the task"),
    Column("n_failed_replies", "integer", "exchanges whose reply never came (error, timeout)"),
]
EXCHANGES = [
    Column("exchange_id", "string", "one exchange: the participant's turn and the reply"),
    _SESSION,
    _PARTICIPANT,
    _SYSTEM,
    _SCENARIO,
    Column("turn", "integer", "the exchange's place in the session, from 1"),
    Column("user_text", "string", "what the participant wrote"),
    *timed_columns("user_at", "when the participant wrote"),
    Column("system_text", "string", "the reply the participant saw (empty: none came)"),
    *timed_columns("system_at", "when the reply was sent"),
    Column("latency_ms", "number", "milliseconds the system took to reply"),
    Column("error", "string", "why no reply came (timeout, the system's error); empty if one did"),
    Column(
        "source",
        "string",
        "who wrote the reply: system (as the system said it), edited (the system's words "
        "edited by a wizard) or wizard (a wizard's own words in the system's place)",
    ),
    Column(
        "original_text",
        "string",
        "edited or wizard replies: what the system had said (empty: it said nothing)",
    ),
    Column("wizard", "string", "the experimenter who approved, edited or wrote the reply"),
]
RESPONSES = [
    Column("response_id", "string", "one answer to one item"),
    _PARTICIPANT,
    _SESSION,
    _SYSTEM,
    _SCENARIO,
    Column(
        "scope",
        "string",
        "what an answer set belongs to (a key: a session, one of its turns, the study, or "
        "an imported answer's own); read moment, system_id and imported instead",
    ),
    Column(
        "moment",
        "string",
        "when it was asked: screening, exchange, rating, post_task or post_study",
    ),
    Column("questionnaire_id", "string", "the instrument (codebook: questionnaire_id)"),
    Column("item_id", "string", "the item (codebook: item_id)"),
    Column(
        "type",
        "string",
        "the item's type: scale, yes_no, thumbs, choice, multi_choice, text, slider, ranking",
    ),
    Column(
        "value",
        "integer",
        "the answer on the item's scale, as given (reverse items not "
        "recoded); numeric choice codes; slider: 0 to 100",
    ),
    Column("label", "string", "the wording of the answer chosen"),
    Column(
        "text",
        "string",
        "free text, or the codes of choice items whose options are words "
        "(multi_choice: the codes chosen, separated by commas; ranking: every option's code "
        "from first to last, separated by commas)",
    ),
    Column(
        "status", "string", "answered, skipped (optional item), not_asked (skip logic) or missing"
    ),
    Column(
        "score",
        "integer",
        "value with reverse items recoded (min + max - value): higher is better",
    ),
    Column("reverse", "integer", "the item is reverse-worded: 1 yes, 0 no", _YES_NO),
    Column("construct", "string", "the scale the item belongs to, for construct scores and alpha"),
    Column("turn", "integer", "answers about one reply: the turn rated"),
    Column("stimulus_id", "string", "rating tasks: the row rated"),
    Column(
        "attention_ok",
        "integer",
        "attention checks: 1 passed, 0 failed",
        {1: "passed", 0: "failed"},
    ),
    Column(
        "imported",
        "integer",
        "the answer came from a file (ozlab import responses), not over Telegram: 1 yes, 0 no",
        _YES_NO,
    ),
    *timed_columns("shown_at", "when the item was shown"),
    *timed_columns("answered_at", "when the item was answered"),
]
WIZARD_KINDS = {
    EventKind.WIZARD_MESSAGE: "a wizard wrote to the participant as the system, unprompted",
    EventKind.WIZARD_NOTE: "a wizard's note on the session (or on one turn)",
    EventKind.JUDGED: "a wizard judged the task (success 1 or 0)",
    EventKind.ENDED_BY_WIZARD: "a wizard ended the session (reason)",
    EventKind.PAUSED: "a wizard paused the session",
    EventKind.RESUMED_BY_WIZARD: "a wizard resumed the paused session",
    EventKind.STARTED_BY_WIZARD: "a wizard started a participant held after consent",
    EventKind.AUTO_SENT: "a reply held for a wizard went out on its own after the wait",
}
COMMANDS = [
    Column("command_id", "integer", "one command an experimenter wrote in the console"),
    *timed_columns("at", "when it was written"),
    Column("wizard", "string", "the experimenter who wrote it"),
    Column("kind", "string", ", ".join(kind.value for kind in CommandKind)),
    _SESSION,
    Column("payload", "string", "what came with it, as JSON (a text, a reason, a gate)"),
    *timed_columns("applied_at", "when the bot dealt with it (empty: not yet)"),
    Column(
        "outcome",
        "string",
        "applied; expired: no longer possible when the bot came to it (the session ended,"
        " another wizard was first); rejected: it never could be; empty: not dealt with yet",
    ),
]

WIZARD_ACTIONS = [
    Column("event_id", "string", "one wizard action, as the bot logged it when it applied it"),
    _PARTICIPANT,
    _SESSION,
    _SYSTEM,
    *timed_columns("at", "when the bot applied it"),
    Column(
        "kind",
        "string",
        "; ".join(f"{kind.value}: {what}" for kind, what in WIZARD_KINDS.items()),
    ),
    Column("wizard", "string", "the experimenter (empty: auto_sent)"),
    Column("turn", "integer", "notes: the turn the note is about"),
    Column("text", "string", "the message (wizard_message) or the note (wizard_note)"),
    Column("reason", "string", "ended_by_wizard: the reason given"),
    Column("success", "integer", "judged: 1 success, 0 failure", _YES_NO),
]
CODEBOOK = [
    Column("questionnaire_id", "string", "the instrument, as the study file names it"),
    Column("item_id", "string", "the item, as the study file names it"),
    Column("position", "integer", "the item's place in its instrument, from 0"),
    Column(
        "type",
        "string",
        "scale, yes_no, thumbs, choice, multi_choice, text, slider or ranking (a matrix's "
        "statements: scale, one row each)",
    ),
    Column("text", "string", "the item's wording"),
    Column(
        "min",
        "integer",
        "the lowest point of the scale (yes/no, thumbs, slider: 0; ranking: 1, the first place)",
    ),
    Column(
        "max",
        "integer",
        "the highest point of the scale (yes/no, thumbs: 1; slider: 100; ranking: the number "
        "of options, the last place)",
    ),
    Column(
        "labels",
        "string",
        "every scale point or option as value=label, separated by ; (slider: its ends' words)",
    ),
    Column("reverse", "integer", "the item is reverse-worded: 1 yes, 0 no", _YES_NO),
    Column("construct", "string", "the scale the item belongs to, for construct scores and alpha"),
    Column(
        "attention",
        "string",
        "attention checks: the answer the item instructs (its stored code: 1/0 for yes/no)",
    ),
    Column("required", "integer", "the item must be answered: 1 yes, 0 no", _YES_NO),
    Column(
        "variable",
        "string",
        "its column in responses_wide (items asked per turn or per row: the start of "
        "VARIABLE_tN / VARIABLE_ROW; multi_choice: VARIABLE_CODE per option; ranking: "
        "VARIABLE_CODE per option, its rank, 1 = first)",
    ),
]
CODEBOOK_VALUES = [
    Column("questionnaire_id", "string", "the instrument, as the study file names it"),
    Column("item_id", "string", "the item, as the study file names it"),
    Column("order", "integer", "the option's place as asked, from 0"),
    Column("value", "string", "the code stored for the option: a number, or a word"),
    Column("label", "string", "the option's wording"),
]
COLUMNS = [
    Column("table", "string", "the exported file, without its suffix"),
    Column("column", "string", "the column, as the file's header names it"),
    Column(
        "type",
        "string",
        "string, integer, number (decimal) or time (ISO 8601 UTC). In CSV files a string "
        "that a spreadsheet would run as a formula (one beginning with = + - @, a tab or a "
        "carriage return, and not a plain number such as -3) starts with ' instead, and so "
        "does every line in it after a line break (such a cell is always quoted): shown "
        "as text, never evaluated; the export's --raw-csv, Parquet and .sav keep the text "
        "as written",
    ),
    Column("meaning", "string", "what the column holds"),
]
WIDE_KEYS = [
    _PARTICIPANT,
    Column(
        "session_id",
        "string",
        "the task (empty: answers of the participant outside any task, e.g. screening)",
    ),
    Column("study_id", "string", "the study, as its definition names it"),
    _SYSTEM,
    _SCENARIO,
    Column("task_index", "integer", "the task's place in the participant's sequence, from 0"),
    Column("state", "string", "dialogue, questionnaire, ended or abandoned"),
    SESSIONS[[c.name for c in SESSIONS].index("success")],
    SESSIONS[[c.name for c in SESSIONS].index("correct")],
]
_PARTICIPANT_MOMENTS = (Moment.SCREENING.value, Moment.POST_STUDY.value)
_ISO = "%Y-%m-%dT%H:%M:%SZ"


@dataclass
class Table:
    """A frame with its declared columns, ready to write in any format."""

    frame: pd.DataFrame
    columns: list[Column]
    label: str = ""
    """The ``.sav`` file label."""


def export_study(
    db: Path | str,
    out: Path | str,
    *,
    fmt: str = "csv",
    study: str | None = None,
    wide: bool = False,
    raw_csv: bool = False,
) -> list[Path]:
    """Write every table (and ``responses_wide`` with ``wide``) into ``out`` in ``fmt``;
    returns the files written. ``raw_csv``: text cells as written, formulas too (for R or
    pandas, never a spreadsheet)."""
    if fmt not in FORMATS:
        raise ValueError(f"unknown export format {fmt!r}: {', '.join(FORMATS)}")
    if raw_csv and fmt != "csv":
        raise StudyDataError(
            f"--raw-csv goes with --format csv: {fmt} files keep every text as written already"
        )
    if fmt == "parquet" and importlib.util.find_spec("pyarrow") is None:
        raise ParquetUnavailable(
            "Parquet needs pyarrow, which is not installed: pip install 'ozlab[parquet]' "
            "(or pip install pyarrow), or export CSV with --format csv."
        )
    out = Path(out)
    if out.exists() and not out.is_dir():  # refused before anything is read or written
        raise StudyDataError(f"{out} is a file: give --out a folder to write the tables into")
    out = private_folder(out)
    with steps(10 if wide else 9, "Export") as step:
        step("reading the database")
        data = load_study(db, study)
        found = tables(data, wide=wide)
        step.add(len(found) - (9 if wide else 8))  # the annotators' tables, when rated
        written = []
        for name, table in found.items():
            step(name)
            written.append(_write(table, out / f"{name}.{fmt}", fmt, raw_csv=raw_csv))
    register_written(db, WrittenKind.EXPORT, written, study=study)
    return written


def tables(data: StudyData, *, wide: bool = False) -> dict[str, Table]:
    """Every exported table, by file name, each with its declared columns."""
    study = _study_id(data) or "export"
    sessions = _timed(data.sessions, ("started_at", "ended_at"))
    exchanges = _timed(data.exchanges, ("user_at", "system_at"))
    responses = _timed(data.responses, ("shown_at", "answered_at"))
    found: dict[str, Table] = {
        "sessions": Table(sessions, SESSIONS),
        "exchanges": Table(exchanges, EXCHANGES),
        "responses": Table(responses, RESPONSES),
        "wizard_actions": Table(wizard_actions(data), WIZARD_ACTIONS),
        "commands": Table(_timed(data.commands, ("at", "applied_at")), COMMANDS),
        "codebook": Table(codebook(data), CODEBOOK),
        "codebook_values": Table(
            data.choices.rename(columns={"position": "order"}), CODEBOOK_VALUES
        ),
    }
    if wide:
        found["responses_wide"] = wide_responses(data)
    # The annotators' ratings and final values (only a study with ratings has them)
    from analytics.io.export_annotations import annotation_tables  # it imports this module

    found |= annotation_tables(data, wide=wide)
    from analytics.io.export_votes import vote_tables  # it imports this module too

    found |= vote_tables(data)
    from analytics.io.export_media import media_tables  # it imports this module too

    found |= media_tables(data)

    from analytics.io.export_stress import stress_tables  # it imports this module

    found |= stress_tables(data)
    typed = {
        name: Table(_typed(t.frame, t.columns), t.columns, f"ozlab {study}: {name}")
        for name, t in found.items()
    }
    described = [*((name, t.columns) for name, t in typed.items()), ("columns", COLUMNS)]
    typed["columns"] = Table(_typed(_columns(described), COLUMNS), COLUMNS, f"ozlab {study}")
    return typed


def codebook(data: StudyData) -> pd.DataFrame:
    """One row per item, with its scale points and labels as ``1=Never; 2=Rarely; …`` and
    the column that holds it in the wide file."""
    choices = data.choices.astype({"value": str})
    labels = (
        choices.assign(pair=choices["value"] + "=" + choices["label"].astype(str))
        .groupby(["questionnaire_id", "item_id"], sort=False)["pair"]
        .agg("; ".join)
        .rename("labels")
        .reset_index()
    )
    items = data.items.merge(labels, on=["questionnaire_id", "item_id"], how="left")
    items["reverse"] = items["reverse"].astype(int)
    items["required"] = [None if r is None else int(bool(r)) for r in items["required"]]
    items["attention"] = [_code(a) for a in items["attention"]]
    names = _variable_names(data.items)
    pairs = zip(items["questionnaire_id"], items["item_id"], strict=True)
    items["variable"] = [names[(q, i)] for q, i in pairs]
    return items


def wizard_actions(data: StudyData) -> pd.DataFrame:
    """The wizard's actions the bot applied (notes, messages, judgements, ends, pauses),
    one row each with what the event recorded, in the order they happened."""
    events = data.events[data.events["kind"].astype(object).isin(list(WIZARD_KINDS))]
    details = [_json(text) for text in events["data"]]
    frame = pd.DataFrame(
        {
            "event_id": events["event_id"].to_numpy(),
            "participant_id": events["participant_id"].astype(object).to_numpy(),
            "session_id": events["session_id"].astype(object).to_numpy(),
            "at": events["at"].to_numpy(),
            "kind": events["kind"].astype(object).to_numpy(),
            **{
                name: [d.get(name) for d in details]
                for name in ("wizard", "turn", "text", "reason")
            },
            "success": [_flag(d.get("success")) for d in details],
        }
    )
    systems = data.sessions.set_index("session_id")["system_id"].astype(object)
    frame["system_id"] = frame["session_id"].map(systems)
    return _timed(frame, ("at",))


def wide_responses(data: StudyData) -> Table:
    """One row per participant × session, one column per item (per turn or per row for
    items asked repeatedly, per option for multi_choice and ranking), with labels for SPSS.

    Answers given outside any task (screening, post-study) are the participant's: repeated
    on each of their rows, as the participant-level variables of a mixed model are. Only
    answered items hold a value; why one is empty is in the long file's ``status``."""
    items = _wide_items(data)
    names = _variable_names(items)
    answers = data.responses.astype({"session_id": object, "participant_id": object})
    answers = answers[answers["status"].astype(object) == AnswerStatus.ANSWERED.value]
    personal = answers["session_id"].isna() & answers["moment"].astype(object).isin(
        _PARTICIPANT_MOMENTS
    )
    rows = _wide_rows(data, answers[~personal])
    answers = answers.assign(
        _row=np.where(
            answers["session_id"].notna(),
            answers["session_id"],
            answers["participant_id"] + "\x1f" + answers["system_id"].astype(object),
        ),
        _suffix=_repeat_suffix(answers),
    )
    columns = list(WIDE_KEYS)
    taken = {c.name.lower() for c in columns}
    by_item = answers.groupby(["questionnaire_id", "item_id"], observed=True, sort=False)
    groups = {(str(q), str(i)): group for (q, i), group in by_item}
    cells_by_column: dict[str, np.ndarray] = {}
    for item in items.to_dict("records"):
        pair = (str(item["questionnaire_id"]), str(item["item_id"]))
        group = groups.get(pair, answers.iloc[:0])
        # An item asked only outside tasks belongs to the participant, on each of their rows
        key = "participant_id" if _is_personal(group) else "_row"
        for suffix in sorted(set(group["_suffix"]), key=_suffix_order) or [""]:
            asked = group[group["_suffix"] == suffix]
            for column, values in _item_cells(item, asked, names[pair] + suffix, data, suffix):
                column = replace(column, name=unique_name(column.name, taken))
                cells = pd.Series(values.to_numpy(), index=asked[key].to_numpy())
                cells = cells[~cells.index.duplicated(keep="last")]  # the last answer counts
                cells_by_column[column.name] = rows[key].map(cells).to_numpy()
                columns.append(column)
    answered = pd.DataFrame(cells_by_column, index=rows.index)
    return Table(pd.concat([rows.drop(columns="_row"), answered], axis=1), columns)


def _wide_items(data: StudyData) -> pd.DataFrame:
    """The codebook's items, then items answered that no stored definition names (their
    type unknown), so that no answer is left out of the wide file."""
    known = data.items.drop_duplicates(["questionnaire_id", "item_id"], keep="last")
    pairs = data.responses[["questionnaire_id", "item_id"]].astype(object).drop_duplicates()
    named = known[["questionnaire_id", "item_id"]].astype(object)
    unknown = pairs.merge(named, how="left", indicator=True)
    unknown = unknown[unknown["_merge"] == "left_only"].drop(columns="_merge")
    if unknown.empty:
        return known
    return pd.concat([known, unknown.assign(text="")], ignore_index=True)


def unique_name(name: str, taken: set[str]) -> str:
    """``name``, or ``name_2``, ``name_3``… when a column (ignoring case) already has it."""
    found, n = name, 1
    while found.lower() in taken:
        n += 1
        found = f"{name}_{n}"
    taken.add(found.lower())
    return found


def _wide_rows(data: StudyData, tasked: pd.DataFrame) -> pd.DataFrame:
    """The rows of the wide file: every session, then a participant's answers outside any
    session with a system (imported ones), then participants with answers but no row."""
    keys = [c.name for c in WIDE_KEYS]
    sessions = data.sessions.astype(object).reindex(columns=keys)
    sessions["_row"] = sessions["session_id"]
    loose = tasked[tasked["session_id"].isna()]
    extra = loose[["participant_id", "system_id"]].astype(object).drop_duplicates()
    extra = extra.assign(_row=extra["participant_id"] + "\x1f" + extra["system_id"])
    known = set(sessions["participant_id"]) | set(extra["participant_id"])
    answered = data.responses[
        data.responses["status"].astype(object) == AnswerStatus.ANSWERED.value
    ]
    alone = sorted(set(answered["participant_id"].astype(object)) - known)
    lonely = pd.DataFrame({"participant_id": alone, "_row": [f"{p}\x1f" for p in alone]})
    rows = pd.concat([sessions, extra, lonely], ignore_index=True).reindex(columns=[*keys, "_row"])
    rows["study_id"] = rows["study_id"].fillna(_study_id(data))
    order = rows.assign(_task=pd.to_numeric(rows["task_index"], errors="coerce"))
    order = order.sort_values(
        ["participant_id", "_task", "session_id", "system_id"], na_position="last", kind="stable"
    )
    return order.drop(columns="_task").reset_index(drop=True)


def _repeat_suffix(answers: pd.DataFrame) -> np.ndarray:
    """``_t3`` for answers about turn 3, ``_ROW`` for a rating task's row, else nothing."""
    turn = pd.to_numeric(answers["turn"], errors="coerce")
    stimulus = answers["stimulus_id"].astype(object)
    by_turn = np.array([f"_t{int(t)}" if pd.notna(t) else "" for t in turn], dtype=object)
    by_row = np.array([f"_{spss_name(str(s))}" if pd.notna(s) else "" for s in stimulus])
    return np.where(by_row != "", by_row, by_turn)


def _about(suffix: str) -> str:
    turn = re.fullmatch(r"_t(\d+)", suffix)
    return f"about turn {turn[1]}" if turn else f"about row {suffix[1:]}"


def _suffix_order(suffix: str) -> tuple[int, int, str]:
    turn = re.fullmatch(r"_t(\d+)", suffix)
    return (0, 0, "") if not suffix else (1, int(turn[1]), "") if turn else (2, 0, suffix)


def _is_personal(asked: pd.DataFrame) -> bool:
    return bool(
        len(asked)
        and asked["session_id"].isna().all()
        and asked["moment"].astype(object).isin(_PARTICIPANT_MOMENTS).all()
    )


def _item_cells(
    item: dict[Any, Any], asked: pd.DataFrame, name: str, data: StudyData, suffix: str
) -> Iterable[tuple[Column, pd.Series]]:
    """The wide column(s) of one item (one per option for multi_choice and ranking), with
    labels."""
    kind, q_id, i_id = item.get("type"), item["questionnaire_id"], item["item_id"]
    about = f" ({_about(suffix)})" if suffix else ""
    meaning = f"{q_id} / {i_id}: {item.get('text') or '(not in the stored definition)'}{about}"
    choices = data.choices
    options = choices[(choices["questionnaire_id"] == q_id) & (choices["item_id"] == i_id)]
    pairs = list(zip(options["value"], options["label"].astype(str), strict=True))
    numeric_codes = all(
        isinstance(v, int | np.integer) and not isinstance(v, bool) for v, _ in pairs
    )
    if pd.isna(kind):  # no definition: numbers if the answers have numbers, else text
        kind = "scale" if asked["value"].notna().any() else "text"
    if kind in NUMERIC_TYPES or (kind == "choice" and numeric_codes and pairs):
        labels = {int(v): spss_label(label, 120) for v, label in pairs}
        column = Column(name, "integer", meaning, labels or None)
        yield column, pd.to_numeric(asked["value"], errors="coerce")
    elif kind == "choice":
        labels_s = {str(v): spss_label(label, 120) for v, label in pairs}
        coded = asked["value"].astype("Float64").astype("Int64").astype(object)
        codes = np.where(asked["text"].notna(), asked["text"].astype(object), coded)
        yield Column(name, "string", meaning, labels_s), pd.Series(codes)
    elif kind == "multi_choice":
        chosen = [set(str(t).split(",")) if pd.notna(t) else set() for t in asked["text"]]
        for value, label in pairs:
            option = Column(
                f"{name}_{spss_name(str(value))}",
                "integer",
                f"{meaning}; option {value} ({label}): 1 chosen, 0 not",
                {1: "chosen", 0: "not chosen"},
            )
            yield option, pd.Series([int(str(value) in c) for c in chosen], dtype="Int64")
    elif kind in ORDER_TYPES:
        orders = [str(t).split(",") if pd.notna(t) else [] for t in asked["text"]]
        last = len(pairs)
        for value, label in pairs:
            code = str(value)
            rank = Column(
                f"{name}_{spss_name(code)}",
                "integer",
                f"{meaning}; option {value} ({label}): its rank, 1 = first, {last} = last",
                {1: "first", last: "last"},
            )
            places = [o.index(code) + 1 if code in o else None for o in orders]
            yield rank, pd.Series(places, dtype="Int64")
    else:
        yield Column(name, "string", meaning), asked["text"].astype(object)


def _variable_names(items: pd.DataFrame) -> dict[tuple[str, str], str]:
    """A column name per item that SPSS, R and pandas all accept: the item id cleaned,
    prefixed with its questionnaire when two instruments share an id, unique ignoring case."""
    taken = {c.name.lower() for c in WIDE_KEYS}
    names: dict[tuple[str, str], str] = {}
    pairs = list(dict.fromkeys(zip(items["questionnaire_id"], items["item_id"], strict=True)))
    counts = pd.Series([spss_name(str(i)).lower() for _, i in pairs]).value_counts()
    for q_id, i_id in pairs:
        base = spss_name(str(i_id))
        if counts[base.lower()] > 1 and not base.lower().startswith(spss_name(str(q_id)).lower()):
            base = spss_name(f"{q_id}_{i_id}")
        name, n = base, 1
        while name.lower() in taken:
            n += 1
            name = f"{base}_{n}"
        taken.add(name.lower())
        names[(q_id, i_id)] = name
    return names


_RESERVED = {"all", "and", "by", "eq", "ge", "gt", "le", "lt", "ne", "not", "or", "to", "with"}


def spss_name(text: str) -> str:
    """Letters, digits, ``_`` and inner ``.``; starting with a letter; at most 48 characters
    (room for the suffixes of repeated items within SPSS's 64)."""
    name = re.sub(r"[^A-Za-z0-9_.]+", "_", text).strip("._")[:48].rstrip("._")
    if not name or not name[0].isalpha():
        name = f"v_{name}" if name else "v"
    return f"{name}_" if name.lower() in _RESERVED else name


def _typed(frame: pd.DataFrame, columns: list[Column]) -> pd.DataFrame:
    """Exactly the declared columns, in order, each of its declared type even when empty."""
    typed = {}
    for column in columns:
        values = frame[column.name] if column.name in frame else pd.Series([None] * len(frame))
        typed[column.name] = _as(values.reset_index(drop=True), column.kind)
    return pd.DataFrame(typed, index=pd.RangeIndex(len(frame)))


def _as(values: pd.Series, kind: Kind) -> pd.Series:
    if kind == "string":
        return _strings(values)
    if kind == "time":
        return pd.to_datetime(values, utc=True).astype("datetime64[us, UTC]")
    if values.dtype == object or isinstance(values.dtype, pd.CategoricalDtype):
        values = values.astype(object).map(_number, na_action="ignore")
    numbers = pd.to_numeric(values, errors="coerce").astype(float)
    return numbers.astype("Int64") if kind == "integer" else numbers


def _strings(values: pd.Series) -> pd.Series:
    """Text as written in the study; each distinct value converted once (categories)."""
    if isinstance(values.dtype, pd.CategoricalDtype):
        categories = pd.Series(values.cat.categories.astype(object)).map(_text).astype("string")
        codes = pd.Series(values.cat.codes.to_numpy(), index=values.index)
        return categories.reindex(codes.where(codes >= 0)).set_axis(values.index)
    objects = values.astype(object)
    if pd.api.types.infer_dtype(objects, skipna=True) in ("string", "empty"):
        return objects.where(objects.notna(), None).astype("string")
    return objects.where(objects.notna(), None).map(_text, na_action="ignore").astype("string")


def _text(value: object) -> str:
    """Codes as written in the study (``4``, not ``4.0``; ``1`` for True)."""
    if isinstance(value, bool | np.bool_):
        return str(int(value))
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


def _number(value: object) -> object:
    return int(value) if isinstance(value, bool | np.bool_) else value


def _code(value: object) -> str | None:
    if value is None or (isinstance(value, float) and np.isnan(value)):
        return None
    return _text(value)


def _flag(value: object) -> int | None:
    return None if value is None else int(bool(value))


def _json(text: object) -> dict[str, object]:
    try:
        found = json.loads(str(text)) if text is not None else {}
    except ValueError:
        return {}
    return found if isinstance(found, dict) else {}


def _timed(frame: pd.DataFrame, names: tuple[str, ...]) -> pd.DataFrame:
    """A copy with ``NAME_iso`` (UTC times, whole seconds) beside each Unix-seconds column."""
    frame = frame.copy()
    for name in names:
        seconds = pd.to_numeric(frame[name], errors="coerce").astype(float)
        frame[f"{name}_iso"] = pd.to_datetime(seconds, unit="s", utc=True).dt.floor("s")
    return frame


def _columns(described: list[tuple[str, list[Column]]]) -> pd.DataFrame:
    rows = [
        (table, column.name, column.kind, column.meaning)
        for table, columns in described
        for column in columns
    ]
    return pd.DataFrame(rows, columns=[c.name for c in COLUMNS])


def _study_id(data: StudyData) -> str | None:
    """The study the data are of (one, after ``--study``); None when that is unknown."""
    ids = list(data.bundles) or sorted(set(data.sessions["study_id"].dropna().astype(str)))
    return ids[0] if len(ids) == 1 else None


def spss_label(text: str, limit: int) -> str:
    """At most ``limit`` bytes of UTF-8, cut between characters (SPSS's label limits)."""
    encoded = text.encode("utf-8")
    return text if len(encoded) <= limit else encoded[:limit].decode("utf-8", "ignore")


def _write(table: Table, path: Path, fmt: str, *, raw_csv: bool = False) -> Path:
    """One table's file, its owner's only; a CSV's text cells neutralised unless ``raw_csv``."""
    if fmt == "parquet":
        table.frame.to_parquet(private_path(path), index=False)
    elif fmt == "sav":
        _write_sav(table, private_path(path))
    else:
        with private_file(path) as handle:
            write_rows(handle, [c.name for c in table.columns], csv_cells(table), raw=raw_csv)
    return path


def csv_cells(table: Table) -> Iterable[tuple[object, ...]]:
    """The table's rows as a CSV writes them: numbers as pandas shows them, times in ISO
    8601, an empty cell for a missing value (the writer neutralises the text)."""
    columns = []
    for column in table.columns:
        values = table.frame[column.name]
        if column.kind == "time":
            values = values.dt.strftime(_ISO)
        columns.append(values.astype(object).where(values.notna(), None).tolist())
    return zip(*columns, strict=True)


def _write_sav(table: Table, path: Path) -> None:
    """SPSS's own file: variable labels (the meanings), value labels, whole numbers shown
    without decimals; the header's time is ``SOURCE_DATE_EPOCH`` when set."""
    import pyreadstat

    from bot.core.version import version

    integers = [c.name for c in table.columns if c.kind == "integer"]
    pyreadstat.write_sav(
        table.frame,
        str(path),
        file_label=spss_label(table.label, 64),
        column_labels={c.name: spss_label(c.meaning, 255) for c in table.columns},
        variable_value_labels=_value_labels(table.columns),
        variable_format={name: "F8.0" for name in integers},
        note=f"Written by ozlab {version()}.",
        row_compress=True,
    )
    epoch = os.environ.get("SOURCE_DATE_EPOCH")
    if epoch:
        stamp_sav(path, datetime.fromtimestamp(int(epoch), UTC))


def _value_labels(columns: list[Column]) -> dict[str, dict[Any, str]]:
    return {
        c.name: {code: spss_label(label, 120) for code, label in c.labels.items()}
        for c in columns
        if c.labels
    }


_MONTHS = ("Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec")


def stamp_sav(path: Path, when: datetime) -> None:
    """Set a ``.sav`` file's creation date and time (its header's bytes 92–108: ``dd mmm
    yy`` and ``hh:mm:ss``), which the writer takes from the clock and offers no option for."""
    stamp = f"{when.day:02d} {_MONTHS[when.month - 1]} {when.year % 100:02d}"
    stamp += when.strftime("%H:%M:%S")
    with path.open("r+b") as handle:
        header = handle.read(109)
        if header[:4] not in (b"$FL2", b"$FL3") or not re.fullmatch(
            rb"\d\d [A-Z][a-z]{2} \d\d\d\d:\d\d:\d\d", header[92:109]
        ):
            raise StudyDataError(f"{path} is not an SPSS file this ozlab can stamp")
        handle.seek(92)
        handle.write(stamp.encode("ascii"))
