"""Scores from answers, as analyses need them: reverse items recoded, constructs averaged.

A participant sees a reverse-coded item as written; only its score is turned around
(min + max − answer), so that a high score means the same on every item of a construct.
"""

from __future__ import annotations

from collections.abc import Mapping
from statistics import fmean

from questionnaires.models import Questionnaire, ScaleItem


def scored(item: ScaleItem, value: int) -> int:
    """The answer as it counts: recoded for a reverse item."""
    if not item.min <= value <= item.max:
        raise ValueError(f"{value} is not on the scale of {item.id!r} ({item.min}–{item.max})")
    return item.min + item.max - value if item.reverse else value


def construct_scores(
    questionnaire: Questionnaire, answers: Mapping[str, int | None]
) -> dict[str, float]:
    """Each construct's mean over the scale items answered (item id → answer)."""
    by_construct: dict[str, list[int]] = {}
    for item in questionnaire.items:
        value = answers.get(item.id)
        if isinstance(item, ScaleItem) and item.construct_name and value is not None:
            by_construct.setdefault(item.construct_name, []).append(scored(item, value))
    return {construct: fmean(values) for construct, values in by_construct.items()}
