"""Recruitment: a code is taken once (the first participant keeps it), a payment record
follows the participant's activity until their part ends and survives their erasure,
unlinked, as withdrawn."""

from __future__ import annotations

from bot.core.participants import ParticipantStatus
from bot.core.vocabulary import (
    AnswerStatus,
    EndReason,
    Invitation,
    Moment,
    PaymentStatus,
    SessionState,
    Stage,
)
from bot.engine import effects as fx
from bot.store.interface import StudyStore
from tests.store_contract.conftest import Clock, OpenStore
from tests.store_contract.records import session, step


async def test_no_code_is_asked_for_while_the_store_holds_none(store: StudyStore) -> None:
    assert await store.check_invitation("ANY", "p1") is Invitation.NONE_HELD
    assert await store.check_invitation(None, "p1") is Invitation.NONE_HELD


async def test_an_invitation_is_taken_once_and_kept_by_who_took_it(store: StudyStore) -> None:
    assert await store.add_invitations(["A1", "B2"]) == ["A1", "B2"]
    assert await store.add_invitations(["A1", "C3"]) == ["C3"]  # a stored code stays as it is
    assert await store.check_invitation("A1", "p1") is Invitation.FREE
    assert await store.check_invitation(None, "p1") is Invitation.UNKNOWN
    assert await store.check_invitation("ZZ", "p1") is Invitation.UNKNOWN
    await store.commit_step(step("p1", fx.ClaimInvitation("A1")))
    await store.commit_step(step("p2", fx.ClaimInvitation("A1")))  # too late: p1 has it
    assert await store.check_invitation("A1", "p1") is Invitation.YOURS
    assert await store.check_invitation("A1", "p2") is Invitation.TAKEN
    assert await store.check_invitation("B2", "p2") is Invitation.FREE


async def test_a_payment_record_follows_activity_until_the_part_ends(
    open_store: OpenStore,
) -> None:
    clock = Clock(100.0)
    store = await open_store(clock)
    await store.commit_step(step("p1", fx.RecordRecruitment("prolific", "sealed-id")))
    await store.commit_step(step("p2"))  # not recruited: no record
    await store.commit_step(step("p1", status=ParticipantStatus(Stage.DIALOGUE, 160.0)))
    clock.now = 400.0
    await store.commit_step(step("p1", fx.SetPaymentStatus(PaymentStatus.COMPLETED)))
    await store.commit_step(step("p1", status=ParticipantStatus(Stage.FINISHED, 900.0)))
    [record] = await store.payments()
    assert (record.platform, record.platform_key, record.status) == (
        "prolific",
        "sealed-id",
        PaymentStatus.COMPLETED,
    )
    assert (record.arrived_at, record.last_at, record.seconds) == (100.0, 400.0, 300.0)


async def test_an_erased_participant_keeps_an_unlinked_payment_record(
    open_store: OpenStore,
) -> None:
    clock = Clock(100.0)
    store = await open_store(clock)
    await store.add_invitations(["A1"])
    await store.commit_step(
        step("p1", fx.ClaimInvitation("A1"), fx.RecordRecruitment("prolific", "sealed-id"))
    )
    await store.commit_step(step("p1", status=ParticipantStatus(Stage.DIALOGUE, 250.0)))
    await store.erase_participant("p1")
    [record] = await store.payments()
    assert (record.platform_key, record.status, record.seconds) == (
        "sealed-id",
        PaymentStatus.WITHDRAWN,
        150.0,
    )
    assert await store.check_invitation("A1", "p1") is Invitation.TAKEN  # spent, nobody's


async def test_the_money_path_keeps_each_intent_and_its_outcome_through_an_erasure(
    open_store: OpenStore,
) -> None:
    clock = Clock(100.0)
    store = await open_store(clock)
    await store.commit_step(step("p1", fx.RecordRecruitment("prolific", "sealed-id")))
    first = await store.record_intent("hmd", "prolific", "S1", "bonus_create", "sealed-a", None)
    clock.now = 105.0
    second = await store.record_intent("hmd", "prolific", "S1", "bonus_pay", "sealed-b", "B7")
    await store.record_outcome(first, "applied", "B7", '{"total_amount": 150}')
    [record] = await store.payments()
    await store.note_submissions([(record.row, "sealed-submission", "AWAITING REVIEW")])
    clock.now = 110.0
    await store.note_approvals([record.row])
    await store.erase_participant("p1")  # the participant goes; the money path stays
    [kept] = await store.payments()  # and the payments row, unlinked, with the platform's word
    assert (kept.status, kept.submission_key, kept.platform_status, kept.approved_at) == (
        PaymentStatus.WITHDRAWN,
        "sealed-submission",
        "APPROVED",
        110.0,
    )
    created, paying = await store.money_path("prolific")
    assert (created.id, created.action, created.bulk_id, created.outcome) == (
        first,
        "bonus_create",
        "B7",
        "applied",
    )
    assert created.intent_at == 100.0 and created.answer == '{"total_amount": 150}'
    assert (paying.id, paying.bulk_id, paying.outcome, paying.intent_at) == (
        second,
        "B7",
        None,
        105.0,
    )
    assert await store.money_path("another") == []


async def test_failed_attention_checks_are_counted_per_payment_record(store: StudyStore) -> None:
    def check(item: str, ok: bool | None) -> fx.RecordResponse:
        answered = AnswerStatus.ANSWERED
        return fx.RecordResponse(
            None, "q", item, 1, "1", None, answered, 1.0, Moment.POST_STUDY, attention_ok=ok
        )

    await store.commit_step(step("p1", fx.RecordRecruitment("prolific", "k1")))
    await store.commit_step(step("p2", fx.RecordRecruitment("prolific", "k2")))
    await store.commit_step(step("p1", check("a", False), check("b", False), check("c", None)))
    await store.commit_step(step("p2", check("a", True), check("b", False)))
    first, second = await store.payments()
    assert await store.failed_checks() == {first.row: 2, second.row: 1}


async def test_tasks_ended_and_done_are_counted_per_payment_record(store: StudyStore) -> None:
    ended = fx.SetSessionState("p1-1", SessionState.ENDED)
    await store.commit_step(step("p1", fx.RecordRecruitment("prolific", "k1"), *session("p1")))
    await store.commit_step(step("p1", ended, fx.CloseSession("p1-1", EndReason.SUCCESS, True)))
    await store.commit_step(step("p2", fx.RecordRecruitment("prolific", "k2"), *session("p2")))
    await store.commit_step(step("p2", fx.SetSessionState("p2-1", SessionState.ENDED)))
    await store.commit_step(
        step("p2", fx.CloseSession("p2-1", EndReason.SUCCESS, True, correct=False))
    )
    first, second = await store.payments()
    assert await store.tasks_done() == {first.row: (1, 1), second.row: (1, 0)}
