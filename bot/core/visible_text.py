"""Text from outside ozlab, made safe to show in a terminal.

Participants, systems under test and language models write what they like, and a
terminal obeys what it is sent: ESC starts a sequence that clears the screen, retitles the
window or moves the cursor; a carriage return writes over the start of the line; a bidi
override turns the rest of a line around. Everything that shows such text in a terminal
(the wizard console, ``ozlab chat``, ``ozlab stress judge``, the terminal report, log
lines) passes it through :func:`visible` first, so the researcher sees ``\\x1b`` where
the text held an ESC, and the terminal sees only characters to print.

Escaped: every C0 and C1 control character and DEL (newlines kept only where a text is
meant to show as lines), the explicit bidi embeddings, overrides and isolates (U+202A–202E,
U+2066–2069: they reorder what follows them, the "Trojan Source" characters), the line and
paragraph separators, and lone surrogates (which a UTF-8 terminal cannot be sent at all).
The bidi marks (U+200E, U+200F, U+061C) stay: they act on nothing but themselves, and
Arabic and Hebrew text needs them. A backslash stays a backslash: ``\\x1b`` typed by a
participant and an ESC look alike, and that is the price of readable text.

Standard library only: the bot, the console and analytics all import it.
"""

from __future__ import annotations

import re

_SHORT = {"\t": "\\t", "\n": "\\n", "\r": "\\r"}

_OTHERS = (
    r"\x7f-\x9f"  # DEL, C1
    r"\u202a-\u202e\u2066-\u2069"  # bidi embeddings, overrides, isolates
    r"\u2028\u2029"  # line and paragraph separators
    r"\ud800-\udfff"  # lone surrogates
)
_ANY = re.compile(rf"[\x00-\x1f{_OTHERS}]")
_BUT_NEWLINES = re.compile(rf"\r\n|[\x00-\x09\x0b-\x1f{_OTHERS}]")


def _escape(found: re.Match[str]) -> str:
    char = found.group()
    if char == "\r\n":
        return "\n"
    if char in _SHORT:
        return _SHORT[char]
    code = ord(char)
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def visible(text: str, *, lines: bool = False) -> str:
    """``text`` with every character a terminal would obey shown as its escape.

    With ``lines`` a newline (and a Windows line end) stays a newline, for a text that
    is meant to show as several lines; otherwise it shows as ``\\n``, so that one record
    stays one line (a log line, a table cell).
    """
    pattern = _BUT_NEWLINES if lines else _ANY
    if pattern.search(text) is None:
        return text
    return pattern.sub(_escape, text)
