"""How a simulated annotator answers an item of a rating job (exchange or session level).

Every target has a value each annotator would give if nobody erred (its "truth"), drawn from
the seed, the target and the item, and shaped like a participant's answer by the scenario's
``simulation.answers`` for the target's system (so a planted difference between systems is
what annotators see too). Each annotator gives the truth on a share of the items, their
accuracy (drawn once per annotator), and otherwise errs as raters do: a neighbouring point
of an ordered scale, the other answer of a two-way item, another option of a list. Their
agreement is therefore realistic, neither perfect nor random, and the same seed rates
alike. Pure logic.
"""

from __future__ import annotations

import random

from bot.core.annotation import AnnotationTask
from bot.pilot.simulation.answering import Question, ScriptedAnswers, merged
from questionnaires.models import RankingItem
from scenarios.jobs import AnnotationJob
from scenarios.models import StudyBundle
from scenarios.simulation import Simulation

ACCURACY = (0.6, 0.9)
"""The range each simulated annotator's accuracy is drawn from: the share of items they give
the truth of (published crowd and expert annotations agree at about these rates)."""
RATIONALE_SHARE = 0.5
"""How often a simulated annotator explains a rating where explaining is optional."""
_RATIONALE = "Rated from the transcript alone."


class Rater:
    """One simulated annotator of one rating job: the truth every annotator shares, and
    their own errors (from ``rng``)."""

    def __init__(
        self, bundle: StudyBundle, job: AnnotationJob, seed: int, rng: random.Random
    ) -> None:
        self.bundle = bundle
        self.job = job
        self.seed = seed
        self.rng = rng
        self.accuracy = rng.uniform(*ACCURACY)

    def _plan(self, task: AnnotationTask) -> Simulation:
        scenario = self.bundle.scenarios.get(task.target.scenario or "")
        return scenario.simulation if scenario and scenario.simulation else merged(self.bundle)

    def _truth(self, task: AnnotationTask, question: Question) -> random.Random:
        """The source of the target's truth for the item: the same for every annotator."""
        item = question.item.id if question.item is not None else question.text
        key = f"{self.seed}:truth:{self.job.id}:{task.target.target}:{task.target.level}:{item}"
        return random.Random(key)

    def _errs(self) -> bool:
        return self.rng.random() >= self.accuracy

    def choose(self, task: AnnotationTask, question: Question, buttons: int) -> int:
        """The index of the answer button to tap, first to last as the bot shows them."""
        truth = ScriptedAnswers(self._truth(task, question)).choose(
            question, buttons, self._plan(task), task.target.system
        )
        if buttons < 2 or not self._errs():
            return truth
        item = question.item
        values = [v for v, _ in item.choices()] if item and hasattr(item, "choices") else []
        ordered = len(values) == buttons and all(isinstance(v, int) for v in values)
        if ordered and buttons > 2:  # a neighbouring point, inward at the scale's ends
            step = self.rng.choice((-1, 1))
            return truth + step if 0 <= truth + step < buttons else truth - step
        return self.rng.choice([i for i in range(buttons) if i != truth])

    def toggle(self, task: AnnotationTask, question: Question, options: int) -> list[int]:
        """The options of a multiple-choice item to tick (indexes, in order)."""
        truth = self._truth(task, question)
        chosen = set(truth.sample(range(options), k=truth.randint(1, min(2, options))))
        if options > 1 and self._errs():
            chosen ^= {self.rng.randrange(options)}
            if not chosen:
                chosen = {self.rng.randrange(options)}
        return sorted(chosen)

    def rank(self, task: AnnotationTask, question: Question, options: int) -> list[int]:
        """A ranking's buttons in the order to tap them, first to last."""
        truth = self._truth(task, question)
        order = (
            ScriptedAnswers(truth).rank(question, self._plan(task), task.target.system)
            if isinstance(question.item, RankingItem)
            else []
        )
        if sorted(order) != list(range(options)):  # not the item the message shows
            order = truth.sample(range(options), options)
        if options > 1 and self._errs():  # two neighbours swapped
            i = self.rng.randrange(options - 1)
            order[i], order[i + 1] = order[i + 1], order[i]
        return order

    def write(self, task: AnnotationTask, question: Question, can_skip: bool) -> str | None:
        """A free-text answer (a rationale), or None to skip where the item allows it."""
        if can_skip and self.rng.random() >= RATIONALE_SHARE:
            return None
        comments = self._plan(task).comments
        return self.rng.choice(comments) if comments else _RATIONALE
