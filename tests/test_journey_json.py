"""The journey's JSON is written with every step: encoding the history a turn at a time must
give the very text one ``json.dumps`` of the whole gives (stored rows stay the same)."""

from __future__ import annotations

import json

import pytest

from bot.core.conversation import Turn
from bot.engine.effects import Until
from bot.engine.journey import Journey, Keyboard, Stage, Task, Waiting

ODD = 'quotes " and \\ back, é, \u2028, \x00, emoji 🙂, <b>html</b>'


def _whole(journey: Journey) -> str:
    return json.dumps(journey, default=vars, separators=(",", ":"))


@pytest.mark.parametrize("turns", [0, 1, 2, 40])
def test_the_journey_reads_as_one_encoding_of_the_whole(turns: int) -> None:
    history = tuple(Turn(f"{ODD} {i}", f"reply {i}: {ODD}") for i in range(turns))
    journey = Journey(
        "p0123456789abcde",
        Stage.DIALOGUE,
        1.5,
        2.25,
        tasks=(Task("find-gift", "system-a"),),
        history=history,
        pending_message=ODD,
        offered=(("Buy", ODD),),
        waiting=Waiting((ODD,), ("end",), 12.5, 3.0, None, {"end": {"note": ODD}}),
        keyboards=(Keyboard(next(iter(Until)), 41, ("a", "b")),),
    )
    assert journey.to_json() == _whole(journey)
    assert Journey.from_json(journey.to_json()) == journey
