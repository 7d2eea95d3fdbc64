"""Erasures reach backups: a backup taken before a participant withdrew holds their words
until ``ozlab erase --backups DIR`` runs, and then nothing of them, down to the file's bytes;
a backup taken after holds nothing of them; running it again changes nothing; the ledger
that makes this possible holds no word and no pseudonym."""

from __future__ import annotations

import asyncio
import sqlite3
from pathlib import Path

import pytest

from bot.cli import main
from bot.core.privacy import Privacy
from bot.pilot.emulator import BotApiEmulator
from bot.store.connection import SCHEMA_VERSION
from bot.store.erasure import ledger_digest
from tests.conftest import SECRET, RunningBot, StartBot, consent, say
from tests.e2e_support import database_bytes
from tests.older_schema import as_of
from tests.storage_probe import integrity_check
from tests.test_withdrawal_e2e import withdraw

pytestmark = pytest.mark.slow

LEAVING, STAYING = 603_000_001, 603_000_002
WORDS = {LEAVING: "crepuscular saffron gondola", STAYING: "laconic turquoise windmill"}


def ozlab(*argv: str) -> int:
    return main(list(argv))


async def study_with_a_backup(
    start_bot: StartBot, emulator: BotApiEmulator, backup: Path
) -> RunningBot:
    """Two participants have chatted; a backup is taken while the bot runs."""
    bot = await start_bot()
    for user_id, words in WORDS.items():
        p = emulator.participant(user_id)
        await consent(p)
        await say(p, words)
    assert await asyncio.to_thread(ozlab, "backup", "--db", str(bot.db), "--out", str(backup)) == 0
    return bot


def judged_in(backup: Path) -> None:
    """A model judge's call and judgement of each conversation, its request holding the
    participant's words, as a backup taken after ``ozlab judge run`` keeps them."""
    with sqlite3.connect(backup) as conn:
        for user_id, words in WORDS.items():
            (session,) = conn.execute(
                "SELECT session_id FROM exchanges WHERE user_text = ?", (words,)
            ).fetchone()
            conn.execute(
                "INSERT INTO judge_calls (key, judge, request, answer, session_id, at)"
                " VALUES (?, 'gpt-judge', ?, '4', ?, 1)",
                (f"call of {user_id}", f'{{"content": "{words}"}}', session),
            )
            conn.execute(
                "INSERT INTO judgements (job, judge, target, level, item_id, model, host,"
                " prompt_hash, temperature, outcome, said, retried, session_id, at) VALUES"
                " ('j', 'gpt-judge', ?, 'session', 'i', 'm', 'h', 'x', 0, 'rated', ?, 0, ?, 1)",
                (f"judged {user_id}", f"4, as '{words}' shows", session),
            )


def rows(db: Path, sql: str) -> list[tuple[object, ...]]:
    with sqlite3.connect(db) as conn:
        return list(conn.execute(sql).fetchall())


async def test_a_backup_from_before_a_withdrawal_is_erased_of_them(
    start_bot: StartBot,
    emulator: BotApiEmulator,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    folder = tmp_path / "backups"
    folder.mkdir()
    before = folder / "monday.sqlite"
    bot = await study_with_a_backup(start_bot, emulator, before)
    judged_in(before)
    await withdraw(emulator.participant(LEAVING))
    gone = Privacy(SECRET).pseudonym(LEAVING)
    assert WORDS[LEAVING].encode() in before.read_bytes()  # what a backup keeps until now
    capsys.readouterr()

    erase = ("erase", "--db", str(bot.db), "--backups", str(folder))
    assert await asyncio.to_thread(ozlab, *erase) == 0

    assert capsys.readouterr().out == f"{before}: erased 1 withdrawn participant\n"
    blob = database_bytes(before)
    assert WORDS[LEAVING].encode() not in blob
    assert gone.encode() not in blob
    assert WORDS[STAYING].encode() in blob
    # a model judge's calls and judgements of the staying participant's conversation stay
    assert rows(before, "SELECT key FROM judge_calls") == [(f"call of {STAYING}",)]
    assert rows(before, "SELECT target FROM judgements") == [(f"judged {STAYING}",)]
    assert integrity_check(before) == ["ok"]
    assert sorted(p.name for p in folder.iterdir()) == ["monday.sqlite"]  # one file, no journal
    # The backup counts the withdrawal as the live file does, and carries the same ledger.
    counts = "SELECT study_id, system_id, count FROM withdrawals ORDER BY 1, 2"
    assert rows(before, counts) == rows(bot.db, counts) == [("hmd", "", 1)]
    ledger = "SELECT * FROM erasures"
    assert rows(before, ledger) == rows(bot.db, ledger)
    ((study, digest, erased_at),) = rows(bot.db, ledger)
    assert (study, len(str(digest)), isinstance(erased_at, float)) == ("hmd", 64, True)
    assert gone not in str(digest) and WORDS[LEAVING] not in str(digest)

    # Again: nothing to do, and the file is not written at all.
    erased_once = before.read_bytes()
    assert await asyncio.to_thread(ozlab, *erase) == 0
    assert capsys.readouterr().out == f"{before}: nobody to erase\n"
    assert before.read_bytes() == erased_once
    await bot.stop()


async def test_a_backup_taken_after_a_withdrawal_holds_nothing_of_them(
    start_bot: StartBot, emulator: BotApiEmulator, tmp_path: Path
) -> None:
    bot = await study_with_a_backup(start_bot, emulator, tmp_path / "before.sqlite")
    await withdraw(emulator.participant(LEAVING))
    after = tmp_path / "after.sqlite"
    assert await asyncio.to_thread(ozlab, "backup", "--db", str(bot.db), "--out", str(after)) == 0
    blob = database_bytes(after)
    assert WORDS[LEAVING].encode() not in blob
    assert Privacy(SECRET).pseudonym(LEAVING).encode() not in blob
    assert WORDS[STAYING].encode() in blob
    assert len(rows(after, "SELECT * FROM erasures")) == 1  # the ledger goes with the backup
    await bot.stop()


async def test_a_backup_from_an_older_ozlab_is_brought_up_to_date_then_erased(
    start_bot: StartBot,
    emulator: BotApiEmulator,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    folder = tmp_path / "backups"
    folder.mkdir()
    old = folder / "old.sqlite"
    bot = await study_with_a_backup(start_bot, emulator, old)
    with sqlite3.connect(old) as conn:  # as a backup from before the ledger (version 12)
        as_of(conn, 12)
    (folder / "notes.txt").write_text("kept for three months")
    await withdraw(emulator.participant(LEAVING))
    capsys.readouterr()

    erase = ("erase", "--db", str(bot.db), "--backups", str(folder))
    assert await asyncio.to_thread(ozlab, *erase) == 0

    out = capsys.readouterr().out.splitlines()
    assert out[0].startswith(f"left alone: {folder / 'notes.txt'} is not an SQLite file")
    assert out[1] == (f"{old}: erased 1 withdrawn participant; brought up from schema version 12")
    assert WORDS[LEAVING].encode() not in database_bytes(old)
    assert rows(old, "PRAGMA user_version") == [(SCHEMA_VERSION,)]
    await bot.stop()


async def test_a_backup_that_cannot_be_erased_stops_the_command_before_any_is_written(
    start_bot: StartBot,
    emulator: BotApiEmulator,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    folder = tmp_path / "backups"
    folder.mkdir()
    first, newer = folder / "a.sqlite", folder / "b.sqlite"
    bot = await study_with_a_backup(start_bot, emulator, first)
    await asyncio.to_thread(ozlab, "backup", "--db", str(bot.db), "--out", str(newer))
    with sqlite3.connect(newer) as conn:
        conn.execute(f"PRAGMA user_version={SCHEMA_VERSION + 1}")
    await withdraw(emulator.participant(LEAVING))
    untouched = first.read_bytes()
    capsys.readouterr()

    erase = ("erase", "--db", str(bot.db), "--backups", str(folder))
    assert await asyncio.to_thread(ozlab, *erase) == 6

    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and str(newer) in err[0] and "upgrade ozlab" in err[0]
    assert first.read_bytes() == untouched
    await bot.stop()


async def test_ozlab_backup_writes_no_one_the_ledger_names_even_if_the_live_file_holds_them(
    start_bot: StartBot, emulator: BotApiEmulator, tmp_path: Path
) -> None:
    """A live file can hold someone its ledger names (one restored from an old backup, its
    ledger brought up to date): the copy ``ozlab backup`` writes does not."""
    bot = await study_with_a_backup(start_bot, emulator, tmp_path / "first.sqlite")
    await bot.stop()
    leaving = Privacy(SECRET).pseudonym(LEAVING)
    with sqlite3.connect(bot.db) as conn:
        conn.execute("INSERT INTO erasures VALUES ('hmd', ?, 1e12)", (ledger_digest(leaving),))
    copy = tmp_path / "copy.sqlite"
    assert await asyncio.to_thread(ozlab, "backup", "--db", str(bot.db), "--out", str(copy)) == 0
    assert WORDS[LEAVING].encode() in database_bytes(bot.db)
    blob = database_bytes(copy)
    assert WORDS[LEAVING].encode() not in blob and leaving.encode() not in blob
    assert WORDS[STAYING].encode() in blob
    assert rows(copy, "SELECT * FROM withdrawals") == [("hmd", "", 1)]
    assert integrity_check(copy) == ["ok"]
