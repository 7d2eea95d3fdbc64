"""Who rates which target: every target gets its annotators, nobody twice, the load
balanced, conversations kept together, a third annotator only where the rule fires, the
work of a dropped-out annotator given to others; the same state and seed, the same plan.

The planner is pure: these tests simulate annotators working through their plans over
random jobs (property style: many seeds, each with its own random shape)."""

from __future__ import annotations

import random
from collections import Counter
from dataclasses import replace

import pytest

from bot.core.annotation import (
    AnnotatableSession,
    AnnotationAssignment,
    AnnotationJobRecord,
    AnnotationState,
    AnnotationTarget,
    Annotator,
    AssignmentPlan,
    FirstRating,
)
from bot.core.vocabulary import AnnotationLevel, AnnotationRound, Origin, SessionState
from bot.engine.annotating.assignment import ItemKind, Rules, disagree, next_drop_out, plan
from bot.engine.annotating.targets import build_targets, stratified_sample
from scenarios.jobs import AnnotationJob

EXCHANGE, SESSION = AnnotationLevel.EXCHANGE, AnnotationLevel.SESSION
FIRST, ADJUDICATION = AnnotationRound.FIRST, AnnotationRound.ADJUDICATION
KINDS = {"q.yes": ItemKind.CHOICE, "q.scale": ItemKind.SCALE, "q.why": ItemKind.OTHER}


class Simulation:
    """A job's state as the store would keep it, changed only by plans and annotators."""

    def __init__(self, targets: list[AnnotationTarget], people: list[str], job: str = "j"):
        self.record = AnnotationJobRecord(job, "s", "{}", False)
        self.targets = targets
        self.people = {p: Annotator(p, job, Origin.TELEGRAM) for p in people}
        self.assignments: dict[tuple[str, AnnotationLevel, str], AnnotationAssignment] = {}
        self.ratings: list[FirstRating] = []
        self.version = 0

    def state(self) -> AnnotationState:
        return AnnotationState(
            self.record,
            tuple(self.targets),
            tuple(self.people.values()),
            tuple(self.assignments.values()),
            tuple(r for r in self.ratings if self.is_done(r.target, r.level, r.annotator)),
            self.version,
        )

    def is_done(self, target: str, level: AnnotationLevel, who: str) -> bool:
        found = self.assignments.get((target, level, who))
        return found is not None and found.done_at is not None

    def apply(self, decided: AssignmentPlan, now: float = 0.0) -> None:
        for target, level, who in decided.release:
            del self.assignments[(target, level, who)]
        for target, level, who, round_ in decided.assign:
            assert (target, level, who) not in self.assignments, "assigned twice"
            self.assignments[(target, level, who)] = AnnotationAssignment(
                target, level, who, round_, now
            )
        self.version += 1

    def work(self, who: str, answer: dict[str, int], now: float = 1.0) -> None:
        """``who`` finishes every open target with the same answers."""
        for key, a in list(self.assignments.items()):
            if a.annotator == who and a.done_at is None:
                round_ = a.round
                if round_ is FIRST:
                    self.ratings += [
                        FirstRating(a.target, a.level, who, item, value, None)
                        for item, value in answer.items()
                    ]
                self.assignments[key] = replace(a, done_at=now)


def conversations(sessions: int, turns: int, with_session: bool = True) -> list[AnnotationTarget]:
    found: list[AnnotationTarget] = []
    for s in range(sessions):
        sid = f"s{s}"
        for t in range(1, turns + 1):
            found.append(AnnotationTarget("j", f"{sid}#{t}", EXCHANGE, len(found), sid, t))
        if with_session:
            found.append(AnnotationTarget("j", sid, SESSION, len(found), sid))
    return found


def who_rates(sim: Simulation) -> dict[tuple[str, AnnotationLevel], list[str]]:
    found: dict[tuple[str, AnnotationLevel], list[str]] = {}
    for (target, level, who), _ in sorted(sim.assignments.items()):
        found.setdefault((target, level), []).append(who)
    return found


@pytest.mark.parametrize("seed", range(40))
def test_every_target_gets_its_annotators_balanced_and_never_twice(seed: int) -> None:
    rng = random.Random(seed)
    people = [f"A-{n}" for n in range(rng.randint(1, 7))]
    k = rng.randint(1, len(people))
    targets = conversations(rng.randint(1, 6), rng.randint(1, 5), rng.random() < 0.5)
    sim = Simulation(targets, people)
    rules = Rules(annotators=k, seed=seed)
    sim.apply(plan(sim.state(), rules, KINDS, 0.0))
    rated = who_rates(sim)
    assert set(rated) == {(t.target, t.level) for t in targets}
    assert all(len(set(w)) == len(w) == k for w in rated.values())
    load = Counter(a.annotator for a in sim.assignments.values())
    units = Counter(t.session_id for t in targets)
    biggest = max(units.values())
    assert max(load.values(), default=0) - min(load[p] for p in people) <= biggest
    for sid in units:  # a conversation stays with the same annotators
        assert len({tuple(w) for (t, _), w in rated.items() if t.split("#")[0] == sid}) == 1
    assert plan(sim.state(), rules, KINDS, 0.0) == AssignmentPlan()  # nothing left to do


@pytest.mark.parametrize("seed", range(10))
def test_the_same_state_and_seed_give_the_same_plan(seed: int) -> None:
    sim = Simulation(conversations(5, 3), ["A-1", "A-2", "A-3", "A-4"])
    rules = Rules(annotators=2, seed=seed)
    assert plan(sim.state(), rules, KINDS, 0.0) == plan(sim.state(), rules, KINDS, 0.0)
    plans = {plan(sim.state(), Rules(annotators=2, seed=s), KINDS, 0.0) for s in range(8)}
    assert len(plans) > 1  # the seed does decide who gets what


def test_three_annotators_rate_every_exchange_of_every_conversation() -> None:
    sim = Simulation(conversations(4, 5), ["A-1", "A-2", "A-3"])
    sim.apply(plan(sim.state(), Rules(annotators=3), KINDS, 0.0))
    assert all(sorted(w) == ["A-1", "A-2", "A-3"] for w in who_rates(sim).values())


def test_a_third_annotator_only_where_the_first_two_disagree() -> None:
    rules = Rules(annotators=2, seed=1, choice_differs=True, scale_gap=1, adjudicate=True)
    agreeing = Simulation(conversations(2, 2, with_session=False), ["A-1", "A-2", "A-3"])
    agreeing.apply(plan(agreeing.state(), rules, KINDS, 0.0))
    for who in agreeing.people:
        agreeing.work(who, {"q.yes": 1, "q.scale": 3})
    assert plan(agreeing.state(), rules, KINDS, 2.0) == AssignmentPlan()  # they all agree

    sim = Simulation(conversations(2, 2, with_session=False), ["A-1", "A-2", "A-3"])
    sim.apply(plan(sim.state(), rules, KINDS, 0.0))
    rated = who_rates(sim)
    pair = rated[("s0#1", EXCHANGE)]
    says = {who: 1 for who in sim.people} | {pair[1]: 0}  # pair[1] says no, all others yes
    sim.work(pair[0], {"q.yes": 1, "q.scale": 3})
    assert plan(sim.state(), rules, KINDS, 2.0).assign == ()  # one of two is not done yet
    for who in sim.people:
        sim.work(who, {"q.yes": says[who], "q.scale": 3})
    third = plan(sim.state(), rules, KINDS, 3.0)
    differ = {key for key, w in rated.items() if len({says[x] for x in w}) > 1}
    assert ("s0#1", EXCHANGE) in differ
    assert {(t, lv) for t, lv, _, _ in third.assign} == differ
    assert all(r is ADJUDICATION for *_, r in third.assign)
    assert all(who not in rated[(t, lv)] for t, lv, who, _ in third.assign)
    sim.apply(third)
    assert plan(sim.state(), rules, KINDS, 4.0) == AssignmentPlan()  # asked once


@pytest.mark.parametrize(
    ("one", "two", "rules", "expected"),
    [
        ({"q.yes": 1}, {"q.yes": 0}, Rules(2, choice_differs=True), True),
        ({"q.yes": 1}, {"q.yes": 0}, Rules(2, scale_gap=1), False),  # choices not watched
        ({"q.scale": 2}, {"q.scale": 3}, Rules(2, scale_gap=1), False),
        ({"q.scale": 2}, {"q.scale": 4}, Rules(2, scale_gap=1), True),
        ({"q.scale": 2}, {"q.scale": 3}, Rules(2, scale_gap=0), True),
        ({"q.why": 1}, {"q.why": 2}, Rules(2, True, True, 0), False),  # free text never
        ({"q.scale": 2}, {}, Rules(2, scale_gap=0), False),  # only one answered it
    ],
)
def test_disagreement_follows_the_rule(
    one: dict[str, int], two: dict[str, int], rules: Rules, expected: bool
) -> None:
    def rated(who: str, answers: dict[str, int]) -> dict[str, FirstRating]:
        return {i: FirstRating("t", EXCHANGE, who, i, v, None) for i, v in answers.items()}

    assert disagree([rated("a", one), rated("b", two)], rules, KINDS) is expected


@pytest.mark.parametrize("seed", range(20))
def test_a_dropped_annotators_open_work_goes_to_someone_else(seed: int) -> None:
    rng = random.Random(seed)
    people = [f"A-{n}" for n in range(rng.randint(3, 6))]
    sim = Simulation(conversations(rng.randint(2, 5), rng.randint(1, 4)), people)
    rules = Rules(annotators=2, seed=seed)
    sim.apply(plan(sim.state(), rules, KINDS, 0.0))
    quitter = rng.choice(people)
    finished_before = {k for k, a in sim.assignments.items() if a.annotator == quitter}
    keep = set(rng.sample(sorted(finished_before), len(finished_before) // 2))
    for key in keep:  # the quitter finished some targets first
        sim.assignments[key] = replace(sim.assignments[key], done_at=1.0)
    sim.people[quitter] = replace(sim.people[quitter], dropped=True)
    sim.apply(plan(sim.state(), rules, KINDS, 2.0))
    rated = who_rates(sim)
    assert all(len(w) == 2 and len(set(w)) == 2 for w in rated.values())
    mine = {k for k, a in sim.assignments.items() if a.annotator == quitter}
    assert mine == keep  # the finished ones stay theirs: research data
    assert plan(sim.state(), rules, KINDS, 3.0) == AssignmentPlan()


def test_silence_past_the_deadline_counts_as_dropping_out() -> None:
    sim = Simulation(conversations(2, 2), ["A-1", "A-2", "A-3"])
    rules = Rules(annotators=2, seed=3, drop_out_after=100.0)
    sim.apply(plan(sim.state(), rules, KINDS, 0.0))
    for who in sim.people:  # everyone spoke at 50 s
        sim.people[who] = replace(sim.people[who], last_active_at=50.0)
    assert plan(sim.state(), rules, KINDS, 140.0) == AssignmentPlan()  # 90 s: still in time
    busy = sorted({a.annotator for a in sim.assignments.values()})
    silent = busy[0]
    for who in busy[1:]:
        sim.people[who] = replace(sim.people[who], last_active_at=200.0)
    sim.people["A-3"] = replace(sim.people["A-3"], last_active_at=200.0)
    decided = plan(sim.state(), rules, KINDS, 220.0)
    assert decided.release and {who for _, _, who in decided.release} == {silent}
    assert silent not in {who for _, _, who, _ in decided.assign}


def test_the_next_drop_out_is_when_the_first_silent_annotator_with_open_work_is_out() -> None:
    sim = Simulation(conversations(2, 2), ["A-1", "A-2", "A-3"])
    rules = Rules(annotators=2, seed=3, drop_out_after=100.0)
    assert next_drop_out(sim.state(), rules) is None  # nothing open: nobody can drop out
    sim.apply(plan(sim.state(), rules, KINDS, 10.0), now=10.0)
    busy = sorted({a.annotator for a in sim.assignments.values()})
    assert next_drop_out(sim.state(), rules) == 110.0  # silent since the work was given
    sim.people[busy[0]] = replace(sim.people[busy[0]], last_active_at=60.0)
    others = busy[1:]
    for who in others:
        sim.people[who] = replace(sim.people[who], last_active_at=80.0)
    assert next_drop_out(sim.state(), rules) == 160.0
    assert plan(sim.state(), rules, KINDS, 160.0) == AssignmentPlan()  # at it: still in time
    assert {w for _, _, w in plan(sim.state(), rules, KINDS, 160.5).release} == {busy[0]}
    sim.people[busy[0]] = replace(sim.people[busy[0]], dropped=True)  # out already
    assert next_drop_out(sim.state(), rules) == 180.0
    assert next_drop_out(sim.state(), Rules(annotators=2)) is None  # no deadline in the job


def test_a_release_nobody_can_take_is_not_made_and_nothing_churns_over_time() -> None:
    """Two annotators, two per target: a silent one's targets cannot go to anyone else, so
    they stay theirs; no release, no reassignment, at every moment for hours, and the clock
    is not asked to look again for a deadline that passed (only a newcomer changes it)."""
    sim = Simulation(conversations(2, 2), ["A-1", "A-2"])
    rules = Rules(annotators=2, seed=3, drop_out_after=100.0)
    sim.apply(plan(sim.state(), rules, KINDS, 0.0), now=0.0)
    sim.work("A-2", {"q.scale": 3}, now=5.0)
    sim.people["A-2"] = replace(sim.people["A-2"], last_active_at=5.0)
    held = dict(sim.assignments)
    for now in [50.0 * n for n in range(1, 200)]:  # A-1 silent for almost three hours
        decided = plan(sim.state(), rules, KINDS, now)
        assert decided == AssignmentPlan(), now
        sim.apply(decided, now=now)
        due = next_drop_out(sim.state(), rules, now)
        assert due is None or due >= now, (now, due)
    assert sim.assignments == held
    sim.people["A-3"] = Annotator("A-3", "j", Origin.TELEGRAM)  # someone who can take them
    decided = plan(sim.state(), rules, KINDS, 10_000.0)
    assert {w for _, _, w in decided.release} == {"A-1"}
    assert {w for _, _, w, _ in decided.assign} == {"A-3"}


def test_only_what_someone_else_can_take_is_released() -> None:
    """Two per target; A-2 (invited late) is on one of silent A-1's targets and not on the
    other: only that other one moves to A-2, the first stays with A-1."""
    targets = conversations(2, 1, with_session=False)
    sim = Simulation(targets, ["A-1", "A-2"])
    rules = Rules(annotators=2, seed=3, drop_out_after=100.0)
    for t, who in [("s0#1", "A-1"), ("s1#1", "A-1"), ("s1#1", "A-2")]:
        sim.assignments[(t, EXCHANGE, who)] = AnnotationAssignment(t, EXCHANGE, who, FIRST, 0.0)
    sim.people["A-2"] = replace(sim.people["A-2"], last_active_at=150.0)
    decided = plan(sim.state(), rules, KINDS, 200.0)
    assert decided.release == (("s0#1", EXCHANGE, "A-1"),)
    assert decided.assign == (("s0#1", EXCHANGE, "A-2", FIRST),)
    sim.apply(decided, now=200.0)
    assert plan(sim.state(), rules, KINDS, 400.0) == AssignmentPlan()


def test_nobody_is_asked_when_there_are_not_enough_annotators() -> None:
    sim = Simulation(conversations(1, 2), ["A-1"])
    sim.apply(plan(sim.state(), Rules(annotators=3), KINDS, 0.0))
    assert all(w == ["A-1"] for w in who_rates(sim).values())  # one now, two more later
    sim.people["A-2"] = Annotator("A-2", "j", Origin.TELEGRAM)
    sim.apply(plan(sim.state(), Rules(annotators=3), KINDS, 1.0))
    assert all(w == ["A-1", "A-2"] for w in who_rates(sim).values())


# --- the targets of a job ------------------------------------------------------------------


def stored(
    n: int, systems: tuple[str, ...] = ("a", "b"), turns: int = 2
) -> list[AnnotatableSession]:
    return [
        AnnotatableSession(
            f"p{i}-1",
            "s",
            systems[i % len(systems)],
            "chat",
            SessionState.ENDED,
            tuple(range(1, turns + 1)),
        )
        for i in range(n)
    ]


def make_job(**fields: object) -> AnnotationJob:
    data: dict[str, object] = {
        "id": "j",
        "title": "J",
        "rate": {"exchange": ["q"], "session": ["o"]},
        "annotators": 2,
        "brief": {"guidelines": "Rate."},
    }
    return AnnotationJob.model_validate(data | fields)


def test_targets_are_every_answered_exchange_then_the_session() -> None:
    sessions = [*stored(2), replace(stored(1)[0], session_id="live-1", state=SessionState.DIALOGUE)]
    sessions.append(replace(stored(1)[0], session_id="other-1", study_id="t"))
    targets = build_targets(make_job(), "s", sessions)
    assert [(t.target, t.level.value, t.position) for t in targets] == [
        ("p0-1#1", "exchange", 0),
        ("p0-1#2", "exchange", 1),
        ("p0-1", "session", 2),
        ("p1-1#1", "exchange", 3),
        ("p1-1#2", "exchange", 4),
        ("p1-1", "session", 5),
    ]
    assert (targets[3].system, targets[3].scenario, targets[3].turn) == ("b", "chat", 1)
    more = build_targets(make_job(), "s", stored(3), targets)
    assert [t.target for t in more] == ["p2-1#1", "p2-1#2", "p2-1"]
    assert [t.position for t in more] == [6, 7, 8]
    narrowed = make_job(sessions={"systems": ["a"]}, rate={"session": ["o"]})
    assert [t.target for t in build_targets(narrowed, "s", stored(4))] == ["p0-1", "p2-1"]


@pytest.mark.parametrize("seed", range(20))
def test_a_sample_is_stratified_by_system_and_stable(seed: int) -> None:
    rng = random.Random(seed)
    sessions = stored(rng.randint(4, 30), ("a", "b", "c")[: rng.randint(1, 3)])
    n = rng.randint(1, len(sessions))
    chosen = stratified_sample(sessions, n, seed, set())
    assert len(chosen) == n == len({s.session_id for s in chosen})
    have = Counter(s.system for s in sessions)
    got = Counter(s.system for s in chosen)
    for system, count in have.items():
        assert abs(got[system] - n * count / len(sessions)) < 1
    assert stratified_sample(sessions, n, seed, set()) == chosen
    more = [*sessions, *stored(3, ("a",))[0:0]]
    again = stratified_sample(more, n, seed + 1, {s.session_id for s in chosen})
    assert again == chosen  # sessions already sampled stay sampled
