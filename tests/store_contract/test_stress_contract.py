"""StressTests: logged utterances to perturb, tests stored once, replays stored once and
never again, verdicts per judge, and a participant's erasure taking their tests along."""

from __future__ import annotations

from bot.core.phenomena import StressType
from bot.core.stress import Perturbation, Source, Utterance
from bot.core.vocabulary import ReplySource
from bot.engine import effects as fx
from bot.store.interface import StudyStore
from bot.store.stress_records import Judge, Judgement, Replay, ReplyTaken, Review, Verdict
from tests.store_contract.records import session, step


async def logged(store: StudyStore, participant: str = "p") -> None:
    sid = f"{participant}-1"
    await store.commit_step(
        step(
            participant,
            *session(participant),
            fx.RecordUserTurn(sid, 1, "hello"),
            fx.RecordSystemTurn(sid, 1, "Hi! What game?", 3.0),
            fx.RecordUserTurn(sid, 2, "adventure games for linux"),
            fx.RecordSystemTurn(sid, 2, "1. Loom", 3.0),
            fx.RecordUserTurn(sid, 3, "and cheaper?"),
            fx.RecordSystemTurn(sid, 3, None, 3.0, error="timeout"),
            fx.RecordUserTurn(sid, 4, "add the first"),
            fx.RecordSystemTurn(sid, 4, "Written by me", 3.0, None, ReplySource.WIZARD),
        )
    )


def typo(session_id: str = "p-1", perturbed: str = "adventrue games for linux") -> Perturbation:
    return Perturbation(
        session_id,
        2,
        StressType.ST_4,
        "adventure games for linux",
        perturbed,
        Source.GENERATED,
        change="adventure → adventrue",
    )


async def test_utterances_are_the_lines_a_system_answered_with_the_reply_before(
    store: StudyStore,
) -> None:
    await logged(store)
    assert await store.stress_utterances() == [
        Utterance("p-1", 1, "hello", "sys", "task", ""),
        Utterance("p-1", 2, "adventure games for linux", "sys", "task", "Hi! What game?"),
    ]  # turn 3 failed and turn 4 was a wizard's: no logged behaviour of the system
    assert await store.stress_utterances(["other"]) == []


async def test_a_test_is_stored_once_and_reviewed(store: StudyStore) -> None:
    await logged(store)
    first = await store.add_stress_tests(
        [typo(), typo(perturbed="adventure gmaes for linux")], Review.ACCEPTED
    )
    again = await store.add_stress_tests([typo()], Review.PENDING)
    assert again == first[:1] and len(set(first)) == 2
    stored = await store.stress_tests()
    assert (stored[0].id, stored[0].perturbation, stored[0].review) == (
        first[0],
        typo(),
        Review.ACCEPTED,
    )
    proposed = Perturbation("p-1", 1, StressType.ST_7, "hello", "good day", Source.PROPOSED, True)
    [pid] = await store.add_stress_tests([proposed], Review.PENDING)
    assert [t.id for t in await store.stress_tests(review=Review.PENDING)] == [pid]
    assert await store.review_stress_test(pid, Review.ACCEPTED, "good morning")
    assert not await store.review_stress_test(pid + 100, Review.REJECTED)
    [edited] = await store.stress_tests([StressType.ST_7])
    assert (edited.perturbation.perturbed, edited.perturbation.ad_hoc, edited.review) == (
        "good morning",
        True,
        Review.ACCEPTED,
    )
    assert [t.id for t in await store.stress_tests([StressType.ST_4])] == first


async def test_a_replay_is_stored_once_with_its_verdicts(store: StudyStore) -> None:
    await logged(store)
    [tid] = await store.add_stress_tests([typo()], Review.ACCEPTED)
    replay = Replay(
        tid,
        "sys",
        10.0,
        11.0,
        ReplyTaken(("1. Loom",), {"task_success": {"title": "Loom"}}),
        ReplyTaken(("Sorry?",), {}, error=None),
        True,
    )
    assert await store.replayed_stress_tests() == set()
    assert await store.stress_results() == []
    assert await store.record_replay(replay)
    failed = Replay(tid, "sys", 12.0, 13.0, ReplyTaken(), ReplyTaken(error="down"), False)
    assert not await store.record_replay(failed)  # finished already: never twice
    assert await store.replayed_stress_tests() == {(tid, "sys")}
    [result] = await store.stress_results()
    assert result.replay == replay and result.verdict is None
    person = Judgement(tid, "sys", Judge.HUMAN, Verdict.UNSURE, "ann", "", 14.0)
    await store.record_stress_verdict(person)
    await store.record_stress_verdict(Judgement(tid, "sys", Judge.LLM, Verdict.FAIL, "m"))
    await store.record_stress_verdict(Judgement(tid, "sys", Judge.HUMAN, Verdict.FAIL, "ann"))
    [result] = await store.stress_results()
    assert result.verdict is Verdict.FAIL
    assert [(j.judge, j.verdict) for j in result.judgements] == [
        (Judge.HUMAN, Verdict.FAIL),
        (Judge.LLM, Verdict.FAIL),
    ]


async def test_an_automatic_verdict_comes_with_the_replay(store: StudyStore) -> None:
    await logged(store)
    [tid] = await store.add_stress_tests([typo()], Review.ACCEPTED)
    replay = Replay(tid, "other", 1.0, 2.0, ReplyTaken(("a",)), ReplyTaken(("a",)), True)
    auto = Judgement(tid, "other", Judge.AUTO, Verdict.PASS, reason="same reply")
    await store.record_replay(replay, auto)
    await store.record_stress_verdict(Judgement(tid, "other", Judge.HUMAN, Verdict.FAIL))
    [result] = await store.stress_results()
    assert result.verdict is Verdict.PASS  # the replay's own comparison counts first
    assert result.by(Judge.AUTO) == auto


async def test_an_erased_participant_takes_their_stress_tests_along(store: StudyStore) -> None:
    await logged(store, "p")
    await logged(store, "q")
    tids = await store.add_stress_tests([typo("p-1"), typo("q-1")], Review.ACCEPTED)
    for tid in tids:
        await store.record_replay(
            Replay(tid, "sys", 1.0, 2.0, ReplyTaken(("a",)), ReplyTaken(("b",)), True),
            Judgement(tid, "sys", Judge.AUTO, Verdict.FAIL),
        )
    await store.erase_participant("p")
    assert [t.perturbation.session_id for t in await store.stress_tests()] == ["q-1"]
    assert [r.test.id for r in await store.stress_results()] == tids[1:]


async def test_an_edit_into_a_test_stored_already_rejects_the_proposal(
    store: StudyStore,
) -> None:
    await logged(store)
    [kept] = await store.add_stress_tests([typo()], Review.ACCEPTED)
    [proposed] = await store.add_stress_tests(
        [typo(perturbed="adventure gmaes for linux")], Review.PENDING
    )
    assert await store.review_stress_test(proposed, Review.ACCEPTED, typo().perturbed)
    found = {t.id: t for t in await store.stress_tests()}
    assert found[kept].review is Review.ACCEPTED
    assert found[proposed].review is Review.REJECTED  # the same test twice would run twice
    assert found[proposed].perturbation.perturbed == "adventure gmaes for linux"
