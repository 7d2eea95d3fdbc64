"""Withdrawal (GDPR art. 17), the same in every phase: ``/withdraw`` asks for confirmation
with two buttons; a confirmed withdrawal erases the participant (``Erase``, carried out by
the store in one transaction) and tells them what was erased. Nothing here knows a phase:
a participant may leave whatever they are doing, and ``/start`` afterwards begins anew.
"""

from __future__ import annotations

from bot.engine import effects as fx
from bot.engine import events as ev
from bot.engine.callbacks import WithdrawTap, encode
from bot.engine.common import Phase, Transition, texts_of
from bot.engine.journey import Journey
from bot.vocabulary import CommandKind
from scenarios.models import StudyBundle

WITHDRAW_YES = encode(WithdrawTap(confirm=True))
WITHDRAW_NO = encode(WithdrawTap(confirm=False))
WITHDRAWN = "withdrawn"

TRANSITIONS = (
    *(Transition(phase, WITHDRAWN, "/withdraw, confirmed / Erase") for phase in Phase),
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
    if isinstance(event, ev.WithdrawCommand):
        buttons = (((texts.withdraw_yes, WITHDRAW_YES),), ((texts.withdraw_no, WITHDRAW_NO),))
        return journey, [fx.Send(texts.withdraw_confirm, buttons)]
    assert isinstance(event, ev.ButtonTapped) and isinstance(event.tap, WithdrawTap)
    if not event.tap.confirm:
        return journey, [fx.Toast(), fx.Send(texts.withdraw_cancelled)]
    return None, [fx.Toast(), fx.Erase(), fx.Send(texts.withdrawn)]
