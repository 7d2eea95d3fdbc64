"""A study file made to look as an older ozlab wrote it: each migration since version 12
undone, newest first, in one place (a test that needs an older file names the version; a new
migration adds its undoing here, not in every such test)."""

from __future__ import annotations

import sqlite3

from bot.store.connection import SCHEMA_VERSION

_PAYMENTS_OF_ANNOTATORS = ("job", "annotator", "platform_tag")
_PAYMENTS_ON_THE_PLATFORM = ("submission_key", "platform_status", "approved_at")

UNDO: dict[int, tuple[str, ...]] = {
    13: ("DROP TABLE erasures",),
    14: ("DROP TRIGGER votes_go_with_their_session", "DROP TABLE votes"),
    15: ("ALTER TABLE annotators DROP COLUMN simulated",),
    16: (
        "DROP TRIGGER judges_go_with_their_session",
        "DROP TABLE judgements",
        "DROP TABLE judge_calls",
    ),
    17: ("DROP TABLE written_files",),
    18: (
        "DROP TABLE money_path",
        *(f"ALTER TABLE payments DROP COLUMN {c}" for c in _PAYMENTS_ON_THE_PLATFORM),
    ),
    19: ("ALTER TABLE annotation_assignments DROP COLUMN swapped",),
    20: ("ALTER TABLE participants DROP COLUMN design_cell",),
    21: (
        "DROP TRIGGER payment_kept_on_annotator_withdrawal",
        "DROP INDEX payments_by_annotator",
        "DROP INDEX payments_by_job_tag",
        *(f"ALTER TABLE payments DROP COLUMN {c}" for c in _PAYMENTS_OF_ANNOTATORS),
    ),
    22: ("DROP TABLE media", "DROP TABLE media_files"),
    23: ("DROP TABLE sign_in_links", "DROP TABLE experimenters"),
}
"""What undoes each migration (``bot/store/schema.py``) on a file that holds it."""


def as_of(conn: sqlite3.Connection, version: int) -> None:
    """The file's schema as ``version`` left it: every later migration undone."""
    assert max(UNDO) == SCHEMA_VERSION, "a new migration: say here how to undo it"
    for later in range(SCHEMA_VERSION, version, -1):
        for statement in UNDO[later]:
            conn.execute(statement)
    conn.execute(f"PRAGMA user_version={version}")
