"""One thing for one participant's chat, in the order it must be handled: an event from
Telegram, the clock, a restart, or an experimenter's command."""

from __future__ import annotations

from dataclasses import dataclass

from bot.engine import events as ev


@dataclass(frozen=True)
class Delivery:
    chat_id: int  # the participant's chat: deliveries to one chat are handled in order
    event: ev.Event
    update_id: int | None = None  # the Telegram update it came in, marked handled with it
    callback_id: str | None = None  # a button tap still to be answered
