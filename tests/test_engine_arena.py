"""Side by side, in the pure engine: a message goes to both systems in one effect, the two
replies come back as A and B with the vote's buttons, a vote is a record of its step, and
a failed side, a system naming itself, an old tap and a limit are each handled."""

from __future__ import annotations

from dataclasses import replace

from bot.core.conversation import SystemReply
from bot.core.vocabulary import EventKind, FlagReason, RaterKind, VoteSource, Winner
from bot.core.votes import Vote
from bot.engine import effects as fx
from bot.engine import events as ev
from bot.engine.arena import draw
from bot.engine.callbacks import VoteTap, decode, encode
from bot.engine.journey import Journey, Stage
from scenarios.loading import load_study
from tests.test_engine import of
from tests.test_engine_taps import Chat

ARENA = load_study("arena")
TEXTS = ARENA.study.texts


def replied(*texts: str, latency: float = 10.0) -> ev.SystemReplied:
    return ev.SystemReplied(SystemReply(texts=texts), latency)


def in_task() -> tuple[Chat, Journey]:
    chat = Chat(ARENA)
    journey = chat.in_dialogue()
    assert journey.sides is not None
    return chat, journey


def asked(chat: Chat, text: str = "adventure games for linux") -> fx.CallSides:
    step = chat.do(ev.TextReceived(text))
    (call,) = of(step.effects, fx.CallSides)
    assert not of(step.effects, fx.CallSystem)  # one effect: the runner calls both at once
    return call


def test_the_two_systems_are_drawn_per_session_and_logged() -> None:
    chat = Chat(ARENA)
    chat.do(ev.StartCommand())
    started = chat.tap("c:y")
    journey = chat.journey
    assert journey is not None and journey.sides is not None
    (drawn,) = [e for e in of(started.effects, fx.RecordEvent) if e.kind is EventKind.SIDES_DRAWN]
    assert drawn.data == dict(zip("ab", journey.sides.systems, strict=True))
    assert sorted(journey.sides.systems) == ["shop-v0", "shop-v1"]
    assert journey.task.system_id in journey.sides.systems
    assert draw(ARENA, journey) == journey.sides.systems  # the same seed, the same sides
    orders = {draw(ARENA, replace(journey, participant=f"p{n}")) for n in range(40)}
    assert len(orders) == 2  # A is sometimes one, sometimes the other


def test_a_message_goes_to_both_each_with_its_own_history_then_a_vote_is_kept() -> None:
    chat, journey = in_task()
    a, b = journey.sides.systems if journey.sides else ("", "")
    call = asked(chat)
    assert [c.system_id for c in call.calls] == [a, b]
    assert [c.conversation.message for c in call.calls] == ["adventure games for linux"] * 2
    assert call.calls[0].conversation.session_id != call.calls[1].conversation.session_id

    step = chat.do(ev.SidesAnswered((replied("Here are <b>3</b> games"), replied("Sorry?"))))
    sends = of(step.effects, fx.Send)
    assert sends[0].text == "<b>Assistant A</b>\nHere are &lt;b&gt;3&lt;/b&gt; games"
    assert sends[0].format == "html" and sends[1].text == "<b>Assistant B</b>\nSorry?"
    ballot = sends[2]
    assert ballot.text == TEXTS.arena_heading and ballot.until is fx.Until.NEXT_TURN
    assert [decode(d) for d in fx.callback_data(ballot.buttons)] == [
        VoteTap(1, 0),
        VoteTap(1, 1),
        VoteTap(1, 2),
        VoteTap(1, 3),
    ]
    (logged,) = [e for e in of(step.effects, fx.RecordEvent) if e.kind is EventKind.SIDES_REPLIED]
    assert logged.data["flagged"] is False
    assert not of(step.effects, fx.RecordVote)

    voted = chat.tap(encode(VoteTap(1, 1)))
    (kept,) = of(voted.effects, fx.RecordVote)
    assert kept.vote == Vote(
        f"{journey.session_id}#1", VoteSource.SIDE_BY_SIDE, journey.participant,
        RaterKind.PARTICIPANT, a, b, Winner.B, "turn", scenario_id="arena-gift",
        session_id=journey.session_id, turn=1,
    )  # fmt: skip
    (edit,) = of(voted.effects, fx.Edit)
    said = "Your vote: B is better. Write your next message when you are ready."
    assert edit.text == f"{said}\nA was {a}, B was {b}."
    assert edit.buttons == ()

    again = chat.tap(encode(VoteTap(1, 0)), chat.showing[encode(VoteTap(1, 0))])
    assert not of(again.effects, fx.RecordVote)  # voted once: an old tap is told politely
    assert of(again.effects, fx.Toast) == [fx.Toast(TEXTS.already_recorded)]

    second = asked(chat, "is Lantern Road on Alex's wishlist?")
    histories = [c.conversation.history for c in second.calls]
    assert [h[0].system for h in histories] == ["Here are <b>3</b> games", "Sorry?"]


def test_a_failed_side_makes_the_turn_not_comparable_never_a_loss() -> None:
    chat, journey = in_task()
    a, b = journey.sides.systems if journey.sides else ("", "")
    asked(chat)
    failed = ev.SystemFailed("HTTP 500", 30.0)
    step = chat.do(ev.SidesAnswered((replied("Here are 3 games"), failed)))
    (kept,) = of(step.effects, fx.RecordVote)
    assert (kept.vote.winner, kept.vote.system_a, kept.vote.system_b) == (
        Winner.NOT_COMPARABLE,
        a,
        b,
    )
    assert not any(s.buttons for s in of(step.effects, fx.Send))  # nothing to vote on
    (turn,) = of(step.effects, fx.RecordSystemTurn)
    assert turn.error == "B: HTTP 500" and turn.text == "[A] Here are 3 games\n\n[B] (no reply)"
    second = asked(chat, "and for linux?")
    assert [len(c.conversation.history) for c in second.calls] == [1, 0]  # B never answered


def test_a_reply_naming_its_own_system_flags_the_vote() -> None:
    chat, journey = in_task()
    sides = journey.sides.systems if journey.sides else ("", "")
    own = dict(ARENA.study.side_by_side.names)[sides[1]][0]
    asked(chat)
    chat.do(ev.SidesAnswered((replied("Here are 3 games"), replied(f"I am {own.lower()}!"))))
    (kept,) = of(chat.tap(encode(VoteTap(1, 0))).effects, fx.RecordVote)
    assert kept.vote.flag_reason is FlagReason.SELF_IDENTIFICATION


def test_a_limit_reached_waits_for_the_vote_then_ends_the_task() -> None:
    chat, _ = in_task()
    for turn in range(1, 6):
        asked(chat, f"message {turn}")
        step = chat.do(ev.SidesAnswered((replied("one"), replied("two"))))
        assert not of(step.effects, fx.CloseSession)
        voted = chat.tap(encode(VoteTap(turn, 2)))
        assert of(voted.effects, fx.RecordVote)[0].vote.winner is Winner.TIE
    assert of(voted.effects, fx.CloseSession)
    assert chat.journey is not None and chat.journey.stage is not Stage.DIALOGUE
