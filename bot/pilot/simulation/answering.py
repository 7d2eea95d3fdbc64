"""How a scripted simulated participant answers a questionnaire's buttons and free text.

From the scenario's ``simulation.answers`` (a profile per system, a distribution per item);
without them, a uniform choice. Screening items are answered to pass the study's own
``eligible_if`` most of the time, so a demo does not screen everyone out. Pure logic.
"""

from __future__ import annotations

import math
import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from questionnaires.models import Item, PreferenceItem, Questionnaire
from scenarios.models import StudyBundle
from scenarios.simulation import Answers, Simulation

_ELIGIBLE_SHARE = 0.9


@dataclass(frozen=True)
class Question:
    """An item as a simulated participant meets it: the message, and the item if known."""

    text: str
    item: Item | None
    instrument: Questionnaire | None


def find_question(bundle: StudyBundle, text: str) -> Question:
    """The questionnaire item a message shows (its text is in the message; the longest wins)."""
    best: tuple[int, Item, Questionnaire] | None = None
    for instrument in bundle.questionnaires.values():
        for item in instrument.items:
            words = item.text.strip()
            if words and words in text and (best is None or len(words) > best[0]):
                best = (len(words), item, instrument)
    return Question(text, best[1], best[2]) if best else Question(text, None, None)


def merged(bundle: StudyBundle) -> Simulation:
    """The study's answering rules outside a task (screening, post-study): every
    scenario's ``answers`` together."""
    items: dict[str, dict[int, float]] = {}
    profiles: dict[str, dict[str, float]] = {}
    comments: list[str] = []
    votes: dict[str, float] = {}
    for scenario in bundle.scenarios.values():
        if scenario.simulation is None:
            continue
        items.update(scenario.simulation.answers.items)
        for system, profile in scenario.simulation.answers.profiles.items():
            profiles.setdefault(system, {}).update(profile)
        comments += scenario.simulation.comments
        votes.update(scenario.simulation.votes)
    return Simulation(
        answers=Answers(profiles=profiles, items=items), comments=tuple(comments), votes=votes
    )


class ScriptedAnswers:
    """Chooses one button among a closed item's, in the order the bot shows them."""

    def __init__(self, rng: random.Random) -> None:
        self.rng = rng

    def choose(self, question: Question, buttons: int, plan: Simulation, system: str | None) -> int:
        """The index (0-based) of the button to tap."""
        item = question.item
        values = (
            [v for v, _ in item.choices()] if item is not None and hasattr(item, "choices") else []
        )
        if item is None or len(values) != buttons:
            return self.rng.randrange(buttons)
        eligible = _eligible_values(question, values)
        if eligible and len(eligible) < len(values):
            if self.rng.random() < _ELIGIBLE_SHARE:
                return values.index(self.rng.choice(eligible))
            return values.index(self.rng.choice([v for v in values if v not in eligible]))
        answers = plan.answers
        if item.id in answers.items:
            return _weighted(self.rng, values, answers.items[item.id])
        mean = _profile_mean(answers.profiles, system, item.id)
        numbers = [v for v in values if isinstance(v, int)]
        if mean is None or len(numbers) != len(values):
            return self.rng.randrange(buttons)
        drawn = self.rng.gauss(mean, answers.spread)
        nearest = min(numbers, key=lambda v: (abs(v - drawn), v))
        return values.index(nearest)

    def comment(self, plan: Simulation, can_skip: bool) -> str | None:
        """A free-text answer, or None to skip where the item allows it."""
        if can_skip and (not plan.comments or self.rng.random() >= plan.comment_rate):
            return None
        return self.rng.choice(plan.comments) if plan.comments else "No comment."


def _eligible_values(question: Question, values: Sequence[int | str]) -> list[int | str]:
    instrument, item = question.instrument, question.item
    if instrument is None or item is None:
        return []
    conditions = [c for c in instrument.eligible_if if c.item == item.id]
    return [v for v in values if all(c.holds(v) for c in conditions)] if conditions else []


def _profile_mean(
    profiles: Mapping[str, Mapping[str, float]], system: str | None, item_id: str
) -> float | None:
    profile = profiles.get(system or "", {})
    return profile.get(item_id, profile.get("default"))


def _weighted(rng: random.Random, values: Sequence[int | str], weights: Mapping[int, float]) -> int:
    known = [(i, weights.get(v, 0.0)) for i, v in enumerate(values) if isinstance(v, int)]
    if not any(w for _, w in known):
        return rng.randrange(len(values))
    return rng.choices([i for i, _ in known], weights=[w for _, w in known])[0]


def preferred(rng: random.Random, plan: Simulation, first: str, second: str) -> float:
    """The chance a simulated participant prefers ``first`` to ``second``: Bradley-Terry on
    the plan's ``votes`` strengths (a system not listed is 0)."""
    gap = plan.votes.get(second, 0.0) - plan.votes.get(first, 0.0)
    return 1.0 / (1.0 + math.exp(gap))


def vote(rng: random.Random, plan: Simulation, a: str, b: str) -> int:
    """A side-by-side vote's button: 0 A better, 1 B better, 2 tie (at the plan's
    ``tie_rate``)."""
    if rng.random() < plan.tie_rate:
        return 2
    return 0 if rng.random() < preferred(rng, plan, a, b) else 1


def prefer(rng: random.Random, plan: Simulation, item: PreferenceItem, met: Sequence[str]) -> int:
    """A preference item's button for the two systems met, in order (``met``)."""
    if len(met) < 2:
        return rng.randrange(len(item.choices()))
    chance = preferred(rng, plan, met[0], met[1])
    first = rng.random() < chance
    if not item.strength:
        return 0 if first else 1
    if rng.random() < plan.tie_rate:
        return 2
    much = rng.random() < abs(2 * chance - 1)
    return (0 if much else 1) if first else (4 if much else 3)
