"""Which side each annotator is shown a pair in: pure, no I/O.

A pair's target name orders its two conversations (``FIRST~SECOND``), and the names of a
pair of systems are balanced (``pairs``); but a pair is rated by several annotators, each
with their own share of the pairs (``assignment.bundles``), so one order per pair cannot
balance every annotator's share: one annotator of 3 pairs of X and Y could see X first in
all three. So the side is an assignment's: the pair is shown in its name's order or
swapped, decided when it is given, in the order the annotator works through their pairs:

- each annotator's share of a pair of systems shows each system first equally often, ± 1,
  along the way: after a showing that put one system ahead, the next showing of that pair
  of systems puts the other first;
- where that leaves a choice, the last showing of an odd share puts first the system that
  is behind over every showing of that pair of systems (all annotators'), so that each plan
  leaves the whole as balanced as the showings already given allow (± 1 when planned at
  once; a showing given earlier is never changed: the annotator may have seen it);
- a choice that decides neither shows the pair on the side it was shown less often (two
  annotators of one pair see it both ways), else in its name's order;
- a pair given back to an annotator it was released from keeps the side it had.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

Give = tuple[str, str]
"""(target, annotator): one showing of a pair."""


@dataclass(frozen=True)
class Showing:
    """A pair given to an annotator, and whether it is shown swapped."""

    target: str
    annotator: str
    swapped: bool


def _lead(systems: tuple[str, str], swapped: bool) -> int:
    """+1 when the system first by name (of the two) is shown first, -1 when the other is."""
    named_first = 1 if systems[0] <= systems[1] else -1
    return -named_first if swapped else named_first


def _sign(x: int) -> int:
    return (x > 0) - (x < 0)


def swapped_gives(
    given: Sequence[Showing],
    new: Sequence[Give],
    systems: Mapping[str, tuple[str, str]],
    before: Mapping[Give, bool] | None = None,
) -> frozenset[Give]:
    """The new showings (``new``, in the order each annotator works through them) to show
    swapped, given the showings made so far (``given``). ``systems``: a real pair's target
    -> the systems of its conversations in its name's order (a target without them, an
    onboarding pair, keeps its name's order); ``before``: the side of a released showing
    given back (see the module)."""
    earlier = before or {}
    per_annotator: dict[tuple[frozenset[str], str], int] = {}
    overall: dict[frozenset[str], int] = {}
    per_target: dict[str, int] = {}  # +1 a showing in its name's order, -1 one swapped

    def count(target: str, who: str, swapped: bool) -> None:
        pair = systems[target]
        lead = _lead(pair, swapped)
        key = frozenset(pair)
        per_annotator[(key, who)] = per_annotator.get((key, who), 0) + lead
        overall[key] = overall.get(key, 0) + lead
        per_target[target] = per_target.get(target, 0) + (-1 if swapped else 1)

    for s in given:
        if s.target in systems:
            count(s.target, s.annotator, s.swapped)
    chosen: set[Give] = set()
    queues: dict[tuple[frozenset[str], str], list[str]] = {}
    for target, who in new:
        if target not in systems:
            continue
        if (target, who) in earlier:
            count(target, who, earlier[(target, who)])
            if earlier[(target, who)]:
                chosen.add((target, who))
            continue
        queues.setdefault((frozenset(systems[target]), who), []).append(target)

    def show(target: str, who: str, lead: int) -> None:
        swapped = _lead(systems[target], False) != lead
        count(target, who, swapped)
        if swapped:
            chosen.add((target, who))

    def preferred(target: str) -> int:
        """The lead of the side this pair was shown less often (its name's on a tie)."""
        return _lead(systems[target], per_target.get(target, 0) > 0)

    # first what each annotator's own balance decides, then the last choice of each odd
    # share against the whole's balance (the shares' balances are fixed by then)
    last: list[tuple[frozenset[str], str, str]] = []
    for (key, who), targets in queues.items():
        for n, target in enumerate(targets):
            behind = -_sign(per_annotator.get((key, who), 0))
            if behind:
                show(target, who, behind)
            elif n == len(targets) - 1:
                last.append((key, who, target))
            else:
                show(target, who, preferred(target))
    for key, who, target in last:
        behind = -_sign(overall.get(key, 0))
        show(target, who, behind or preferred(target))
    return frozenset(chosen)
