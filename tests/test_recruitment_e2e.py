"""Recruitment through the real bot on the emulator: a Prolific participant arrives with
their id in the ``/start`` payload, finishes, sees the completion code and the return link,
and ``ozlab export payments`` lists them with the id opened, while the database's bytes
never hold the id; single-use invitation codes are taken once and refused politely after."""

from __future__ import annotations

import asyncio
import csv
import logging
from pathlib import Path

import pytest

from bot.cli import main
from bot.core.privacy import SECRET_ENV
from bot.pilot.emulator import BotApiEmulator
from bot.runtime.logging import _CHATTY
from bot.store.sqlite import open_store
from scenarios.models import Recruitment, StudyBundle
from tests.conftest import SECRET, StartBot, say
from tests.e2e_support import database_bytes

pytestmark = pytest.mark.slow

PROLIFIC_PID = "5f1a2b3c4d5e6f7a8b9c0d1e"
RECRUITMENT = Recruitment(
    completion_code="C1A2B3C4", screened_out_code="SCREEN9", declined_code="NOCONSENT7"
)


def recruiting(hmd: StudyBundle) -> StudyBundle:
    """HMD with one system, one exchange per task and no questionnaire: quick to finish."""
    gift = hmd.scenarios["hmd-gift"].model_copy(update={"max_exchanges": 1, "post_task": ()})
    systems = tuple(s for s in hmd.study.systems if s.id == "shop-v1")
    study = hmd.study.model_copy(update={"recruitment": RECRUITMENT, "systems": systems})
    return hmd.model_copy(update={"study": study, "scenarios": {"hmd-gift": gift}})


def logged_as_by_ozlab_run(caplog: pytest.LogCaptureFixture) -> None:
    """Everything ``ozlab run -v`` logs, the chatty libraries quiet."""
    caplog.set_level(logging.DEBUG)
    for name in _CHATTY:
        caplog.set_level(logging.WARNING, logger=name)


async def export_payments(db: Path, out: Path, monkeypatch: pytest.MonkeyPatch) -> list[dict]:
    """``ozlab export payments`` as a researcher runs it (in a thread: it has its own loop)."""
    monkeypatch.setenv(SECRET_ENV, SECRET)
    status = await asyncio.to_thread(
        main, ["export", "payments", "--db", str(db), "--out", str(out)]
    )
    assert status == 0
    with out.open(newline="") as handle:
        return list(csv.DictReader(handle))


async def test_a_prolific_participant_is_paid_by_code_and_listed(
    emulator: BotApiEmulator,
    start_bot: StartBot,
    hmd: StudyBundle,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    logged_as_by_ozlab_run(caplog)
    bot = await start_bot(recruiting(hmd))
    p = emulator.participant(701)
    await p.send_text(f"/start pid_{PROLIFIC_PID}")
    agreement = await p.wait_for_text("Privacy agreement")
    assert "we keep only your Prolific ID and the time you spent" in agreement.text
    await p.tap(text="I agree")
    await p.wait_for_text("Your task")
    await say(p, "Hi! I need adventure games for Linux")
    await p.wait_for_text("Thank you for taking part")
    code = await p.wait_for_text("C1A2B3C4")
    assert "https://app.prolific.com/submissions/complete?cc=C1A2B3C4" in code.text
    await p.send_text("I lost the code")
    await p.wait_for(lambda q: q.messages[-1].text.count("C1A2B3C4") == 2)

    declining = emulator.participant(702)
    await declining.send_text("/start pid_60aa11bb22cc33dd44ee55ff")
    await declining.wait_for_text("Privacy agreement")
    await declining.tap(text="I do not agree")
    await declining.wait_for_text("NOCONSENT7")
    await bot.stop()

    blob = database_bytes(bot.db)
    assert PROLIFIC_PID.encode() not in blob and b"60aa11bb22cc33dd44ee55ff" not in blob
    assert PROLIFIC_PID not in caplog.text
    rows = await export_payments(bot.db, tmp_path / "payments.csv", monkeypatch)
    listed = {row["platform_id"]: row for row in rows}
    assert set(listed) == {PROLIFIC_PID, "60aa11bb22cc33dd44ee55ff"}
    paid = listed[PROLIFIC_PID]
    assert (paid["study"], paid["platform"], paid["status"]) == ("hmd", "prolific", "completed")
    assert float(paid["minutes"]) >= 0 and paid["arrived_at"] <= paid["last_active_at"]
    assert listed["60aa11bb22cc33dd44ee55ff"]["status"] == "declined"


async def test_an_invitation_code_lets_one_participant_in(
    emulator: BotApiEmulator, start_bot: StartBot, hmd: StudyBundle, tmp_path: Path
) -> None:
    db = tmp_path / "study.sqlite"
    async with await open_store(db) as store:
        assert await store.add_invitations(["ROOM4A7K2Q", "ROOM9X3M5T"]) == [
            "ROOM4A7K2Q",
            "ROOM9X3M5T",
        ]
    bot = await start_bot(db=db)
    first, second = emulator.participant(801), emulator.participant(802)
    await first.send_text("/start")
    await first.wait_for_text("needs an invitation code")
    await first.send_text("/start ROOM4A7K2Q")
    await first.wait_for_text("Privacy agreement")
    await second.send_text("/start ROOM4A7K2Q")
    await second.wait_for_text("already been used")
    await second.send_text("/start NOSUCHCODE")
    await second.wait_for_text("not valid")
    assert len(bot.participants()) == 1
    await first.send_text("/start ROOM4A7K2Q")  # the same participant coming back: fine
    await first.wait_for(lambda q: q.messages[-1].text.startswith("Privacy agreement"))
    await first.tap(text="I agree")
    await first.wait_for_text("Your task")
    await second.send_text("/start ROOM9X3M5T")
    await second.wait_for_text("Privacy agreement")
    assert len(bot.participants()) == 2


async def test_two_newcomers_with_one_code_at_once_let_one_in(
    emulator: BotApiEmulator, start_bot: StartBot, tmp_path: Path
) -> None:
    db = tmp_path / "study.sqlite"
    async with await open_store(db) as store:
        await store.add_invitations(["RACE7K2Q9M"])
    bot = await start_bot(db=db)
    racers = [emulator.participant(900 + n) for n in range(4)]
    await asyncio.gather(*(p.send_text("/start RACE7K2Q9M") for p in racers))
    answered = ("Privacy agreement", "That invitation code has already been used")
    for p in racers:
        await p.wait_for(lambda q: bool(q.messages) and q.messages[-1].text.startswith(answered))
    welcomed = [p for p in racers if p.messages[-1].text.startswith("Privacy agreement")]
    refused = [p for p in racers if "already been used" in p.messages[-1].text]
    assert (len(welcomed), len(refused)) == (1, 3)
    assert len(bot.participants()) == 1


async def test_a_withdrawn_participant_is_listed_with_the_time_given_and_nothing_else(
    emulator: BotApiEmulator,
    start_bot: StartBot,
    hmd: StudyBundle,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    bot = await start_bot(recruiting(hmd))
    p = emulator.participant(703)
    await p.send_text(f"/start pid_{PROLIFIC_PID}")
    await p.wait_for_text("Privacy agreement")
    await p.tap(text="I agree")
    await p.wait_for_text("Your task")
    await p.send_text("/withdraw")
    await p.wait_for_text("Do you want to withdraw")
    await p.tap(text="Yes, withdraw and erase")
    await p.wait_for_text("You have withdrawn")
    await bot.stop()

    assert bot.participants() == [] and bot.sessions() == []
    [row] = await export_payments(bot.db, tmp_path / "payments.csv", monkeypatch)
    assert (row["platform_id"], row["status"]) == (PROLIFIC_PID, "withdrawn")
    assert float(row["minutes"]) >= 0
    assert PROLIFIC_PID.encode() not in database_bytes(bot.db)


async def test_the_id_binds_on_any_start_in_every_order_and_never_changes(
    emulator: BotApiEmulator,
    start_bot: StartBot,
    hmd: StudyBundle,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    """The link opened after a bare ``/start`` (as ``ozlab chat`` once did), after consent,
    after the end, twice, and with another id: each bound once, as the part stands."""
    logged_as_by_ozlab_run(caplog)
    ids = {n: f"5f1a2b3c4d5e6f7a8b9c0e{n:02d}" for n in range(1, 6)}
    bot = await start_bot(recruiting(hmd))

    async def finish(p: object) -> None:
        await say(p, "Hi! I need adventure games for Linux")  # type: ignore[arg-type]
        await p.wait_for_text("C1A2B3C4")  # type: ignore[attr-defined]

    before_consent = emulator.participant(711)  # bare /start, then the link, then consent
    await before_consent.send_text("/start")
    await before_consent.wait_for_text("Privacy agreement")
    await before_consent.send_text(f"/start pid_{ids[1]}")
    await before_consent.wait_for(lambda q: q.messages[-1].text.startswith("Privacy agreement"))
    await before_consent.tap(text="I agree")
    await before_consent.wait_for_text("Your task")

    after_consent = emulator.participant(712)  # consent, then the link in the dialogue
    await after_consent.send_text("/start")
    await after_consent.wait_for_text("Privacy agreement")
    await after_consent.tap(text="I agree")
    await after_consent.wait_for_text("Your task")
    await after_consent.send_text(f"/start pid_{ids[2]}")
    await after_consent.send_text(f"/start pid_{ids[2]}")  # twice: still one row

    after_the_end = emulator.participant(713)  # finished, then the link
    await after_the_end.send_text("/start")
    await after_the_end.wait_for_text("Privacy agreement")
    await after_the_end.tap(text="I agree")
    await after_the_end.wait_for_text("Your task")
    await finish(after_the_end)
    await after_the_end.send_text(f"/start pid_{ids[3]}")
    await after_the_end.wait_for(lambda q: sum("C1A2B3C4" in m.text for m in q.messages) == 2)

    other_id = emulator.participant(714)  # came with one id, opens the link with another
    await other_id.send_text(f"/start pid_{ids[4]}")
    await other_id.wait_for_text("Privacy agreement")
    await other_id.send_text(f"/start pid_{ids[5]}")
    await other_id.wait_for_text("You are already taking part with another Prolific ID")

    await finish(before_consent)
    await finish(after_consent)
    await bot.stop()

    rows = await export_payments(bot.db, tmp_path / "payments.csv", monkeypatch)
    listed = {row["platform_id"]: row["status"] for row in rows}
    assert listed == {
        ids[1]: "completed",
        ids[2]: "completed",
        ids[3]: "completed",
        ids[4]: "started",
    }
    blob = database_bytes(bot.db)
    for platform_id in ids.values():
        assert platform_id.encode() not in blob and platform_id not in caplog.text
    assert len(bot.events("platform_id_refused")) == 1
