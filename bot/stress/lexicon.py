"""The word lists that ship with ozlab (``bot/stress/data/<lang>.yaml``), read once.

Reading a file inside the installed package is the only I/O of generation and suggestion:
nothing is downloaded, and a wheel or a container has the lists (pyproject's package data).
"""

from __future__ import annotations

from functools import cache
from importlib import resources

import yaml
from pydantic import BaseModel, ConfigDict, Field, field_validator

from bot.core.errors import StudyDataError

LANGUAGES = ("en", "it")


def _plain(entry: str) -> str:
    return entry.strip().lower().replace("’", "'")


class Lexicon(BaseModel):
    """One language's lists; every entry in lower case with a straight apostrophe."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    confused: tuple[tuple[str, ...], ...]
    misspelled: dict[str, str]
    synonyms: dict[str, tuple[str, ...]]
    variants: dict[str, tuple[str, ...]]
    adjectives: frozenset[str]
    transitive_verbs: frozenset[str]
    be_forms: frozenset[str]
    objects: frozenset[str]
    adverbs: frozenset[str]
    prepositions: frozenset[str]
    function_words: frozenset[str]
    choice_words: frozenset[str]
    ordinals: tuple[str, ...] = Field(min_length=2)
    last_ordinal: str

    @field_validator("confused")
    @classmethod
    def _sets(cls, value: tuple[tuple[str, ...], ...]) -> tuple[tuple[str, ...], ...]:
        for group in value:
            if len(group) < 2 or len(set(map(_plain, group))) != len(group):
                raise ValueError(f"a set of confused words needs two different words: {group}")
        return tuple(tuple(_plain(word) for word in group) for group in value)

    @field_validator("misspelled")
    @classmethod
    def _misspellings(cls, value: dict[str, str]) -> dict[str, str]:
        for right, wrong in value.items():
            if _plain(right) == _plain(wrong):
                raise ValueError(f"{right!r} is misspelled as itself")
        return {_plain(right): _plain(wrong) for right, wrong in value.items()}

    def confusions(self) -> dict[str, tuple[str, ...]]:
        """Each confusable word → the words of its set it may be written as."""
        found: dict[str, list[str]] = {}
        for group in self.confused:
            for word in group:
                found.setdefault(word, []).extend(other for other in group if other != word)
        return {word: tuple(others) for word, others in found.items()}


def check_language(lang: str) -> str:
    if lang not in LANGUAGES:
        raise StudyDataError(
            f"stress tests speak {' and '.join(LANGUAGES)}, not {lang!r} (use --lang en or it)"
        )
    return lang


@cache
def lexicon(lang: str) -> Lexicon:
    """The shipped lists of ``lang`` (``en`` or ``it``)."""
    check_language(lang)
    text = resources.files("bot.stress").joinpath("data", f"{lang}.yaml").read_text("utf-8")
    # BaseLoader: every entry stays text (YAML 1.1 would read `no`, `yes`, `on` as booleans).
    return Lexicon.model_validate(yaml.load(text, Loader=yaml.BaseLoader))


@cache
def confusions(lang: str) -> dict[str, tuple[str, ...]]:
    return lexicon(lang).confusions()
