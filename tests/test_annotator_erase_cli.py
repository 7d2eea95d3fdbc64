"""``ozlab erase A-7KQ2`` on a study an annotator rated through the real bot: nothing of
theirs is left in the file (sealed chat id, code, ratings, their comment), the report's
agreement is computed without them, a backup taken before is reached by the ledger, an
import of their ratings is refused, and (with the secret) their updates still waiting in
the inbox go too."""

from __future__ import annotations

import asyncio
from pathlib import Path
from random import Random
from typing import Any

import pytest

from bot.annotation.invitations import invite_annotators
from bot.cli import main
from bot.core.annotation import AnnotationJobRecord
from bot.core.privacy import Privacy
from bot.pilot.emulator import BotApiEmulator
from bot.rights.erasure import Request, erase
from bot.store.sqlite import open_store
from bot.telegram.inbound import Inbound, InboundKind
from scenarios.loading import load_study
from tests.annotating_support import by_exchange, json_report, play, rate_all, stored
from tests.conftest import SECRET, StartBot
from tests.e2e_support import database_bytes

pytestmark = pytest.mark.slow

COMMENT = "cerulean xylophone marmalade"


async def _invite(db: Path) -> tuple[tuple[str, str], ...]:
    """Three annotators, drawn from a seed that gives pseudonyms an import takes (with a
    digit: ``ozlab import`` refuses any other as possibly a name)."""
    store = await open_store(db)
    try:
        invited = await invite_annotators(store, None, "hri-cues", 3, choose=Random(3).choice)
    finally:
        await store.close()
    assert all(any(c.isdigit() for c in p) for p, _ in invited.annotators)
    return invited.annotators


def _annotators_agreeing(report: dict[str, Any]) -> int:
    rows = [r for r in report["reliability"] if r["job"] == "hri-cues"]
    [icc] = [
        r
        for r in rows
        if r["level"] == "exchange" and r["system"] is None and r["statistic"] == "ICC2"
    ]
    return int(icc["n_annotators"])


async def test_erasing_an_annotator_leaves_nothing_of_them_backups_and_imports_included(
    emulator: BotApiEmulator,
    start_bot: StartBot,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    bundle = load_study("hri-cues")
    db = tmp_path / "cues.sqlite"
    bot = await start_bot(bundle, db=db)
    await play(emulator, bundle, participants=1)
    (leaving, code), (staying, other), (_, third) = await _invite(db)
    ann = emulator.participant(7600, first_name="Ann")
    await ann.send_text(f"/start {code}")
    given = await rate_all(ann, by_exchange(0), typed=COMMENT)
    for number, (invited, shift) in enumerate(((other, 0), (third, 1)), start=1):
        keeper = emulator.participant(7600 + number, first_name="Kept")
        await keeper.send_text(f"/start {invited}")
        await rate_all(keeper, by_exchange(shift), typed="steady")
    [sealed] = [
        a.chat_key for a in await stored(db, lambda s: s.annotators()) if a.annotator_id == leaving
    ]
    assert sealed is not None
    folder = tmp_path / "backups"
    folder.mkdir()
    backup = folder / "monday.sqlite"
    await stored(db, lambda s: s.backup(backup))
    await bot.stop()
    assert COMMENT.encode() in database_bytes(backup)
    assert _annotators_agreeing(await json_report(db, tmp_path / "before.json")) == 3

    assert await asyncio.to_thread(main, ["erase", "--db", str(db), leaving]) == 0
    said = capsys.readouterr().out
    assert f"erased annotator {leaving} of job hri-cues: {given} ratings, 0 votes" in said
    ratings = await stored(db, lambda s: s.annotation_ratings())
    assert not any(r.annotator == leaving for r in ratings)
    assert any(r.annotator == staying for r in ratings)
    assert leaving not in {a.annotator_id for a in await stored(db, lambda s: s.annotators())}
    blob = database_bytes(db)
    for gone in (COMMENT, leaving, code, sealed):
        assert gone.encode() not in blob
    assert b"steady" in blob
    # The agreement is computed again from the ratings that remain.
    assert _annotators_agreeing(await json_report(db, tmp_path / "after.json")) == 2

    # Again: nothing left to erase.
    assert await asyncio.to_thread(main, ["erase", "--db", str(db), leaving]) == 0
    said = capsys.readouterr().out.splitlines()
    assert said[0] == f"nothing stored about {leaving}"
    # the reports written above are named as beyond the erasure's reach
    assert all(line.startswith("written before this erasure") for line in said[1:])

    # The ledger reaches the backup taken before.
    args = ["erase", "--db", str(db), "--backups", str(folder)]
    assert await asyncio.to_thread(main, args) == 0
    assert "erased 1 withdrawn" in capsys.readouterr().out
    kept = database_bytes(backup)
    for gone in (COMMENT, leaving, code, sealed):
        assert gone.encode() not in kept
    assert b"steady" in kept

    # Their ratings cannot come back by a file.
    csv = tmp_path / "ratings.csv"
    target = ratings[0].target
    csv.write_text(
        f"target,annotator,item,value\n{target},{staying},exchange,3\n"
        f"{target},{leaving},exchange,3\n",
        encoding="utf-8",
    )
    argv = ["import", "annotations", str(csv), "--db", str(db), "--instrument", "hri-cues"]
    assert await asyncio.to_thread(main, [*argv, "--job", "hri-cues"]) == 3
    assert f"ratings.csv:3: '{leaving}' was erased: the erasure ledger keeps them out" in (
        capsys.readouterr().err
    )
    assert len(await stored(db, lambda s: s.annotation_ratings())) == len(ratings)


async def test_their_updates_waiting_in_the_inbox_go_too_when_the_secret_tells_them(
    tmp_path: Path,
) -> None:
    privacy = Privacy(SECRET)
    db = tmp_path / "study.sqlite"
    store = await open_store(db)
    try:
        await store.save_annotation_job(AnnotationJobRecord("hri", "s", "{}", True, None))
        await store.add_annotators("hri", [("A-1", "ann-ONE")])
        await store.claim_annotator("ann-ONE", "hash-1", privacy.seal("7800"))
        waiting = [
            Inbound(7800, InboundKind.TEXT, "their words", 5),
            Inbound(7801, InboundKind.TEXT, "x", 6),
        ]
        await store.remember_updates(
            [(u.update_id or 0, privacy.seal(u.to_json())) for u in waiting]
        )
    finally:
        await store.close()

    [line] = await asyncio.to_thread(erase, Request(db, ["A-1"]), SECRET)

    assert line.endswith("1 pending updates")
    store = await open_store(db)
    try:
        assert [u for u, _ in await store.pending_updates()] == [6]
    finally:
        await store.close()
