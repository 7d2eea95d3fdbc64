"""Model judges' calls and judgements as rows, inside the writer's transaction or a read.

A call is kept once under its request's digest: the same request again changes nothing, so
a rerun costs nothing. A judgement is kept per job, judge, target and item: a later run's
replaces an earlier one's (an unparseable or failed item is asked again).
"""

from __future__ import annotations

from collections.abc import Sequence

from bot.store.model import JudgeCall, JudgeCost, JudgementRecord
from bot.store.sql import Queries, Sql

_CALL = (
    "key", "judge", "request", "answer", "prompt_tokens", "completion_tokens", "session_id",
    "paired_session", "at",
)  # fmt: skip
_JUDGEMENT = (
    "job", "judge", "target", "level", "item_id", "model", "host", "prompt_hash",
    "temperature", "seed", "outcome", "said", "retried", "call_key", "at", "session_id",
    "paired_session",
)  # fmt: skip
_KEY = ("job", "judge", "target", "level", "item_id")


def _marks(columns: Sequence[str]) -> str:
    return ", ".join("?" * len(columns))


def cached(conn: Sql, key: str) -> JudgeCall | None:
    """The call kept under ``key``; None when it was never made."""
    row = conn.execute(
        f"SELECT {', '.join(_CALL[:-1])} FROM judge_calls WHERE key = ?", (key,)
    ).fetchone()
    if row is None:
        return None
    return JudgeCall(
        str(row[0]),
        str(row[1]),
        str(row[2]),
        str(row[3]),
        _integer(row[4]),
        _integer(row[5]),
        _text(row[6]),
        _text(row[7]),
    )


def keep_call(conn: Sql, call: JudgeCall, now: float) -> bool:
    """Keep ``call``; False when a call of that request is kept already."""
    values = (
        call.key,
        call.judge,
        call.request,
        call.answer,
        call.prompt_tokens,
        call.completion_tokens,
        call.session_id,
        call.paired_session,
        now,
    )
    return bool(
        conn.execute(
            f"INSERT INTO judge_calls ({', '.join(_CALL)}) VALUES ({_marks(_CALL)})"
            " ON CONFLICT (key) DO NOTHING",
            values,
        ).rowcount
    )


def keep_judgements(conn: Sql, judgements: Sequence[JudgementRecord]) -> None:
    """Keep each judgement, in place of an earlier one of the same job, judge, target and
    item."""
    updated = ", ".join(f"{c} = excluded.{c}" for c in _JUDGEMENT if c not in _KEY)
    insert = (
        f"INSERT INTO judgements ({', '.join(_JUDGEMENT)}) VALUES ({_marks(_JUDGEMENT)})"
        f" ON CONFLICT ({', '.join(_KEY)}) DO UPDATE SET {updated}"
    )
    for j in judgements:
        conn.execute(
            insert,
            (
                j.job,
                j.judge,
                j.target,
                j.level,
                j.item_id,
                j.model,
                j.host,
                j.prompt_hash,
                j.temperature,
                j.seed,
                j.outcome,
                j.said,
                int(j.retried),
                j.call_key,
                j.at,
                j.session_id,
                j.paired_session,
            ),
        )


def judgements(conn: Queries) -> list[JudgementRecord]:
    """Every judgement, in key order (a snapshot reads them too)."""
    rows = conn.execute(
        f"SELECT {', '.join(_JUDGEMENT)} FROM judgements ORDER BY {', '.join(_KEY)}"
    )
    return [
        JudgementRecord(
            job=str(r[0]),
            judge=str(r[1]),
            target=str(r[2]),
            level=str(r[3]),
            item_id=str(r[4]),
            model=str(r[5]),
            host=str(r[6]),
            prompt_hash=str(r[7]),
            temperature=float(r[8]),
            seed=_integer(r[9]),
            outcome=str(r[10]),
            said=str(r[11]),
            retried=bool(r[12]),
            call_key=_text(r[13]),
            at=float(r[14]),
            session_id=_text(r[15]),
            paired_session=_text(r[16]),
        )
        for r in rows
    ]


def costs(conn: Queries) -> list[JudgeCost]:
    """Per judge: the calls it made and the tokens they cost."""
    return [
        JudgeCost(str(r[0]), int(r[1]), int(r[2] or 0), int(r[3] or 0))
        for r in conn.execute(
            "SELECT judge, count(*), sum(prompt_tokens), sum(completion_tokens)"
            " FROM judge_calls GROUP BY judge ORDER BY judge"
        )
    ]


def _integer(value: object) -> int | None:
    return None if value is None else int(str(value))


def _text(value: object) -> str | None:
    return None if value is None else str(value)
