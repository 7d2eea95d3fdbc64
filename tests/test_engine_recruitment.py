"""Recruitment in the pure engine: which invitation lets a newcomer in, what is recorded for
payment, and which code each ending shows."""

from __future__ import annotations

from dataclasses import replace

import pytest

from bot.core.vocabulary import EventKind, Invitation, PaymentStatus, Stage
from bot.engine import effects as fx
from bot.engine import events as ev
from bot.engine.common import CONSENT_NO
from bot.engine.context import Context
from bot.engine.flow import step
from bot.engine.phases import closing
from bot.engine.recruitment import platform_id
from scenarios.models import Recruitment, Timing
from tests.test_engine import in_dialogue, make_bundle, of, run

RECRUITMENT = Recruitment(completion_code="DONE1", timed_out_code="LATE2")


def sends(result: object) -> list[str]:
    return [e.text for e in of(result.effects, fx.Send)]  # type: ignore[attr-defined]


@pytest.mark.parametrize(
    ("payload", "found"),
    [("pid_5f1a2b3c", "5f1a2b3c"), ("pid_", None), ("lab42", None), (None, None)],
)
def test_the_payload_form(payload: str | None, found: str | None) -> None:
    assert platform_id(payload) == found


@pytest.mark.parametrize(
    ("invitation", "code", "welcome", "answer"),
    [
        (Invitation.FREE, "K1", True, ""),
        (Invitation.YOURS, "K1", True, ""),
        (Invitation.TAKEN, "K1", False, "already been used"),
        (Invitation.UNKNOWN, "K9", False, "not valid"),
        (Invitation.UNKNOWN, None, False, "needs an invitation code"),
    ],
)
def test_single_use_invitations(
    invitation: Invitation, code: str | None, welcome: bool, answer: str
) -> None:
    bundle = make_bundle()
    context = Context(bundle, invitation=invitation)
    result = step(bundle, "p1", None, ev.StartCommand(code), 0.0, context)
    assert (result.journey is not None) is welcome
    claims = of(result.effects, fx.ClaimInvitation)
    assert claims == ([fx.ClaimInvitation("K1")] if invitation is Invitation.FREE else [])
    if answer:
        assert answer in sends(result)[0]


def test_codes_listed_in_the_study_still_let_anyone_in() -> None:
    bundle = make_bundle(invite_codes=("lab42",))
    for participant in ("p1", "p2"):
        context = Context(bundle, invitation=Invitation.UNKNOWN)
        result = step(bundle, participant, None, ev.StartCommand("lab42"), 0.0, context)
        assert result.journey is not None and not of(result.effects, fx.ClaimInvitation)


def test_a_recruited_newcomer_is_recorded_sealed_and_told_what_is_kept() -> None:
    bundle = make_bundle(recruitment=RECRUITMENT)
    result = run(bundle, None, ev.StartCommand(platform_key="sealed"))
    assert of(result.effects, fx.RecordRecruitment) == [fx.RecordRecruitment("prolific", "sealed")]
    assert "keep only your Prolific ID" in sends(result)[-1]
    assert "sealed" not in result.journey.to_json()  # type: ignore[union-attr]
    plain = run(make_bundle(), None, ev.StartCommand(platform_key="sealed"))
    assert not of(plain.effects, fx.RecordRecruitment) and "Prolific" not in sends(plain)[-1]


def test_declining_without_a_declined_code_is_asked_to_return_the_submission() -> None:
    bundle = make_bundle(recruitment=RECRUITMENT)
    journey = run(bundle, None, ev.StartCommand()).journey
    result = run(bundle, journey, ev.ButtonTapped(CONSENT_NO))
    assert of(result.effects, fx.SetPaymentStatus) == [fx.SetPaymentStatus(PaymentStatus.DECLINED)]
    told = [text for text in sends(result) if "Prolific" in text]
    assert told == [bundle.study.texts.platform_return.format(platform="Prolific")]
    assert "return your submission" in told[0] and "cc=" not in told[0]
    again = run(bundle, result.journey, ev.TextReceived("hello?"))
    assert not any("Prolific" in text for text in sends(again))  # declined_before only


def test_a_screened_out_participant_without_a_code_is_asked_to_return() -> None:
    bundle = make_bundle(recruitment=RECRUITMENT)
    journey = run(bundle, None, ev.StartCommand()).journey
    assert journey is not None
    released, effects = closing.release(bundle, journey)
    assert any("return your submission on Prolific" in getattr(e, "text", "") for e in effects)
    later = run(bundle, released, ev.TextReceived("again"))
    assert any("return your submission on Prolific" in text for text in sends(later))


def test_a_timed_out_participant_gets_the_timed_out_code() -> None:
    timing = Timing(reminder_after=60, abandon_after=600, close_abandoned=True)
    bundle = make_bundle(recruitment=RECRUITMENT, timing=timing)
    closed = run(bundle, in_dialogue(bundle), ev.Tick(), 601.0)
    assert closed.journey.stage is Stage.CLOSED  # type: ignore[union-attr]
    assert of(closed.effects, fx.SetPaymentStatus) == [fx.SetPaymentStatus(PaymentStatus.TIMED_OUT)]
    [code] = [text for text in sends(closed) if "LATE2" in text]
    assert "https://app.prolific.com/submissions/complete?cc=LATE2" in code


def test_a_screened_out_participant_gets_the_screened_out_code() -> None:
    recruitment = RECRUITMENT.model_copy(update={"screened_out_code": "SCREEN3"})
    bundle = make_bundle(recruitment=recruitment)
    journey = run(bundle, None, ev.StartCommand()).journey
    assert journey is not None
    released, effects = closing.release(bundle, journey)
    assert released.stage is Stage.INELIGIBLE
    assert fx.SetPaymentStatus(PaymentStatus.SCREENED_OUT) in effects
    assert any(isinstance(e, fx.Send) and "cc=SCREEN3" in e.text for e in effects)


def late_start(tag: str = "tag-A") -> ev.StartCommand:
    return ev.StartCommand(platform_key=f"sealed-{tag}", platform_tag=tag)


def test_a_bare_start_then_the_link_binds_the_id_before_consent() -> None:
    bundle = make_bundle(recruitment=RECRUITMENT)
    journey = run(bundle, None, ev.StartCommand(), 10.0).journey
    assert journey is not None and journey.platform_tag is None
    result = run(bundle, journey, late_start(), 25.0)
    expected = fx.RecordRecruitment("prolific", "sealed-tag-A", PaymentStatus.STARTED, (10.0, 10.0))
    assert of(result.effects, fx.RecordRecruitment) == [expected]
    assert result.journey.platform_tag == "tag-A"  # type: ignore[union-attr]
    assert "keep only your Prolific ID" in sends(result)[-1]  # the agreement again


def test_the_id_after_consent_binds_and_the_dialogue_goes_on() -> None:
    bundle = make_bundle(recruitment=RECRUITMENT)
    journey = in_dialogue(bundle)
    assert journey.platform_tag is None
    result = run(bundle, journey, late_start(), 30.0)
    [record] = of(result.effects, fx.RecordRecruitment)
    assert record.status is PaymentStatus.STARTED and record.platform_key == "sealed-tag-A"
    assert result.journey.stage is Stage.DIALOGUE  # type: ignore[union-attr]


@pytest.mark.parametrize(
    ("stage", "status"),
    [
        (Stage.FINISHED, PaymentStatus.COMPLETED),
        (Stage.DECLINED, PaymentStatus.DECLINED),
        (Stage.INELIGIBLE, PaymentStatus.SCREENED_OUT),
        (Stage.CLOSED, PaymentStatus.TIMED_OUT),
    ],
)
def test_an_id_after_the_end_records_how_the_part_ended(
    stage: Stage, status: PaymentStatus
) -> None:
    bundle = make_bundle(recruitment=RECRUITMENT)
    journey = replace(in_dialogue(bundle), stage=stage)
    result = run(bundle, journey, late_start(), 900.0)
    [record] = of(result.effects, fx.RecordRecruitment)
    assert record.status is status
    assert record.since == (journey.started_at, journey.last_activity_at)


def test_the_same_id_again_changes_nothing_and_another_is_refused() -> None:
    bundle = make_bundle(recruitment=RECRUITMENT)
    first = run(bundle, None, late_start()).journey
    assert first is not None and first.platform_tag == "tag-A"
    again = run(bundle, first, late_start())
    assert not of(again.effects, fx.RecordRecruitment) and not of(again.effects, fx.RecordEvent)
    other = run(bundle, first, late_start("tag-B"))
    assert not of(other.effects, fx.RecordRecruitment)
    assert other.journey.platform_tag == "tag-A"  # type: ignore[union-attr]
    [refused] = of(other.effects, fx.RecordEvent)
    assert refused.kind is EventKind.PLATFORM_ID_REFUSED
    assert "sealed" not in str(refused.data) and "tag-B" not in str(refused.data)
    assert "another Prolific ID" in sends(other)[0]


def test_a_study_without_recruitment_ignores_the_id() -> None:
    bundle = make_bundle()
    journey = in_dialogue(bundle)
    result = run(bundle, journey, late_start())
    assert not of(result.effects, fx.RecordRecruitment)
    assert result.journey.platform_tag is None  # type: ignore[union-attr]
