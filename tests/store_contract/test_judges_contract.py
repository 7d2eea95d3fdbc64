"""ModelJudges: a judge's calls kept once by their exact request and found again, the
provenance of its judgements (a later run's in place of an earlier one's), its tokens per
judge, all in the snapshot; and gone with the participant whose conversation they show,
from the rows and from the bytes that keep the study."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from bot.engine import effects as fx
from bot.store.interface import StudyStore
from bot.store.model import JudgeCall, JudgeCost, JudgementRecord
from tests.store_contract.backends import stored_bytes
from tests.store_contract.conftest import Clock, OpenStore
from tests.store_contract.records import conversation, session, step


def call(key: str, session_id: str | None, paired: str | None = None, **fields: Any) -> JudgeCall:
    return JudgeCall(
        key=key,
        judge=fields.get("judge", "gpt-judge"),
        request=fields.get("request", f'{{"asked": "{key}"}}'),
        answer=fields.get("answer", "4"),
        prompt_tokens=fields.get("prompt_tokens", 100),
        completion_tokens=fields.get("completion_tokens", 1),
        session_id=session_id,
        paired_session=paired,
    )


def judged(
    target: str, session_id: str | None, paired: str | None = None, **fields: Any
) -> JudgementRecord:
    return JudgementRecord(
        job="hri",
        judge="gpt-judge",
        target=target,
        level=fields.get("level", "exchange"),
        item_id="hri.exchange",
        model="judge-m",
        host="127.0.0.1",
        prompt_hash="0123456789ab",
        temperature=0.0,
        seed=fields.get("seed", 7),
        outcome=fields.get("outcome", "rated"),
        said=fields.get("said", "4"),
        retried=fields.get("retried", False),
        call_key=fields.get("call_key", target),
        at=fields.get("at", 200.0),
        session_id=session_id,
        paired_session=paired,
    )


async def test_a_call_is_kept_once_by_its_request_and_found_again(
    open_store: OpenStore,
) -> None:
    store = await open_store(Clock(50.0))
    assert await store.judge_call("k1") is None
    first = call("k1", "p-1", request='{"messages": "ünïcode \\u0000 words"}')
    assert await store.keep_judge_call(first)
    assert not await store.keep_judge_call(call("k1", "p-1", answer="5"))  # never replaced
    assert await store.judge_call("k1") == first
    await store.keep_judge_call(call("k2", "p-1", prompt_tokens=None, completion_tokens=None))
    await store.keep_judge_call(call("k3", "p-1", judge="other", prompt_tokens=7))
    assert await store.judge_costs() == [
        JudgeCost("gpt-judge", 2, 100, 1),
        JudgeCost("other", 1, 7, 1),
    ]


async def test_a_later_judgement_takes_the_place_of_an_earlier_one(store: StudyStore) -> None:
    await store.keep_judgements(
        [
            judged("p-1#2", "p-1", outcome="unparseable", said="between 3 and 4", retried=True),
            judged("p-1#1", "p-1", seed=None),
            judged("p-1~q-1", "p-1", "q-1", level="pair", said="1"),
        ]
    )
    await store.keep_judgements([judged("p-1#2", "p-1", said="3", at=300.0)])
    found = await store.judgements()
    assert [(j.target, j.outcome, j.said, j.retried, j.at) for j in found] == [
        ("p-1#1", "rated", "4", False, 200.0),
        ("p-1#2", "rated", "3", False, 300.0),
        ("p-1~q-1", "rated", "1", False, 200.0),
    ]
    assert found[0] == judged("p-1#1", "p-1", seed=None)
    assert found[2].paired_session == "q-1" and found[2].level == "pair"


async def test_the_snapshot_brings_the_judgements_and_the_tokens(store: StudyStore) -> None:
    await store.keep_judge_call(call("k1", "p-1"))
    await store.keep_judgements([judged("p-1#1", "p-1", call_key="k1")])
    info = await store.read_snapshot(lambda table, columns: None)
    assert info.judgements == (judged("p-1#1", "p-1", call_key="k1"),)
    assert info.judge_costs == (JudgeCost("gpt-judge", 1, 100, 1),)


async def test_an_erasure_takes_every_call_and_judgement_that_shows_the_participant(
    store: StudyStore,
) -> None:
    for person in ("p", "q", "r"):
        await conversation(store, person, turns=1)
    await store.keep_judge_call(call("of-p", "p-1"))
    await store.keep_judge_call(call("p-first", "p-1", "q-1"))
    await store.keep_judge_call(call("p-second", "q-1", "p-1"))
    await store.keep_judge_call(call("of-q", "q-1"))
    await store.keep_judge_call(call("q-and-r", "r-1", "q-1"))
    await store.keep_judge_call(call("outside", None))
    await store.keep_judgements(
        [
            judged("p-1#1", "p-1"),
            judged("p-1~q-1", "p-1", "q-1", level="pair"),
            judged("q-1~p-1", "q-1", "p-1", level="pair"),
            judged("q-1#1", "q-1"),
            judged("clip-7", None),
        ]
    )
    await store.erase_participant("p")
    keys = ("of-p", "p-first", "p-second", "of-q", "q-and-r", "outside")
    assert [k for k in keys if await store.judge_call(k) is not None] == [
        "of-q",
        "q-and-r",
        "outside",
    ]
    assert [j.target for j in await store.judgements()] == ["clip-7", "q-1#1"]
    assert [c.calls for c in await store.judge_costs()] == [3]


async def test_an_erased_participants_words_in_judge_calls_are_nowhere_in_the_study(
    open_store: OpenStore, backend: str, location: str, tmp_path: Path, request: Any
) -> None:
    """The request holds the conversation as the judge read it, and the judge's answer may
    quote it: after the erasure neither is in what keeps the study (SQLite's file and WAL,
    PostgreSQL's data files)."""
    store = await open_store()
    words = "okapi-garnet-" + "5" * 24  # long enough to be found only where it was written
    quoted = "heron-basalt-" + "3" * 24
    await store.commit_step(step("p", *session("p"), fx.RecordUserTurn("p-1", 1, "hello")))
    await store.commit_step(step("q", *session("q"), fx.RecordUserTurn("q-1", 1, "kept words")))
    for n in range(30):  # several pages' worth
        await store.keep_judge_call(
            call(f"p{n}", "p-1", request=f'{{"messages": "{words} {n}"}}', answer=quoted)
        )
    await store.keep_judgements([judged("p-1#1", "p-1", said=quoted)])
    await store.keep_judge_call(call("q", "q-1", request='{"messages": "kept request"}'))
    server = request.getfixturevalue("postgres") if backend == "postgresql" else None
    place = tmp_path / "study.sqlite"
    held = stored_bytes(backend, location, place, server)
    assert words.encode() in held and quoted.encode() in held

    await store.erase_participant("p")

    kept = stored_bytes(backend, location, place, server)
    assert words.encode() not in kept and quoted.encode() not in kept
    assert b"kept request" in kept
