"""What ``ozlab chat`` prints of the bot's chat, and what a line the researcher types means.

Pure: messages as the terminal last showed them in, lines to print and an action out. The
loop that talks to the emulator is ``bot.pilot.chat``.

- A new bot message is printed with its place in the chat (``bot #3: …``); an edit in
  place prints the message again as ``bot #3 (edited): …``, so a questionnaire that moves
  on in one message reads as it does on a phone.
- Inline buttons of the newest message are numbered (``[1] I agree``); buttons of older
  messages are listed without numbers, as they are still there in Telegram.
- A typed number taps that button of the newest message (only when it has buttons: in a
  chat, "2" answers a system's question), where the bot's refusals of a typed line (its
  hints: "Please tap the options in order") do not count, as the question above them
  still waits for its buttons; a typed label (any case) taps the newest button so
  labelled; ``/voice PATH`` sends a sound file as a voice note; ``/restart`` begins as a
  new participant, ``/quit`` ends; anything else is a message.
- A voice note or photo the bot sent is printed with its kind first (``[voice] …``, its
  caption after).
- What the bot sends carries what systems wrote: every control character but the newline
  is printed as its escape (``\\x1b``), so a reply cannot clear or retitle the terminal.
"""

from __future__ import annotations

import re
import string
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from bot.core.visible_text import visible
from bot.core.vocabulary import Hint
from scenarios.models import Texts

Button = tuple[str, str | None]
"""(label, callback data); no data for a link button."""

INDENT = "    "
RESTART = "/restart"
VOICE = "/voice"
QUIT = ("/quit", "/exit")


@dataclass(frozen=True)
class Seen:
    """One bot message as the terminal shows it."""

    message_id: int
    text: str
    rows: tuple[tuple[Button, ...], ...] = ()
    deleted: bool = False
    refusal: bool = False  # a hint that refused a typed line: the question above still waits


@dataclass(frozen=True)
class Say:
    text: str


@dataclass(frozen=True)
class Tap:
    message_id: int
    data: str
    label: str


@dataclass(frozen=True)
class Voice:
    """Send the sound file at ``path`` as a voice note (no path: say how)."""

    path: str


@dataclass(frozen=True)
class Restart:
    pass


@dataclass(frozen=True)
class Quit:
    pass


@dataclass(frozen=True)
class Nothing:
    pass


Action = Say | Tap | Voice | Restart | Quit | Nothing


def refusals(texts: Texts) -> Callable[[str], bool]:
    """Whether a bot message is one of its hints in ``texts``' language (the sentences
    that refuse a typed line and leave the question as it was; ``{limit}`` and the like
    stand for any words)."""

    def pattern(sentence: str) -> str:
        parts = string.Formatter().parse(sentence)
        return "".join(re.escape(text) + (".*?" if field else "") for text, field, _, _ in parts)

    sentences = [getattr(texts, hint.value) for hint in Hint if hasattr(texts, hint.value)]
    matcher = re.compile("|".join(f"(?:{pattern(s)})" for s in sentences), re.DOTALL)
    return lambda text: matcher.fullmatch(text) is not None


def _newest(shown: Sequence[Seen]) -> Seen | None:
    """The message whose buttons a number taps: the newest, but for refusals."""
    visible = [message for message in shown if not message.deleted]
    answering = [message for message in visible if not message.refusal or message.rows]
    return answering[-1] if answering else None


def choices(shown: Sequence[Seen]) -> list[tuple[int, Button]]:
    """The buttons a number taps: the newest message's, in reading order (links left out)."""
    newest = _newest(shown)
    if newest is None:
        return []
    return [
        (newest.message_id, button)
        for row in newest.rows
        for button in row
        if button[1] is not None
    ]


def _buttons(message: Seen, numbered: bool) -> list[str]:
    lines, number = [], 0
    for row in message.rows:
        shown = []
        for raw, data in row:
            label = visible(raw)
            if data is None:
                shown.append(f"(link) {label}")
            elif numbered:
                number += 1
                shown.append(f"[{number}] {label}")
            else:
                shown.append(f"· {label}")
        lines.append(INDENT + "   ".join(shown))
    return lines


def _message(head: str, message: Seen, numbered: bool) -> list[str]:
    first, *rest = visible(message.text, lines=True).split("\n")
    body = [INDENT + line if line.strip() else "" for line in rest]
    return [f"{head}: {first}", *body, *_buttons(message, numbered)]


def news(before: Mapping[int, Seen], now: Sequence[Seen]) -> list[str]:
    """The lines to print for what changed since ``before`` (message id -> as shown)."""
    newest = _newest(now)
    lines: list[str] = []
    for number, message in enumerate(now, start=1):
        old = before.get(message.message_id)
        numbered = message is newest
        head = f"bot #{number}"
        if old is None:
            if not message.deleted:
                lines += _message(head, message, numbered)
        elif old == message:
            continue
        elif message.deleted:
            lines.append(f"{head} (deleted)")
        elif message.text != old.text:
            lines += _message(f"{head} (edited)", message, numbered)
        elif message.rows:
            lines += [f"{head} (buttons changed):", *_buttons(message, numbered)]
        else:
            lines.append(f"{head} (buttons removed)")
    return lines


def notice(text: str) -> str:
    """A toast (the short answer to a tap), which Telegram shows over the chat."""
    return f"bot (notice): {visible(text)}"


def understand(line: str, shown: Sequence[Seen]) -> Action:
    """What a typed line means, against the messages as they were shown."""
    text = line.strip()
    if not text:
        return Nothing()
    if text.casefold() in QUIT:
        return Quit()
    if text.casefold() == RESTART:
        return Restart()
    command, _, path = text.partition(" ")
    if command.casefold() == VOICE:
        return Voice(path.strip())
    numbered = choices(shown)
    if text.isdecimal() and 1 <= int(text) <= len(numbered):
        message_id, (label, data) = numbered[int(text) - 1]
        assert data is not None
        return Tap(message_id, data, label)
    for message in reversed(shown):
        if message.deleted:
            continue
        for row in message.rows:
            for label, data in row:
                if data is not None and label.casefold() == text.casefold():
                    return Tap(message.message_id, data, label)
    return Say(text)


HELP = (
    "You are the participant. Type a message and press Enter; a number taps that button of"
    " the last message, a button's label taps it; /voice PATH sends a sound file (OGG, WAV,"
    " MP3, ...) as a voice note; /restart begins again as a new participant; /quit, Ctrl-D"
    " or Ctrl-C ends."
)


def annotator_help(job: str) -> str:
    """What the terminal says first when the researcher is an annotator of ``job``."""
    return (
        f"You are a new annotator of job {visible(job)!r}, let in by your own code as an"
        " invitation link would. A number taps that button of the last message, a button's"
        " label taps it, anything else is sent (/pause, /brief, /back, /help as in Telegram);"
        " /restart begins again as another new annotator; /quit, Ctrl-D or Ctrl-C ends."
    )
