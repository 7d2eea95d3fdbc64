"""``ozlab chat --annotate JOB``: the researcher plays a new annotator in a terminal (a
pseudo-terminal here), through the real bot on the emulator, on a copy of a demo's database
(whose chats the demo sealed under a secret of its own): the brief, a whole target rated
with its buttons, /pause, /back, and the adjudication a third annotator is given where two
disagreed; the study's database is only read, the copy deleted."""

from __future__ import annotations

import asyncio
import re
import sys
from collections import Counter
from pathlib import Path

import pytest

from bot.core.vocabulary import AnnotationRound
from bot.store.sqlite import open_store
from tests.annotating_support import invite
from tests.annotation_support import read
from tests.store_reads import tables
from tests.terminal_support import Terminal
from tests.test_chat_e2e import ENV, ROOT, ozlab

pytestmark = pytest.mark.slow


def test_a_researcher_rates_a_whole_target_as_a_new_annotator(tmp_path: Path) -> None:
    db = tmp_path / "cues.sqlite"
    ozlab("demo", "-n", "2", "--db", str(db), "--study", "hri-cues", "--annotators", "0")
    before = tables(db)
    argv = [sys.executable, "-m", "bot.cli", "chat", "hri-cues", "--annotate", "hri-cues"]
    with Terminal([*argv, "--db", str(db)], cwd=ROOT, env=ENV) as chat:
        chat.expect(r"you rate on a copy, never in the study's database")
        copy = Path(chat.expect(r"^Study 'hri-cues' on (\S+)$").group(1))
        assert copy.parent != tmp_path and copy.exists()
        chat.expect(r"^you: /start ann-[A-Z0-9]+$")  # the code an invitation link carries
        chat.expect(r"^bot #1: Welcome! You are annotator A-")
        chat.expect(r"^bot #2: How to rate")
        item = chat.expect(r"^bot #(\d+): Exchange 1 of (\d+) · conversation 1 of")
        chat.expect(r"\[1\] 1   \[2\] 2   \[3\] 3   \[4\] 4   \[5\] 5")
        chat.type("/pause")
        chat.expect(r"^bot #\d+: Paused\. Send any message")
        chat.type("hello")
        chat.expect(r"^bot #\d+: Welcome back!")
        item = chat.expect(r"^bot #(\d+): Exchange 1 of (\d+) · conversation 1 of")
        chat.type("/back")  # the HRI CUES protocol shows each exchange once
        chat.expect(r"^bot #\d+: This job shows each exchange once.*/back is not available")
        chat.type("4")
        chat.expect(r"^you tap: 4$")
        chat.expect(rf"^bot #{item.group(1)} \(edited\): Exchange 1 of \d+ .*✓$")
        chat.expect(rf"^bot #\d+: Exchange 2 of {item.group(2)} · conversation 1 of")
        chat.type("/quit")
        assert chat.wait() == 0
    assert "Traceback" not in chat.output
    assert chat.output.rstrip().endswith("Goodbye. The copy and what you rated on it are deleted.")
    assert not copy.parent.exists()
    assert tables(db) == before  # the study's database only read
    assert read(db, lambda store: store.annotators("hri-cues")) == []
    assert read(db, lambda store: store.annotation_ratings()) == []


def test_an_unknown_job_is_refused_before_anything_is_copied(tmp_path: Path) -> None:
    db = tmp_path / "cues.sqlite"
    ozlab("demo", "-n", "1", "--db", str(db), "--study", "hri-cues", "--annotators", "0")
    argv = [sys.executable, "-m", "bot.cli", "chat", "hri-cues", "--annotate", "nope"]
    with Terminal([*argv, "--db", str(db)], cwd=ROOT, env=ENV) as chat:
        assert chat.wait() == 3
    assert re.fullmatch(
        r"ozlab: study 'hri-cues' has no annotation job 'nope' \(its jobs: hri-cues\)\n",
        chat.output,
    )


def test_annotate_needs_the_studys_database() -> None:
    argv = [sys.executable, "-m", "bot.cli", "chat", "hri-cues", "--annotate", "hri-cues"]
    with Terminal(argv, cwd=ROOT, env=ENV) as chat:
        assert chat.wait() == 3
    assert "--annotate needs --db" in chat.output


Q1 = "xrec-exchange.q1_recommendation_rate"


async def _two_annotators_disagree(db: Path) -> int:
    """Two annotators of the XRec job rate every target, the second saying the opposite on
    question 1: every target then waits for a third annotator; how many targets."""
    invited = await invite(db, "xrec", 2)
    store = await open_store(db)
    try:
        for n, (_, code) in enumerate(invited):
            _, annotator = await store.claim_annotator(code, f"c-annotator-{n}")
            assert annotator is not None
            while (task := await store.next_annotation_target(annotator.annotator_id)) is not None:
                target = task.target
                await store.record_annotation(
                    annotator.annotator_id, "xrec", target.target, target.level,
                    "xrec-exchange", Q1, n,
                )  # fmt: skip
                await store.finish_annotation_target(
                    annotator.annotator_id, "xrec", target.target, target.level
                )
        targets = await store.annotation_targets("xrec")
    finally:
        await store.close()
    return len(targets)


def test_the_third_annotator_adjudicates_what_two_disagreed_on(tmp_path: Path) -> None:
    db = tmp_path / "xrec.sqlite"
    ozlab("demo", "-n", "1", "--db", str(db), "--study", "xrec", "--annotators", "0")
    targets = asyncio.run(_two_annotators_disagree(db))
    argv = [sys.executable, "-m", "bot.cli", "chat", "xrec", "--annotate", "xrec"]
    with Terminal([*argv, "--db", str(db)], cwd=ROOT, env=ENV) as chat:
        copy = Path(chat.expect(r"^Study 'xrec' on (\S+)$").group(1))
        chat.expect(r"^bot #2: How to rate")
        chat.expect(rf"Exchange 1 of {targets} · conversation 1 of 1")
        chat.expect(r"Does system recommend a new movie\?")
        chat.expect(r"\[1\] Yes   \[2\] No")
        state = read(copy, lambda store: store.annotation_state("xrec"))
        assert state is not None
        rounds = Counter(a.round for a in state.assignments)
        assert rounds == {AnnotationRound.FIRST: 2 * targets, AnnotationRound.ADJUDICATION: targets}
        chat.type("1")
        chat.expect(r"^you tap: Yes$")
        chat.type("/quit")
        assert chat.wait() == 0
    assert "Traceback" not in chat.output
