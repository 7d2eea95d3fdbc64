"""The pilot report finds the place a study confuses people: a study written here asks which
restaurant they would book with buttons, and participants type the name instead of tapping.
Real bot, emulator, SQLite; ``ozlab report --pilot`` in JSON and Markdown lists that place
with how many messages and participants needed the hint there."""

from __future__ import annotations

import contextlib
import io
import json
from pathlib import Path

import pytest

from bot.cli import analytics_main
from bot.pilot.emulator import BotApiEmulator, Participant
from scenarios.loading import load_study
from tests.conftest import StartBot, consent

pytestmark = pytest.mark.slow

STUDY = """\
id: booking
title: Booking a table
texts:
  welcome: Welcome to our restaurant study.
  consent: "Privacy agreement: we keep your answers under a code."
  declined: Thank you anyway.
systems:
  - {type: demo, id: shop-v1, variant: v1}
scenarios: [dinner]
"""

SCENARIO = """\
id: dinner
title: Dinner in town
brief: Find a vegetarian restaurant near the station.
max_exchanges: 2
post_task: [pick]
"""

# The planted confusion: an answer people know by name, offered only as buttons.
QUESTIONNAIRE = """\
id: pick
title: Your choice
items:
  - type: choice
    id: pick.restaurant
    text: Which restaurant would you book?
    options:
      - {value: verde, label: Verde Station}
      - {value: olive, label: Olive Tree}
  - type: scale
    id: pick.sure
    text: How sure are you?
    labels: {1: Not at all, 2: Hardly, 3: Somewhat, 4: Mostly, 5: Very}
"""


def _write_study(folder: Path) -> Path:
    (folder / "scenarios").mkdir(parents=True)
    (folder / "questionnaires").mkdir()
    (folder / "scenarios" / "dinner.yaml").write_text(SCENARIO)
    (folder / "questionnaires" / "pick.yaml").write_text(QUESTIONNAIRE)
    study = folder / "study.yaml"
    study.write_text(STUDY)
    return study


async def _take_part(p: Participant, typed: tuple[str, ...]) -> None:
    """Consent, finish the task, type ``typed`` at the restaurant question, then tap."""
    await consent(p)
    await p.tap(text="Finish task", message_id=p.messages[-1].message_id)
    await p.wait_for_text("Which restaurant would you book?")
    for word in typed:
        before = len(p.messages)
        await p.send_text(word)
        await p.wait_for(lambda q, n=before: len(q.messages) > n)
        assert "tap one of the buttons" in p.messages[-1].text  # a hint, not progress
    await p.tap(text="2 · Olive Tree")
    await p.wait_for_text("How sure are you?")
    await p.tap(text="5 · Very")
    await p.wait_for_text("Thank you for taking part")


def _report(db: Path, fmt: str) -> str:
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert analytics_main(["report", "--db", str(db), "--pilot", "--format", fmt]) == 0
    return out.getvalue()


async def test_the_pilot_report_lists_where_people_typed_instead_of_tapping(
    emulator: BotApiEmulator, start_bot: StartBot, tmp_path: Path
) -> None:
    bundle = load_study(_write_study(tmp_path / "study"))
    bot = await start_bot(bundle)
    await _take_part(emulator.participant(801), ("Olive Tree", "the olive one"))
    await _take_part(emulator.participant(802), ("Verde",))
    await _take_part(emulator.participant(803), ())
    # Typed at the agreement (nothing of it is kept), then at the question, then withdrew:
    # their hints go with the rest of their data.
    gone = emulator.participant(804)
    await gone.send_text("/start")
    await gone.wait_for_text("Privacy agreement")
    await gone.send_text("I'm Anna Rossi, what is this?")
    await gone.wait_for_text("button")
    await gone.tap(text="I agree")
    await gone.tap(
        text="Finish task", message_id=(await gone.wait_for_text("Your task")).message_id
    )
    await gone.wait_for_text("Which restaurant would you book?")
    await gone.send_text("Olive Tree, Anna")
    await gone.wait_for_text("tap one of the buttons")
    stored = json.dumps(bot.tables()["events"])
    assert "Olive Tree, Anna" in stored and "consent_pending" in stored
    assert "Anna Rossi" not in stored
    await gone.send_text("/withdraw")
    await gone.wait_for_text("Do you want to withdraw")
    await gone.tap(text="Yes, withdraw and erase")
    await gone.wait_for_text("You have withdrawn")
    await bot.stop()
    stored = json.dumps(bot.tables()["events"])
    assert "Anna" not in stored and "consent_pending" not in stored

    report = json.loads(_report(bot.db, "json"))["pilot"]
    assert report["hint_places"] == [
        {
            "hint": "tap_a_button",
            "where": "pick / pick.restaurant",
            "messages": 3,
            "participants": 2,
        }
    ]
    hints = report["hints"]
    assert sorted(h["sent"] for h in hints) == ["Olive Tree", "Verde", "the olive one"]
    assert {h["where"] for h in hints} == {"pick / pick.restaurant"}
    assert report["completed"] == 3 and report["drop_offs"] == []

    markdown = _report(bot.db, "md")
    section = markdown[markdown.index("Messages that got a hint instead of progress") :]
    place = next(line for line in section.splitlines() if "pick / pick.restaurant" in line)
    assert "typed instead of tapping a button" in place
    assert [cell.strip() for cell in place.strip("|").split("|")][-2:] == ["3", "2"]
    assert "the olive one" in section
