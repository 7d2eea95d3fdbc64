"""The pairs of a pairwise (ACUTE-Eval) job: pure, no I/O.

A pair is two stored conversations of two systems, shown side by side; its target's name
orders them (``FIRST~SECOND``). Names are counterbalanced within each pair of systems: the
system named first less often so far goes first, a coin from the job's seed deciding
between equals, so each is first as often as the other, ± 1 (a coin per pair confounds
position with system: 6 pairs once split 5 to 1). Which one an annotator is shown first is
their assignment's (``sides``: each annotator's share balanced too); ``shown_name`` is the
name in the order they see.
The target's session is the first conversation (an erasure of either one takes the pair
with it: ``bot/store``). Onboarding pairs, written in the job file with a
known answer, come before every real pair (``onboarding:ID:1`` when the better conversation
is shown first, ``:2`` when second).

Selection is balanced (every pair of systems gets as many pairs, each conversation used as
evenly as can be) or adaptive (the next pair goes to the pair of systems whose preference
interval one more vote would narrow most, Chatbot Arena's active sampling; ties broken in an
order drawn from the seed). Building again only adds pairs, after those that exist.
"""

from __future__ import annotations

import math
import random
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from itertools import combinations

from bot.core.annotation import (
    AnnotatableSession,
    AnnotationTarget,
    AnnotationTask,
    FirstRating,
    TranscriptExchange,
)
from bot.core.vocabulary import AnnotationLevel
from scenarios.jobs import AnnotationJob, KnownExchange, KnownPair

PAIR_SEPARATOR = "~"
ONBOARDING_PREFIX = "onboarding:"

SystemPair = tuple[str, str]


def pair_target(first: str, second: str) -> str:
    """The target name of a pair: the session shown first, then the other."""
    return f"{first}{PAIR_SEPARATOR}{second}"


def pair_sessions(target: str) -> tuple[str, str] | None:
    """The two sessions of a real pair's target name (first shown first); None otherwise."""
    if target.startswith(ONBOARDING_PREFIX) or target.count(PAIR_SEPARATOR) != 1:
        return None
    first, second = target.split(PAIR_SEPARATOR)
    return (first, second) if first and second else None


def shown_name(target: str, swapped: bool) -> str:
    """A pair's target name in the order one annotator is shown it: swapped, a real pair's
    conversations the other way round, an onboarding pair's better one on the other side."""
    if not swapped:
        return target
    both = pair_sessions(target)
    if both is not None:
        return pair_target(both[1], both[0])
    head, _, side = target.rpartition(":")
    if target.startswith(ONBOARDING_PREFIX) and side in ("1", "2"):
        return f"{head}:{'2' if side == '1' else '1'}"
    return target


def shown_systems(task: AnnotationTask) -> tuple[str | None, str | None]:
    """The systems of a pair's conversations in the order the annotator is shown them."""
    named = (task.target.system, task.second_system)
    return (named[1], named[0]) if task.swapped else named


def onboarding_target(pair: KnownPair, better_first: bool) -> str:
    return f"{ONBOARDING_PREFIX}{pair.id}:{1 if better_first else 2}"


@dataclass(frozen=True)
class KnownShowing:
    """An onboarding target read back: its pair, and the side the known answer is on."""

    pair: KnownPair
    better_first: bool


def known_showing(job: AnnotationJob, target: str) -> KnownShowing | None:
    """The onboarding pair a target name shows (None: a real pair, or not of this job)."""
    onboarding = job.pairing.onboarding
    if onboarding is None or not target.startswith(ONBOARDING_PREFIX):
        return None
    ident, _, side = target[len(ONBOARDING_PREFIX) :].rpartition(":")
    for pair in onboarding.pairs:
        if pair.id == ident and side in ("1", "2"):
            return KnownShowing(pair, side == "1")
    return None


def system_pair(a: str, b: str) -> SystemPair:
    """A pair of systems, in one order whichever was shown first."""
    return (a, b) if a <= b else (b, a)


def _onboarding(job: AnnotationJob, existing: set[str], position: int) -> list[AnnotationTarget]:
    onboarding = job.pairing.onboarding
    if onboarding is None:
        return []
    have = {name.rpartition(":")[0] for name in existing if name.startswith(ONBOARDING_PREFIX)}
    added = []
    for pair in onboarding.pairs:
        if f"{ONBOARDING_PREFIX}{pair.id}" in have:
            continue
        better_first = random.Random(f"{job.seed}:onboarding:{pair.id}").random() < 0.5
        added.append(
            AnnotationTarget(
                job=job.id,
                target=onboarding_target(pair, better_first),
                level=AnnotationLevel.PAIR,
                position=position,
            )
        )
        position += 1
    return added


@dataclass
class _Pool:
    """The candidate pairs of one pair of systems, and how often each conversation is used."""

    candidates: list[tuple[AnnotatableSession, AnnotatableSession]]
    taken: set[frozenset[str]]
    uses: dict[str, int]
    made: int = 0  # pairs of these systems stored or added
    first: dict[str, int] = field(default_factory=dict)
    """Per system: how often it is shown first in the pairs stored or added."""

    def draw(self, rng: random.Random) -> tuple[AnnotatableSession, AnnotatableSession] | None:
        """The candidate whose conversations are used least (the first in the drawn order
        among equals), never a pair of conversations already paired."""
        best: tuple[AnnotatableSession, AnnotatableSession] | None = None
        best_use = math.inf
        for x, y in self.candidates:
            if frozenset((x.session_id, y.session_id)) in self.taken:
                continue
            use = self.uses.get(x.session_id, 0) + self.uses.get(y.session_id, 0)
            if use < best_use:
                best, best_use = (x, y), use
        if best is None:
            return None
        x, y = best
        self.taken.add(frozenset((x.session_id, y.session_id)))
        self.uses[x.session_id] = self.uses.get(x.session_id, 0) + 1
        self.uses[y.session_id] = self.uses.get(y.session_id, 0) + 1
        self.made += 1
        # counterbalanced: the system shown first less often goes first (a coin on a tie)
        ahead = self.first.get(x.system, 0) - self.first.get(y.system, 0)
        if ahead > 0 or (ahead == 0 and rng.random() >= 0.5):
            x, y = y, x
        self.first[x.system] = self.first.get(x.system, 0) + 1
        return x, y


def _pools(
    job: AnnotationJob,
    sessions: Sequence[AnnotatableSession],
    existing: Sequence[AnnotationTarget],
) -> dict[SystemPair, _Pool]:
    by_system: dict[str, list[AnnotatableSession]] = {}
    for s in sorted(sessions, key=lambda s: s.session_id):
        if s.turns:
            by_system.setdefault(s.system, []).append(s)
    system_of = {s.session_id: s.system for s in sessions}
    pools: dict[SystemPair, _Pool] = {}
    for x, y in combinations(sorted(by_system), 2):
        candidates = [
            (a, b)
            for a in by_system[x]
            for b in by_system[y]
            if not job.pairing.same_scenario or a.scenario == b.scenario
        ]
        random.Random(f"{job.seed}:{x}:{y}").shuffle(candidates)
        pools[(x, y)] = _Pool(candidates, set(), {})
    for target in existing:
        both = pair_sessions(target.target)
        if both is None or not all(name in system_of for name in both):
            continue
        key = system_pair(system_of[both[0]], system_of[both[1]])
        pool = pools.get(key)
        if pool is None:
            continue
        pool.taken.add(frozenset(both))
        for name in both:
            pool.uses[name] = pool.uses.get(name, 0) + 1
        pool.made += 1
        pool.first[system_of[both[0]]] = pool.first.get(system_of[both[0]], 0) + 1
    return pools


def narrowing(wins: int, losses: int, pending: int) -> float:
    """How much one more vote would narrow the interval of a pair of systems' preference
    (the binomial standard error, ``sqrt(p(1-p)/n)``, at ``n`` and at ``n + 1``, with the
    proportion smoothed by one win and one loss); infinite for a pair never compared.
    Pairs given out but not voted on yet count as votes, so one pair of systems is not
    given every open pair at once."""
    n = wins + losses + pending
    if n == 0:
        return math.inf
    p = (wins + 1) / (wins + losses + 2)
    spread = math.sqrt(p * (1 - p))
    return spread * (1 / math.sqrt(n) - 1 / math.sqrt(n + 1))


def build_pairs(
    job: AnnotationJob,
    sessions: Sequence[AnnotatableSession],
    existing: Sequence[AnnotationTarget] = (),
    votes: Mapping[SystemPair, tuple[int, int]] | None = None,
    pending: Mapping[SystemPair, int] | None = None,
) -> list[AnnotationTarget]:
    """The pair targets to add (onboarding first, then real pairs), positioned after
    ``existing``. ``sessions``: the conversations the job chose. Adaptive selection reads
    ``votes`` (per pair of systems, the first system's wins and losses so far) and
    ``pending`` (pairs given out and not voted on yet) and adds pairs only while fewer
    than one per pair of systems are pending."""
    position = max((t.position for t in existing), default=-1) + 1
    added = _onboarding(job, {t.target for t in existing}, position)
    position += len(added)
    pools = _pools(job, sessions, existing)
    if not pools:
        return added
    settings = job.pairing
    rng = random.Random(f"{job.seed}:{job.id}:{sum(p.made for p in pools.values())}")
    picks: list[SystemPair] = []
    if settings.selection == "balanced":
        picks = _balanced(pools, settings.pairs_per_system_pair)
    else:
        picks = _adaptive(pools, settings.pairs_per_system_pair, votes or {}, pending or {}, rng)
    for key in picks:
        drawn = pools[key].draw(rng)
        if drawn is None:
            continue
        first, second = drawn
        added.append(
            AnnotationTarget(
                job=job.id,
                target=pair_target(first.session_id, second.session_id),
                level=AnnotationLevel.PAIR,
                position=position,
                session_id=first.session_id,
                system=first.system,
                scenario=first.scenario,
            )
        )
        position += 1
    return added


def _balanced(pools: Mapping[SystemPair, _Pool], per_pair: int) -> list[SystemPair]:
    """Round by round, one more pair for every pair of systems still short of ``per_pair``."""
    picks: list[SystemPair] = []
    for round_ in range(per_pair):
        picks += [key for key, pool in pools.items() if pool.made <= round_]
    return picks


def _adaptive(
    pools: Mapping[SystemPair, _Pool],
    per_pair: int,
    votes: Mapping[SystemPair, tuple[int, int]],
    pending: Mapping[SystemPair, int],
    rng: random.Random,
) -> list[SystemPair]:
    budget = per_pair * len(pools) - sum(p.made for p in pools.values())
    open_now = dict(pending)
    order = list(pools)
    rng.shuffle(order)
    picks: list[SystemPair] = []
    while budget > 0 and sum(open_now.values()) < len(pools):
        able = [k for k in order if len(pools[k].candidates) > len(pools[k].taken) + picks.count(k)]
        if not able:
            break
        key = max(
            able,
            key=lambda k: narrowing(*votes.get(k, (0, 0)), open_now.get(k, 0)),
        )
        picks.append(key)
        open_now[key] = open_now.get(key, 0) + 1
        budget -= 1
    return picks


def first_choice_wins(
    item_id: str,
    first_value: int | str,
    ratings: Sequence[FirstRating],
    system_of: Mapping[str, str],
) -> dict[SystemPair, tuple[int, int]]:
    """Per pair of systems, the first system's wins and losses on one question (adaptive
    selection follows the job's first question), from the real pairs' first ratings."""
    tally: dict[SystemPair, list[int]] = {}
    for r in ratings:
        both = pair_sessions(shown_name(r.target, r.swapped))
        given = r.value if r.value is not None else r.text
        if r.item_id != item_id or both is None or given is None:
            continue
        if not all(s in system_of for s in both):
            continue
        shown = (system_of[both[0]], system_of[both[1]])
        winner = shown[0] if str(given) == str(first_value) else shown[1]
        key = system_pair(*shown)
        counts = tally.setdefault(key, [0, 0])
        counts[0 if winner == key[0] else 1] += 1
    return {key: (won, lost) for key, (won, lost) in tally.items()}


def _written(exchanges: Sequence[KnownExchange]) -> tuple[TranscriptExchange, ...]:
    return tuple(
        TranscriptExchange(
            exchange_id=-n - 1,
            turn=n + 1,
            user_text=x.user,
            user_at=0.0,
            user_seq=None,
            system_text=x.system,
        )
        for n, x in enumerate(exchanges)
    )


def pair_conversations(
    job: AnnotationJob, task: AnnotationTask
) -> tuple[tuple[TranscriptExchange, ...], tuple[TranscriptExchange, ...]]:
    """The two conversations of a pair, the one shown first first: an onboarding pair's
    from the job file, a real pair's as the store read them (in the side the annotator is
    shown it: ``task.swapped``)."""
    known = known_showing(job, shown_name(task.target.target, task.swapped))
    if known is None:
        named = (task.conversation, task.second)
        return (named[1], named[0]) if task.swapped else named
    better, worse = _written(known.pair.better), _written(known.pair.worse)
    return (better, worse) if known.better_first else (worse, better)


def adaptive_counts(
    first_question: tuple[str, int | str] | None,
    targets: Sequence[AnnotationTarget],
    done: Iterable[str],
    ratings: Sequence[FirstRating],
    sessions: Sequence[AnnotatableSession],
) -> tuple[dict[SystemPair, tuple[int, int]], dict[SystemPair, int]]:
    """What adaptive selection reads: per pair of systems, the first system's wins and
    losses on the job's first forced choice (``first_question``: its item and the value
    that picks the first conversation), and the real pairs not voted on yet (none of their
    annotators finished: ``done`` lists the targets someone finished)."""
    system_of = {s.session_id: s.system for s in sessions}
    votes = {} if first_question is None else first_choice_wins(*first_question, ratings, system_of)
    finished = set(done)
    pending: dict[SystemPair, int] = {}
    for target in targets:
        both = pair_sessions(target.target)
        if both is None or target.target in finished:
            continue
        if all(name in system_of for name in both):
            key = system_pair(system_of[both[0]], system_of[both[1]])
            pending[key] = pending.get(key, 0) + 1
    return votes, pending
