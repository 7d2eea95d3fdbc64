"""An annotator's withdrawal or erasure (GDPR art. 17), inside the writer's transaction: the
same for their ``/withdraw``, ``ozlab erase A-7KQ2`` and a backup reached by the ledger.

What goes: the annotator row (their sealed chat id, the keyed hash of their chat, their
code), every assignment of theirs (the targets they had go back to the pool: the next
planning gives them to others), pending updates of their chat, and the commands naming
them. Their ratings (annotations, an ACUTE job's votes) go too, unless the job's consent
says they are kept unlinked (``on_withdrawal: keep_unlinked``, read from the job as the
file stores it, so every erasure of the file does alike): then they stay under a new
pseudonym drawn at random, which nothing links to the person (no chat, no code, no time
of joining), with the targets they finished; what they had open goes back, with the
answers they had given to it. A line in the erasure ledger (the job's study, a digest of
the pseudonym) carries the erasure into backups and keeps an import from bringing them
back.
"""

from __future__ import annotations

import json
import secrets
from collections.abc import Sequence

from bot.store import erasure
from bot.store.annotating import bump
from bot.store.model import AnnotatorErased
from bot.store.sql import Sql

_KEEP_UNLINKED = "keep_unlinked"
_ALPHABET = "ABCDEFGHJKLMNPQRSTUVWXYZ23456789"


def erase_annotator(
    conn: Sql,
    annotator_id: str,
    update_ids: Sequence[int] = (),
    *,
    now: float = 0.0,
) -> AnnotatorErased | None:
    """Everything of ``annotator_id`` gone (or their ratings unlinked, as the job's consent
    says); None when the file holds no annotator of that pseudonym. ``update_ids``: their
    updates still pending in the inbox."""
    row = conn.execute(
        "SELECT n.job, j.study_id, j.definition FROM annotators n"
        " JOIN annotation_jobs j ON j.job = n.job WHERE n.id = ?",
        (annotator_id,),
    ).fetchone()
    if row is None:
        return None
    job, study_id, definition = str(row[0]), str(row[1]), str(row[2])
    conn.execute("UPDATE commands SET payload = '{}' WHERE instr(payload, ?) > 0", (annotator_id,))
    pending = sum(
        conn.execute(
            "DELETE FROM inbox WHERE update_id = ? AND handled_at IS NULL", (update_id,)
        ).rowcount
        for update_id in update_ids
    )
    kept = _keeps_ratings(definition)
    if kept:  # what they finished stays; a target they had open goes back whole
        conn.execute(
            "DELETE FROM annotations WHERE annotator = ? AND target_id IN"
            " (SELECT target_id FROM annotation_assignments"
            "  WHERE annotator = ? AND done_at IS NULL)",
            (annotator_id, annotator_id),
        )
        unlinked = _unlinked(conn, annotator_id, now)
        released = conn.execute(
            "DELETE FROM annotation_assignments WHERE annotator = ? AND done_at IS NULL",
            (annotator_id,),
        ).rowcount
        conn.execute(
            "UPDATE annotation_assignments SET annotator = ? WHERE annotator = ?",
            (unlinked, annotator_id),
        )
        ratings = conn.execute(
            "UPDATE annotations SET annotator = ? WHERE annotator = ?", (unlinked, annotator_id)
        ).rowcount
        votes = conn.execute(  # a vote's id names its rater too
            "UPDATE votes SET rater = ?, id = replace(id, ?, ?)"
            " WHERE rater = ? AND rater_kind = 'annotator'",
            (unlinked, annotator_id, unlinked, annotator_id),
        ).rowcount
    else:
        released = conn.execute(
            "DELETE FROM annotation_assignments WHERE annotator = ?", (annotator_id,)
        ).rowcount
        ratings = conn.execute(
            "DELETE FROM annotations WHERE annotator = ?", (annotator_id,)
        ).rowcount
        votes = conn.execute(
            "DELETE FROM votes WHERE rater = ? AND rater_kind = 'annotator'", (annotator_id,)
        ).rowcount
    conn.execute("DELETE FROM annotators WHERE id = ?", (annotator_id,))
    bump(conn, job)
    conn.execute(
        "INSERT INTO erasures (study_id, digest, erased_at) VALUES (?,?,?) ON CONFLICT DO NOTHING",
        (study_id, erasure.ledger_digest(annotator_id), now),
    )
    return AnnotatorErased(
        job=job,
        study_id=study_id,
        ratings=ratings,
        votes=votes,
        targets=released,
        pending_updates=pending,
        kept_unlinked=kept,
    )


def _keeps_ratings(definition: str) -> bool:
    """Whether the job's consent keeps a withdrawn annotator's ratings, unlinked (a job
    stored before the setting, or not a JSON object: it does not)."""
    try:
        stored = json.loads(definition)
    except ValueError:
        return False
    return isinstance(stored, dict) and stored.get("on_withdrawal") == _KEEP_UNLINKED


def _unlinked(conn: Sql, annotator_id: str, now: float) -> str:
    """A new annotator row for the kept ratings: a fresh pseudonym, no chat, no code, no
    time that could tell who it was; dropped, so that nothing is assigned to it."""
    while True:
        pseudonym = "A-" + "".join(secrets.choice(_ALPHABET) for _ in range(6))
        taken = conn.execute("SELECT 1 FROM annotators WHERE id = ?", (pseudonym,)).fetchone()
        if taken is None:
            break
    conn.execute(
        "INSERT INTO annotators (id, job, origin, created_at, dropped_at, simulated)"
        " SELECT ?, job, origin, ?, ?, simulated FROM annotators WHERE id = ?",
        (pseudonym, now, now, annotator_id),
    )
    return pseudonym


def present_annotators(conn: Sql) -> list[tuple[str, str, float]]:
    """(pseudonym, study, since when) of every annotator the file holds: who a ledger
    line may name."""
    return [
        (str(a), str(s), float(t))
        for a, s, t in conn.execute(
            "SELECT n.id, j.study_id, n.created_at FROM annotators n"
            " JOIN annotation_jobs j ON j.job = n.job"
        )
    ]


def erased_pseudonyms(conn: Sql, pseudonyms: Sequence[str]) -> set[str]:
    """Those of ``pseudonyms`` the erasure ledger names (an import does not bring them back)."""
    digests = {erasure.ledger_digest(p): p for p in pseudonyms}
    if not digests:
        return set()
    marks = ",".join("?" * len(digests))
    return {
        digests[str(d)]
        for (d,) in conn.execute(
            f"SELECT DISTINCT digest FROM erasures WHERE digest IN ({marks})", tuple(digests)
        )
    }
