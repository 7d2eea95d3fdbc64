"""ACUTE-Eval jobs (``kind: pairwise``): the file checked with file, line and field; pairs
of two systems' conversations built balanced or adaptively, the side shown first drawn and
kept in the target; onboarding pairs first for everyone; real pairs only for annotators who
passed them, never a conversation twice, never more than the job allows."""

from __future__ import annotations

import math
import textwrap
from collections import Counter
from dataclasses import replace
from pathlib import Path

import pytest

from bot.core.annotation import (
    AnnotatableSession,
    AnnotationAssignment,
    AnnotationJobRecord,
    AnnotationState,
    AnnotationTarget,
    AnnotationTask,
    Annotator,
    FirstRating,
)
from bot.core.vocabulary import AnnotationLevel, AnnotationRound, Origin, SessionState
from bot.engine.annotating.assignment import onboarding_result, plan, rules_of
from bot.engine.annotating.pairs import (
    adaptive_counts,
    build_pairs,
    known_showing,
    narrowing,
    pair_conversations,
    pair_sessions,
    system_pair,
)
from bot.engine.annotating.targets import build_targets
from questionnaires.models import Questionnaire
from scenarios.jobs import AnnotationJob
from scenarios.loading import StudyError, load_study

PAIR, FIRST = AnnotationLevel.PAIR, AnnotationRound.FIRST

STUDY = """\
id: mini
title: Mini
texts: {welcome: Hi, consent: Agree, declined: Bye}
systems:
  - {type: demo, id: shop-v1, variant: v1}
  - {type: demo, id: shop-v0, variant: v0}
scenarios: [hmd-gift]
annotation_jobs: [duel]
"""

JOB = """\
id: duel
title: Which assistant?
kind: pairwise
rate:
  pair: [acute-eval]
annotators: 1
pairwise:
  pairs_per_system_pair: 3
  onboarding:
    threshold: 0.75
    pairs:
      - id: plain
        better: [{user: Hi, system: "Hello! How can I help?"}]
        worse: [{user: Hi, system: "nope"}]
brief:
  guidelines: Read both conversations.
"""

FORCED = """\
id: forced
title: Forced
items:
  - type: choice
    id: forced.which
    text: Which one?
    options: [{value: 1, label: One}, {value: 2, label: Two}, {value: 3, label: Both}]
"""


def study_with(tmp_path: Path, job: str) -> Path:
    (tmp_path / "jobs").mkdir(exist_ok=True)
    (tmp_path / "jobs" / "duel.yaml").write_text(textwrap.dedent(job))
    study = tmp_path / "study.yaml"
    study.write_text(STUDY)
    return study


def problems(study: Path) -> list[str]:
    with pytest.raises(StudyError) as caught:
        load_study(study)
    return [str(p) for p in caught.value.problems]


def duel(tmp_path: Path, job: str = JOB) -> AnnotationJob:
    return load_study(study_with(tmp_path, job)).jobs["duel"]


def test_a_pairwise_job_loads_with_acute_questions(tmp_path: Path) -> None:
    bundle = load_study(study_with(tmp_path, JOB))
    job = bundle.jobs["duel"]
    assert job.kind == "pairwise" and job.rate.pair == ("acute-eval",)
    assert job.pairing.onboarding is not None and job.pairing.onboarding.threshold == 0.75
    items = [item.text for item in bundle.questionnaires["acute-eval"].items]
    assert items[0] == "Who would you prefer to talk to for a long conversation?"
    assert items[2] == "Which speaker sounds more human?"


@pytest.mark.parametrize(
    ("change", "line", "field", "words"),
    [
        (("kind: pairwise\n", ""), 1, "", "rate.pair needs kind: pairwise"),
        (("pair: [acute-eval]", "session: [acute-eval]"), 1, "",
         "a pairwise job rates pairs only"),
        (("threshold: 0.75", "threshold: 1.5"), 10, "pairwise.onboarding.threshold",
         "less than or equal to 1"),
        (("pairs_per_system_pair: 3", "selection: random"), 8, "pairwise.selection",
         "'balanced' or 'adaptive'"),
        (("pairs_per_system_pair: 3", "pairs_per_system_pair: 0"), 8,
         "pairwise.pairs_per_system_pair", "greater than or equal to 1"),
    ],
)  # fmt: skip
def test_a_broken_pairwise_job_is_told_with_file_line_and_field(
    tmp_path: Path, change: tuple[str, str], line: int, field: str, words: str
) -> None:
    assert change[0] in JOB
    study = study_with(tmp_path, JOB.replace(*change))
    found = problems(study)
    where = f"{tmp_path / 'jobs' / 'duel.yaml'}:{line}: {field}"
    assert any(p.startswith(where) and words in p for p in found), found


def test_a_pair_item_that_is_not_a_forced_choice_is_told(tmp_path: Path) -> None:
    (tmp_path / "questionnaires").mkdir()
    (tmp_path / "questionnaires" / "forced.yaml").write_text(FORCED)
    study = study_with(tmp_path, JOB.replace("pair: [acute-eval]", "pair: [forced]"))
    [problem] = problems(study)
    assert problem.startswith(f"{tmp_path / 'jobs' / 'duel.yaml'}:5: rate.pair[0]: ")
    assert "item 'forced.which' of 'forced' is not a forced choice" in problem


def session(ident: str, system: str, scenario: str = "hmd-gift") -> AnnotatableSession:
    return AnnotatableSession(ident, "mini", system, scenario, SessionState.ENDED, (1, 2))


def logs(per_system: int = 3) -> list[AnnotatableSession]:
    return [
        session(f"S-{system[-2:]}{n}", system)
        for n in range(per_system)
        for system in ("shop-v1", "shop-v0", "shop-v2")
    ]


def test_balanced_pairs_give_every_pair_of_systems_as_many_and_use_conversations_evenly(
    tmp_path: Path,
) -> None:
    job = duel(tmp_path)
    sessions = logs()
    built = build_targets(job, "mini", sessions)
    assert [t.target for t in built[:1]] in (["onboarding:plain:1"], ["onboarding:plain:2"])
    real = built[1:]
    assert [t.position for t in built] == list(range(len(built)))
    system_of = {s.session_id: s.system for s in sessions}
    per_pair = Counter(
        system_pair(*(system_of[s] for s in pair_sessions(t.target) or ())) for t in real
    )
    assert per_pair == {("shop-v0", "shop-v1"): 3, ("shop-v0", "shop-v2"): 3,
                        ("shop-v1", "shop-v2"): 3}  # fmt: skip
    uses = Counter(s for t in real for s in pair_sessions(t.target) or ())
    assert max(uses.values()) - min(uses.values()) <= 1  # every conversation used evenly
    firsts = Counter(system_of[t.session_id or ""] for t in real)
    assert len(firsts) == 3  # the side shown first is drawn, not always the same system
    for t in real:  # the target keeps the first conversation's session and system
        both = pair_sessions(t.target)
        assert both is not None and t.session_id == both[0] and t.system == system_of[both[0]]
    assert build_targets(job, "mini", sessions) == built  # the same seed, the same pairs
    assert build_targets(job, "mini", sessions, built) == []  # building again adds nothing
    more = [*sessions, session("S-new", "shop-v3")]
    added = build_targets(job, "mini", more, built)
    assert len(added) == 9 and all("S-new" in t.target for t in added)
    assert added[0].position == len(built)


def test_pairs_keep_to_one_scenario_where_the_job_says_so(tmp_path: Path) -> None:
    job = duel(tmp_path)
    sessions = [session("a", "shop-v1", "x"), session("b", "shop-v0", "y")]
    assert [t for t in build_pairs(job, sessions) if pair_sessions(t.target)] == []
    loose = duel(tmp_path, JOB.replace("pairwise:\n", "pairwise:\n  same_scenario: false\n"))
    assert len([t for t in build_pairs(loose, sessions) if pair_sessions(t.target)]) == 1


def test_narrowing_is_the_binomial_standard_errors_difference() -> None:
    assert narrowing(0, 0, 0) == math.inf
    p = 4 / 7  # 3 wins, 2 losses, smoothed by one of each
    expected = math.sqrt(p * (1 - p)) * (1 / math.sqrt(5) - 1 / math.sqrt(6))
    assert narrowing(3, 2, 0) == pytest.approx(expected, abs=1e-12)
    assert narrowing(3, 2, 1) < narrowing(3, 2, 0)  # a pair given out counts
    assert narrowing(10, 10, 0) > narrowing(19, 1, 0)  # a close race needs more votes


def test_adaptive_pairs_go_where_one_more_vote_narrows_the_interval_most(tmp_path: Path) -> None:
    job = duel(tmp_path, JOB.replace("pairs_per_system_pair: 3", "selection: adaptive"))
    sessions = logs(per_system=4)
    first = [t for t in build_pairs(job, sessions) if pair_sessions(t.target)]
    system_of = {s.session_id: s.system for s in sessions}

    def systems(t: AnnotationTarget) -> tuple[str, str]:
        both = pair_sessions(t.target) or ("", "")
        return system_pair(system_of[both[0]], system_of[both[1]])

    assert len({systems(t) for t in first}) == 3 == len(first)  # one each to start
    # v0-v1 well known and lopsided, v0-v2 close and little known: v0-v2 gets the next pair
    votes = {("shop-v0", "shop-v1"): (30, 2), ("shop-v0", "shop-v2"): (2, 2),
             ("shop-v1", "shop-v2"): (6, 6)}  # fmt: skip
    existing = build_targets(job, "mini", sessions)
    nothing_open: dict[tuple[str, str], int] = {}
    added = build_pairs(job, sessions, existing, votes, nothing_open)
    assert systems(added[0]) == ("shop-v0", "shop-v2")
    assert len(added) == 3  # at most one open pair per pair of systems
    open_all = {k: 1 for k in votes}
    assert build_pairs(job, sessions, existing, votes, open_all) == []  # wait for votes


def test_adaptive_counts_read_the_first_question_from_the_first_ratings() -> None:
    sessions = [session("a", "shop-v1"), session("b", "shop-v0"), session("c", "shop-v1")]
    targets = [
        AnnotationTarget("j", "a~b", PAIR, 0, "a"),
        AnnotationTarget("j", "b~c", PAIR, 1, "b"),
        AnnotationTarget("j", "c~b", PAIR, 2, "c"),
    ]
    ratings = [
        FirstRating("a~b", PAIR, "A-1", "acute-eval.engagingness", 1, None),  # v1 wins
        FirstRating("b~c", PAIR, "A-2", "acute-eval.engagingness", 1, None),  # v0 wins
        FirstRating("b~c", PAIR, "A-2", "acute-eval.humanness", 2, None),  # other question
    ]
    question = ("acute-eval.engagingness", 1)
    votes, pending = adaptive_counts(question, targets, ["a~b", "b~c"], ratings, sessions)
    assert votes == {("shop-v0", "shop-v1"): (1, 1)}
    assert pending == {("shop-v0", "shop-v1"): 1}


def test_onboarding_conversations_come_from_the_job_on_the_side_drawn(tmp_path: Path) -> None:
    job = duel(tmp_path)
    for side in ("1", "2"):
        target = AnnotationTarget("duel", f"onboarding:plain:{side}", PAIR, 0)
        known = known_showing(job, target.target)
        assert known is not None and known.better_first == (side == "1")
        task = AnnotationTask(target, FIRST, (), {}, 0, 0, 1, 1)
        first, second = pair_conversations(job, task)
        better = first if side == "1" else second
        assert [x.system_text for x in better] == ["Hello! How can I help?"]
    assert known_showing(job, "onboarding:other:1") is None


class Job:
    """A pairwise job's state as the store keeps it, changed by plans and annotators."""

    def __init__(
        self,
        job: AnnotationJob,
        targets: list[AnnotationTarget],
        people: int,
        instruments: list[Questionnaire],
    ) -> None:
        self.job = job
        self.targets = targets
        self.people = [Annotator(f"A-{n}", job.id, Origin.TELEGRAM) for n in range(people)]
        self.assignments: dict[tuple[str, str], AnnotationAssignment] = {}
        self.ratings: list[FirstRating] = []
        self.rules = rules_of(job, instruments)

    def plan(self) -> None:
        state = AnnotationState(
            AnnotationJobRecord(self.job.id, "mini", "{}", True),
            tuple(self.targets),
            tuple(self.people),
            tuple(self.assignments.values()),
            tuple(self.ratings),
            0,
        )
        for target, level, who, round_ in plan(state, self.rules, {}, 0.0).assign:
            assert (target, who) not in self.assignments
            self.assignments[(target, who)] = AnnotationAssignment(target, level, who, round_, 0)

    def open(self, who: str) -> list[str]:
        return [t for (t, w), a in self.assignments.items() if w == who and a.done_at is None]

    def answer(self, who: str, first: bool) -> None:
        """``who`` finishes their open targets, always choosing Speaker 1 (or 2)."""
        for target in self.open(who):
            self.ratings += [
                FirstRating(target, PAIR, who, f"acute-eval.{q}", 1 if first else 2, None)
                for q in ("engagingness", "interestingness", "humanness", "knowledge")
            ]
            old = self.assignments[(target, who)]
            self.assignments[(target, who)] = AnnotationAssignment(
                target, PAIR, who, FIRST, 0, done_at=1.0
            )
            assert old.done_at is None


def test_onboarding_first_then_real_pairs_only_for_those_who_passed(tmp_path: Path) -> None:
    limited = JOB.replace("pairwise:\n", "pairwise:\n  pairs_per_annotator: 2\n")
    bundle = load_study(study_with(tmp_path, limited))
    job = bundle.jobs["duel"]
    sessions = logs(per_system=3)
    acute = [bundle.questionnaires["acute-eval"]]
    sim = Job(job, build_targets(job, "mini", sessions), 3, acute)
    [onboarding] = [t.target for t in sim.targets if t.target.startswith("onboarding:")]
    better_first = onboarding.endswith(":1")
    sim.plan()
    for person in sim.people:  # everyone gets the onboarding pair, and nothing else yet
        assert sim.open(person.annotator_id) == [onboarding]
    sim.answer("A-0", first=better_first)  # the known answer
    sim.answer("A-1", first=not better_first)  # the other one every time
    sim.plan()
    assert len(sim.open("A-0")) == 2  # the job's limit
    assert sim.open("A-1") == []  # below the threshold: no real pairs
    assert sim.open("A-2") == [onboarding]  # not done with onboarding yet
    done = [t for (t, w) in sim.assignments if w == "A-1"]
    result = onboarding_result("A-1", sim.targets, done, sim.ratings, sim.rules)
    assert (result.right, result.answered, result.finished, result.passed) == (0, 4, True, False)
    sim.answer("A-2", first=better_first)
    for _ in range(5):
        sim.plan()
        for who in ("A-0", "A-2"):
            sim.answer(who, first=True)
    for who in ("A-0", "A-2"):
        mine = [t for (t, w) in sim.assignments if w == who and pair_sessions(t)]
        seen = [s for t in mine for s in pair_sessions(t) or ()]
        assert len(mine) == 2 and len(seen) == len(set(seen))  # no conversation twice
    real = [t.target for t in sim.targets if pair_sessions(t.target)]
    given = Counter(t for (t, _) in sim.assignments if pair_sessions(t))
    assert all(given[t] <= 1 for t in real)  # one annotator per pair


def test_a_dropped_annotators_open_pairs_go_to_someone_who_may_take_them(
    tmp_path: Path,
) -> None:
    limited = JOB.replace("pairwise:\n", "pairwise:\n  pairs_per_annotator: 2\n")
    bundle = load_study(study_with(tmp_path, limited))
    job = bundle.jobs["duel"]
    targets = build_targets(job, "mini", logs(per_system=2))
    sim = Job(job, targets, 3, [bundle.questionnaires["acute-eval"]])
    known = next(t.target for t in sim.targets if t.target.startswith("onboarding:"))
    sim.plan()
    sim.answer("A-0", first=known.endswith(":1"))
    sim.plan()
    held = [t for t in sim.open("A-0") if pair_sessions(t)]
    assert len(held) == 2
    sim.people[0] = replace(sim.people[0], dropped=True)
    sim.answer("A-2", first=known.endswith(":1"))  # passes onboarding after the drop-out
    state = AnnotationState(
        AnnotationJobRecord(job.id, "mini", "{}", True),
        tuple(sim.targets), tuple(sim.people), tuple(sim.assignments.values()),
        tuple(sim.ratings), 0,
    )  # fmt: skip
    decided = plan(state, sim.rules, {}, 0.0)
    assert {(t, who) for t, _, who in decided.release} == {(t, "A-0") for t in held}
    given = [t for t, _, who, _ in decided.assign if who == "A-2"]
    assert given[0] == held[0]  # the first open pair goes on, before any newer one
    seen = [s for t in given for s in pair_sessions(t) or ()]
    assert len(given) == 2 and len(seen) == len(set(seen))
    assert not [t for t, _, who, _ in decided.assign if who == "A-0"]


CODED = """\
id: coded
title: Coded
items:
  - type: choice
    id: coded.better
    text: Which speaker is better?
    options: [{value: first, label: Speaker 1}, {value: second, label: Speaker 2}]
"""


def test_a_jobs_own_forced_choice_with_coded_options_is_scored_by_its_codes(
    tmp_path: Path,
) -> None:
    (tmp_path / "questionnaires").mkdir()
    (tmp_path / "questionnaires" / "coded.yaml").write_text(CODED)
    bundle = load_study(study_with(tmp_path, JOB.replace("pair: [acute-eval]", "pair: [coded]")))
    job = bundle.jobs["duel"]
    rules = rules_of(job, [bundle.questionnaires["coded"]])
    assert rules.known == {
        "onboarding:plain:1": {"coded.better": "first"},
        "onboarding:plain:2": {"coded.better": "second"},
    }
    target = AnnotationTarget("duel", "onboarding:plain:2", PAIR, 0)
    said = [FirstRating(target.target, PAIR, "A-1", "coded.better", None, "second")]
    result = onboarding_result("A-1", [target], [target.target], said, rules)
    assert (result.right, result.answered, result.passed) == (1, 1, True)


@pytest.mark.parametrize("together", [False, True])
def test_every_pair_is_given_when_the_annotators_can_hold_them_all(
    tmp_path: Path, together: bool
) -> None:
    """The HMD demo's job: 20 pairs of 6 + 6 conversations, 5 pairs an annotator, 4
    annotators, none seeing a conversation twice. Taken in the pairs' order, the last
    annotators were left pairs that share a conversation with theirs (2 of 20 were never
    rated); given in bundles of pairs without a shared conversation, all 20 are, whether
    the annotators pass onboarding one after another or together."""
    sized = JOB.replace("pairs_per_system_pair: 3", "pairs_per_system_pair: 20").replace(
        "pairwise:\n", "pairwise:\n  pairs_per_annotator: 5\n"
    )
    bundle = load_study(study_with(tmp_path, sized))
    job = bundle.jobs["duel"]
    sim = Job(
        job,
        build_targets(job, "mini", [s for s in logs(per_system=6) if s.system != "shop-v2"]),
        4,
        [bundle.questionnaires["acute-eval"]],
    )
    [onboarding] = [t.target for t in sim.targets if t.target.startswith("onboarding:")]
    real = [t.target for t in sim.targets if pair_sessions(t.target)]
    assert len(real) == 20
    sim.plan()
    for person in sim.people:
        sim.answer(person.annotator_id, first=onboarding.endswith(":1"))
        if not together:
            sim.plan()
    for _ in range(3):
        sim.plan()
        for person in sim.people:
            sim.answer(person.annotator_id, first=True)
    given = Counter(t for (t, _) in sim.assignments if pair_sessions(t))
    assert sorted(given) == sorted(real) and set(given.values()) == {1}
    for person in sim.people:
        mine = [t for (t, w) in sim.assignments if w == person.annotator_id and pair_sessions(t)]
        seen = [s for t in mine for s in pair_sessions(t) or ()]
        assert len(mine) == 5 and len(seen) == len(set(seen))


def test_each_system_of_a_pair_is_shown_first_equally_often(tmp_path: Path) -> None:
    """Counterbalanced, not drawn: within every pair of systems each is shown first as
    often as the other, ± 1, whatever the seed, and still when the job is built again with
    more pairs (a coin per pair once gave 5 to 1 of 6)."""
    base = JOB.replace("pairs_per_system_pair: 3", "pairs_per_system_pair: 6")
    for seed in range(12):
        job = duel(tmp_path, base).model_copy(update={"seed": seed})
        sessions = logs(per_system=6)
        system_of = {s.session_id: s.system for s in sessions}
        built = build_targets(job, "mini", sessions)
        grown = job.model_copy(
            update={"pairing": job.pairing.model_copy(update={"pairs_per_system_pair": 11})}
        )
        built += build_targets(grown, "mini", sessions, built)
        for upto in (built[:12], built):
            shown = Counter()
            for t in upto:
                both = pair_sessions(t.target)
                if both is not None:
                    shown[(system_of[both[0]], system_of[both[1]])] += 1
            for a, b in {system_pair(a, b) for a, b in shown}:
                assert abs(shown[(a, b)] - shown[(b, a)]) <= 1, (seed, a, b, shown)
