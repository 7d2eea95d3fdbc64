"""The eleven linguistic phenomena of IDIAL's stress tests, in their three groups."""

from __future__ import annotations

from enum import StrEnum

from bot.errors import StudyDataError


class Group(StrEnum):
    SPELLING = "spelling"
    LEXICAL = "lexical"
    SYNTACTIC = "syntactic"


class StressType(StrEnum):
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
    def title(self) -> str:  # type: ignore[override]
        return _TITLES[self]


_GROUPS = {
    **{t: Group.SPELLING for t in ("ST-1", "ST-2", "ST-3", "ST-4")},
    **{t: Group.LEXICAL for t in ("ST-5", "ST-6", "ST-7")},
    **{t: Group.SYNTACTIC for t in ("ST-8", "ST-9", "ST-10", "ST-11")},
}
_TITLES = {
    "ST-1": "confused words",
    "ST-2": "misspelled words",
    "ST-3": "character replacement",
    "ST-4": "character swapping",
    "ST-5": "less frequent synonyms",
    "ST-6": "register or regional variants",
    "ST-7": "coreference",
    "ST-8": "active-passive alternation",
    "ST-9": "inverted noun-adjective order",
    "ST-10": "anaphora",
    "ST-11": "verbal modifier inversion",
}


def parse_types(text: str) -> list[StressType]:
    """``"ST-1,ST-2"`` as types, in the order given; an unknown name is refused."""
    found: list[StressType] = []
    for part in (p.strip().upper() for p in text.split(",")):
        if not part:
            continue
        try:
            found.append(StressType(part))
        except ValueError:
            known = ", ".join(t.value for t in StressType)
            raise StudyDataError(f"unknown stress test type {part!r}; known: {known}") from None
    return found
