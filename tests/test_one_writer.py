"""One study database, one writer; and no command replaces data that is not a simulation's.

As a researcher meets it: real ``ozlab`` subprocesses on real files for every refusal (its
status and its one line); the runs that only make a file ready, in this process. A demo or a pilot
replaces only an earlier simulation's database that nobody has open; a second bot (or a
demo, a pilot, a chat) on a file a bot runs on is refused at once with one line; readers
(report, export, backup) keep working beside the bot.
"""

from __future__ import annotations

import asyncio
import os
import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from bot.core.privacy import Privacy
from bot.pilot.emulator import BotApiEmulator
from bot.store import lock as running
from bot.store.model import JudgeCall
from bot.store.sqlite import open_existing, open_store
from tests.annotating_support import invite
from tests.command_line import ozlab_here
from tests.conftest import SECRET, StartBot, consent, say
from tests.e2e_support import PROJECT_ROOT, SECRET_32, OzlabProcesses, database_bytes
from tests.store_reads import reading, tables

pytestmark = pytest.mark.slow

PEOPLE = {602_000_001: "cobalt marmalade orchard", 602_000_002: "saffron tugboat meridian"}
REFUSED = 5  # StoreError: the database cannot be used as it is


def command(*args: str, cwd: Path = PROJECT_ROOT) -> subprocess.CompletedProcess[str]:
    """One ``ozlab`` command as a researcher types it; whatever it says and its status."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OZLAB_", "TELEGRAM_"))}
    env["PYTHONPATH"] = str(PROJECT_ROOT)
    return subprocess.run(
        [sys.executable, "-m", "bot.cli", *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def one_line(done: subprocess.CompletedProcess[str]) -> str:
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1, done.stderr
    return lines[0]


async def real_study(start_bot: StartBot, emulator: BotApiEmulator) -> Path:
    """Two real participants mid-dialogue, then the bot stops: a live study's file."""
    bot = await start_bot()
    for user_id, words in PEOPLE.items():
        p = emulator.participant(user_id)
        await consent(p)
        await say(p, words)
    await bot.stop()
    return bot.db


def copy_of(db: Path, name: str) -> Path:
    """``cp live.sqlite copy.sqlite`` (with its WAL, as a careless copy takes it)."""
    copy = db.with_name(name)
    for suffix in ("", "-wal"):
        if Path(f"{db}{suffix}").exists():
            shutil.copyfile(f"{db}{suffix}", f"{copy}{suffix}")
    return copy


def stored_bytes(db: Path) -> bytes:
    """The database and its WAL (the shared-memory index changes as anyone reads)."""
    return b"".join(
        Path(f"{db}{s}").read_bytes() for s in ("", "-wal") if Path(f"{db}{s}").exists()
    )


def intact(db: Path) -> None:
    """Both participants and their words are still in the file."""
    participants = reading(db, lambda store: store.load_participants("hmd"))
    pseudonyms = {Privacy(SECRET).pseudonym(user_id) for user_id in PEOPLE}
    assert {p.participant_id for p in participants} == pseudonyms
    blob = database_bytes(db)
    assert all(words.encode() in blob for words in PEOPLE.values())


async def test_a_demo_or_a_pilot_refuses_a_copy_of_a_study_with_real_participants(
    start_bot: StartBot, emulator: BotApiEmulator
) -> None:
    copy = copy_of(await real_study(start_bot, emulator), "copy.sqlite")
    commands = [
        ["demo", "-n", "1", "--db", str(copy)],
        ["pilot", "hmd", "--simulator", "scripted", "-n", "1", "--db", str(copy)],
    ]
    for argv in commands:
        done = await asyncio.to_thread(command, *argv)
        assert done.returncode == REFUSED, done.stderr
        assert one_line(done) == (
            f"ozlab: {copy} holds 2 participants who are not simulated: choose another --db"
        )
        intact(copy)


def test_a_database_with_real_data_but_no_participants_is_refused(tmp_path: Path) -> None:
    """Invitation codes are live links to real people, though none has come yet."""
    db = tmp_path / "recruiting.sqlite"
    made = ozlab_here(
        "invite", "--db", db, "--n", "3", "--bot", "my_study_bot", "--out", tmp_path / "inv.csv"
    )
    assert made.returncode == 0, made.stderr
    before = stored_bytes(db)
    done = command("demo", "-n", "1", "--db", str(db))
    assert done.returncode == REFUSED
    assert one_line(done) == f"ozlab: {db} holds 3 invitation codes: choose another --db"
    assert stored_bytes(db) == before


def test_annotators_and_their_imported_ratings_without_participants_are_refused(
    tmp_path: Path,
) -> None:
    db = tmp_path / "ratings.sqlite"
    ratings = tmp_path / "ratings.csv"
    ratings.write_text("target,annotator,item,value\nclip-7,R1,exchange,3\nclip-7,R2,exchange,1\n")
    imported = ozlab_here("import", "annotations", ratings, "--db", db, "--instrument", "hri-cues")
    assert imported.returncode == 0, imported.stderr
    before = stored_bytes(db)
    done = command("pilot", "hmd", "--simulator", "scripted", "-n", "1", "--db", str(db))
    assert done.returncode == REFUSED
    assert one_line(done) == (
        f"ozlab: {db} holds 1 annotation job, 2 annotators and 2 ratings by annotators:"
        " choose another --db"
    )
    assert stored_bytes(db) == before


def test_an_earlier_demos_database_is_replaced(tmp_path: Path) -> None:
    """``make demo`` twice: the second run starts afresh on the first one's file."""
    db = tmp_path / "ozlab-demo.sqlite"
    first = ozlab_here("demo", "-n", "2", "--db", db)
    assert first.returncode == 0, first.stderr
    assert len(tables(db)["participants"]) == 2
    again = ozlab_here("demo", "-n", "1", "--annotators", "0", "--db", db)
    assert again.returncode == 0, again.stderr
    assert len(tables(db)["participants"]) == 1
    pilot = ozlab_here("pilot", "hmd", "--simulator", "scripted", "-n", "3", "--db", db)
    assert pilot.returncode == 0, pilot.stderr
    assert len(tables(db)["participants"]) == 3


def test_an_earlier_arena_demo_with_its_votes_is_replaced_but_not_imported_votes(
    tmp_path: Path,
) -> None:
    """Votes of simulated participants are the demo's own; votes imported from elsewhere
    are somebody's work."""
    db = tmp_path / "arena.sqlite"
    assert ozlab_here("demo", "--study", "arena", "-n", "2", "--db", db).returncode == 0
    again = ozlab_here("demo", "--study", "arena", "-n", "1", "--db", db)
    assert again.returncode == 0, again.stderr
    assert len(tables(db)["participants"]) == 1 and tables(db)["votes"]
    votes = tmp_path / "votes.csv"
    votes.write_text(
        "vote_id,source,rater,system_a,system_b,winner,question\n"
        "v1,preference,R1,shop-v1,shop-v0,a,overall\n",
        encoding="utf-8",
    )
    imported = ozlab_here("import", "votes", votes, "--db", db, "--study", "arena")
    assert imported.returncode == 0, imported.stderr
    before = stored_bytes(db)
    done = command("demo", "--study", "arena", "-n", "1", "--db", str(db))
    assert done.returncode == REFUSED
    assert one_line(done) == f"ozlab: {db} holds 1 vote: choose another --db"
    assert stored_bytes(db) == before


async def test_a_demo_replaces_its_simulated_annotators_and_nothing_else(tmp_path: Path) -> None:
    """Annotators a simulation marked are the demo's own, with the job only they work on;
    an annotator who is a person (a code handed out, though not used yet) is somebody's."""
    db = tmp_path / "hmd.sqlite"
    assert (await asyncio.to_thread(ozlab_here, "demo", "-n", "2", "--db", db)).returncode == 0
    [(person, _), (simulated, _)] = await invite(db, "hmd-acute", 2)
    store = await open_store(db)
    try:
        assert await store.mark_simulated_annotators([simulated]) == 1
    finally:
        await store.close()
    before = stored_bytes(db)
    done = await asyncio.to_thread(command, "demo", "-n", "1", "--db", str(db))
    assert done.returncode == REFUSED
    assert (
        one_line(done) == f"ozlab: {db} holds 1 annotation job and 1 annotator: choose another --db"
    )
    assert stored_bytes(db) == before
    store = await open_store(db)
    try:
        assert await store.mark_simulated_annotators([person]) == 1
    finally:
        await store.close()
    again = await asyncio.to_thread(ozlab_here, "demo", "-n", "1", "--db", db)
    assert again.returncode == 0, again.stderr
    assert len(tables(db)["participants"]) == 1 and not tables(db).get("annotators")


def test_a_simulation_with_erasures_in_its_ledger_is_refused(tmp_path: Path) -> None:
    """The ledger is what carries an erasure into the backups of that file: replacing the
    file would lose it, so a demo's file from which someone was erased stays."""
    db = tmp_path / "ozlab-demo.sqlite"
    assert ozlab_here("demo", "-n", "2", "--annotators", "0", "--db", db).returncode == 0
    someone = tables(db)["participants"][0]["participant_id"]
    erased = ozlab_here("erase", "--db", db, str(someone))
    assert erased.returncode == 0, erased.stderr
    before = stored_bytes(db)
    done = command("demo", "-n", "1", "--db", str(db))
    assert done.returncode == REFUSED
    assert one_line(done) == (
        f"ozlab: {db} holds 1 withdrawal counted and 1 erasure in its ledger: choose another --db"
    )
    assert stored_bytes(db) == before


async def test_a_simulation_a_model_judge_was_paid_to_judge_is_refused(tmp_path: Path) -> None:
    """A judge's calls cost tokens, and its judgements are a finding: somebody's work."""
    db = tmp_path / "ozlab-demo.sqlite"
    played = await asyncio.to_thread(ozlab_here, "demo", "-n", "1", "--annotators", "0", "--db", db)
    assert played.returncode == 0, played.stderr
    store = await open_store(db)
    try:
        await store.keep_judge_call(JudgeCall("k", "gpt-judge", "{}", "4", 10, 1, None))
    finally:
        await store.close()
    before = stored_bytes(db)
    done = await asyncio.to_thread(command, "demo", "-n", "1", "--db", str(db))
    assert done.returncode == REFUSED
    assert one_line(done) == f"ozlab: {db} holds 1 call to a model judge: choose another --db"
    assert stored_bytes(db) == before


async def test_a_demo_refuses_a_simulation_someone_has_open(tmp_path: Path) -> None:
    """Nothing but simulated participants, but a console or a report reads it: refused."""
    db = tmp_path / "ozlab-demo.sqlite"
    played = await asyncio.to_thread(ozlab_here, "demo", "-n", "2", "--annotators", "0", "--db", db)
    assert played.returncode == 0, played.stderr
    async with await open_existing(db, read_only=True):  # as a report or a console holds it
        done = await asyncio.to_thread(command, "demo", "-n", "1", "--db", str(db))
        assert done.returncode == REFUSED
        assert one_line(done).startswith(f"ozlab: {db} is open in another process")
    assert len(tables(db)["participants"]) == 2
    # A program that is not ozlab (the sqlite3 shell, a database browser) counts too.
    other = sqlite3.connect(db)
    try:
        other.execute("SELECT count(*) FROM participants").fetchall()
        done = await asyncio.to_thread(command, "demo", "-n", "1", "--db", str(db))
        assert done.returncode == REFUSED
        assert one_line(done).startswith(f"ozlab: {db} is open in another process")
    finally:
        other.close()
    assert len(tables(db)["participants"]) == 2


def test_a_stray_wal_without_its_database_is_not_taken_over(tmp_path: Path) -> None:
    db = tmp_path / "gone.sqlite"
    Path(f"{db}-wal").write_bytes(b"what is left of someone's study")
    done = command("demo", "-n", "1", "--db", str(db))
    assert done.returncode == REFUSED
    assert one_line(done).startswith(f"ozlab: {db}-wal is there without {db}")
    assert not db.exists()


async def test_one_writer_on_a_running_bots_database_and_readers_beside_it(
    ozlab: OzlabProcesses, emulator: BotApiEmulator, tmp_path: Path
) -> None:
    bot = await ozlab.start()
    db = ozlab.db
    for user_id, words in PEOPLE.items():
        p = emulator.participant(user_id)
        await consent(p)
        await say(p, words)

    second = await ozlab.start(wait_ready=False)
    assert await asyncio.wait_for(second.finish(), 30) == REFUSED
    lines = second.stderr.strip().splitlines()
    assert len(lines) == 1, second.stderr
    assert lines[0].startswith(f"ozlab: {db} is taken by another writer (ozlab run, pid {bot.pid})")

    for argv in (
        ["demo", "-n", "1", "--db", str(db)],
        ["pilot", "hmd", "--simulator", "scripted", "-n", "1", "--db", str(db)],
        ["chat", "hmd", "--db", str(db)],
    ):
        done = await asyncio.to_thread(command, *argv)
        assert done.returncode == REFUSED, done.stderr
        assert "one study database, one writer" in one_line(done)

    # Readers keep working beside the bot.
    report = await asyncio.to_thread(command, "report", "--db", str(db))
    assert report.returncode == 0, report.stderr
    export = await asyncio.to_thread(
        command, "export", "--db", str(db), "--out", str(tmp_path / "x")
    )
    assert export.returncode == 0, export.stderr
    backup = tmp_path / "backup.sqlite"
    copied = await asyncio.to_thread(command, "backup", "--db", str(db), "--out", str(backup))
    assert copied.returncode == 0, copied.stderr
    assert len(tables(backup)["participants"]) == 2

    # The bot never noticed: it goes on with its participants.
    p = emulator.participant(next(iter(PEOPLE)))
    await say(p, "and one more thing")
    assert bot.process.returncode is None
    assert await bot.terminate() == 0
    assert {r["participant_id"] for r in tables(db)["sessions"]} == {
        Privacy(SECRET_32).pseudonym(user_id) for user_id in PEOPLE
    }


async def test_a_bot_started_during_an_erasure_waits_for_it_then_runs(
    start_bot: StartBot, emulator: BotApiEmulator, tmp_path: Path
) -> None:
    """A supervisor restarting the bot while cron erases: the bot waits, never gives up."""
    db = tmp_path / "study.sqlite"
    with running.alone_on(db) as alone:  # as ``ozlab erase`` holds it when no bot runs
        assert alone
        starting = asyncio.create_task(start_bot(db=db))
        done, _ = await asyncio.wait({starting}, timeout=0.5)
        assert not done  # it waits for the erasure instead of refusing
    bot = await asyncio.wait_for(starting, 15)
    with running.alone_on(db) as alone:
        assert not alone  # now a bot runs: an erasure goes to it as a command
    p = emulator.participant(next(iter(PEOPLE)))
    await consent(p)
    await bot.stop()


async def test_a_store_closing_leaves_the_locks_of_another_store_in_its_process(
    tmp_path: Path,
) -> None:
    """SQLite's own locks belong to the process: closing any descriptor of the file drops
    them all. A second store on the file closing must not leave the first one unprotected
    (another process would take the file for unused and delete its WAL)."""
    db = tmp_path / "study.sqlite"
    first = await open_store(db)
    try:
        second = await open_existing(db, read_only=True)
        await second.highest_update_id()
        await second.close()
        probe = f"from bot.store.holdings import open_elsewhere; print(open_elsewhere({str(db)!r}))"
        seen = await asyncio.to_thread(
            subprocess.run,
            [sys.executable, "-c", probe],
            cwd=PROJECT_ROOT,
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert seen.stdout.strip() == "True", seen.stderr
    finally:
        await first.close()
    with running.unused(db) as unused:
        assert unused
