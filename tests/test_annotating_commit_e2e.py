"""An annotator's step is all or nothing, as a participant's: the rating a tap gives and
the Telegram update that brought it are one transaction. When marking the update handled
fails (as a process killed at that write), the rating is not kept either, and the update
stays in the inbox to be handled again."""

from __future__ import annotations

from pathlib import Path

import pytest

from bot.pilot.emulator import BotApiEmulator
from scenarios.loading import load_study
from tests.annotating_support import current_item, first_point, invite, play, stored
from tests.conftest import StartBot
from tests.storage_probe import pending_update_ids, updates_cannot_be_consumed

pytestmark = pytest.mark.slow


async def test_a_rating_is_kept_only_with_the_update_it_came_in(
    emulator: BotApiEmulator, start_bot: StartBot, tmp_path: Path
) -> None:
    bundle = load_study("hri-cues")
    db = tmp_path / "cues.sqlite"
    await start_bot(bundle, db=db)
    await play(emulator, bundle, participants=1)
    [(_, code)] = await invite(db, "hri-cues", 1)
    annotator = emulator.participant(7100, first_name="Ann")
    await annotator.send_text(f"/start {code}")
    await annotator.wait_for(lambda p: current_item(p) is not None, timeout=15)
    item = current_item(annotator)
    assert item is not None
    with updates_cannot_be_consumed(db):
        tap = await annotator.tap(text=first_point(item), message_id=item.message_id)
        await annotator.wait_for_answer()
        assert await stored(db, lambda s: s.annotation_ratings()) == []
        assert tap in pending_update_ids(db)
