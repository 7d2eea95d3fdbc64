"""Words in a message, with their places, so that a perturbation changes one span and the
rest of the text keeps every byte (spaces, punctuation, emoji, URLs).

A *word* is letters with inner apostrophes (``don't``, ``c'è``, ``l'amico``), plus a final
apostrophe where the language writes one (``po'``). Whatever holds a digit or an underscore
(``ps5``, ``10€``) and every whitespace-separated chunk that looks like an address (URLs,
e-mails, ``@names``, ``#tags``, ``example.com``) is never a word: no phenomenon touches it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

APOSTROPHES = "'’"
_CHUNK = re.compile(r"\S+")
_ADDRESS = re.compile(r"(?i)(://|^www\.|@|^#|\w\.[a-z]{2,}\b)")
_WORD = re.compile(r"\w+(?:['’]\w+)*")
# Words that end in an apostrophe (an elided vowel), per language.
_TRUNCATED: dict[str, frozenset[str]] = {
    "it": frozenset({"po", "mo", "be", "di", "fa", "sta", "va", "da", "to", "ca"}),
    "en": frozenset(),
}


@dataclass(frozen=True)
class Word:
    """One word of a text and where it stands (``text[start:end]``)."""

    text: str
    start: int
    end: int
    index: int  # position among the text's words
    sentence_start: bool  # first word of the text or of a sentence


def words(text: str, lang: str) -> list[Word]:
    """The words a phenomenon may change, in order."""
    found: list[Word] = []
    truncated = _TRUNCATED.get(lang, frozenset())
    last_end = 0
    for chunk in _CHUNK.finditer(text):
        if _ADDRESS.search(chunk.group()):
            continue
        for match in _WORD.finditer(chunk.group()):
            word = match.group()
            if any(c.isdigit() or c == "_" for c in word):
                continue
            start = chunk.start() + match.start()
            end = chunk.start() + match.end()
            if end < len(text) and text[end] in APOSTROPHES and word.lower() in truncated:
                end += 1
            before = text[last_end:start]
            opens = not found or any(mark in before for mark in ".!?\n")
            found.append(Word(text[start:end], start, end, len(found), opens))
            last_end = end
    return found


def match_case(model: str, word: str) -> str:
    """``word`` in the case of ``model``: ``Their`` → ``There``, ``THEIR`` → ``THERE``."""
    letters = [c for c in model if c.isalpha()]
    if len(letters) > 1 and all(c.isupper() for c in letters):
        return word.upper()
    if letters and letters[0].isupper():
        return word[:1].upper() + word[1:]
    return word


def match_apostrophe(model: str, word: str) -> str:
    """The participant's own apostrophe (straight or curly) in a replacement."""
    curly = "’" in model and "'" not in model
    return word.replace("'", "’") if curly else word


def plain(word: str) -> str:
    """Lower case with a straight apostrophe: how the word lists spell entries."""
    return word.lower().replace("’", "'")
