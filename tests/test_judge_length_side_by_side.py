"""Length bias of a judge of side-by-side turns: participants' votes kept by the bot with
each side's reply in the turn's ``sides_replied`` event, a judge's verdicts on the same
turns imported (rater kind ``model``, flagged as a judge's verdicts) and planted to favour
the longer reply 80 % of the time, people's blind to length: the judges section finds
both, counting only decided, unflagged people's votes on the turns the judge judged."""

from __future__ import annotations

import hashlib
from pathlib import Path

from analytics.data.loading import load_study_data
from analytics.report.present_judges import judges_from_study
from bot.core.participants import ParticipantStatus
from bot.core.vocabulary import (
    Consent,
    EventKind,
    FlagReason,
    Origin,
    RaterKind,
    SessionState,
    Stage,
    VoteSource,
    Winner,
)
from bot.core.votes import TURN_QUESTION, Vote
from bot.engine import effects as fx
from bot.store.definition import definition_json
from bot.store.model import StepCommit
from bot.store.sqlite import open_store
from scenarios.loading import load_study

SESSIONS, TURNS = 12, 5
MODEL = FlagReason.MODEL_VERDICT  # 60 turns; the judge judges the first 50


def draw(*parts: object) -> int:
    return int(hashlib.sha256("|".join(map(str, parts)).encode()).hexdigest(), 16) % 100


def replies(n: int, turn: int) -> tuple[str, str]:
    """What shop-v1 (A) and shop-v0 (B) said, of planted, unequal lengths."""
    a, b = 1 + (n * 3 + turn * 5) % 11, 1 + (n * 7 + turn * 2) % 11
    return "Moss Hollow." + " Truly." * a, "Moss Hollow?" + " Surely." * b


def vote(
    rater: str, kind: RaterKind, sid: str, turn: int, a_won: bool, flag: FlagReason | None = None
) -> Vote:
    return Vote(
        vote_id=f"{sid}#{turn}" + ("" if kind is RaterKind.PARTICIPANT else f":{rater}"),
        source=VoteSource.SIDE_BY_SIDE,
        rater=rater,
        rater_kind=kind,
        system_a="shop-v1",
        system_b="shop-v0",
        winner=Winner.A if a_won else Winner.B,
        question=TURN_QUESTION,
        scenario_id="arena-gift",
        session_id=sid,
        turn=turn,
        flag_reason=flag,
    )


async def test_a_judge_of_side_by_side_turns_preferring_the_longer_reply(tmp_path: Path) -> None:
    db = tmp_path / "arena.sqlite"
    store = await open_store(db)
    judged: list[Vote] = []
    try:
        await store.record_definition("arena", definition_json(load_study("arena")))
        for n in range(SESSIONS):
            person, sid = f"p{n}", f"p{n}-1"
            records: list[fx.Record] = [
                fx.RecordConsent(Consent.ACCEPTED),
                fx.OpenSession(sid, "arena-gift", "shop-v1", 0, "random", "1"),
            ]
            for turn in range(1, TURNS + 1):
                a, b = replies(n, turn)
                logged = [{"system": "shop-v1", "text": a}, {"system": "shop-v0", "text": b}]
                a_won = draw(person, turn) < 50  # blind to length
                # a reply that named its system: the vote is flagged, never counted
                flag = FlagReason.SELF_IDENTIFICATION if (n, turn) == (0, 1) else None
                records += [
                    fx.RecordUserTurn(sid, turn, "A gift for Alex?"),
                    fx.RecordSystemTurn(sid, turn, f"[A] {a}\n\n[B] {b}", 3.0),
                    fx.RecordEvent(EventKind.SIDES_REPLIED, sid, {"turn": turn, "replies": logged}),
                    fx.RecordVote(vote(person, RaterKind.PARTICIPANT, sid, turn, a_won, flag)),
                ]
                longer_a = len(a) > len(b)
                if n < 10:
                    planted = draw("judge", sid, turn) < 80
                    verdict = longer_a == planted  # flagged, as a judge run's: out of the fit
                    judged.append(
                        vote("model:gpt-judge", RaterKind.MODEL, sid, turn, verdict, MODEL)
                    )
            records.append(fx.SetSessionState(sid, SessionState.ENDED))
            status = ParticipantStatus(Stage.FINISHED, 1.0)
            await store.commit_step(StepCommit("arena", person, "{}", status, None, records))
        await store.record_votes("arena", judged, origin=Origin.IMPORT)
    finally:
        await store.close()
    section = judges_from_study(load_study_data(db))
    assert section is not None
    rows = {r["rater"]: r for r in section.findings.pair_length.to_dict("records")}
    assert set(rows) == {"model:gpt-judge", "people"}
    judge, people = rows["model:gpt-judge"], rows["people"]
    assert (judge["source"], judge["job"], judge["question"]) == ("side_by_side", None, "turn")
    unequal = [
        (n, t) for n in range(10) for t in range(1, TURNS + 1)
        if len(replies(n, t)[0]) != len(replies(n, t)[1])
    ]  # fmt: skip
    planted = sum(draw("judge", f"p{n}-1", t) < 80 for n, t in unequal)
    assert (judge["pairs"], judge["verdicts"], judge["longer"]) == (
        len(unequal), len(unequal), planted,
    )  # fmt: skip
    assert judge["low"] <= 0.8 <= judge["high"] and judge["rho_low"] > 0
    # people's unflagged votes on the judged turns only (the last two sessions' are not)
    assert (0, 1) in unequal and people["pairs"] == len(unequal) - 1
    assert people["low"] <= 0.5 <= people["high"]
    assert people["rho_low"] <= 0 <= people["rho_high"]
