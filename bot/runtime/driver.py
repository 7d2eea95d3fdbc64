"""The one driver loop: a pure flow steps, its records are committed with the Telegram update
the step consumed (one store call, one transaction), and only then is anything carried out
(send, edit, toast, call a system, remove buttons). What those return (a message id, a
system's reply) goes back into the flow as the next event.

Participants and annotators are two flows behind it; each delivery becomes a :class:`Turn`
of its flow, which knows how to step, what state it holds and how its records are kept.
The loop owns what must hold for both: a tap is answered before anything else (Telegram
expires it quickly), the update is consumed with the first step's records, a message whose
id is not committed yet is not reported delivered, an unreachable chat is noted, and a
failure is logged, consumed and answered with the study's apology; a lost database is no
failure of the delivery (``StoreUnreachable`` goes up to the bot, which reconnects).
"""

from __future__ import annotations

import contextlib
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Generic, Protocol, TypeVar

from bot.core.errors import StoreUnreachable
from bot.engine import effects as fx
from bot.engine import events as ev
from bot.telegram.outbox import ParticipantUnreachable

E = TypeVar("E")  # the flow's events
R = TypeVar("R")  # what the store keeps of a step
O = TypeVar("O")  # noqa: E741 - the flow's outbound effects

ANSWERS = (ev.MessageSent, ev.KeyboardShown)
"""What a sent message answers: its id, committed before its buttons count."""


class Outbox(Protocol):
    async def send(
        self, chat_id: int, text: str, buttons: fx.Buttons = (), format: str = "plain"
    ) -> int | None: ...
    async def send_file(
        self,
        chat_id: int,
        kind: str,
        data: bytes,
        mime: str,
        caption: str = "",
        buttons: fx.Buttons = (),
    ) -> int | None: ...
    async def edit(
        self, chat_id: int, message_id: int, text: str, buttons: fx.Buttons = ()
    ) -> None: ...
    async def remove_buttons(self, chat_id: int, message_id: int) -> None: ...
    async def toast(self, callback_id: str, text: str | None = None) -> None: ...
    async def typing(self, chat_id: int) -> None: ...
    async def chat_commands(self, chat_id: int, commands: Sequence[tuple[str, str]]) -> None: ...


@dataclass
class Stepped(Generic[R, O]):
    """One step of a flow: what the store keeps and what is carried out after."""

    records: list[R]
    outbound: list[O]
    changed: bool = False
    """The flow's stored state changed: committed even without records or an update."""


@dataclass(frozen=True)
class Committed(Generic[E]):
    """The store's answer to a step: the events its records lead to, in order."""

    then: Sequence[E] = ()
    instead: Sequence[E] | None = None
    """The store refused the step (a target no longer theirs): nothing of it is carried
    out, and these events replace what was queued."""
    undelivered: bool = False
    """The step's messages are kept until :meth:`Turn.delivered` (re-sent after a crash)."""


@dataclass
class Opening(Generic[E]):
    """How a turn starts: the events to step, and whether messages went out already
    (committed before a crash, re-sent first)."""

    events: list[E] = field(default_factory=list)
    resent: bool = False


class Turn(Protocol[E, R, O]):
    """One delivery of one chat, as its flow handles it."""

    chat_id: int

    async def opening(self) -> Opening[E]: ...
    def step(self, event: E) -> Stepped[R, O]: ...
    async def commit(self, stepped: Stepped[R, O], update_id: int | None) -> Committed[E]: ...
    async def carry_out(self, effect: O) -> E | None: ...
    async def delivered(self) -> None: ...
    async def unreachable(self, error: ParticipantUnreachable) -> None: ...
    async def failed(self, update_id: int | None) -> None:
        """Called while the error is handled (so ``log.exception`` has it)."""
        ...


async def drive(
    turn: Turn[E, R, O],
    outbox: Outbox,
    apology: str,
    *,
    update_id: int | None = None,
    toast_owed: str | None = None,
) -> None:
    """Carry one delivery through its flow, step after step, until nothing is queued."""
    sent = False  # messages went out: delivered once the ids they answered are committed
    try:
        opening = await turn.opening()
        queue, sent = opening.events, opening.resent
        while queue:
            stepped = turn.step(queue.pop(0))
            committed: Committed[E] | None = None
            if stepped.changed or stepped.records or update_id is not None:
                committed = await turn.commit(stepped, update_id)
                update_id = None
            outbound = stepped.outbound
            if committed is not None and committed.instead is not None:
                queue, outbound = list(committed.instead), []
            elif committed is not None:
                queue.extend(committed.then)
            # Answer a button tap before anything else: Telegram expires it quickly.
            outbound = sorted(outbound, key=lambda e: not isinstance(e, fx.Toast))
            answers: list[E] = []
            for effect in outbound:
                if isinstance(effect, fx.Toast):
                    if toast_owed is not None:
                        await outbox.toast(toast_owed, effect.text)
                        toast_owed = None
                    continue
                answer = await turn.carry_out(effect)
                if answer is not None:
                    answers.append(answer)
            queue[:0] = answers  # what an action returned is stepped next
            if committed is not None and committed.undelivered:
                sent = True
            if sent and not any(isinstance(e, ANSWERS) for e in queue):
                # A message whose id is not committed yet is sent again after a crash:
                # its buttons count only once the flow knows it.
                await turn.delivered()
                sent = False
    except ParticipantUnreachable as error:
        await turn.unreachable(error)
    except StoreUnreachable:
        # The database is gone (its server restarts): nothing failed, nothing is consumed.
        # The update waits in the inbox, or at Telegram, for the store the bot opens next,
        # which answers its tap (a tap is answered once).
        toast_owed = None
        raise
    except Exception:
        await turn.failed(update_id)
        with contextlib.suppress(Exception):
            await outbox.send(turn.chat_id, apology)
    finally:
        if toast_owed is not None:
            with contextlib.suppress(Exception):
                await outbox.toast(toast_owed)
