"""How a scripted simulated participant answers a questionnaire's buttons and free text.

From the scenario's ``simulation.answers`` (settings per system, item and item type;
see :class:`~scenarios.simulation.Answers`); without them, a uniform choice, drawn so that a
participant's answers to one construct's items hang together. Screening items are answered
to pass the study's own ``eligible_if`` most of the time, so a demo does not screen everyone
out; attention checks are passed, but at the simulation's ``attention_fail_rate``. Pure
logic.
"""

from __future__ import annotations

import math
import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from statistics import NormalDist

from questionnaires.models import Item, PreferenceItem, Questionnaire, RankingItem
from scenarios.models import StudyBundle
from scenarios.simulation import Answers, Setting, Simulation

_ELIGIBLE_SHARE = 0.9
_NORMAL = NormalDist()
_EDGE = 1e-9  # a quantile of exactly 0 or 1 has no normal deviate
_SLIDER_QUARTER = 25.0  # a slider's spread is in quarters of 0–100, a 5-point scale's steps


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
    items: dict[str, dict[int | str, float]] = {}
    types: dict[str, Setting] = {}
    profiles: dict[str, dict[str, Setting]] = {}
    comments: list[str] = []
    votes: dict[str, float] = {}
    spread, consistency = Answers().spread, Answers().consistency
    inattentive = 0.0
    for scenario in bundle.scenarios.values():
        if scenario.simulation is None:
            continue
        answers = scenario.simulation.answers
        items.update(answers.items)
        types.update(answers.types)
        for system, profile in answers.profiles.items():
            profiles.setdefault(system, {}).update(profile)
        comments += scenario.simulation.comments
        spread, consistency = answers.spread, answers.consistency
        votes.update(scenario.simulation.votes)
        inattentive = max(inattentive, scenario.simulation.attention_fail_rate)
    return Simulation(
        answers=Answers(
            profiles=profiles,
            items=items,
            types=types,
            spread=spread,
            consistency=consistency,
        ),
        comments=tuple(comments),
        votes=votes,
        attention_fail_rate=inattentive,
    )


def setting_for(answers: Answers, item: Item, system: str | None) -> Setting | None:
    """The setting that decides how ``item`` is answered with ``system`` (see
    :class:`~scenarios.simulation.Answers` for the order); None: a uniform choice. A
    setting for many items (a type, ``default``) says how good the system is, so on a
    reverse-keyed item it is mirrored: a system rated 4.5 of 5 confused people little."""
    profile = answers.profiles.get(system or "", {})
    for found in (profile.get(item.id), answers.items.get(item.id)):
        if found is not None:
            return found
    for found in (
        profile.get(item.type),
        answers.types.get(item.type),
        profile.get("default") if item.type == "scale" else None,
    ):
        if found is not None:
            return _mirrored(found, item) if getattr(item, "reverse", False) else found
    return None


def _mirrored(setting: Setting, item: Item) -> Setting:
    values = [v for v, _ in item.choices()] if hasattr(item, "choices") else []
    numbers = [v for v in values if isinstance(v, int)]
    low, high = min(numbers), max(numbers)
    if isinstance(setting, dict):
        return {
            low + high - value if isinstance(value, int) else value: weight
            for value, weight in setting.items()
        }
    return low + high - setting


class ScriptedAnswers:
    """Chooses one button among a closed item's, in the order the bot shows them.

    One instance answers for one simulated participant: it holds their trait per construct
    (drawn when the construct's first item comes), so that their answers to a construct's
    items hang together."""

    def __init__(self, rng: random.Random) -> None:
        self.rng = rng
        self._traits: dict[str, float] = {}

    def choose(self, question: Question, buttons: int, plan: Simulation, system: str | None) -> int:
        """The index (0-based) of the button to tap."""
        item = question.item
        values = (
            [v for v, _ in item.choices()] if item is not None and hasattr(item, "choices") else []
        )
        if item is None or len(values) != buttons:
            return self.rng.randrange(buttons)
        instructed = _instructed(item)
        if instructed in values:  # an attention check: passed but at the stated rate
            if self.rng.random() >= plan.attention_fail_rate:
                return values.index(instructed)
            return values.index(self.rng.choice([v for v in values if v != instructed]))
        eligible = _eligible_values(question, values)
        if eligible and len(eligible) < len(values):
            if self.rng.random() < _ELIGIBLE_SHARE:
                return values.index(self.rng.choice(eligible))
            return values.index(self.rng.choice([v for v in values if v not in eligible]))
        numbers = sorted(v for v in values if isinstance(v, int))
        if len(numbers) != len(values):
            return self.rng.randrange(buttons)  # options named by words: no order to lean on
        answers = plan.answers
        u = self._quantile(item, answers.consistency)
        setting = setting_for(answers, item, system)
        if isinstance(setting, dict):
            chosen = _from_weights(numbers, setting, u)
        elif setting is None:
            chosen = numbers[min(int(u * len(numbers)), len(numbers) - 1)]
        elif len(numbers) == 2:  # a share of the higher answer ("yes", thumbs up)
            chosen = numbers[1] if u >= 1 - setting else numbers[0]
        else:
            spread = answers.spread * (_SLIDER_QUARTER if item.type == "slider" else 1)
            drawn = setting + spread * _NORMAL.inv_cdf(u)
            chosen = min(numbers, key=lambda v: (abs(v - drawn), v))
        return values.index(chosen)

    def rank(self, question: Question, plan: Simulation, system: str | None) -> list[int]:
        """A ranking's options as the indexes of their buttons, first to last: each place
        drawn among the options left in proportion to their weights (Plackett–Luce); with
        no setting, every order is as likely."""
        item = question.item
        if not isinstance(item, RankingItem):
            return []
        values = [str(v) for v, _ in item.choices()]
        setting = setting_for(plan.answers, item, system)
        weights = {str(k): w for k, w in setting.items()} if isinstance(setting, dict) else {}
        left = list(range(len(values)))
        order: list[int] = []
        while left:
            chances = [weights.get(values[i], 0.0) if weights else 1.0 for i in left]
            if sum(chances) > 0:
                picked = self.rng.choices(left, weights=chances)[0]
            else:  # only options the setting does not name are left
                picked = self.rng.choice(left)
            order.append(picked)
            left.remove(picked)
        return order

    def _quantile(self, item: Item, consistency: float) -> float:
        """Where in its distribution this answer falls (0 to 1): from the participant's
        trait for the item's construct and the item's own noise (reversed for a
        reverse-keyed item); independent for an item of no construct."""
        construct = item.construct_name
        if construct is None:
            return min(max(self.rng.random(), _EDGE), 1 - _EDGE)
        trait = self._traits.setdefault(construct, self.rng.gauss(0.0, 1.0))
        noise = self.rng.gauss(0.0, 1.0)
        u = _NORMAL.cdf(math.sqrt(consistency) * trait + math.sqrt(1 - consistency) * noise)
        if getattr(item, "reverse", False):
            u = 1 - u
        return min(max(u, _EDGE), 1 - _EDGE)

    def comment(self, plan: Simulation, can_skip: bool) -> str | None:
        """A free-text answer, or None to skip where the item allows it."""
        if can_skip and (not plan.comments or self.rng.random() >= plan.comment_rate):
            return None
        return self.rng.choice(plan.comments) if plan.comments else "No comment."


def _instructed(item: Item) -> int | str | None:
    """The answer an attention check asks for (a yes/no check's ``true`` is its 1)."""
    attention = getattr(item, "attention", None)
    return int(attention) if isinstance(attention, bool) else attention


def _eligible_values(question: Question, values: Sequence[int | str]) -> list[int | str]:
    instrument, item = question.instrument, question.item
    if instrument is None or item is None:
        return []
    conditions = [c for c in instrument.eligible_if if c.item == item.id]
    return [v for v in values if all(c.holds(v) for c in conditions)] if conditions else []


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


def _from_weights(numbers: Sequence[int], weights: Mapping[int | str, float], u: float) -> int:
    """The answer at quantile ``u`` of the distribution ``weights`` over ``numbers`` (in
    ascending order, so that a higher trait gives a higher answer)."""
    by_text = {str(k): w for k, w in weights.items()}  # "3" in a file is the answer 3
    known = [(v, by_text.get(str(v), 0.0)) for v in numbers]
    total = sum(w for _, w in known)
    if not total > 0:
        return numbers[min(int(u * len(numbers)), len(numbers) - 1)]
    running = 0.0
    for value, weight in known:
        running += weight
        if weight > 0 and u * total <= running:
            return value
    return next(v for v, w in reversed(known) if w > 0)
