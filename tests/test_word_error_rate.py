"""The word error rate: the standard definition, checked by hand and against jiwer."""

from __future__ import annotations

import random

import jiwer
import pytest

from bot.core.word_error_rate import NO_ERRORS, WordErrors, word_errors, words


@pytest.mark.parametrize(
    ("reference", "hypothesis", "expected"),
    [
        # (S, D, I, N), counted by hand
        ("the cat sat on the mat", "the cat sat on the mat", (0, 0, 0, 6)),
        ("the cat sat on the mat", "the cat sit on mat", (1, 1, 0, 6)),
        ("the cat sat on the mat", "the fat cat sat on the mat", (0, 0, 1, 6)),
        ("what a day", "", (0, 3, 0, 3)),
        ("go forward ten meters", "go forward and then meters", (1, 0, 1, 4)),
        # one wrong word is one substitution, not a deletion and an insertion
        ("book a table", "look a table", (1, 0, 0, 3)),
        # a transcript longer than what was said: the rate exceeds 1
        ("yes", "oh yes yes indeed", (0, 0, 3, 1)),
    ],
)
def test_hand_counted_alignments(
    reference: str, hypothesis: str, expected: tuple[int, int, int, int]
) -> None:
    found = word_errors(reference, hypothesis)
    assert (found.substitutions, found.deletions, found.insertions, found.reference_words) == (
        expected
    )
    assert found.rate == pytest.approx(sum(expected[:3]) / expected[3])


def test_case_and_punctuation_are_not_errors() -> None:
    assert words("Hello, World! It’s nine o’clock — “fine”.") == [
        "hello",
        "world",
        "it's",
        "nine",
        "o'clock",
        "fine",
    ]
    assert word_errors("I don't know.", "i DON'T know").errors == 0
    assert word_errors("nine", "9").substitutions == 1  # numbers are not spelled out


def test_many_utterances_sum_their_errors_and_words() -> None:
    """Over a corpus the rate is all errors over all words (jiwer's over lists), not the
    mean of the utterances' rates."""
    pairs = [("a b c d e f g h i j", "a b c d e f g h i x"), ("yes", "no")]
    total = sum((word_errors(r, h) for r, h in pairs), NO_ERRORS)
    assert total == WordErrors(2, 0, 0, 11)
    assert total.rate == pytest.approx(2 / 11)
    assert total.rate == pytest.approx(jiwer.wer([r for r, _ in pairs], [h for _, h in pairs]))
    assert total.rate != pytest.approx((0.1 + 1.0) / 2)


def test_nothing_said_has_no_rate() -> None:
    assert word_errors("", "").errors == 0
    with pytest.raises(ValueError, match="undefined"):
        _ = word_errors("...", "hello").rate


def test_agrees_with_jiwer_on_random_transcripts() -> None:
    """jiwer (rapidfuzz's Levenshtein) finds the same number of edits on 500 random pairs;
    both texts are given normalised, as jiwer does not normalise by default."""
    rng = random.Random(20261129)
    vocabulary = ["the", "a", "cat", "sat", "on", "mat", "dog", "ran", "to", "it"]
    for _ in range(500):
        said = " ".join(rng.choices(vocabulary, k=rng.randint(1, 12)))
        heard = " ".join(rng.choices(vocabulary, k=rng.randint(0, 12)))
        ours = word_errors(said, heard)
        theirs = jiwer.process_words(said, heard) if heard else None
        expected = (
            theirs.substitutions + theirs.deletions + theirs.insertions
            if theirs
            else len(said.split())
        )
        assert ours.errors == expected, (said, heard)
        assert ours.rate == pytest.approx(expected / len(said.split()))
