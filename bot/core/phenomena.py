"""The eleven IDIAL phenomena, in the protocol's words and groups.

Each stress test changes a logged utterance by exactly one of them; the score is reported
per phenomenon, per group (spelling, lexical, syntactic) and overall.
"""

from __future__ import annotations

from enum import StrEnum

from bot.core.errors import StudyDataError


class Group(StrEnum):
    SPELLING = "spelling"
    LEXICAL = "lexical"
    SYNTACTIC = "syntactic"


class UnknownStressType(StudyDataError):
    """A stress test named by a code that is not one of ST-1 … ST-11."""


class StressType(StrEnum):
    """ST-1 … ST-11 as IDIAL numbers them (Cutugno et al., 2018, section 4.2)."""

    ST_1 = "ST-1"
    ST_2 = "ST-2"
    ST_3 = "ST-3"
    ST_4 = "ST-4"
    ST_5 = "ST-5"
    ST_6 = "ST-6"
    ST_7 = "ST-7"
    ST_8 = "ST-8"
    ST_9 = "ST-9"
    ST_10 = "ST-10"
    ST_11 = "ST-11"

    @property
    def group(self) -> Group:
        return _GROUPS[self]

    @property
    def title(self) -> str:  # type: ignore[override]  # str.title() is not used on codes
        """The phenomenon's name as the protocol gives it, in lower case."""
        return _TITLES[self]

    @property
    def example(self) -> str:
        """The protocol's own example, for prompts and help texts."""
        return _EXAMPLES[self]


_GROUPS: dict[StressType, Group] = {
    StressType.ST_1: Group.SPELLING,
    StressType.ST_2: Group.SPELLING,
    StressType.ST_3: Group.SPELLING,
    StressType.ST_4: Group.SPELLING,
    StressType.ST_5: Group.LEXICAL,
    StressType.ST_6: Group.LEXICAL,
    StressType.ST_7: Group.LEXICAL,
    StressType.ST_8: Group.SYNTACTIC,
    StressType.ST_9: Group.SYNTACTIC,
    StressType.ST_10: Group.SYNTACTIC,
    StressType.ST_11: Group.SYNTACTIC,
}

_TITLES: dict[StressType, str] = {
    StressType.ST_1: "confused words",
    StressType.ST_2: "misspelled words",
    StressType.ST_3: "character replacement",
    StressType.ST_4: "character swapping",
    StressType.ST_5: "less frequent synonyms",
    StressType.ST_6: "register or regional variants",
    StressType.ST_7: "coreference",
    StressType.ST_8: "active-passive alternation",
    StressType.ST_9: "inverted order of nouns and adjectives",
    StressType.ST_10: "anaphora resolution",
    StressType.ST_11: "verbal modifier inversion",
}

_EXAMPLES: dict[StressType, str] = {
    StressType.ST_1: "“there” → “their”, “a fianco” → “affianco”",
    StressType.ST_2: "“accommodation” → “acommodation”",
    StressType.ST_3: "“don’t” → “dont”, “po’” → “po”, “lui dà” → “lui da”",
    StressType.ST_4: "“casualmente” → “casuamlente”, “therefore” → “therefroe”",
    StressType.ST_5: "“home” → “habitation”",
    StressType.ST_6: (
        "“buongiorno, vorrei mangiare in un ristorante indiano” → the less formal "
        "“c’e un posto indiano”"
    ),
    StressType.ST_7: "“Rome” → “the capital of Italy”",
    StressType.ST_8: (
        "“I would like to block the credit card” → “I would like that the credit card is blocked”"
    ),
    StressType.ST_9: "“un piatto di pasta” → “pasta un piatto”",
    StressType.ST_10: "after “did you say Rome or Milan?”, “Milan” → “the second”",
    StressType.ST_11: (
        "“I would like to buy a ticket to Milan for tomorrow” → "
        "“I would like to buy a ticket for tomorrow to Milan”"
    ),
}


def parse_types(text: str) -> list[StressType]:
    """``"ST-1,ST-2"`` → the types, in the order given, each once.

    Case and spaces do not matter (``st-1, ST-10``); an unknown code raises
    :class:`UnknownStressType` naming it and the codes there are.
    """
    found: list[StressType] = []
    for part in text.split(","):
        code = part.strip().upper()
        if not code:
            continue
        try:
            kind = StressType(code)
        except ValueError:
            raise UnknownStressType(
                f"unknown stress test type {part.strip()!r} (known: ST-1 … ST-11)"
            ) from None
        if kind not in found:
            found.append(kind)
    if not found:
        raise UnknownStressType("no stress test type given (e.g. ST-1,ST-2)")
    return found
