"""Who rates which target of an annotation job: pure planning, no I/O, no clock.

From one ``AnnotationState`` (targets, annotators, assignments, finished first ratings) and
the job's rules, ``plan`` decides what to change, and only that:

- every target gets the job's number of first-round annotators, nobody twice;
- a conversation's targets stay with the same annotators where possible (HRI CUES: each
  annotator rates every exchange of a conversation, in order), and the load is balanced:
  the least loaded annotator is chosen, ties broken in an order drawn from the job's seed;
- an annotator who dropped out (declared, or silent past the job's deadline with targets
  open) gets nothing new, and their open targets go to someone else: a silent one's only
  where someone else can take them (else they stay theirs, never released and handed back
  in a loop), a declared one's in any case (they wait for an annotator);
- where the first annotators of a target all finished and the adjudication rule fires on
  their ratings, one more annotator is asked (once);
- in a pairwise job, every annotator gets every onboarding pair first, and real pairs only
  once they answered the onboarding pairs well enough (``onboarding_result``); nobody gets
  a pair with a conversation they were given before, nor more pairs than the job allows.
  Real pairs go out in bundles (``bundles``): sets of pairs without a shared conversation,
  as even as can be, one bundle to an annotator. Pair by pair in the pairs' order, the last
  annotators were left pairs sharing a conversation with theirs, never rated although the
  annotators could hold every pair. Each pair given is shown on a side of its own
  (``sides``): every annotator's share of a pair of systems shows each first equally often.

The same state and seed always give the same plan. The store applies a plan only while the
job is still as it was read (``AnnotationState.version``).
"""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from enum import StrEnum

from bot.core.annotation import (
    AnnotationState,
    AnnotationTarget,
    Annotator,
    AssignmentPlan,
    FirstRating,
)
from bot.core.vocabulary import AnnotationLevel, AnnotationRound
from bot.engine.annotating.pairs import onboarding_target, pair_sessions
from bot.engine.annotating.sides import Showing, swapped_gives
from questionnaires.models import (
    ChoiceItem,
    MultiChoiceItem,
    Questionnaire,
    ScaleItem,
    ThumbsItem,
    YesNoItem,
)
from scenarios.jobs import AnnotationJob

TargetKey = tuple[str, AnnotationLevel]


class ItemKind(StrEnum):
    """How a disagreement on an item is judged."""

    CHOICE = "choice"  # yes/no, thumbs, choice: any difference
    SCALE = "scale"  # points apart
    OTHER = "other"  # free text: never a disagreement


@dataclass(frozen=True)
class Rules:
    """What planning needs of a job."""

    annotators: int
    seed: int = 0
    choice_differs: bool = False
    scale_gap: int | None = None  # ratings more than this many points apart disagree
    adjudicate: bool = False
    drop_out_after: float | None = None
    pairwise: bool = False
    known: Mapping[str, Mapping[str, int | str]] = field(default_factory=dict)
    """Onboarding target -> item -> the known answer's value."""
    threshold: float = 0.0
    pairs_per_annotator: int | None = None
    choices: Mapping[str, tuple[int | str, ...]] = field(default_factory=dict)
    """A pairwise job's forced choices: item -> its values, the first conversation's first
    (a rating given on the other side of the pair is read as ``as_named``)."""


def rules_of(job: AnnotationJob, questionnaires: Iterable[Questionnaire] = ()) -> Rules:
    """What planning needs of a job; a pairwise job's onboarding answers come from its
    instruments' options (``questionnaires``)."""
    when = job.adjudication.third_annotator_when if job.adjudication else None
    pairing = job.pairing
    return Rules(
        annotators=job.annotators,
        seed=job.seed,
        choice_differs=bool(when and when.choice_differs),
        scale_gap=None if when is None else when.scale_differs_by_more_than,
        adjudicate=when is not None,
        drop_out_after=job.drop_out_after,
        pairwise=job.kind == "pairwise",
        known=known_answers(job, questionnaires) if job.kind == "pairwise" else {},
        threshold=pairing.onboarding.threshold if pairing.onboarding else 0.0,
        pairs_per_annotator=pairing.pairs_per_annotator,
        choices=forced_choices(q for q in questionnaires if q.id in job.rate.pair)
        if job.kind == "pairwise"
        else {},
    )


def forced_choices(questionnaires: Iterable[Questionnaire]) -> dict[str, tuple[int | str, ...]]:
    """Each forced-choice item of a pair's instruments: its two values, the first
    conversation's speaker's first."""
    return {
        item.id: tuple(value for value, _ in item.choices())
        for questionnaire in questionnaires
        for item in questionnaire.items
        if isinstance(item, ChoiceItem)
    }


def known_answers(
    job: AnnotationJob, questionnaires: Iterable[Questionnaire]
) -> dict[str, dict[str, int | str]]:
    """Per onboarding target, the value of every forced choice that picks the better
    conversation's speaker, on the side it is shown."""
    onboarding = job.pairing.onboarding
    if onboarding is None:
        return {}
    choices = forced_choices(q for q in questionnaires if q.id in job.rate.pair)
    known: dict[str, dict[str, int | str]] = {}
    for pair in onboarding.pairs:
        for better_first in (True, False):
            side = 0 if better_first else 1
            known[onboarding_target(pair, better_first)] = {
                item: values[side] for item, values in choices.items()
            }
    return known


@dataclass(frozen=True)
class OnboardingResult:
    """How an annotator did on the onboarding pairs: answers right of answers given, and
    whether they finished them all and passed."""

    right: int
    answered: int
    finished: bool
    passed: bool


def onboarding_result(
    annotator: str,
    targets: Sequence[AnnotationTarget],
    done: Iterable[str],
    ratings: Iterable[FirstRating],
    rules: Rules,
) -> OnboardingResult:
    """An annotator's onboarding: every onboarding target of the job finished (``done``:
    the targets they finished), and the share of forced choices answered as known at least
    the job's threshold. A job without onboarding passes everyone."""
    onboarding = {t.target for t in targets if t.target in rules.known}
    finished = onboarding <= set(done)
    right = answered = 0
    for r in ratings:
        wanted = rules.known.get(r.target, {}).get(r.item_id)
        given = _answer(as_named(r, rules.choices))
        if r.annotator != annotator or wanted is None or given is None:
            continue
        answered += 1
        right += int(str(given) == str(wanted))  # an option's value: a number or a code
    if not onboarding:
        return OnboardingResult(0, 0, True, True)
    passed = finished and answered > 0 and right / answered >= rules.threshold
    return OnboardingResult(right, answered, finished, passed)


def item_kinds(questionnaires: Iterable[Questionnaire]) -> dict[str, ItemKind]:
    kinds: dict[str, ItemKind] = {}
    for questionnaire in questionnaires:
        for item in questionnaire.items:
            if isinstance(item, ScaleItem):
                kinds[item.id] = ItemKind.SCALE
            elif isinstance(item, YesNoItem | ThumbsItem | ChoiceItem | MultiChoiceItem):
                kinds[item.id] = ItemKind.CHOICE
            else:
                kinds[item.id] = ItemKind.OTHER
    return kinds


def _answer(rating: FirstRating) -> object:
    return rating.value if rating.value is not None else rating.text


def as_named(rating: FirstRating, choices: Mapping[str, tuple[int | str, ...]]) -> FirstRating:
    """A pair's rating as if it was shown in its name's order: a forced choice given with
    the pair swapped picks the other value (the same conversation, on the other side)."""
    values = choices.get(rating.item_id, ())
    if not rating.swapped or len(values) != 2:
        return rating
    given = str(_answer(rating))
    if given not in (str(values[0]), str(values[1])):
        return rating
    other = values[1] if given == str(values[0]) else values[0]
    if rating.value is not None and isinstance(other, int):
        return replace(rating, value=other, swapped=False)
    return replace(rating, text=str(other), swapped=False)


def disagree(
    first: Sequence[Mapping[str, FirstRating]], rules: Rules, kinds: Mapping[str, ItemKind]
) -> bool:
    """Whether the first annotators' ratings of one target (one mapping item -> rating per
    annotator) call for adjudication: any two of them differ on a choice item, or are more
    than ``scale_gap`` points apart on a scale item. An item only one of them answered
    (skip logic) is judged by the item that decided it."""
    for i, mine in enumerate(first):
        for theirs in first[i + 1 :]:
            for item_id in mine.keys() & theirs.keys():
                a, b = mine[item_id], theirs[item_id]
                kind = kinds.get(item_id, ItemKind.OTHER)
                if kind is ItemKind.CHOICE and rules.choice_differs and _answer(a) != _answer(b):
                    return True
                if (
                    kind is ItemKind.SCALE
                    and rules.scale_gap is not None
                    and a.value is not None
                    and b.value is not None
                    and abs(a.value - b.value) > rules.scale_gap
                ):
                    return True
    return False


def out_of_work(annotator: Annotator, open_since: float | None, rules: Rules, now: float) -> bool:
    """Dropped out: declared, or silent past the deadline while holding open targets
    (silence counts from their last activity, or from when the open work was given)."""
    if annotator.dropped:
        return True
    deadline = _deadline(annotator, open_since, rules)
    return deadline is not None and now > deadline


def _deadline(annotator: Annotator, open_since: float | None, rules: Rules) -> float | None:
    """When a silent annotator holding open targets counts as dropped out (just after)."""
    if rules.drop_out_after is None or open_since is None:
        return None
    return max(annotator.last_active_at or 0.0, open_since) + rules.drop_out_after


def _open_since(state: AnnotationState) -> dict[str, float]:
    """Per annotator with open targets: when the oldest of them was given."""
    since: dict[str, float] = {}
    for a in state.assignments:
        if a.done_at is None:
            since[a.annotator] = min(since.get(a.annotator, a.assigned_at), a.assigned_at)
    return since


def next_drop_out(state: AnnotationState, rules: Rules, now: float | None = None) -> float | None:
    """The earliest moment an annotator still counted in, silent with open targets,
    drops out (the job is to be planned again just after it); None: nobody can. With
    ``now``, a deadline already passed does not count: the plan made at ``now`` released
    what someone else could take, and the rest waits for a newcomer (whose invitation or
    joining plans the job again), not for the clock."""
    since = _open_since(state)
    deadlines = [
        _deadline(a, since.get(a.annotator_id), rules) for a in state.annotators if not a.dropped
    ]
    return min((d for d in deadlines if d is not None and (now is None or d >= now)), default=None)


def _unit(target: AnnotationTarget) -> str:
    """What stays together with one annotator: a conversation (or one outside target, or a
    pair: two pairs sharing a conversation never go to one annotator)."""
    if target.level is AnnotationLevel.PAIR:
        return target.target
    return target.session_id or target.target


def _conversations(target: str) -> tuple[str, ...]:
    return pair_sessions(target) or ()


def bundles(pairs: Sequence[str], size: int | None) -> dict[str, int]:
    """Each pair's bundle: no two pairs of a bundle share a conversation, and bundles hold
    at most ``size`` pairs, as evenly as can be. An edge colouring of the conversations'
    graph (pairs are its edges) with k = max(most pairs of one conversation, pairs / size)
    colours: each pair takes a colour free at both its conversations, after swapping two
    colours along an alternating path where none is (Kőnig's proof, which never fails
    when the graph is bipartite, as the pairs of two systems are); then the largest and
    smallest colours swap along a path with more of the largest until they differ by at
    most one (de Werra). A pair no swap can colour opens a colour of its own."""
    ends = {pair: _conversations(pair) for pair in pairs}
    real = [p for p in pairs if len(ends[p]) == 2]
    if not real:
        return {}
    degree: dict[str, int] = {}
    for pair in real:
        for end in ends[pair]:
            degree[end] = degree.get(end, 0) + 1
    colours = max(max(degree.values()), -(-len(real) // (size or len(real))))
    at: dict[str, dict[int, str]] = {}  # conversation -> colour -> its pair
    colour: dict[str, int] = {}

    count: Counter[int] = Counter()

    def paint(pair: str, c: int) -> None:
        colour[pair] = c
        count[c] += 1
        for end in ends[pair]:
            at.setdefault(end, {})[c] = pair

    def unpaint(pair: str) -> None:
        for end in ends[pair]:
            del at[end][colour[pair]]
        count[colour[pair]] -= 1
        del colour[pair]

    def path(start: str, a: int, b: int) -> list[str]:
        """The pairs of the a/b alternating path from ``start``, beginning with colour a."""
        found, here, want = [], start, a
        while (pair := at.get(here, {}).get(want)) is not None and pair not in found:
            found.append(pair)
            here = next(e for e in ends[pair] if e != here)
            want = b if want == a else a
        return found

    def swap(chain: list[str], a: int, b: int) -> None:
        old = {pair: colour[pair] for pair in chain}
        for pair in chain:
            unpaint(pair)
        for pair in chain:
            paint(pair, b if old[pair] == a else a)

    for pair in real:
        u, v = ends[pair]
        at_u, at_v = at.get(u, {}), at.get(v, {})
        free_u = [c for c in range(colours) if c not in at_u]
        free_v = [c for c in range(colours) if c not in at_v]
        both = [c for c in free_u if c not in at_v]
        if both:  # the emptiest such colour: the bundles stay even as they fill
            paint(pair, min(both, key=lambda c: (count[c], c)))
            continue
        if free_u and free_v:
            a, b = free_u[0], free_v[0]  # a is taken at v, b at u
            chain = path(v, a, b)
            if not any(u in ends[p] for p in chain):
                swap(chain, a, b)
                paint(pair, a)
                continue
        paint(pair, colours)
        colours += 1
    for _ in range(len(real)):
        big = max(range(colours), key=lambda c: (count[c], -c))
        small = min(range(colours), key=lambda c: (count[c], c))
        if count[big] - count[small] <= 1:
            break
        for start in (e for p in real if colour[p] == big for e in ends[p]):
            if small in at.get(start, {}):
                continue  # not an end of a big/small path
            chain = path(start, big, small)
            if sum(colour[p] == big for p in chain) > sum(colour[p] == small for p in chain):
                swap(chain, big, small)
                break
        else:
            break
    order = {p: n for n, p in enumerate(real)}
    earliest: dict[int, int] = {}
    for pair in reversed(real):
        earliest[colour[pair]] = order[pair]
    first = sorted(range(colours), key=lambda c: earliest.get(c, len(real)))
    rank = {c: n for n, c in enumerate(first)}
    return {pair: rank[colour[pair]] for pair in real}


class _Planner:
    def __init__(self, state: AnnotationState, rules: Rules, now: float) -> None:
        self.state, self.rules = state, rules
        ids = sorted(a.annotator_id for a in state.annotators)
        random.Random(f"{rules.seed}:{state.job.job}").shuffle(ids)
        self.tie = {annotator: n for n, annotator in enumerate(ids)}
        self.on: dict[TargetKey, dict[str, AnnotationRound]] = {}
        self.done: dict[TargetKey, set[str]] = {}
        self.load: dict[str, int] = dict.fromkeys(ids, 0)
        for a in state.assignments:
            key = (a.target, a.level)
            self.on.setdefault(key, {})[a.annotator] = a.round
            self.load[a.annotator] = self.load.get(a.annotator, 0) + 1
            if a.done_at is not None:
                self.done.setdefault(key, set()).add(a.annotator)
        open_since = _open_since(state)
        self.gone = {
            a.annotator_id
            for a in state.annotators
            if out_of_work(a, open_since.get(a.annotator_id), rules, now)
        }
        self.assign: list[tuple[str, AnnotationLevel, str, AnnotationRound]] = []
        self.release: list[tuple[str, AnnotationLevel, str]] = []
        self.bundle: dict[str, int] = {}
        if rules.pairwise:
            real = [t.target for t in state.targets if t.target not in rules.known]
            self.bundle = bundles(real, rules.pairs_per_annotator)
        self.unit_people: dict[str, set[str]] = {}
        for target in state.targets:
            self.unit_people.setdefault(self.unit(target), set()).update(
                self.on.get((target.target, target.level), {})
            )
        self.seen: dict[str, set[str]] = {}  # annotator -> conversations of pairs given
        self.pairs: dict[str, int] = {}  # annotator -> real pairs given
        self.qualified: set[str] = set(ids)
        if rules.pairwise:
            self._pairwise_init()

    def unit(self, target: AnnotationTarget) -> str:
        """What stays with one annotator: a real pair's bundle, else ``_unit``."""
        bundle = self.bundle.get(target.target)
        return _unit(target) if bundle is None else f"bundle {bundle}"

    def in_order(self) -> list[AnnotationTarget]:
        """The targets as planned: bundle by bundle, each in the targets' order."""
        targets = list(self.state.targets)
        return sorted(targets, key=lambda t: self.bundle.get(t.target, -1))

    def _pairwise_init(self) -> None:
        for a in self.state.assignments:
            sessions = _conversations(a.target)
            if sessions:
                self.seen.setdefault(a.annotator, set()).update(sessions)
                self.pairs[a.annotator] = self.pairs.get(a.annotator, 0) + 1
        finished: dict[str, list[str]] = {}
        for (target, _), people in self.done.items():
            for who in people:
                finished.setdefault(who, []).append(target)
        self.qualified = {
            who
            for who in self.tie
            if onboarding_result(
                who,
                self.state.targets,
                finished.get(who, []),
                self.state.first_ratings,
                self.rules,
            ).passed
        }

    def may_take(self, target: AnnotationTarget, who: str) -> bool:
        """Pairwise: onboarding pairs to everyone; a real pair only to a qualified
        annotator under the job's limit who was given none of its conversations before."""
        if not self.rules.pairwise or target.target in self.rules.known:
            return True
        sessions = _conversations(target.target)
        limit = self.rules.pairs_per_annotator
        return (
            who in self.qualified
            and (limit is None or self.pairs.get(who, 0) < limit)
            and not (set(sessions) & self.seen.get(who, set()))
        )

    def release_the_gone(self) -> None:
        """Open targets of the gone go to others. A silent annotator's target is released
        only when someone else can take it: else it would come straight back to them at
        the next plan, again and again (they keep it, and may still finish it). A declared
        drop-out's targets are released anyway and wait for an annotator."""
        declared = {a.annotator_id for a in self.state.annotators if a.dropped}
        for a in self.state.assignments:
            if a.annotator in self.gone and a.done_at is None:
                if a.annotator not in declared and not self.someone_else(a.target, a.level):
                    continue
                self.release.append((a.target, a.level, a.annotator))
                del self.on[(a.target, a.level)][a.annotator]
                self.load[a.annotator] -= 1

    def someone_else(self, target: str, level: AnnotationLevel) -> bool:
        """Whether an annotator still in, and not on the target yet, could take it."""
        taken = self.on.get((target, level), {})
        return any(who not in self.gone and who not in taken for who in self.tie)

    def choose(self, target: AnnotationTarget, prefer: set[str]) -> str | None:
        taken = self.on.get((target.target, target.level), {})
        free = [
            who
            for who in self.tie
            if who not in self.gone and who not in taken and self.may_take(target, who)
        ]
        if not free:
            return None
        return min(free, key=lambda who: (who not in prefer, self.load[who], self.tie[who]))

    def give(self, target: AnnotationTarget, who: str, round_: AnnotationRound) -> None:
        self.on.setdefault((target.target, target.level), {})[who] = round_
        self.load[who] += 1
        self.unit_people.setdefault(self.unit(target), set()).add(who)
        self.assign.append((target.target, target.level, who, round_))
        sessions = _conversations(target.target)
        if sessions:
            self.seen.setdefault(who, set()).update(sessions)
            self.pairs[who] = self.pairs.get(who, 0) + 1

    def first_round(self) -> None:
        for target in self.in_order():
            taken = self.on.get((target.target, target.level), {})
            firsts = sum(1 for r in taken.values() if r is AnnotationRound.FIRST)
            wanted = self.rules.annotators
            if target.target in self.rules.known:  # an onboarding pair: everyone's
                wanted = len(self.tie)
            for _ in range(wanted - firsts):
                who = self.choose(target, self.unit_people.get(self.unit(target), set()))
                if who is None:
                    break
                self.give(target, who, AnnotationRound.FIRST)

    def adjudication(self, kinds: Mapping[str, ItemKind]) -> None:
        if not self.rules.adjudicate:
            return
        ratings: dict[TargetKey, dict[str, dict[str, FirstRating]]] = {}
        for r in self.state.first_ratings:
            theirs = ratings.setdefault((r.target, r.level), {}).setdefault(r.annotator, {})
            theirs[r.item_id] = as_named(r, self.rules.choices)  # a pair seen both ways agrees
        for target in self.state.targets:
            key = (target.target, target.level)
            taken = self.on.get(key, {})
            if AnnotationRound.ADJUDICATION in taken.values():
                continue
            firsts = [w for w, r in taken.items() if r is AnnotationRound.FIRST]
            finished = [w for w in firsts if w in self.done.get(key, set())]
            if len(firsts) < self.rules.annotators or len(finished) < len(firsts):
                continue
            rated = [ratings.get(key, {}).get(w, {}) for w in sorted(finished)]
            if len(rated) >= 2 and disagree(rated, self.rules, kinds):
                who = self.choose(target, set())
                if who is not None:
                    self.give(target, who, AnnotationRound.ADJUDICATION)

    def sides(self) -> frozenset[tuple[str, str]]:
        """The new pair assignments to show swapped (``sides``), the pairs taken in the order
        each annotator works through them; a showing released now counts no more."""
        released = {(target, who) for target, _, who in self.release}
        given = [
            Showing(a.target, a.annotator, a.swapped)
            for a in self.state.assignments
            if (a.target, a.annotator) not in released
        ]
        position = {t.target: t.position for t in self.state.targets}
        new = sorted(
            (
                (target, who)
                for target, level, who, _ in self.assign
                if level is AnnotationLevel.PAIR
            ),
            key=lambda give: position.get(give[0], 0),
        )
        return swapped_gives(given, new, self.state.pair_systems, self.state.swapped_before)


def plan(
    state: AnnotationState, rules: Rules, kinds: Mapping[str, ItemKind], now: float
) -> AssignmentPlan:
    """What to change so that every target has its annotators (see the module's rules)."""
    planner = _Planner(state, rules, now)
    planner.release_the_gone()
    planner.first_round()
    planner.adjudication(kinds)
    swapped = planner.sides()
    return AssignmentPlan(
        assign=tuple(planner.assign),
        release=tuple(planner.release),
        swapped=tuple((t, who) for t, _, who, _ in planner.assign if (t, who) in swapped),
    )
