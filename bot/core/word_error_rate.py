"""The word error rate of a transcript against what was really said (a stimulus read aloud).

The standard definition (as NIST's sclite and jiwer compute it): align the two word
sequences with the fewest edits (Levenshtein over words), count the substitutions S,
deletions D and insertions I, and divide by the number of words said, N::

    WER = (S + D + I) / N

It can exceed 1 (a transcript longer than what was said). Over many utterances the rate is
the sum of the errors over the sum of the words (:meth:`WordErrors.__add__`), not the mean
of the rates: a long stimulus counts for more words than a short one.

Both texts are normalised first, since the recogniser's casing and punctuation are not
what is measured: case folded, punctuation dropped except an apostrophe inside a word
(``don't``, ``o'clock``), whitespace collapsed. Numbers are not spelled out: ``9`` and
``nine`` are different words, so write reference transcripts as the engine writes.

Pure and standard library only: the bot and analytics both import it.
"""

from __future__ import annotations

import unicodedata
from dataclasses import dataclass


def words(text: str) -> list[str]:
    """The normalised words of ``text``."""
    kept: list[str] = []
    for char in unicodedata.normalize("NFKC", text).casefold():
        category = unicodedata.category(char)
        if (category[0] == "P" and char not in "'’") or category[0] in "CZ":
            kept.append(" ")  # punctuation, controls and spaces separate words
        else:
            kept.append("'" if char == "’" else char)
    return [w.strip("'") for w in "".join(kept).split() if w.strip("'")]


@dataclass(frozen=True, slots=True)
class WordErrors:
    """The edits of one alignment (or the sums over many), and the words said."""

    substitutions: int
    deletions: int
    insertions: int
    reference_words: int

    @property
    def errors(self) -> int:
        return self.substitutions + self.deletions + self.insertions

    @property
    def rate(self) -> float:
        """(S + D + I) / N; undefined (a ValueError) when nothing was said."""
        if self.reference_words == 0:
            raise ValueError("the word error rate of an empty reference is undefined")
        return self.errors / self.reference_words

    def __add__(self, other: WordErrors) -> WordErrors:
        return WordErrors(
            self.substitutions + other.substitutions,
            self.deletions + other.deletions,
            self.insertions + other.insertions,
            self.reference_words + other.reference_words,
        )


NO_ERRORS = WordErrors(0, 0, 0, 0)
"""The sum of no utterances: ``sum(errors, NO_ERRORS)`` over many."""


def word_errors(reference: str, hypothesis: str) -> WordErrors:
    """The substitutions, deletions and insertions that turn the words said (``reference``)
    into the words heard (``hypothesis``), fewest first; among alignments of equal cost,
    the one with the most substitutions (so that one wrong word counts once, not twice)."""
    said, heard = words(reference), words(hypothesis)
    # cost[j]: the best (edits, -substitutions, S, D, I) turning said[:i] into heard[:j].
    previous = [(j, 0, 0, 0, j) for j in range(len(heard) + 1)]
    for i, word in enumerate(said, start=1):
        current = [(i, 0, 0, i, 0)]
        for j, other in enumerate(heard, start=1):
            edits, minus_s, s, d, n = previous[j - 1]
            if word == other:
                best = (edits, minus_s, s, d, n)
            else:
                best = (edits + 1, minus_s - 1, s + 1, d, n)
            edits, minus_s, s, d, n = previous[j]
            best = min(best, (edits + 1, minus_s, s, d + 1, n))
            edits, minus_s, s, d, n = current[j - 1]
            best = min(best, (edits + 1, minus_s, s, d, n + 1))
            current.append(best)
        previous = current
    _, _, substitutions, deletions, insertions = previous[-1]
    return WordErrors(substitutions, deletions, insertions, len(said))
