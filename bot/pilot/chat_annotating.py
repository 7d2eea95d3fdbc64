"""``ozlab chat --annotate JOB``: the researcher plays an annotator of the job in the
terminal, before inviting anyone.

The study's database is copied first (``ozlab copy``'s checked copy, from a SQLite file or a
server's study, into a SQLite file of a private folder of its own), and the real bot runs on
the copy with the emulator, as ``ozlab chat`` does for participants: the brief, the targets
the job would assign, their buttons, ``/pause``, ``/back`` and any adjudication are what an
annotator would meet. Nothing is written to the study's database, and the copy (the
study's conversations, and the ratings made on it) is deleted when the chat ends.
"""

from __future__ import annotations

import logging
import os
import shutil
import sys
from typing import TextIO

from bot.annotation.jobs import job_of
from bot.pilot.chat import chat_log, run_chat, scratch_database
from bot.runtime.logging import setup_logging
from bot.store.moving import copy_study
from bot.store.opening import Database, locate
from scenarios.models import StudyBundle


def annotate_on_a_copy(
    bundle: StudyBundle, source: Database, job: str, language: str, out: TextIO = sys.stdout
) -> int:
    """Copy ``source``, chat as annotators of ``job`` on the copy, then delete it."""
    job_of(bundle, job)  # an unknown job is refused before anything is copied
    copy = scratch_database()
    try:
        copied = copy_study(os.fspath(source), str(copy), bundle.study.id)
        log = chat_log(copy)
        setup_logging(logging.WARNING, [], log)
        out.write(
            f"Copied {sum(copied.rows.values())} rows of study {copied.study!r} from"
            f" {locate(source).shown}: you rate on a copy, never in the study's database.\n"
        )
        run_chat(bundle, copy, language, log, out, annotate=job)
    finally:
        shutil.rmtree(copy.parent, ignore_errors=True)
    out.write("Goodbye. The copy and what you rated on it are deleted.\n")
    out.flush()
    return 0
