"""``ozlab backup``: a copy of the live database that is one instant of the study, taken
while many participants write at once, and one line when it cannot be made."""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest

from bot.cli import main
from bot.core.conversation import Conversation, SystemReply
from bot.core.errors import StoreError
from bot.pilot.emulator import BotApiEmulator, Participant
from bot.store.sqlite import open_store
from scenarios.models import StudyBundle
from tests.conftest import StartBot, consent
from tests.storage_probe import integrity_check
from tests.store_reads import read_tables

PARTICIPANTS = 30
MESSAGES = 12
HELD_FROM = MESSAGES // 2


class HeldEcho:
    """Echoes at once, but holds the second half of every chat until :attr:`released`:
    the first backup is then surely taken with the burst half-way."""

    def __init__(self) -> None:
        self.released = asyncio.Event()

    async def respond(self, conversation: Conversation) -> SystemReply:
        if len(conversation.history) >= HELD_FROM:
            await self.released.wait()
        return SystemReply((f"echo {conversation.message}",))

    async def close(self) -> None:
        pass


def roomy(bundle: StudyBundle) -> StudyBundle:
    """The HMD study with room for the whole burst in one session."""
    scenarios = {
        sid: scenario.model_copy(update={"max_exchanges": 100})
        for sid, scenario in bundle.scenarios.items()
    }
    return bundle.model_copy(update={"scenarios": scenarios})


async def backup(db: Path, target: Path) -> int:
    """``ozlab backup`` as cron runs it: its own connection, its own event loop."""
    return await asyncio.to_thread(main, ["backup", "--db", str(db), "--out", str(target)])


def turns(tables: Mapping[str, list[dict[str, Any]]]) -> dict[str, list[tuple[Any, ...]]]:
    """Each session's exchanges, in turn order: (turn, user text, system text)."""
    found: dict[str, list[tuple[Any, ...]]] = {}
    for row in sorted(tables["exchanges"], key=lambda r: (r["session_id"], r["turn"])):
        found.setdefault(row["session_id"], []).append(
            (row["turn"], row["user_text"], row["system_text"])
        )
    return found


def assert_one_instant(copy: Mapping[str, list[dict[str, Any]]], final: dict[str, Any]) -> None:
    """Nothing in the copy points at a row it lacks, and each session's exchanges are the
    first ones of the same session at the end (the last possibly still without a reply)."""
    people = {row["participant_id"] for row in copy["participants"]}
    sessions = {row["session_id"] for row in copy["sessions"]}
    assert {row["participant_id"] for row in copy["sessions"]} <= people
    assert {row["session_id"] for row in copy["exchanges"]} <= sessions
    assert {row["participant_id"] for row in copy["responses"]} <= people
    assert {row["session_id"] for row in copy["responses"]} - {None} <= sessions
    for session_id, stored in turns(copy).items():
        assert [turn for turn, _, _ in stored] == list(range(1, len(stored) + 1)), session_id
        later = final[session_id][: len(stored)]
        for (turn, user, system), (_, user_then, system_then) in zip(stored, later, strict=True):
            assert user == user_then, (session_id, turn)
            assert system in (system_then, None), (session_id, turn)
            assert system is not None or turn == len(stored), (session_id, turn)


@pytest.mark.slow
async def test_a_backup_in_the_middle_of_a_burst_is_one_instant_of_the_study(
    emulator: BotApiEmulator, start_bot: StartBot, hmd: StudyBundle, tmp_path: Path
) -> None:
    echo = HeldEcho()
    bot = await start_bot(roomy(hmd), systems={s.id: echo for s in hmd.study.systems})
    people = [emulator.participant(80_000 + i) for i in range(PARTICIPANTS)]
    await asyncio.gather(*(consent(p) for p in people))
    starts = {p.user_id: len(p.messages) for p in people}

    async def burst(p: Participant) -> None:
        for n in range(MESSAGES):  # nobody waits for a reply
            await p.send_text(f"{p.user_id}:{n:02d}")

    sending = asyncio.gather(*(burst(p) for p in people))
    await people[0].wait_for_message_count(starts[people[0].user_id] + 1, timeout=30)
    copies = [tmp_path / "backup-0.sqlite"]
    assert await backup(bot.db, copies[0]) == 0  # the second halves are held meanwhile
    echo.released.set()
    everyone = asyncio.gather(
        *(p.wait_for_message_count(starts[p.user_id] + MESSAGES, timeout=60) for p in people)
    )
    while not everyone.done():  # back to back while the burst goes on, as often as it lasts
        copies.append(tmp_path / f"backup-{len(copies)}.sqlite")
        assert await backup(bot.db, copies[-1]) == 0
    await asyncio.gather(sending, everyone)
    await bot.stop()

    final = turns(await read_tables(bot.db))
    assert len(final) == PARTICIPANTS
    exchanges = []
    for copy in copies:
        assert integrity_check(copy) == ["ok"]
        store = await open_store(copy)  # a copy is a study database the bot could run on
        try:
            assert len(await store.load_participants(hmd.study.id)) == PARTICIPANTS
        finally:
            await store.close()
        tables = await read_tables(copy)
        assert_one_instant(tables, final)
        exchanges.append(len(tables["exchanges"]))
    assert 0 < exchanges[0] <= PARTICIPANTS * HELD_FROM  # taken in the middle of the burst
    assert exchanges == sorted(exchanges)  # each copy a later instant than the one before


def test_a_backup_over_the_live_database_is_refused_in_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = tmp_path / "study.sqlite"
    asyncio.run(created(db))
    before = db.read_bytes()
    assert main(["backup", "--db", str(db), "--out", str(tmp_path / "." / db.name)]) == 5
    assert capsys.readouterr().err.splitlines() == [
        f"ozlab: refusing to write the backup over the live database ({db}): give --out"
        " another file"
    ]
    assert db.read_bytes() == before


def test_a_backup_of_no_database_is_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    missing = tmp_path / "nothing.sqlite"
    code = main(["backup", "--db", str(missing), "--out", str(tmp_path / "copy.sqlite")])
    assert code == StoreError.exit_code == 5
    assert capsys.readouterr().err.splitlines() == [
        f"ozlab: no study database at {missing}: give the --db the bot runs with"
    ]
    assert not (tmp_path / "copy.sqlite").exists()


async def created(db: Path) -> None:
    """A study database as the bot leaves it: created, migrated, closed."""
    await (await open_store(db)).close()
