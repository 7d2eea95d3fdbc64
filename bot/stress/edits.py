"""Every way ST-1 to ST-4 can change one utterance, each a single span of it.

An :class:`Edit` replaces ``text[start:end]`` (one word, or one listed two-word expression
such as "qual è") and nothing else, so the rest of the message keeps every character.
:mod:`bot.stress.generate` picks one edit per utterance; :mod:`bot.stress.suggest` shows them.

- ST-1 confused words: a word of a shipped set of confusables becomes another of its set.
- ST-2 misspelled words: a word of the shipped list becomes its listed misspelling.
- ST-3 character replacement: one apostrophe dropped, or one accented letter without its
  accent ("don't" → "dont", "dà" → "da", "città" → "citta").
- ST-4 character swapping: two adjacent, different letters swapped inside a word of at
  least four letters, never the first letter nor the last ("therefore" → "therefroe").
"""

from __future__ import annotations

import unicodedata
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from itertools import pairwise

from bot.core.phenomena import StressType
from bot.stress.lexicon import confusions, lexicon
from bot.stress.tokens import APOSTROPHES, Word, match_apostrophe, match_case, plain, words

MIN_SWAP_LETTERS = 4


@dataclass(frozen=True)
class Edit:
    """Replace ``text[start:end]`` (the word ``old``) by ``new``."""

    start: int
    end: int
    old: str
    new: str
    word: int  # index of the (first) word it changes: edits of one word are picked together

    @property
    def change(self) -> str:
        return f"{self.old} → {self.new}"

    def apply(self, text: str) -> str:
        return text[: self.start] + self.new + text[self.end :]


def _spans(text: str, ws: list[Word], listed: Callable[[str], bool]) -> Iterator[tuple[Word, int]]:
    """The listed units of ``text``: two words one plain space apart that the list holds as
    an expression ("a fianco", "qual è"), then single words outside those expressions.
    Yields (first word, end of the unit)."""
    inside: set[int] = set()
    for first, second in pairwise(ws):
        if text[first.end : second.start] == " " and listed(text[first.start : second.end]):
            inside.update((first.index, second.index))
            yield first, second.end
    for w in ws:
        if w.index not in inside and listed(w.text):
            yield w, w.end


def _respelled(old: str, new: str) -> str:
    return match_apostrophe(old, match_case(old, new))


def confused(text: str, lang: str) -> list[Edit]:
    """ST-1: a confusable word (or expression) written as another of its set."""
    table = confusions(lang)
    found: list[Edit] = []
    for first, end in _spans(text, words(text, lang), lambda unit: plain(unit) in table):
        old = text[first.start : end]
        for other in table[plain(old)]:
            found.append(Edit(first.start, end, old, _respelled(old, other), first.index))
    return found


def misspelled(text: str, lang: str) -> list[Edit]:
    """ST-2: a word (or expression) of the list written as people misspell it."""
    table = lexicon(lang).misspelled
    found: list[Edit] = []
    for first, end in _spans(text, words(text, lang), lambda unit: plain(unit) in table):
        old = text[first.start : end]
        found.append(Edit(first.start, end, old, _respelled(old, table[plain(old)]), first.index))
    return found


def _unaccented(char: str) -> str | None:
    """The letter without its accent, or None when it has none ("è" → "e")."""
    decomposed = unicodedata.normalize("NFD", char)
    base = "".join(c for c in decomposed if not unicodedata.combining(c))
    return base if base != char and len(base) == 1 and base.isalpha() else None


def replaced(text: str, lang: str) -> list[Edit]:
    """ST-3: one apostrophe dropped or one accent lost, in one word."""
    found: list[Edit] = []
    for w in words(text, lang):
        for at, char in enumerate(w.text):
            if char in APOSTROPHES:
                new = w.text[:at] + w.text[at + 1 :]
            elif (base := _unaccented(char)) is not None:
                new = w.text[:at] + base + w.text[at + 1 :]
            else:
                continue
            found.append(Edit(w.start, w.end, w.text, new, w.index))
    return found


def swapped(text: str, lang: str) -> list[Edit]:
    """ST-4: two adjacent letters swapped inside a word, keeping its first and last."""
    found: list[Edit] = []
    for w in words(text, lang):
        letters = w.text
        if len(letters) < MIN_SWAP_LETTERS or not letters.isalpha():
            continue
        for at in range(1, len(letters) - 2):
            a, b = letters[at], letters[at + 1]
            if a.lower() == b.lower():
                continue
            new = letters[:at] + b + a + letters[at + 2 :]
            found.append(Edit(w.start, w.end, letters, new, w.index))
    return found


EDITORS: dict[StressType, Callable[[str, str], list[Edit]]] = {
    StressType.ST_1: confused,
    StressType.ST_2: misspelled,
    StressType.ST_3: replaced,
    StressType.ST_4: swapped,
}
