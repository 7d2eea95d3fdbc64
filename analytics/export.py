"""``analytics export``: the study as tidy long-format tables and a codebook, for R or SPSS.

One row per session, per exchange, per answer (long format: one observation per row, no
pivoting), UTF-8 CSV without an index column, every time both as Unix seconds and as ISO
8601 UTC beside it. The codebook says what each item asked, on which scale, with which
labels, whether it is reverse-worded and to which construct it belongs; ``columns.csv``
says what each column means. The responses file is also what ``ozlab import responses``
reads back.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

import numpy as np
import pandas as pd

from analytics.data import StudyData, load_study_data
from analytics.progress import steps
from analytics.selecting import select_study
from bot.errors import StudyDataError


class ParquetUnavailable(StudyDataError):
    """Parquet was asked for and pyarrow is not installed."""


_ISO = "%Y-%m-%dT%H:%M:%SZ"
# fmt: off
SESSION_COLUMNS = [
    "session_id", "participant_id", "study_id", "system_id", "scenario_id", "scenario_kind",
    "task_index", "design", "seed", "state", "started_at", "started_at_iso", "ended_at",
    "ended_at_iso", "duration_s", "expected_duration_s", "end_reason", "success",
    "n_exchanges", "n_failed_replies",
]
EXCHANGE_COLUMNS = [
    "exchange_id", "session_id", "participant_id", "system_id", "scenario_id", "turn",
    "user_text", "user_at", "user_at_iso", "system_text", "system_at", "system_at_iso",
    "latency_ms", "error", "source",
]
RESPONSE_COLUMNS = [
    "response_id", "participant_id", "session_id", "system_id", "scenario_id", "scope",
    "moment", "questionnaire_id", "item_id", "type", "value", "label", "text", "status",
    "score", "reverse", "construct", "turn", "stimulus_id", "attention_ok", "imported",
    "shown_at", "shown_at_iso", "answered_at", "answered_at_iso",
]
CODEBOOK_COLUMNS = [
    "questionnaire_id", "item_id", "position", "type", "text", "min", "max", "labels",
    "reverse", "construct", "attention", "required",
]
# fmt: on
_DESCRIPTIONS = {
    "participant_id": "pseudonym of the participant (never the Telegram id)",
    "session_id": "one task of one participant: a scenario with one system",
    "system_id": "the system under test; (no system) for answers given before any task",
    "scenario_id": "the task's scenario",
    "*_at": "time in Unix seconds (UTC); *_at_iso is the same time in ISO 8601",
    "duration_s": "seconds from the start of the task to its end",
    "success": "1 the task succeeded, 0 it did not, empty unknown",
    "source": "who wrote the system turn: system (as is), edited or wizard",
    "scope": "what an answer set belongs to (a key: a session, one of its turns, the study,"
    " or an imported answer's own); read moment, system_id and imported instead",
    "moment": "when it was asked: screening, exchange, rating, post_task or post_study",
    "value": "the answer on the item's scale (as given: reverse items not recoded)",
    "label": "the wording of the answer chosen",
    "text": "free text, or the codes of choice items whose options are words",
    "status": "answered, skipped (optional item), not_asked (skip logic) or missing",
    "score": "value with reverse items recoded (min + max - value): higher is better",
    "attention_ok": "attention checks: 1 passed, 0 failed",
    "imported": "the answer came from a file (ozlab import responses), not over Telegram",
    "labels": "codebook: every scale point as value=label, separated by ;",
    "reverse": "the item is reverse-worded",
    "construct": "the scale the item belongs to, for construct scores and alpha",
    "attention": "the answer an attention check instructs",
}


def export_study(
    db: Path | str, out: Path | str, *, fmt: str = "csv", study: str | None = None
) -> list[Path]:
    """Write sessions, exchanges, responses, codebook, codebook_values and columns into
    ``out``; returns the files written."""
    if fmt == "parquet" and importlib.util.find_spec("pyarrow") is None:
        raise ParquetUnavailable(
            "Parquet needs pyarrow, which is not installed: pip install 'ozlab[parquet]' "
            "(or pip install pyarrow), or export CSV with --format csv."
        )
    if fmt not in ("csv", "parquet"):
        raise ValueError(f"unknown export format {fmt!r}: csv or parquet")
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    with steps(7, "Export") as step:
        step("reading the database")
        data = select_study(load_study_data(db), study)
        written = []
        for name, frame in tidy_tables(data).items():
            step(name)
            written.append(_write(frame, out / f"{name}.{fmt}", fmt))
    return written


def tidy_tables(data: StudyData) -> dict[str, pd.DataFrame]:
    """Every exported table, by file name: tidy frames in, tidy frames out."""
    sessions = _timed(data.sessions, ("started_at", "ended_at"))
    exchanges = _timed(data.exchanges, ("user_at", "system_at"))
    responses = _timed(data.responses, ("shown_at", "answered_at"))
    for name in ("value", "score", "turn", "attention_ok"):
        responses[name] = _integers(responses[name])
    for name in ("success", "task_index"):
        sessions[name] = _integers(sessions[name])
    responses["reverse"] = responses["reverse"].astype("Int64")  # 0/1 for SPSS as for R
    responses["imported"] = responses["imported"].astype("Int64")
    return {
        "sessions": sessions.reindex(columns=SESSION_COLUMNS),
        "exchanges": exchanges.reindex(columns=EXCHANGE_COLUMNS),
        "responses": responses.reindex(columns=RESPONSE_COLUMNS),
        "codebook": codebook(data),
        "codebook_values": data.choices.rename(columns={"position": "order"}),
        "columns": _columns(),
    }


def codebook(data: StudyData) -> pd.DataFrame:
    """One row per item, with its scale points and labels as ``1=Never; 2=Rarely; …``."""
    choices = data.choices.astype({"value": str})
    labels = (
        choices.assign(pair=choices["value"] + "=" + choices["label"].astype(str))
        .groupby(["questionnaire_id", "item_id"], sort=False)["pair"]
        .agg("; ".join)
        .rename("labels")
        .reset_index()
    )
    items = data.items.merge(labels, on=["questionnaire_id", "item_id"], how="left")
    for name in ("min", "max"):
        items[name] = _integers(items[name])
    items["reverse"] = items["reverse"].astype("Int64")
    items["required"] = pd.array(
        [None if r is None else int(bool(r)) for r in items["required"]], dtype="Int64"
    )
    return items.reindex(columns=CODEBOOK_COLUMNS)


def _timed(frame: pd.DataFrame, names: tuple[str, ...]) -> pd.DataFrame:
    """A copy with ``NAME_iso`` (UTC datetimes) beside each Unix-seconds column."""
    frame = frame.copy()
    for name in names:
        seconds = pd.to_numeric(frame[name], errors="coerce")
        frame[f"{name}_iso"] = pd.to_datetime(seconds, unit="s", utc=True).dt.floor("s")
    return frame


def _integers(values: pd.Series) -> pd.Series:
    """Whole numbers as integers (``4``, not ``4.0``), missing ones empty."""
    numbers = pd.to_numeric(values, errors="coerce")
    finite = numbers.dropna()
    if len(finite) and not np.all(np.equal(np.mod(finite.to_numpy(dtype=float), 1), 0)):
        return numbers
    return numbers.astype("Int64")


def _columns() -> pd.DataFrame:
    tables = {
        "sessions": SESSION_COLUMNS,
        "exchanges": EXCHANGE_COLUMNS,
        "responses": RESPONSE_COLUMNS,
        "codebook": CODEBOOK_COLUMNS,
    }
    rows = []
    for table, columns in tables.items():
        for column in columns:
            key = "*_at" if column.endswith(("_at", "_at_iso")) else column
            rows.append((table, column, _DESCRIPTIONS.get(key, "")))
    return pd.DataFrame(rows, columns=["table", "column", "meaning"])


def _write(frame: pd.DataFrame, path: Path, fmt: str) -> Path:
    if fmt == "parquet":
        frame.to_parquet(path, index=False)
    else:
        frame.to_csv(path, index=False, encoding="utf-8", lineterminator="\n", date_format=_ISO)
    return path
