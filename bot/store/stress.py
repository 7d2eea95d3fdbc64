"""The SQLite side of linguistic stress tests: the tests, their replays and verdicts.

Only the stress tables are written here; the logged sessions are read, never changed. A
replay is stored once, whole, when both of its conversations are done: a run that is killed
finds in ``stress_replays`` exactly what it must not do again.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence

from bot.core.phenomena import StressType
from bot.core.stress import Perturbation, Source, Utterance
from bot.store.sql import Sql, has_table
from bot.store.stress_records import (
    Judge,
    Judgement,
    Replay,
    ReplyTaken,
    Review,
    StressResult,
    StressTest,
    Verdict,
)

_SYSTEM_REPLIES = "(e.source IS NULL OR e.source = 'system')"


def utterances(conn: Sql, session_ids: Sequence[str] = ()) -> list[Utterance]:
    """Participants' logged lines that a system (not a wizard) answered, each with the
    reply it answered (empty for the first line), in session and turn order."""
    where = f"e.system_text IS NOT NULL AND {_SYSTEM_REPLIES}"
    params: list[object] = []
    if session_ids:
        where += f" AND e.session_id IN ({','.join('?' * len(session_ids))})"
        params += list(session_ids)
    rows = conn.execute(
        "SELECT e.session_id, e.turn, e.user_text, s.system_id, s.scenario_id,"
        " coalesce((SELECT p.system_text FROM exchanges AS p"
        "   WHERE p.session_id = e.session_id AND p.turn < e.turn"
        "   ORDER BY p.turn DESC LIMIT 1), '')"
        " FROM exchanges AS e JOIN sessions AS s ON s.id = e.session_id"
        f" WHERE {where} ORDER BY s.started_at, e.session_id, e.turn",
        params,
    ).fetchall()
    return [Utterance(str(a), int(b), str(c), str(d), str(e), str(f)) for a, b, c, d, e, f in rows]


def add_tests(
    conn: Sql, perturbations: Iterable[Perturbation], review: Review, now: float
) -> list[int]:
    """Each perturbation's test id; one stored already keeps its id and its review."""
    ids: list[int] = []
    for p in perturbations:
        key = (p.session_id, p.turn, p.stress_type.value, p.perturbed)
        conn.execute(
            "INSERT INTO stress_tests (session_id, turn, stress_type, original,"
            " perturbed, source, ad_hoc, change, review, created_at)"
            " VALUES (?,?,?,?,?,?,?,?,?,?) ON CONFLICT DO NOTHING",
            (
                *key[:3],
                p.original,
                p.perturbed,
                p.source.value,
                int(p.ad_hoc),
                p.change,
                review.value,
                now,
            ),
        )
        row = conn.execute(
            "SELECT id FROM stress_tests WHERE session_id = ? AND turn = ? AND stress_type = ?"
            " AND perturbed = ?",
            key,
        ).fetchone()
        ids.append(int(row[0]))
    return ids


def review_test(conn: Sql, test_id: int, review: Review, perturbed: str | None) -> bool:
    """A person's word on a test (and their edit of it); False when there is no such test."""
    if perturbed is None:
        cursor = conn.execute(
            "UPDATE stress_tests SET review = ? WHERE id = ?", (review.value, test_id)
        )
    else:
        cursor = conn.execute(
            "UPDATE stress_tests SET review = ?, perturbed = ? WHERE id = ? AND NOT EXISTS"
            " (SELECT 1 FROM stress_tests AS o WHERE o.id != ? AND o.perturbed = ?"
            " AND (o.session_id, o.turn, o.stress_type) = (SELECT session_id, turn, stress_type"
            " FROM stress_tests WHERE id = ?))",
            (review.value, perturbed, test_id, test_id, perturbed, test_id),
        )
        if not cursor.rowcount:  # the edit is a test stored already: this one is not needed
            cursor = conn.execute(
                "UPDATE stress_tests SET review = ? WHERE id = ?", (Review.REJECTED.value, test_id)
            )
    return cursor.rowcount > 0


_TEST_COLUMNS = (
    "t.id, t.session_id, t.turn, t.stress_type, t.original, t.perturbed, t.source,"
    " t.ad_hoc, t.change, t.review"
)


def _test(row: Sequence[object]) -> StressTest:
    tid, session, turn, kind, original, perturbed, source, ad_hoc, change, review = row
    return StressTest(
        int(str(tid)),
        Perturbation(
            str(session),
            int(str(turn)),
            StressType(str(kind)),
            str(original),
            str(perturbed),
            Source(str(source)),
            bool(ad_hoc),
            str(change),
        ),
        Review(str(review)),
    )


def tests(
    conn: Sql, types: Sequence[StressType] = (), review: Review | None = None
) -> list[StressTest]:
    wanted: list[object] = [t.value for t in types or StressType]
    where, params = [f"t.stress_type IN ({', '.join('?' * len(wanted))})"], wanted
    if review is not None:
        where.append("t.review = ?")
        params.append(review.value)
    rows = conn.execute(
        f"SELECT {_TEST_COLUMNS} FROM stress_tests AS t WHERE {' AND '.join(where)} ORDER BY t.id",
        params,
    ).fetchall()
    return [_test(row) for row in rows]


def replayed(conn: Sql) -> set[tuple[int, str]]:
    return {
        (int(t), str(s)) for t, s in conn.execute("SELECT test_id, system_id FROM stress_replays")
    }


def _taken(taken: ReplyTaken) -> tuple[str, str, str | None]:
    events = {name: dict(data) for name, data in taken.events.items()}
    return json.dumps(list(taken.texts)), json.dumps(events, sort_keys=True), taken.error


def record_replay(conn: Sql, replay: Replay, verdict: Judgement | None) -> bool:
    """The replay, once (False when it was stored already), with the replay's own verdict."""
    cursor = conn.execute(
        "INSERT INTO stress_replays (test_id, system_id, started_at, finished_at,"
        " baseline_texts, baseline_events, baseline_error, perturbed_texts,"
        " perturbed_events, perturbed_error, applicable) VALUES (?,?,?,?,?,?,?,?,?,?,?)"
        " ON CONFLICT DO NOTHING",
        (
            replay.test_id,
            replay.system_id,
            replay.started_at,
            replay.finished_at,
            *_taken(replay.baseline),
            *_taken(replay.perturbed),
            int(replay.applicable),
        ),
    )
    if cursor.rowcount and verdict is not None:
        record_judgement(conn, verdict)
    return cursor.rowcount > 0


def record_judgement(conn: Sql, judgement: Judgement) -> None:
    """A judge's verdict; the same judge judging again replaces their earlier word."""
    conn.execute(
        "INSERT INTO stress_verdicts (test_id, system_id, judge, verdict,"
        " judged_by, reason, at) VALUES (?,?,?,?,?,?,?)"
        " ON CONFLICT (test_id, system_id, judge) DO UPDATE SET verdict = excluded.verdict,"
        " judged_by = excluded.judged_by, reason = excluded.reason, at = excluded.at",
        (
            judgement.test_id,
            judgement.system_id,
            judgement.judge.value,
            judgement.verdict.value,
            judgement.judged_by,
            judgement.reason,
            judgement.at,
        ),
    )


def _reply(texts: object, events: object, error: object) -> ReplyTaken:
    found: Mapping[str, Mapping[str, object]] = json.loads(str(events or "{}"))
    return ReplyTaken(
        tuple(json.loads(str(texts or "[]"))), found, None if error is None else str(error)
    )


def results(conn: Sql) -> list[StressResult]:
    """Every replayed test with its verdicts, by test and system."""
    verdicts: dict[tuple[int, str], list[Judgement]] = {}
    for tid, system, judge, verdict, by, reason, at in conn.execute(
        "SELECT test_id, system_id, judge, verdict, judged_by, reason, at FROM stress_verdicts"
    ):
        verdicts.setdefault((int(tid), str(system)), []).append(
            Judgement(int(tid), str(system), Judge(judge), Verdict(verdict), by, reason, at)
        )
    rows = conn.execute(
        f"SELECT {_TEST_COLUMNS}, r.system_id, r.started_at, r.finished_at, r.baseline_texts,"
        " r.baseline_events, r.baseline_error, r.perturbed_texts, r.perturbed_events,"
        " r.perturbed_error, r.applicable"
        " FROM stress_replays AS r JOIN stress_tests AS t ON t.id = r.test_id"
        " ORDER BY r.system_id, t.id"
    ).fetchall()
    found: list[StressResult] = []
    for row in rows:
        test = _test(row[:10])
        system, started, finished, bt, be, berr, pt, pe, perr, applicable = row[10:]
        replay = Replay(
            test.id,
            str(system),
            float(started),
            float(finished),
            _reply(bt, be, berr),
            _reply(pt, pe, perr),
            bool(applicable),
        )
        order = {Judge.AUTO: 0, Judge.HUMAN: 1, Judge.LLM: 2}
        judged = sorted(verdicts.get((test.id, replay.system_id), []), key=lambda j: order[j.judge])
        found.append(StressResult(test, replay, tuple(judged)))
    return found


def count_tests(conn: Sql) -> int:
    return int(conn.execute("SELECT count(*) FROM stress_tests").fetchone()[0])


def results_if_any(conn: Sql) -> list[StressResult]:
    """:func:`results`, or none from a file older than the stress tables (read-only
    analytics opens older schemas) or without a replay: the report stays as fast."""
    if (
        not has_table(conn, "stress_replays")
        or conn.execute("SELECT 1 FROM stress_replays LIMIT 1").fetchone() is None
    ):
        return []
    return results(conn)
