"""Side by side, end to end: the real bot on the Bot API emulator with two real HTTP systems
on loopback. A message reaches both systems before either answers (asked at once), both
replies come back as A and B with the vote's buttons, the vote is stored in the votes table
with the step, an old tap is answered politely, and a failing side makes the turn not
comparable. What a turn costs (the slower system, not the sum) is measured by
``bench/side_by_side.py``, not timed here."""

from __future__ import annotations

import json

import pytest

from bot.engine.callbacks import VoteTap, encode
from bot.pilot.emulator import BotApiEmulator
from bot.pilot.emulator.chat import BotMessage
from scenarios.loading import load_study
from tests.adapter_studies import spec, with_systems
from tests.conftest import StartBot, consent
from tests.fake_servers import FakeHttp, Mode

pytestmark = pytest.mark.slow


def vote_message(messages: list[BotMessage]) -> BotMessage | None:
    return next((m for m in reversed(messages) if "A is better" in m.buttons), None)


async def test_both_systems_are_asked_at_once_and_the_vote_is_stored(
    start_bot: StartBot, emulator: BotApiEmulator
) -> None:
    async with (
        FakeHttp(lambda body: {"text": f"v1 says: {body['message']}"}) as one,
        FakeHttp(lambda body: {"text": "v0 <i>guesses</i>"}) as other,
    ):
        arena = with_systems(
            load_study("arena"),
            spec("http", one, id="shop-v1", timeout=5.0),
            spec("http", other, id="shop-v0", timeout=5.0),
        )
        bot = await start_bot(arena)
        p = emulator.participant(4201, first_name="Ada")
        await consent(p)
        for server in (one, other):
            server.behave(Mode.HOLD)
        await p.send_text("adventure games for linux")
        # Both systems hold the message before either answers: they were asked at once.
        await one.wait_for_requests(1, timeout=10)
        await other.wait_for_requests(1, timeout=10)
        for server in (one, other):
            server.release()
        await p.wait_for(lambda q: vote_message(q.messages) is not None, 15)
        shown = [m.text for m in p.messages[-3:]]
        (drawn,) = bot.events("sides_drawn")
        sides = json.loads(drawn["data"])
        a, b = sides["a"], sides["b"]
        said = {"shop-v1": "v1 says: adventure games for linux", "shop-v0": "v0 <i>guesses</i>"}
        assert shown[0] == f"Assistant A\n{said[a]}"  # shown as text: markup escaped
        assert shown[1] == f"Assistant B\n{said[b]}"

        ballot = vote_message(p.messages)
        assert ballot is not None
        await p.tap(text="B is better", message_id=ballot.message_id)
        await p.wait_for(lambda q: "Your vote: B is better" in q.messages[-1].text, 10)
        assert f"A was {a}, B was {b}." in p.messages[-1].text
        (vote,) = bot.tables()["votes"]
        assert (vote["system_a"], vote["system_b"], vote["winner"]) == (a, b, "b")
        assert vote["turn"] == 1 and vote["source"] == "side_by_side"

        old = encode(VoteTap(1, 0))  # "A is better" on the ballot already voted on
        await p.send_callback(old, message_id=ballot.message_id)
        await p.wait_for_toast("already recorded")
        assert len(bot.tables()["votes"]) == 1

        other.behave(Mode.STATUS, times=1, status=500)  # shop-v0 fails this turn
        await p.send_text("and is it on Alex's wishlist?")
        await p.wait_for(lambda q: "could not answer" in q.messages[-1].text, 15)
        await p.wait_for(lambda q: len(bot.tables()["votes"]) == 2, 10)
        failed = bot.tables()["votes"][-1]
        assert (failed["turn"], failed["winner"]) == (2, "not_comparable")
        assert (failed["system_a"], failed["system_b"]) == (a, b)  # a loss for neither
        await bot.stop()
