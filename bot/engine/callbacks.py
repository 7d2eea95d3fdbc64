"""What an inline button carries: typed taps and the one codec that writes and reads them.

Telegram returns a button's ``callback_data`` (1–64 bytes) when it is tapped, and does not
check the length before sending a keyboard: ``encode`` refuses anything longer, so a
keyboard Telegram would reject never leaves the engine. ``decode`` never raises: old,
forged or foreign data comes back as ``None`` and is answered as a stale tap.

The wire forms are the ones ozlab has always sent, so buttons already in participants'
chats keep working across upgrades.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

MAX_BYTES = 64


class CallbackDataTooLong(ValueError):
    """A button's data would exceed Telegram's 64 bytes (a bug in ozlab, not in a study)."""


class Channel(StrEnum):
    """Which questionnaire a button belongs to."""

    FRONT = ""  # the questionnaire in front of the participant
    EXCHANGE = "x"  # the rating of a system reply, beside the chat
    ANNOTATION = "n"  # an annotator's rating of a stored exchange or conversation


class TapAction(StrEnum):
    ANSWER = "a"  # an option (``index``)
    TOGGLE = "m"  # a multiple-choice option on or off (``index``)
    DONE = "d"  # multiple choice, ranking: done
    RANK = "r"  # a ranking: the next place goes to an option (``index``)
    UNDO = "u"  # a ranking: the last option placed goes back
    SKIP = "s"
    HELP = "h"  # the item's help and examples


@dataclass(frozen=True)
class ConsentTap:
    accept: bool


@dataclass(frozen=True)
class WithdrawTap:
    """The answer to "/withdraw": erase everything (``confirm``) or carry on."""

    confirm: bool


@dataclass(frozen=True)
class FinishTap:
    """The brief's "Finish task" button."""


@dataclass(frozen=True)
class SystemButtonTap:
    """A button a system offered under its reply (Rasa's buttons): ``index`` of ``turn``."""

    turn: int
    index: int


@dataclass(frozen=True)
class VoteTap:
    """A side-by-side vote on ``turn``'s two replies: ``choice`` numbers the buttons
    (``bot.engine.arena.CHOICES``: A better, B better, tie, both bad)."""

    turn: int
    choice: int


@dataclass(frozen=True)
class SurveyTap:
    """A questionnaire button; ``asked`` numbers the showing, so old buttons are known."""

    channel: Channel
    action: TapAction
    asked: int
    index: int | None = None


@dataclass(frozen=True)
class RetypeTap:
    """The button under "I heard: …": what was heard in ``turn``'s voice note is not what
    the participant said."""

    turn: int


Tap = ConsentTap | WithdrawTap | FinishTap | SystemButtonTap | VoteTap | SurveyTap | RetypeTap

_CONSENT = {True: "c:y", False: "c:n"}
_WITHDRAW = {True: "w:y", False: "w:n"}
_FINISH = "done"
_SYSTEM = "sb"
_VOTE = "v"
_RETYPE = "rt"
_INDEXED = (TapAction.ANSWER, TapAction.TOGGLE, TapAction.RANK)


def encode(tap: Tap) -> str:
    match tap:
        case ConsentTap(accept=accept):
            data = _CONSENT[accept]
        case WithdrawTap(confirm=confirm):
            data = _WITHDRAW[confirm]
        case FinishTap():
            data = _FINISH
        case SystemButtonTap(turn=turn, index=index):
            data = f"{_SYSTEM}:{turn}:{index}"
        case VoteTap(turn=turn, choice=choice):
            data = f"{_VOTE}:{turn}:{choice}"
        case RetypeTap(turn=turn):
            data = f"{_RETYPE}:{turn}"
        case SurveyTap(channel=channel, action=action, asked=asked, index=index):
            data = f"{channel.value}{action.value}:{asked}"
            if action in _INDEXED:
                data += f":{index}"
    if len(data.encode()) > MAX_BYTES:
        raise CallbackDataTooLong(f"{data[:20]}… is over Telegram's {MAX_BYTES} bytes")
    return data


def decode(data: str) -> Tap | None:
    """The tap behind ``data``, or ``None`` for anything ozlab did not write."""
    if data in (_CONSENT[True], _CONSENT[False]):
        return ConsentTap(data == _CONSENT[True])
    if data in (_WITHDRAW[True], _WITHDRAW[False]):
        return WithdrawTap(data == _WITHDRAW[True])
    if data == _FINISH:
        return FinishTap()
    head, _, rest = data.partition(":")
    parts = rest.split(":")
    if not all(_is_number(part) for part in parts):
        return None
    numbers = [int(part) for part in parts]
    if head == _SYSTEM:
        return SystemButtonTap(*numbers) if len(numbers) == 2 else None
    if head == _VOTE:
        return VoteTap(*numbers) if len(numbers) == 2 else None
    if head == _RETYPE:
        return RetypeTap(numbers[0]) if len(numbers) == 1 else None
    try:
        channel, action = Channel(head[:-1]), TapAction(head[-1:])
    except ValueError:
        return None
    if action in _INDEXED and len(numbers) == 2:
        return SurveyTap(channel, action, numbers[0], numbers[1])
    if action not in _INDEXED and len(numbers) == 1:
        return SurveyTap(channel, action, numbers[0])
    return None


def _is_number(text: str) -> bool:
    """Plain ASCII digits only: ``int()`` would also take "²"-free Unicode digits and signs."""
    return text.isascii() and text.isdigit() and len(text) <= 12
