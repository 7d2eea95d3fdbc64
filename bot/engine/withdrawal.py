"""Withdrawal (GDPR art. 17), the same in every phase: ``/withdraw`` asks for confirmation
with two buttons; a confirmed withdrawal erases the participant (``Erase``, carried out by
the store in one transaction) and tells them what was erased. Nothing here knows a phase:
a participant may leave whatever they are doing, and ``/start`` afterwards begins anew.

Erasing cannot be undone, so only the prompt still waiting for its answer confirms: the
journey keeps it as a keyboard ``until`` answered, across phases. Either answer takes its
buttons off; a second ``/withdraw`` replaces it. A "Yes" anywhere else (under a prompt
answered "No", on another message, forged) is a stale tap and erases nothing.
"""

from __future__ import annotations

from dataclasses import replace

from bot.core.vocabulary import CommandKind
from bot.engine import effects as fx
from bot.engine import events as ev
from bot.engine.callbacks import WithdrawTap, encode
from bot.engine.common import Phase, Transition, stale_tap, texts_of
from bot.engine.journey import Journey
from scenarios.models import StudyBundle

WITHDRAW_YES = encode(WithdrawTap(confirm=True))
WITHDRAW_NO = encode(WithdrawTap(confirm=False))
WITHDRAWN = "withdrawn"

TRANSITIONS = (
    *(
        Transition(phase, WITHDRAWN, "/withdraw, Yes on its waiting prompt / Erase")
        for phase in Phase
    ),
    Transition(WITHDRAWN, "[*]", "every row erased, a count kept; /start begins anew"),
)


def concerns(event: ev.Event) -> bool:
    """Whether ``event`` is the participant's ``/withdraw``, their answer to it, or an
    operator's erasure (``ozlab erase`` while the bot runs)."""
    if isinstance(event, ev.WithdrawCommand):
        return True
    if isinstance(event, ev.WizardCommand):
        return event.kind is CommandKind.ERASE
    return isinstance(event, ev.ButtonTapped) and isinstance(event.tap, WithdrawTap)


def _prompts(journey: Journey) -> tuple[int, ...]:
    """The messages asking "withdraw?" still waiting for an answer (one, or none)."""
    return tuple(
        k.message_id
        for k in journey.keyboards
        if k.until is fx.Until.ANSWERED and k.data is not None and WITHDRAW_YES in k.data
    )


def _without_prompts(journey: Journey) -> tuple[Journey, list[fx.Effect]]:
    prompts = _prompts(journey)
    kept = tuple(k for k in journey.keyboards if k.message_id not in prompts)
    return replace(journey, keyboards=kept), [fx.RemoveButtons(m) for m in prompts]


def on_event(
    bundle: StudyBundle, journey: Journey | None, event: ev.Event
) -> tuple[Journey | None, list[fx.Effect]]:
    """The new journey (None: erased, or never there) and what to do."""
    texts = texts_of(bundle, journey)
    if isinstance(event, ev.WizardCommand):  # an erasure asked for by e-mail: no message
        return None, [fx.Erase(event.command_id)]
    if journey is None:  # nothing stored: a stale button or a stranger's /withdraw
        toast: list[fx.Effect] = [fx.Toast()] if isinstance(event, ev.ButtonTapped) else []
        return None, [*toast, fx.Send(texts.nothing_to_withdraw)]
    if isinstance(event, ev.WithdrawCommand):  # asked again: the newest prompt is the one
        journey, earlier = _without_prompts(journey)
        buttons = (((texts.withdraw_yes, WITHDRAW_YES),), ((texts.withdraw_no, WITHDRAW_NO),))
        ask = fx.Send(texts.withdraw_confirm, buttons, until=fx.Until.ANSWERED)
        return journey, [*earlier, ask]
    assert isinstance(event, ev.ButtonTapped) and isinstance(event.tap, WithdrawTap)
    if event.message_id is None or event.message_id not in _prompts(journey):
        stale, said = stale_tap(bundle, journey)
        return stale, [e for e in said if isinstance(e, fx.Toast)]
    journey, answered = _without_prompts(journey)
    if not event.tap.confirm:
        return journey, [fx.Toast(), *answered, fx.Send(texts.withdraw_cancelled)]
    return None, [fx.Toast(), *answered, fx.Erase(), fx.Send(texts.withdrawn)]
