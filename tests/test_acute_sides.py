"""The side each annotator is shown a pair in (``bot.engine.annotating.sides``): over many
pairwise jobs (2–4 systems, 1–3 annotators a pair, shares limited or not, annotators joining
at once or one by one, a third annotator where two disagree), every annotator's share of a
pair of systems shows each system first equally often, ± 1, and every plan leaves each pair
of systems as balanced over all showings as the showings given before allow (± 1 for a job
planned at once). A side fixed per pair could not: 3 pairs of X and Y, named 2 to 1, are
2 to 1 for the annotator who rates all three."""

from __future__ import annotations

import random
from collections import Counter
from dataclasses import replace
from itertools import combinations
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from bot.core.annotation import (
    AnnotationAssignment,
    AnnotationJobRecord,
    AnnotationState,
    AnnotationTarget,
    AnnotationTask,
    Annotator,
    AssignmentPlan,
    FirstRating,
    TranscriptExchange,
)
from bot.core.vocabulary import AnnotationLevel, AnnotationRound, Origin, Winner
from bot.engine.annotating.acute import pair_questions, pair_votes
from bot.engine.annotating.assignment import ItemKind, Rules, as_named, onboarding_result, plan
from bot.engine.annotating.pairs import (
    first_choice_wins,
    pair_conversations,
    pair_sessions,
    pair_target,
    shown_name,
)
from bot.engine.annotating.sides import Showing, swapped_gives
from scenarios.loading import load_study
from tests.test_acute_jobs import JOB, duel, study_with

PAIR = AnnotationLevel.PAIR
ITEM = "forced.which"
KINDS = {ITEM: ItemKind.CHOICE}


def _lead(systems: tuple[str, str], swapped: bool) -> int:
    """+1: the system first by name of the two is shown first; -1: the other one."""
    first_shown = systems[1] if swapped else systems[0]
    return 1 if first_shown == min(systems) else -1


class Job:
    """A pairwise job's state as the store keeps it, changed by plans and annotators."""

    def __init__(self, data: st.DataObject) -> None:
        draw = data.draw
        systems = [f"sys{n}" for n in range(draw(st.integers(2, 4), label="systems"))]
        per_system = draw(st.integers(2, 5), label="conversations per system")
        rng = random.Random(draw(st.integers(0, 2**32), label="seed"))
        self.targets: list[AnnotationTarget] = []
        self.systems: dict[str, tuple[str, str]] = {}
        for x, y in combinations(systems, 2):
            candidates = [
                (f"{x}-{i}", f"{y}-{j}") for i in range(per_system) for j in range(per_system)
            ]
            made = draw(st.integers(1, min(8, len(candidates))), label="pairs")
            for a, b in rng.sample(candidates, made):
                (a, sa), (b, sb) = rng.sample([(a, x), (b, y)], 2)  # any side in the name
                name = pair_target(a, b)
                self.systems[name] = (sa, sb)
                position = len(self.targets)
                self.targets.append(AnnotationTarget("duel", name, PAIR, position, a, None, sa))
        rng.shuffle(self.targets)
        self.people = [
            Annotator(f"A-{n}", "duel", Origin.TELEGRAM)
            for n in range(draw(st.integers(2, 6), label="annotators"))
        ]
        self.rules = Rules(
            annotators=draw(st.integers(1, 3), label="annotators a pair"),
            seed=rng.randrange(1000),
            choice_differs=True,
            adjudicate=draw(st.booleans(), label="adjudication"),
            pairwise=True,
            pairs_per_annotator=draw(st.sampled_from([None, 2, 3, 5, 8]), label="share"),
            choices={ITEM: (1, 2)},
        )
        self.present = len(self.people) if draw(st.booleans(), label="at once") else 1
        self.rng = rng
        self.assignments: dict[tuple[str, str], AnnotationAssignment] = {}
        self.ratings: list[FirstRating] = []

    def state(self) -> AnnotationState:
        return AnnotationState(
            AnnotationJobRecord("duel", "mini", "{}", True),
            tuple(self.targets),
            tuple(self.people[: self.present]),
            tuple(self.assignments.values()),
            tuple(self.ratings),
            0,
            pair_systems=self.systems,
        )

    def plan(self) -> AssignmentPlan:
        decided = plan(self.state(), self.rules, KINDS, 0.0)
        swapped = set(decided.swapped)
        assert swapped <= {(t, who) for t, _, who, _ in decided.assign}
        for target, level, who, round_ in decided.assign:
            self.assignments[(target, who)] = AnnotationAssignment(
                target, level, who, round_, 0, swapped=(target, who) in swapped
            )
        return decided

    def work(self) -> None:
        """Everyone finishes their open pairs, choosing a side at random (no position bias)."""
        for (target, who), a in list(self.assignments.items()):
            if a.done_at is None:
                value = self.rng.choice((1, 2))
                self.ratings.append(FirstRating(target, PAIR, who, ITEM, value, None, a.swapped))
                self.assignments[(target, who)] = AnnotationAssignment(
                    target, PAIR, who, a.round, 0, 1.0, a.swapped
                )

    def leads(self) -> tuple[Counter[tuple[frozenset[str], str]], Counter[frozenset[str]]]:
        """Per pair of systems and annotator, and per pair of systems: the showings with the
        system first by name shown first, less those with the other shown first."""
        mine: Counter[tuple[frozenset[str], str]] = Counter()
        overall: Counter[frozenset[str]] = Counter()
        for (target, who), a in self.assignments.items():
            systems = self.systems[target]
            mine[(frozenset(systems), who)] += _lead(systems, a.swapped)
            overall[frozenset(systems)] += _lead(systems, a.swapped)
        return mine, overall


def _reachable(
    before: Counter[tuple[frozenset[str], str]],
    counts: Counter[tuple[frozenset[str], str]],
    key: frozenset[str],
) -> int:
    """The least imbalance a plan can leave a pair of systems with, its earlier showings
    kept and every annotator's share balanced ± 1: an annotator given nothing keeps their
    lead, one whose share is even ends level, one whose share is odd ends one ahead, for
    either system."""
    fixed = free = 0
    for (k, who), lead in before.items():
        if k == key and counts[(key, who)] == 0:
            fixed += lead
    for (k, who), n in counts.items():
        if k == key and n and (before[(key, who)] + n) % 2:
            free += 1
    return max(abs(fixed) - free, (fixed + free) % 2)


@settings(max_examples=150, deadline=None, database=None)  # nothing written beside the suite
@given(st.data())
def test_every_annotators_share_and_every_pair_of_systems_is_balanced(data: st.DataObject) -> None:
    job = Job(data)
    for _ in range(30):
        before, _ = job.leads()
        decided = job.plan()
        mine, overall = job.leads()
        for (key, who), lead in mine.items():
            assert abs(lead) <= 1, (who, sorted(key), lead)
        counts = Counter((frozenset(job.systems[t]), who) for t, _, who, _ in decided.assign)
        for key, lead in overall.items():
            bound = _reachable(before, counts, key)
            assert abs(lead) <= bound, (sorted(key), lead, bound)
        if not decided.assign and job.present == len(job.people):
            break
        job.work()
        job.present = min(job.present + 1, len(job.people))
    given_pairs = Counter(t for t, _ in job.assignments)
    assert given_pairs  # something was rated


def test_one_side_per_pair_would_have_confounded_the_annotator_who_rates_them_all() -> None:
    """Three pairs of X and Y named X first twice: one annotator rating all three is shown
    X first once and Y first twice, two annotators of every pair each ± 1, and the whole
    level on an even count."""
    systems = {"x1~y1": ("X", "Y"), "y2~x2": ("Y", "X"), "x3~y3": ("X", "Y")}
    alone = swapped_gives([], [(t, "A") for t in systems], systems)
    firsts = Counter(systems[t][1] if (t, "A") in alone else systems[t][0] for t in systems)
    assert sorted(firsts.values()) == [1, 2]
    both = swapped_gives([], [(t, who) for who in "AB" for t in systems], systems)
    shown = Counter(
        (who, systems[t][1] if (t, who) in both else systems[t][0]) for t in systems for who in "AB"
    )
    assert shown == {("A", "X"): 2, ("A", "Y"): 1, ("B", "X"): 1, ("B", "Y"): 2}
    assert {t for t, _ in both} == set(systems)  # each pair seen both ways by the two


def test_a_showing_given_before_is_kept_and_counted() -> None:
    systems = {"x1~y1": ("X", "Y"), "x2~y2": ("X", "Y")}
    given = [Showing("x1~y1", "A", False)]
    assert swapped_gives(given, [("x2~y2", "A")], systems) == {("x2~y2", "A")}
    back = {("x1~y1", "B"): True}
    found = swapped_gives([], [("x1~y1", "B"), ("x2~y2", "B")], systems, back)
    assert found == {("x1~y1", "B")}  # given back on its side; the other one balances it


def test_a_pair_shown_swapped_is_read_on_its_side() -> None:
    """A choice given with the pair swapped names the other conversation: read in the
    name's order, two annotators who chose the same conversation from both sides agree,
    and an onboarding answer is right on the side it was shown."""
    assert shown_name("a~b", True) == "b~a" and shown_name("a~b", False) == "a~b"
    assert shown_name("onboarding:plain:1", True) == "onboarding:plain:2"
    assert pair_sessions(shown_name("a~b", True)) == ("b", "a")
    seen_first = FirstRating("a~b", PAIR, "A", ITEM, 1, None)
    seen_second = FirstRating("a~b", PAIR, "B", ITEM, 2, None, swapped=True)
    assert as_named(seen_second, {ITEM: (1, 2)}).value == seen_first.value
    coded = FirstRating("a~b", PAIR, "B", "coded", None, "second", swapped=True)
    assert as_named(coded, {"coded": ("first", "second")}).text == "first"
    target = AnnotationTarget("duel", "onboarding:plain:1", PAIR, 0)
    known = {"onboarding:plain:1": {ITEM: 1}, "onboarding:plain:2": {ITEM: 2}}
    rules = Rules(annotators=1, pairwise=True, threshold=1.0, choices={ITEM: (1, 2)}, known=known)
    better_on_the_right = FirstRating(target.target, PAIR, "B", ITEM, 2, None, swapped=True)
    result = onboarding_result("B", [target], [target.target], [better_on_the_right], rules)
    assert (result.right, result.passed) == (1, True)


def test_two_annotators_who_chose_one_conversation_from_both_sides_agree() -> None:
    systems = {"a~b": ("X", "Y")}
    target = AnnotationTarget("duel", "a~b", PAIR, 0, "a", None, "X")
    people = tuple(Annotator(who, "duel", Origin.TELEGRAM) for who in ("A", "B", "C"))
    state = AnnotationState(
        AnnotationJobRecord("duel", "mini", "{}", True),
        (target,),
        people,
        (
            AnnotationAssignment("a~b", PAIR, "A", AnnotationRound.FIRST, 0, 1.0, False),
            AnnotationAssignment("a~b", PAIR, "B", AnnotationRound.FIRST, 0, 1.0, True),
        ),
        (
            FirstRating("a~b", PAIR, "A", ITEM, 1, None, False),
            FirstRating("a~b", PAIR, "B", ITEM, 2, None, True),
        ),
        0,
        pair_systems=systems,
    )
    rules = Rules(annotators=2, choice_differs=True, adjudicate=True, pairwise=True,
                  choices={ITEM: (1, 2)})  # fmt: skip
    assert plan(state, rules, KINDS, 0.0).assign == ()
    differ = (*state.first_ratings[:1], FirstRating("a~b", PAIR, "B", ITEM, 1, None, True))
    third = plan(
        AnnotationState(
            state.job, state.targets, people, state.assignments, differ, 0, pair_systems=systems
        ),
        rules,
        KINDS,
        0.0,
    )
    assert [who for _, _, who, _ in third.assign] == ["C"]


def test_a_swapped_pair_is_shown_voted_and_counted_on_its_annotators_side(tmp_path: Path) -> None:
    """Swapped, a pair shows its second conversation first, its votes name that one's
    system as side A (``session_a`` its conversation), and adaptive selection credits the
    system the annotator picked, not the one first in the name."""
    job = duel(tmp_path)
    mine = TranscriptExchange(1, 1, "hello", 0.0, None, "from a")
    theirs = TranscriptExchange(2, 1, "hello", 0.0, None, "from b")
    target = AnnotationTarget("duel", "a~b", PAIR, 1, "a", None, "shop-v1", "hmd-gift")
    task = AnnotationTask(target, AnnotationRound.FIRST, (mine,), {}, 0, 0, 1, 1,
                          second=(theirs,), second_system="shop-v0", swapped=True)  # fmt: skip
    assert pair_conversations(job, task) == ((theirs,), (mine,))
    questions = pair_questions([load_study(study_with(tmp_path, JOB)).questionnaires["acute-eval"]])
    item = next(iter(questions))
    [vote] = pair_votes(job, {item: questions[item]}, task, "A-1", {item: "1"})
    assert (vote.system_a, vote.system_b, vote.winner) == ("shop-v0", "shop-v1", Winner.A)
    assert (vote.session_a, vote.session_b, vote.session_id) == ("b", "a", "a~b")
    plain = replace(task, swapped=False)
    [vote] = pair_votes(job, {item: questions[item]}, plain, "A-1", {item: "1"})
    assert (vote.system_a, vote.session_a) == ("shop-v1", "a")
    picked_first = [FirstRating("a~b", PAIR, "A-1", item, 1, None, swapped=True)]
    wins = first_choice_wins(item, 1, picked_first, {"a": "shop-v1", "b": "shop-v0"})
    assert wins == {("shop-v0", "shop-v1"): (1, 0)}  # shop-v0, shown first, won
    onboarding = replace(task, target=AnnotationTarget("duel", "onboarding:plain:1", PAIR, 0))
    first, second = pair_conversations(job, onboarding)  # swapped: the better one second
    assert (
        [x.system_text for x in second]
        == ["Hello! How can I help?"]
        != [x.system_text for x in first]
    )
    [vote] = pair_votes(job, {item: questions[item]}, onboarding, "A-1", {item: "2"})
    assert vote.correct() and vote.expected is Winner.B
