"""The journey's JSON is written with every step: encoding the history a turn at a time must
give the very text one ``json.dumps`` of the whole gives (stored rows stay the same)."""

from __future__ import annotations

import json
from dataclasses import replace

import pytest

from bot.core.conversation import Turn
from bot.engine.effects import Until
from bot.engine.journey import Journey, Keyboard, Stage, Task, Waiting, forget_encoded_turns

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


def _dialogue(participant: str, history: tuple[Turn, ...]) -> Journey:
    return Journey(participant, Stage.DIALOGUE, 1.5, 2.25, tasks=(Task("t", "s"),), history=history)


def test_a_history_grown_turn_by_turn_reads_as_the_whole_every_step() -> None:
    """The history is encoded a turn at a time from what was encoded for the participant
    before; whatever came before (another history under the same pseudonym, one turn
    changed, a shorter one), the text is that of the whole."""
    journey = _dialogue("p1", ())
    for i in range(5):
        grown = journey.evolve(history=(*journey.history, Turn(f"{ODD} {i}", f"r{i}")))
        assert grown.to_json() == _whole(grown)
        asked = grown.evolve(pending_message="next", turns=i + 1)  # the same history
        assert asked.to_json() == _whole(asked)
        journey = asked
    other = _dialogue("p1", (Turn("another", "study"), *journey.history[1:]))
    assert other.to_json() == _whole(other)
    longer = other.evolve(history=(*journey.history, Turn("x", "y")))  # its prefix differs
    assert longer.to_json() == _whole(longer)
    shorter = _dialogue("p1", journey.history[:2])
    assert shorter.to_json() == _whole(shorter)
    forget_encoded_turns()
    assert journey.to_json() == _whole(journey)


def test_evolve_makes_what_replace_makes() -> None:
    journey = _dialogue("p2", (Turn("a", "b"),))
    changes: dict[str, object] = {"turns": 3, "pending_message": ODD, "reminded": True}
    evolved = journey.evolve(**changes)
    assert evolved == replace(journey, **changes)  # type: ignore[arg-type]
    assert evolved.to_json() == _whole(replace(journey, **changes))  # type: ignore[arg-type]
    assert (journey.turns, journey.pending_message) == (0, None)  # the original unchanged
    with pytest.raises(TypeError, match="no field turnz"):
        journey.evolve(turnz=1)
