"""``ozlab erase`` on a real study file: by pseudonym, by Telegram id (with the secret),
every chat id, the expired; through a running bot; and all or nothing."""

from __future__ import annotations

import asyncio
import sqlite3
import time
from pathlib import Path

import pytest

from bot.cli import main
from bot.core.errors import StoreError
from bot.core.privacy import Privacy
from bot.pilot.emulator import BotApiEmulator
from bot.rights.erasure import Request, erase
from bot.store.sqlite import open_existing
from scenarios.models import StudyBundle
from tests.conftest import SECRET, StartBot, consent, say
from tests.e2e_support import database_bytes
from tests.store_reads import tables

pytestmark = pytest.mark.slow

FIRST, SECOND = 601_000_001, 601_000_002
WORDS = {FIRST: "flamboyant periwinkle harbour", SECOND: "sombre vermilion lighthouse"}


def pseudonym(user_id: int) -> str:
    return Privacy(SECRET).pseudonym(user_id)


async def two_participants(
    start_bot: StartBot, emulator: BotApiEmulator, bundle: StudyBundle | None = None
) -> Path:
    """Two participants mid-dialogue, then the bot stops: the file is the operator's."""
    bot = await start_bot(bundle)
    for user_id, words in WORDS.items():
        p = emulator.participant(user_id)
        await consent(p)
        await say(p, words)
    await bot.stop()
    return bot.db


async def test_erase_by_pseudonym_leaves_nothing_of_them_in_the_file(
    start_bot: StartBot, emulator: BotApiEmulator, capsys: pytest.CaptureFixture[str]
) -> None:
    db = await two_participants(start_bot, emulator)
    assert await asyncio.to_thread(main, ["erase", "--db", str(db), pseudonym(FIRST)]) == 0
    assert "erased" in capsys.readouterr().out
    blob = database_bytes(db)
    assert WORDS[FIRST].encode() not in blob
    assert pseudonym(FIRST).encode() not in blob
    assert WORDS[SECOND].encode() in blob
    assert not db.with_name(db.name + "-wal").exists() or (
        db.with_name(db.name + "-wal").stat().st_size == 0
    )


async def test_erase_by_telegram_id_needs_the_secret(
    start_bot: StartBot,
    emulator: BotApiEmulator,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    db = await two_participants(start_bot, emulator)
    monkeypatch.delenv("OZLAB_SECRET", raising=False)
    argv = ["erase", "--db", str(db), "--telegram-id", str(SECOND)]
    assert await asyncio.to_thread(main, argv) == 3
    assert "OZLAB_SECRET" in capsys.readouterr().err
    monkeypatch.setenv("OZLAB_SECRET", SECRET)
    assert await asyncio.to_thread(main, argv) == 0
    blob = database_bytes(db)
    assert WORDS[SECOND].encode() not in blob
    assert pseudonym(SECOND).encode() not in blob
    assert WORDS[FIRST].encode() in blob


async def test_chat_keys_are_dropped_once_the_study_is_closed(
    start_bot: StartBot, emulator: BotApiEmulator
) -> None:
    db = await two_participants(start_bot, emulator)
    assert all(row["chat_key"] for row in _participants(db))
    assert await asyncio.to_thread(main, ["erase", "--db", str(db), "--chat-keys"]) == 0
    assert [row["chat_key"] for row in _participants(db)] == [None, None]


async def test_expired_participants_are_erased_after_the_retention(
    start_bot: StartBot, emulator: BotApiEmulator, hmd: StudyBundle
) -> None:
    study = hmd.study.model_copy(update={"retention": 3600.0})
    db = await two_participants(start_bot, emulator, hmd.model_copy(update={"study": study}))
    now = time.time()
    assert await asyncio.to_thread(erase, Request(db, expired=True), "", lambda: now) == []
    later = now + 3601
    lines = await asyncio.to_thread(erase, Request(db, expired=True), "", lambda: later)
    assert len(lines) == 2
    assert _participants(db) == []
    assert WORDS[FIRST].encode() not in database_bytes(db)


async def test_an_erasure_while_the_bot_runs_is_carried_out_by_the_bot(
    start_bot: StartBot, emulator: BotApiEmulator
) -> None:
    bot = await start_bot(command_interval=0.05)
    p = emulator.participant(FIRST)
    await consent(p)
    await say(p, WORDS[FIRST])
    lines = await asyncio.to_thread(erase, Request(bot.db, [pseudonym(FIRST)]))
    assert lines == [f"erased {pseudonym(FIRST)} (by the running bot)"]
    # The bot forgot them: their next message is a stranger's, nothing of before comes back.
    await p.send_text("/start")
    await p.wait_for_text("Privacy agreement")
    blob = database_bytes(bot.db)
    assert WORDS[FIRST].encode() not in blob
    assert all(row["participant_id"] != pseudonym(FIRST) for row in bot.sessions())
    with pytest.raises(Exception, match="stop it before dropping every chat id"):
        await asyncio.to_thread(erase, Request(bot.db, chat_keys=True))


async def test_an_erasure_is_all_or_nothing(start_bot: StartBot, emulator: BotApiEmulator) -> None:
    """The last delete fails (a trigger, in the real file): every earlier one is undone."""
    db = await two_participants(start_bot, emulator)
    before = tables(db)
    with sqlite3.connect(db) as conn:
        conn.execute(
            "CREATE TRIGGER refuse BEFORE DELETE ON participants"
            " BEGIN SELECT RAISE(ABORT, 'refused'); END"
        )
    store = await open_existing(db)
    try:
        with pytest.raises(sqlite3.IntegrityError, match="refused"):
            await store.erase_participant(pseudonym(FIRST))
    finally:
        await store.close()
    assert tables(db) == before
    assert WORDS[FIRST].encode() in database_bytes(db)


def _participants(db: Path) -> list[dict[str, object]]:
    with sqlite3.connect(db) as conn:
        conn.row_factory = sqlite3.Row
        return [dict(row) for row in conn.execute("SELECT * FROM participants ORDER BY id")]


async def test_a_bot_on_a_database_it_cannot_open_is_one_clear_error(
    start_bot: StartBot, tmp_path: Path
) -> None:
    """The lock is taken before the store opens: its failure is the store's kind of error."""
    with pytest.raises(StoreError, match="cannot open the study database"):
        await start_bot(db=tmp_path / "no such folder" / "study.sqlite")
