"""Consent: the welcome and the agreement, with an invitation code where the study has one.
Declining ends here (``/start`` shows the agreement again); accepting moves on. When every
cell of the design is full (``design.quota``), a newcomer, or one who agrees too late, is
told so with the platform's return instruction, and nothing of theirs is recorded."""

from __future__ import annotations

from dataclasses import replace
from typing import assert_never

from bot.core.vocabulary import Consent, Hint, Invitation, PaymentStatus
from bot.engine import effects as fx
from bot.engine import events as ev
from bot.engine import recruitment
from bot.engine.assignment import has_room
from bot.engine.callbacks import ConsentTap
from bot.engine.common import (
    CONSENT_NO,
    CONSENT_YES,
    Doing,
    Phase,
    Result,
    Transition,
    drop_keyboards,
    over,
    stale_tap,
    texts_of,
)
from bot.engine.context import Context
from bot.engine.hints import hinted
from bot.engine.journey import Journey, Stage
from scenarios.models import StudyBundle

DECLINED = "declined"
TRANSITIONS = (
    Transition("[*]", "[*]", "/start [code missing, unknown or used by another] / explain"),
    Transition("[*]", "[*]", "/start [every cell of the design full] / study_full, return"),
    Transition(Phase.CONSENT, Phase.CONSENT, "I agree [every cell full] / study_full, return"),
    Transition(Phase.CONSENT, DECLINED, "I do not agree / RecordConsent(declined), code"),
    Transition(DECLINED, Phase.CONSENT, "/start"),
)


def _agreement(bundle: StudyBundle, journey: Journey) -> list[Doing]:
    texts = texts_of(bundle, journey)
    buttons = (((texts.consent_accept, CONSENT_YES),), ((texts.consent_decline, CONSENT_NO),))
    note = recruitment.consent_note(bundle, texts)
    body, question = _closing_question(texts.consent)
    kept = texts.audio_kept_note if bundle.study.speech.keep_audio else None
    paragraphs = [body, note, kept, texts.consent_withdraw_note, question]  # the right to withdraw
    consent = "\n\n".join(p for p in paragraphs if p)
    agreement = fx.Send(consent, buttons, until=fx.Until.PHASE_END)
    return [fx.Send(texts.welcome), agreement]


_QUESTION_MARKS = ("?", "？", "؟")


def _closing_question(consent: str) -> tuple[str, str]:
    """The consent text's body and its last paragraph when that asks the question the buttons
    answer ("Do you agree to take part?"): what the bot adds goes between them, so that the
    question stays right above its buttons."""
    body, _, last = consent.rstrip().rpartition("\n\n")
    if body and last.rstrip().endswith(_QUESTION_MARKS):
        return body.rstrip(), last
    if not body and consent.rstrip().endswith(_QUESTION_MARKS):
        return "", consent.rstrip()
    return consent, ""


def first_contact(
    ctx: Context, participant: str, event: ev.Event, now: float
) -> tuple[Journey | None, list[Doing]]:
    """Someone the study has never seen: welcomed, or told what is missing."""
    bundle = ctx.bundle
    texts = texts_of(bundle, None)
    codes = bundle.study.invite_codes
    needs_code = bool(codes) or ctx.invitation is not Invitation.NONE_HELD
    if isinstance(event, ev.ButtonTapped) and needs_code:
        return None, [fx.Toast(), fx.Send(texts.invite_required)]
    if not isinstance(event, ev.PARTICIPANT_EVENTS):
        return None, []
    start = event if isinstance(event, ev.StartCommand) else ev.StartCommand()
    journey = Journey(
        participant,
        Stage.CONSENT,
        started_at=now,
        last_activity_at=now,
        language=start.language,
        platform_tag=start.platform_tag if start.platform_key is not None else None,
    )
    texts = texts_of(bundle, journey)
    claim: list[Doing] = []
    if needs_code and start.code not in codes:
        match ctx.invitation:
            case Invitation.FREE if start.code:
                claim = [fx.ClaimInvitation(start.code)]
            case Invitation.YOURS:
                pass
            case Invitation.TAKEN:
                return None, [fx.Send(texts.invite_used)]
            case Invitation.NONE_HELD | Invitation.UNKNOWN | Invitation.FREE:
                missing = texts.invite_invalid if start.code else texts.invite_required
                return None, [fx.Send(missing)]
            case _:
                assert_never(ctx.invitation)
    toast: list[Doing] = [fx.Toast()] if isinstance(event, ev.ButtonTapped) else []
    if not has_room(bundle.study, ctx.places, ctx.waiting):
        return None, [*toast, *_full(bundle, journey)]
    recruited = recruitment.arrival(bundle, start.platform_key)
    return journey, [*toast, *claim, *recruited, *_agreement(bundle, journey)]


def _full(bundle: StudyBundle, journey: Journey) -> list[Doing]:
    """Every cell of the design is full: told so, with the platform's return instruction."""
    texts = texts_of(bundle, journey)
    return [fx.Send(texts.study_full), *recruitment.return_instruction(bundle, texts)]


def _on_consent(ctx: Context, journey: Journey, event: ev.Event) -> Result:
    bundle = ctx.bundle
    texts = texts_of(bundle, journey)
    if isinstance(event, ev.ButtonTapped):
        tap = event.tap
        if not isinstance(tap, ConsentTap):
            return stale_tap(bundle, journey)
        if tap.accept and not has_room(bundle.study, ctx.places, ctx.waiting):
            # The last places went while the agreement was read: nothing is recorded,
            # and /start shows the agreement again (a place may have come free).
            journey, removed = drop_keyboards(journey)
            return journey, [fx.Toast(), *removed, *_full(bundle, journey)]
        if tap.accept:
            return journey, [fx.Toast(), fx.RecordConsent(Consent.ACCEPTED), *over(Phase.CONSENT)]
        journey, removed = drop_keyboards(journey)
        return replace(journey, stage=Stage.DECLINED), [
            fx.Toast(),
            fx.RecordConsent(Consent.DECLINED),
            *removed,
            fx.Send(texts.declined),
            *recruitment.ending(bundle, texts, PaymentStatus.DECLINED),
        ]
    if isinstance(event, ev.StartCommand):
        return journey, _agreement(bundle, journey)
    if isinstance(event, ev.PARTICIPANT_EVENTS):
        # Nothing of what they wrote: they have not agreed to anything being kept.
        return journey, [*hinted(Hint.CONSENT_PENDING, texts.consent_pending)]
    return journey, []


def _on_declined(bundle: StudyBundle, journey: Journey, event: ev.Event) -> Result:
    if isinstance(event, ev.StartCommand):
        return replace(journey, stage=Stage.CONSENT), _agreement(bundle, journey)
    if isinstance(event, ev.ButtonTapped):
        return stale_tap(bundle, journey)
    if isinstance(event, ev.PARTICIPANT_EVENTS):
        return journey, [fx.Send(texts_of(bundle, journey).declined_before)]
    return journey, []


def on_event(ctx: Context, journey: Journey, event: ev.Event, now: float) -> Result:
    if journey.stage is Stage.DECLINED:
        return _on_declined(ctx.bundle, journey, event)
    return _on_consent(ctx, journey, event)
