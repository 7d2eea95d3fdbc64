"""Text from outside that a database cannot keep as it is (a NUL, a lone surrogate) is made
storable once, at the door where it comes in, the same on SQLite and PostgreSQL: the bot
answers every such message and keeps running, and both backends keep the same text."""

from __future__ import annotations

import asyncio
import json
import sqlite3
import sys
from pathlib import Path

import pytest

from bot.core.conversation import Conversation, SystemReply
from bot.pilot.emulator import BotApiEmulator
from scenarios.models import StudyBundle
from tests.command_line import environment
from tests.conftest import StartBot, consent, say
from tests.e2e_support import OzlabProcesses
from tests.postgres_server import PostgresServer
from tests.server_commands import here, ok
from tests.store_reads import pick, tables

pytestmark = pytest.mark.slow

SORRY = "Sorry, the assistant could not answer"


@pytest.mark.parametrize("backend", ["sqlite", "postgresql"])
async def test_messages_holding_a_nul_are_answered_and_kept_alike_on_both_backends(
    backend: str, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    db: str | None = None
    if backend == "postgresql":
        postgres: PostgresServer = request.getfixturevalue("postgres")
        db = postgres.fresh_database()
    said = [f"tell me about games\x00 number {i}" for i in range(8)]
    async with BotApiEmulator("123456789:AAE-the-door-for-outside-text-0123456789") as telegram:
        ozlab_run = OzlabProcesses(telegram, tmp_path, db)
        try:
            bot = await ozlab_run.start(study="hmd")
            p = telegram.participant(801)
            await consent(p)
            for text in said:
                answer = await say(p, text)
                assert SORRY not in answer, (text, bot.stderr[-3000:])
                assert bot.process.returncode is None, bot.stderr[-3000:]
            assert await bot.terminate() == 0, bot.stderr[-3000:]
            assert "Traceback" not in bot.stderr, bot.stderr
        finally:
            await ozlab_run.close()
    kept = [row["user_text"] for row in tables(ozlab_run.db)["exchanges"]]
    assert kept == [f"tell me about games\ufffd number {i}" for i in range(8)]


class Garbled:
    """A system under test whose replies hold what no database keeps: a NUL in its words and
    its button, a lone surrogate (as a JSON escape ``"\\ud83d"`` gives Python)."""

    async def respond(self, conversation: Conversation) -> SystemReply:
        return SystemReply(
            texts=(f"games\x00 for {conversation.message} \ud83d!",),
            buttons=(("more\x00", "more\ud83d"),),
        )

    async def close(self) -> None:
        """Nothing is held open."""


@pytest.mark.parametrize("stored_in", ["sqlite", "postgresql"])
async def test_a_systems_reply_is_made_storable_where_it_comes_in(
    emulator: BotApiEmulator, start_bot: StartBot, hmd: StudyBundle, stored_in: str
) -> None:
    bot = await start_bot(systems={s.id: Garbled() for s in hmd.study.systems})
    p = emulator.participant(802)
    await consent(p)
    for n in range(3):
        assert await say(p, f"round {n}") == f"games\ufffd for round {n} \ufffd!"
        assert "more\ufffd" in p.messages[-1].buttons
    kept = pick(bot.exchanges(), "user_text", "system_text")
    assert kept == [(f"round {n}", f"games\ufffd for round {n} \ufffd!") for n in range(3)]
    await p.tap(text="more\ufffd")  # the payload, made storable too, is the next message
    await p.wait_for(lambda q: len(bot.exchanges()) == 4)
    assert bot.exchanges()[-1]["user_text"] == "more\ufffd"


def test_ozlab_copy_says_how_many_values_it_changed(
    postgres: PostgresServer, tmp_path: Path
) -> None:
    """A study from an older database, holding NULs, is copied with U+FFFD in their place,
    and the copy says how many values it changed, to a server and to a file alike."""
    older = tmp_path / "older.sqlite"
    ok(here("demo", "-n", "2", "--annotators", "0", "--db", older))
    with sqlite3.connect(older) as conn:
        conn.execute("UPDATE exchanges SET user_text = 'a' || char(0) || 'b' WHERE turn = 1")
        conn.execute("UPDATE exchanges SET system_text = char(0) WHERE turn = 1")
        nuls = 2 * conn.execute("SELECT count(*) FROM exchanges WHERE turn = 1").fetchone()[0]
    conn.close()
    assert nuls >= 4
    server, back = postgres.fresh_database(), tmp_path / "back.sqlite"
    said = ok(here("copy", "--db", older, "--to", server))
    assert f"{nuls} values held a character no database keeps" in said, said
    moved = tables(f"{server}?study=hmd")["exchanges"]
    first = [(r["user_text"], r["system_text"]) for r in moved if r["turn"] == 1]
    assert first == [("a\ufffdb", "\ufffd")] * (nuls // 2)
    again = ok(here("copy", "--db", server, "--to", back))
    assert "held a character" not in again  # nothing left to change
    assert tables(back)["exchanges"] == moved
    to_file = ok(here("copy", "--db", older, "--to", tmp_path / "copy.sqlite"))
    assert f"{nuls} values held a character no database keeps" in to_file
    assert tables(tmp_path / "copy.sqlite")["exchanges"] == moved


@pytest.mark.parametrize("backend", ["sqlite", "postgresql"])
def test_an_imported_files_nul_is_kept_as_u_fffd_on_both_backends(
    backend: str, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    """Answers collected elsewhere come in through the same door: a NUL in a free-text
    answer becomes U+FFFD, the rest of the file as it was."""
    file = tmp_path / "demo.sqlite"
    ok(here("demo", "-n", "2", "--annotators", "0", "--db", file))
    ok(here("export", "--db", file, "--out", tmp_path / "export"))
    csv = tmp_path / "export" / "responses.csv"
    written = csv.read_text(encoding="utf-8")
    assert "Quick and polite" in written
    csv.write_text(written.replace("Quick and polite", "Quick\x00 and polite"), encoding="utf-8")
    db: str | Path = tmp_path / "imported.sqlite"
    if backend == "postgresql":
        postgres: PostgresServer = request.getfixturevalue("postgres")
        db = postgres.fresh_database()
    ok(here("import", "responses", csv, "--db", db, "--study", "hmd"))
    texts = {r["text"] for r in tables(db)["responses"]}
    assert any(t and t.startswith("Quick\ufffd and polite") for t in texts), texts
    assert not any(t and "\x00" in t for t in texts)
    originals = {r["text"] for r in tables(file)["responses"]}
    assert len(texts) == len(originals)


async def test_a_wizards_words_are_made_storable_where_they_come_in(tmp_path: Path) -> None:
    """A wizard's words come in through the console: bytes that are no UTF-8 on its command
    line (Python reads them as lone surrogates) reach the participant and the store as
    U+FFFD, and the bot goes on."""
    async with BotApiEmulator("123456789:AAE-the-door-for-a-wizard-0123456789ab") as telegram:
        ozlab_run = OzlabProcesses(telegram, tmp_path)
        try:
            bot = await ozlab_run.start(study="hmd")
            p = telegram.participant(803)
            await consent(p)
            await say(p, "adventure games for linux")
            [session] = [row["session_id"] for row in ozlab_run.sessions()]
            child = await asyncio.create_subprocess_exec(
                sys.executable, "-m", "bot.cli", "wizard", "say", session,
                b"Hello \xff from the lab", "--db", str(ozlab_run.db), "--as", "ada",
                cwd=tmp_path, env=environment(),
                stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
            )  # fmt: skip
            out, err = await asyncio.wait_for(child.communicate(), 120)
            assert child.returncode == 0, out + err
            await p.wait_for_text("Hello \ufffd from the lab")
            assert await say(p, "thanks") != ""
            assert await bot.terminate() == 0, bot.stderr[-3000:]
            assert "Traceback" not in bot.stderr, bot.stderr
        finally:
            await ozlab_run.close()
    [command] = tables(ozlab_run.db)["commands"]
    assert json.loads(command["payload"]) == {"text": "Hello \ufffd from the lab"}
    assert command["outcome"] == "applied"
