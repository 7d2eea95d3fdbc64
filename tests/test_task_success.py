"""Task success as the protocol defines it (HMD: a game added "correctly"): what the system
reported beside whether the task was done as the scenario's ``success_if`` says."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from bot.core.conversation import SystemReply
from bot.engine import effects as fx
from bot.engine import events as ev
from bot.pilot.emulator import BotApiEmulator
from scenarios.models import Check, Scenario, StudyBundle
from tests.conftest import StartBot, consent, say
from tests.test_engine import BUNDLE, in_dialogue, of, run

GAME = {"title": "Lantern Road", "genres": ["adventure"], "platforms": ["linux", "windows"]}
ON_ALEX = {"title": "Moss Hollow", "genres": ["adventure"], "platforms": ["linux"]}
CHECKS = {
    "genres": Check(contains="adventure"),
    "platforms": Check(contains="Linux"),  # text compared ignoring case
    "title": Check(not_in=("Moss Hollow", "Skyward Caravan")),
}


def with_checks(checks: dict[str, Check]) -> StudyBundle:
    scenario = BUNDLE.scenarios["task"].model_copy(update={"success_if": checks})
    return BUNDLE.model_copy(update={"scenarios": {"task": scenario}})


def closed(bundle: StudyBundle, reply: SystemReply) -> tuple[fx.CloseSession, list[fx.Effect]]:
    asked = run(bundle, in_dialogue(bundle), ev.TextReceived("add it"), 1.0)
    result = run(bundle, asked.journey, ev.SystemReplied(reply, 3.0), 1.0)
    [close] = of(result.effects, fx.CloseSession)
    return close, list(result.effects)


def success(data: dict[str, object] | None) -> SystemReply:
    event_data = {"task_success": data} if data is not None else {}
    return SystemReply(("Done!",), frozenset({"task_success"}), event_data=event_data)


@pytest.mark.parametrize(
    ("data", "correct"),
    [(GAME, True), (ON_ALEX, False), ({"title": "Lantern Road"}, False), (None, False)],
)
def test_a_reported_success_is_checked_against_success_if(
    data: dict[str, object] | None, correct: bool
) -> None:
    close, effects = closed(with_checks(CHECKS), success(data))
    assert (close.reason, close.success, close.correct) == ("success", True, correct)
    [reported] = [e for e in of(tuple(effects), fx.RecordEvent) if e.kind == "task_reported"]
    assert reported.data == {"event": "task_success", "data": data or {}}


def test_without_success_if_correctness_is_not_defined() -> None:
    close, _ = closed(BUNDLE, success(GAME))
    assert (close.success, close.correct) == (True, None)


def test_a_task_ended_otherwise_was_not_done_correctly_where_that_is_defined() -> None:
    bundle = with_checks(CHECKS)
    done = run(bundle, in_dialogue(bundle), ev.DoneCommand(), 1.0)
    [close] = of(done.effects, fx.CloseSession)
    assert (close.reason, close.success, close.correct) == ("participant_done", False, False)


@pytest.mark.parametrize("given", [{}, {"equals": 1, "contains": 2}, {"one_of": [], "not_in": []}])
def test_a_check_has_exactly_one_test(given: dict[str, object]) -> None:
    with pytest.raises(ValidationError):
        Scenario.model_validate(
            {"id": "t", "title": "T", "brief": "B", "success_if": {"title": given}}
        )


@pytest.mark.slow
@pytest.mark.parametrize(("system", "correct"), [("shop-v1", 1), ("shop-v0", 0)])
async def test_the_hmd_gift_counts_a_game_on_alexs_wishlist_as_reported_but_not_correct(
    emulator: BotApiEmulator, start_bot: StartBot, hmd: StudyBundle, system: str, correct: int
) -> None:
    """shop-v0 adds a game already on Alex's wishlist without a word; shop-v1 asks first and
    the participant then picks another: both report success, one task was done right."""
    only = hmd.model_copy(
        update={
            "study": hmd.study.model_copy(
                update={"systems": tuple(s for s in hmd.study.systems if s.id == system)}
            )
        }
    )
    bot = await start_bot(only)
    p = emulator.participant(701)
    await consent(p)
    reply = await say(p, "add Moss Hollow to my wishlist")
    if system == "shop-v1":
        assert "already on Alex's wishlist" in reply
        await say(p, "no")
        await say(p, "add Lantern Road to my wishlist")
    await p.wait_for_text("1/5")
    await bot.stop()
    [session] = bot.sessions()
    assert (session["end_reason"], session["success"], session["correct"]) == (
        "success",
        1,
        correct,
    )
    [reported] = bot.events("task_reported")
    title = "Lantern Road" if system == "shop-v1" else "Moss Hollow"
    assert f'"title": "{title}"' in reported["data"]
