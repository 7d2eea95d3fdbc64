"""A model judge's ledger, a small SQLite file beside the study's database (owner-only):
every call to a judge keyed by its exact request, with the answer and the tokens it cost,
so that a rerun or a resumed run costs nothing; and the provenance of every judgement
(model, endpoint host, prompt hash, temperature, seed, date, outcome). The study database
keeps the ratings themselves (annotations and votes of origin ``model``)."""

from __future__ import annotations

import os
import sqlite3
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

_SCHEMA = """
CREATE TABLE IF NOT EXISTS calls (
    key               TEXT PRIMARY KEY,   -- sha-256 of the request as sent, keys sorted
    judge             TEXT NOT NULL,      -- the judge that made the call first
    request           TEXT NOT NULL,
    answer            TEXT NOT NULL,      -- what the judge said
    prompt_tokens     INTEGER,
    completion_tokens INTEGER,
    at                REAL NOT NULL
);
CREATE TABLE IF NOT EXISTS judgements (
    job         TEXT NOT NULL,
    judge       TEXT NOT NULL,
    target      TEXT NOT NULL,
    level       TEXT NOT NULL,
    item_id     TEXT NOT NULL,
    model       TEXT NOT NULL,
    host        TEXT NOT NULL,
    prompt_hash TEXT NOT NULL,
    temperature REAL NOT NULL,
    seed        INTEGER,
    outcome     TEXT NOT NULL,      -- rated | unparseable | failed
    said        TEXT NOT NULL,      -- the answer (the retry's, when retried), or the failure
    retried     INTEGER NOT NULL,   -- 1: the first answer was unparseable
    key         TEXT,               -- the call that gave the answer kept
    at          REAL NOT NULL,
    PRIMARY KEY (job, judge, target, level, item_id)
);
"""


@dataclass(frozen=True)
class CachedCall:
    answer: str
    prompt_tokens: int | None
    completion_tokens: int | None


@dataclass(frozen=True)
class Provenance:
    """Where one judgement came from."""

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
    key: str | None
    at: float


@dataclass(frozen=True)
class JudgeCost:
    """One judge's calls and tokens, as the ledger counts them (cached calls once)."""

    judge: str
    calls: int
    prompt_tokens: int
    completion_tokens: int


def ledger_path(database: Path) -> Path:
    """The ledger beside a study database: ``study.db`` -> ``study.db.judges``."""
    return database.with_name(database.name + ".judges")


class JudgeLedger:
    """The ledger file, made owner-only (it holds conversation text)."""

    def __init__(self, path: Path, clock: Callable[[], float] = time.time) -> None:
        self.path = path
        self._clock = clock
        fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
        os.close(fd)
        os.chmod(path, 0o600)
        self._conn = sqlite3.connect(path, isolation_level=None)
        self._conn.executescript(_SCHEMA)

    def close(self) -> None:
        self._conn.close()

    def cached(self, key: str) -> CachedCall | None:
        row = self._conn.execute(
            "SELECT answer, prompt_tokens, completion_tokens FROM calls WHERE key = ?", (key,)
        ).fetchone()
        return None if row is None else CachedCall(str(row[0]), row[1], row[2])

    def keep_call(
        self,
        judge: str,
        key: str,
        request: str,
        answer: str,
        prompt_tokens: int | None,
        completion_tokens: int | None,
    ) -> None:
        self._conn.execute(
            "INSERT INTO calls VALUES (?,?,?,?,?,?,?) ON CONFLICT DO NOTHING",
            (key, judge, request, answer, prompt_tokens, completion_tokens, self._clock()),
        )

    def keep_judgement(self, p: Provenance) -> None:
        """The judgement's provenance (a later run's replaces an earlier one's)."""
        self._conn.execute(
            "INSERT OR REPLACE INTO judgements VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
            (
                p.job,
                p.judge,
                p.target,
                p.level,
                p.item_id,
                p.model,
                p.host,
                p.prompt_hash,
                p.temperature,
                p.seed,
                p.outcome,
                p.said,
                int(p.retried),
                p.key,
                p.at,
            ),
        )

    def judgements(self, job: str | None = None) -> list[Provenance]:
        where, params = ("WHERE job = ?", (job,)) if job is not None else ("", ())
        return [
            Provenance(
                str(r[0]),
                str(r[1]),
                str(r[2]),
                str(r[3]),
                str(r[4]),
                str(r[5]),
                str(r[6]),
                str(r[7]),
                float(r[8]),
                None if r[9] is None else int(r[9]),
                str(r[10]),
                str(r[11]),
                bool(r[12]),
                None if r[13] is None else str(r[13]),
                float(r[14]),
            )
            for r in self._conn.execute(
                f"SELECT * FROM judgements {where} ORDER BY job, judge, target, level, item_id",
                params,
            )
        ]

    def costs(self) -> list[JudgeCost]:
        """Per judge: the calls it made (each once, however often a rerun found it in the
        cache) and the tokens they cost."""
        return [
            JudgeCost(str(r[0]), int(r[1]), int(r[2] or 0), int(r[3] or 0))
            for r in self._conn.execute(
                "SELECT judge, COUNT(*), SUM(prompt_tokens), SUM(completion_tokens)"
                " FROM calls GROUP BY judge ORDER BY judge"
            )
        ]
