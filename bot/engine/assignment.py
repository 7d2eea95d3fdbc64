"""Which scenarios, with which systems, a participant gets: the study's design.

Pure functions: no I/O, no clock and never the global generator. Every draw comes from
``random.Random(seed)`` with ``seed = f"{study.design.seed}:{participant}"``, so an assignment
is reproduced from what is stored with it (``Assignment.design`` and ``Assignment.seed``),
the study file, and for the designs that look at other participants, their input:

- ``random``: nothing else. Scenarios: all, or a random ``tasks_per_participant`` of them
  (IDIAL: three each), in study order or shuffled (``order``). Systems: one drawn for all
  tasks (``between``), or a random permutation gone through task by task, cycling
  (``within``: every participant meets every system when tasks >= systems).
- ``balanced``: ``cells``, the sessions per (scenario, system) of the participants who were
  active or had completed at that moment (drop-outs excluded): block randomization, the
  participant takes the emptiest cells (see ``_balanced`` for what is guaranteed).
  Scenarios in study order or shuffled (``order``).
- ``latin_square``: ``arrival``, the number of participants who consented before; its row
  (``arrival`` mod the number of rows) is written into ``Assignment.design``. ``within``:
  the square orders the systems a participant meets (scenarios as in ``random``);
  ``between``: there is one system per participant, so the square orders the scenarios
  instead (``order`` is then ignored) and the system goes round by arrival.

With a ``quota``, every design is a set of cells (``design_cells``: the system between
subjects, the Latin square's row, or its row and system between subjects, else the whole
study), ``places`` says how many each holds, and a newcomer takes an open cell: between
subjects the full systems are left out of the draw as failing ones are; in a Latin square
the open row (and system) with the fewest places, the one ``arrival`` would give first
among equals, over every system (a row is a cell to fill whichever systems fail). When
every cell is full (a participant who consented before they filled), the cell with the
fewest places: one who consented is never turned away.

``tasks_per_participant`` above the number of scenarios means all of them, each once.
Systems that are ``unavailable`` (currently failing) are left out of every design while at
least one other remains (balance and squares then run over the systems left);
``Assignment.design`` names the ones left out.
"""

from __future__ import annotations

import math
import random
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from bot.core.participants import ParticipantStatus
from bot.core.vocabulary import Stage
from scenarios.models import Study

Cell = tuple[str, str]
"""(scenario id, system id)."""


WHOLE_STUDY = "whole study"
"""The one cell of a design whose participants do not differ by condition (within
subjects, drawn at random or balanced)."""


@dataclass(frozen=True)
class Assignment:
    tasks: tuple[tuple[str, str], ...]  # (scenario id, system id), in the order played
    design: str
    """How the tasks were drawn, e.g. "balanced/between" or "latin_square/within row 3 of 4"."""
    seed: str
    """The exact string the generator was seeded with."""
    cell: str = WHOLE_STUDY
    """The participant's cell of the design (``design_cells``), which a quota counts."""


def assign_scenarios(
    study: Study,
    participant: str,
    unavailable: frozenset[str] = frozenset(),
    *,
    arrival: int = 0,
    cells: Mapping[Cell, int] | None = None,
    places: Mapping[str, int] | None = None,
) -> Assignment:
    """The tasks of a participant who has just consented, following ``study.design``.

    ``arrival`` (0-based consent order) picks the Latin square row; ``cells`` (sessions per
    (scenario, system), active or completed) is what the balanced design evens out;
    ``places`` (places taken per cell of the design) is what a quota fills.
    Same arguments, same assignment.
    """
    if arrival < 0:
        raise ValueError(f"arrival must be 0 or more, not {arrival}")
    design = study.design
    seed = f"{design.seed}:{participant}"
    rng = random.Random(seed)
    candidates = [s.id for s in study.systems]
    between = design.systems == "between"
    if design.quota is not None and between and design.type != "latin_square":
        free = open_cells(study, places or {})
        candidates = [s for s in candidates if s in free] or [
            min(candidates, key=lambda s: (places or {}).get(s, 0))
        ]
    systems = [s for s in candidates if s not in unavailable]
    left_out = [s for s in candidates if s in unavailable] if systems else []
    systems = systems or candidates
    count = min(design.tasks_per_participant or len(study.scenarios), len(study.scenarios))

    detail = ""
    if design.type == "random":
        tasks = _random(study, systems, count, rng)
    elif design.type == "balanced":
        tasks = _balanced(study, systems, count, rng, cells or {})
    else:
        if design.quota is not None:
            systems, left_out = [s.id for s in study.systems], []
            place = _latin_place(study, systems, arrival, places or {}, unavailable)
        else:
            place = _latin_arrival(study, systems, arrival)
        tasks, rows = _latin(study, systems, count, rng, *place)
        detail = f" row {place[0]} of {rows}"
    if design.type == "latin_square":
        cell = _latin_cell(place[0], place[1] if between else None)
    else:
        cell = tasks[0][1] if between else WHOLE_STUDY
    description = f"{design.type}/{design.systems}{detail}"
    if left_out:
        description += " without " + ",".join(left_out)
    return Assignment(tasks=tuple(tasks), design=description, seed=seed, cell=cell)


def design_cells(study: Study) -> tuple[str, ...]:
    """The cells of the design a quota fills, in order: between subjects the systems (a
    Latin square's rows and systems), within subjects a Latin square's rows, else the one
    cell ``WHOLE_STUDY``."""
    design = study.design
    systems = [s.id for s in study.systems]
    between = design.systems == "between"
    if design.type == "latin_square":
        rows = range(len(latin_square(len(study.scenarios) if between else len(systems))))
        if between:
            return tuple(_latin_cell(row, system) for row in rows for system in systems)
        return tuple(_latin_cell(row, None) for row in rows)
    return tuple(systems) if between else (WHOLE_STUDY,)


def open_cells(study: Study, places: Mapping[str, int]) -> tuple[str, ...]:
    """The cells of the design with a place left under its quota (all of them without)."""
    quota = study.design.quota
    cells = design_cells(study)
    return cells if quota is None else tuple(c for c in cells if places.get(c, 0) < quota)


@dataclass(frozen=True)
class CellProgress:
    """A cell of the design as a quota sees it: participants who completed, those under
    way (assigned, not abandoned), and the quota (None: the study has none)."""

    cell: str
    completed: int
    under_way: int
    quota: int | None

    @property
    def full(self) -> bool:
        """No newcomer is assigned here: its places are taken (``has_room``'s count)."""
        return self.quota is not None and self.completed + self.under_way >= self.quota

    def __str__(self) -> str:
        done = f"{self.completed}" if self.quota is None else f"{self.completed}/{self.quota}"
        full = " (full)" if self.full else ""
        return f"{self.cell}: {done} completed, {self.under_way} under way{full}"


def progress(study: Study, statuses: Iterable[ParticipantStatus]) -> list[CellProgress]:
    """Each cell's progress from where the participants stand (as the console's read model
    has it): the design's cells in order, then any cell only older assignments name."""
    completed: Counter[str] = Counter()
    under_way: Counter[str] = Counter()
    for status in statuses:
        if status.cell is None:
            continue
        if status.stage is Stage.FINISHED:
            completed[status.cell] += 1
        elif not status.abandoned and status.stage is not Stage.CLOSED:
            under_way[status.cell] += 1
    cells = list(design_cells(study))
    cells += sorted((completed.keys() | under_way.keys()) - set(cells))
    quota = study.design.quota
    return [CellProgress(c, completed[c], under_way[c], quota) for c in cells]


def has_room(study: Study, places: Mapping[str, int], waiting: int) -> bool:
    """Whether a newcomer may consent: places are left in the open cells beyond those of
    the ``waiting`` participants (consented, not assigned yet: in screening), each of whom
    will take one. Always, without a quota."""
    quota = study.design.quota
    if quota is None:
        return True
    left = sum(max(0, quota - places.get(cell, 0)) for cell in design_cells(study))
    return left > waiting


def _latin_cell(row: int, system: str | None) -> str:
    return f"row {row}" if system is None else f"row {row}, {system}"


def cell_counts(assignments: Iterable[Iterable[Cell]]) -> dict[Cell, int]:
    """Sessions per (scenario, system) over participants' task lists: ``cells`` for balanced.

    Give it the full task list of every participant who is active or has completed (not
    only the sessions opened so far), so that a participant still in their first task
    already holds their later cells and simultaneous arrivals do not pile onto one cell.
    """
    return dict(Counter(cell for tasks in assignments for cell in tasks))


def latin_square(n: int) -> list[list[int]]:
    """A balanced Latin square (Williams design) over ``0 … n-1``, one row per participant.

    Every row and column is a permutation, so each item is met equally often in each
    position; first-order carryover is balanced too: for even ``n`` each ordered pair of
    neighbours occurs exactly once (first row 0, 1, n-1, 2, n-2, …, then shifted by one per
    row). For odd ``n`` no square of ``n`` rows can do that, so the mirrored rows follow
    (``2n`` rows: two Latin squares, each ordered pair of neighbours exactly twice).
    ``n = 1`` is the single row ``[0]``.
    """
    if n < 1:
        raise ValueError(f"a Latin square needs at least one item, not {n}")
    first, low, high = [0], 1, n - 1
    while len(first) < n:
        first.append(low)
        low += 1
        if len(first) < n:
            first.append(high)
            high -= 1
    rows = [[(item + shift) % n for item in first] for shift in range(n)]
    if n % 2 and n > 1:
        rows += [row[::-1] for row in rows]
    return rows


def _pick_scenarios(study: Study, count: int, rng: random.Random) -> list[str]:
    """All scenarios or a random ``count`` of them, in study order or shuffled (``order``)."""
    scenarios = list(study.scenarios)
    if count < len(scenarios):
        scenarios = rng.sample(scenarios, count)
    return _in_order(study, scenarios, rng)


def _in_order(study: Study, scenarios: list[str], rng: random.Random) -> list[str]:
    if study.design.order == "random":
        rng.shuffle(scenarios)
        return scenarios
    return sorted(scenarios, key=study.scenarios.index)


def _random(study: Study, systems: list[str], count: int, rng: random.Random) -> list[Cell]:
    """Independent draws; ``within`` goes through a random permutation of the systems,
    cycling, so that every participant meets every system when tasks >= systems."""
    scenarios = _pick_scenarios(study, count, rng)
    if study.design.systems == "between":
        system = rng.choice(systems)
        return [(scenario, system) for scenario in scenarios]
    permutation = rng.sample(systems, len(systems))
    return [(scenario, permutation[i % len(permutation)]) for i, scenario in enumerate(scenarios)]


def _balanced(
    study: Study,
    systems: list[str],
    count: int,
    rng: random.Random,
    cells: Mapping[Cell, int],
) -> list[Cell]:
    """Block randomization: the participant takes the emptiest block of cells.

    The cells are laid out on rings (``_rings``) and a participant's block is ``count``
    consecutive cells of a ring: the one holding the fewest sessions in ``cells``, then the
    one whose highest cell is lowest, then one that fits exactly into a gap left by a
    drop-out or extends the filled stretch (so that gaps are never cut into pieces too
    short for a block), then chance.

    Every cell stays within one session of every other as participants arrive and drop out
    one at a time, and a burst of drop-outs is refilled by the next arrivals, whenever
    blocks tile the rings: there is one ring, or ``count`` divides the ring's length
    (between: all scenarios, or a divisor of their number; within: whenever ``count``
    divides lcm(scenarios, systems), e.g. all scenarios). Otherwise no assignment can
    always do it (three scenarios, two systems, two tasks each between subjects: by the
    third participant every choice leaves two cells two apart); the emptiest cells still
    come first (in simulations up to nine scenarios and six systems, with drop-outs one at
    a time, cells then stayed within two of each other).
    """
    scenarios = list(study.scenarios)
    rings = _rings(len(scenarios), len(systems), study.design.systems == "between")
    blocks = [(ring, start) for ring in rings for start in range(len(ring))]
    noise = [rng.random() for _ in blocks]

    def held(pair: tuple[int, int]) -> int:
        return cells.get((scenarios[pair[0]], systems[pair[1]]), 0)

    def load(index: int) -> tuple[int, int, int, float]:
        ring, start = blocks[index]
        block = [held(ring[(start + i) % len(ring)]) for i in range(count)]
        before, after = held(ring[start - 1]), held(ring[(start + count) % len(ring)])
        fits = (before > block[0]) + (after > block[-1])
        return sum(block), max(block), -fits, noise[index]

    ring, start = blocks[min(range(len(blocks)), key=load)]
    chosen = [ring[(start + i) % len(ring)] for i in range(count)]
    system_of = {scenarios[i]: systems[j] for i, j in chosen}
    return [(sc, system_of[sc]) for sc in _in_order(study, list(system_of), rng)]


def balance_holds(scenarios: int, systems: int, tasks: int, *, between: bool) -> bool:
    """Whether ``balanced`` keeps every cell within one session of every other (see
    ``_balanced``): the participants' blocks of ``tasks`` cells tile the rings."""
    rings = _rings(scenarios, systems, between)
    return len(rings) == 1 or all(len(ring) % tasks == 0 for ring in rings)


def balancing_tasks(scenarios: int, systems: int, *, between: bool) -> list[int]:
    """The numbers of tasks per participant for which ``balance_holds``."""
    return [
        tasks
        for tasks in range(1, scenarios + 1)
        if balance_holds(scenarios, systems, tasks, between=between)
    ]


def _rings(scenarios: int, systems: int, between: bool) -> list[list[tuple[int, int]]]:
    """Cycles of (scenario, system) index pairs that together hold every cell once.

    Between subjects, one ring per system through all scenarios. Within subjects,
    gcd(n, m) rings of lcm(n, m) cells, ring ``r`` being ``t -> (t mod n, (t + r) mod m)``:
    any ``count <= n`` consecutive cells have distinct scenarios and go through the
    systems in turn, so a participant meets every system (each once before any twice).
    """
    if between:
        return [[(t, system) for t in range(scenarios)] for system in range(systems)]
    cycle = math.lcm(scenarios, systems)
    return [
        [(t % scenarios, (t + ring) % systems) for t in range(cycle)]
        for ring in range(math.gcd(scenarios, systems))
    ]


def _latin_arrival(study: Study, systems: list[str], arrival: int) -> tuple[int, str]:
    """The row (and, between subjects, the system) of the ``arrival``-th participant:
    row = arrival mod rows; between subjects arrival ``i`` gets the system
    ``(i + i // lcm(R, S)) mod S``, so that every system meets every row and the systems
    stay within one participant of each other."""
    if study.design.systems == "within":
        return arrival % len(latin_square(len(systems))), systems[0]
    rows = len(latin_square(len(study.scenarios)))
    cycle = math.lcm(rows, len(systems))
    return arrival % rows, systems[(arrival + arrival // cycle) % len(systems)]


def _latin_place(
    study: Study,
    systems: list[str],
    arrival: int,
    places: Mapping[str, int],
    unavailable: frozenset[str],
) -> tuple[int, str]:
    """Under a quota: the open cell with the fewest places (between subjects, of a system
    that is not failing if one is open), ties going to the cell ``arrival`` gives and those
    after it in order; with no open cell, the fewest places of all."""
    between = study.design.systems == "between"
    by_cell = {
        _latin_cell(row, system if between else None): (row, system)
        for row in range(len(latin_square(len(study.scenarios if between else systems))))
        for system in (systems if between else systems[:1])
    }
    order = list(by_cell)
    row, system = _latin_arrival(study, systems, arrival)
    first = order.index(_latin_cell(row, system if between else None))
    order = order[first:] + order[:first]
    free = [c for c in order if c in set(open_cells(study, places))]
    running = [c for c in free if not (between and by_cell[c][1] in unavailable)]
    chosen = running or free or order
    return by_cell[min(chosen, key=lambda c: places.get(c, 0))]


def _latin(
    study: Study,
    systems: list[str],
    count: int,
    rng: random.Random,
    row: int,
    system: str,
) -> tuple[list[Cell], int]:
    """The tasks of a row of a balanced Latin square (and its rows).

    ``within``: the square is over the systems: task ``i`` is played with the row's
    ``i``-th system (cycling when there are more tasks than systems); the scenarios are
    drawn and ordered as in ``random``. ``between``: the square is over the scenarios'
    order (the first ``tasks_per_participant`` of the row, so that each scenario is
    played equally often in each position), all of them with ``system``.
    """
    if study.design.systems == "within":
        square = latin_square(len(systems))
        order = [systems[i] for i in square[row]]
        scenarios = _pick_scenarios(study, count, rng)
        return [(sc, order[i % len(order)]) for i, sc in enumerate(scenarios)], len(square)
    square = latin_square(len(study.scenarios))
    scenarios = [study.scenarios[i] for i in square[row]][:count]
    return [(sc, system) for sc in scenarios], len(square)


@dataclass(frozen=True)
class DesignBlock:
    """The participants that fill a design's cells evenly once (``participants``), and
    what the cells are, in words for ``ozlab power`` and ``ozlab check``."""

    participants: int
    cells: str

    def whole(self, participants: int) -> int:
        """``participants`` rounded up to a whole multiple of the block."""
        return -(-participants // self.participants) * self.participants


def design_block(study: Study) -> DesignBlock:
    """How many participants fill the study's design evenly, and why.

    ``latin_square``: its rows (``within``: a balanced square of the systems, twice as many
    rows for an odd number; ``between``: the square of the scenarios' orders, met by every
    system). ``balanced``: its rings of (scenario, system) cells tiled by the participants'
    blocks of tasks, each cell once. ``random``: nothing is even by construction; between
    participants, one per system keeps the groups' planned sizes equal."""
    design = study.design
    scenarios, systems = len(study.scenarios), len(study.systems)
    tasks = min(design.tasks_per_participant or scenarios, scenarios)
    between = design.systems == "between"
    if design.type == "latin_square":
        if not between:
            rows = len(latin_square(systems))
            return DesignBlock(rows, f"a Latin square of {rows} system orders")
        rows = len(latin_square(scenarios))
        return DesignBlock(
            rows * systems, f"a Latin square of {rows} scenario orders × {systems} systems"
        )
    if design.type == "balanced":
        rings = _rings(scenarios, systems, between)
        block = sum(math.lcm(len(ring), tasks) // tasks for ring in rings)
        return DesignBlock(
            block,
            f"{scenarios * systems} (scenario, system) cells,"
            f" {tasks} task{'' if tasks == 1 else 's'} per participant",
        )
    if between and systems > 1:
        return DesignBlock(systems, f"{systems} systems, one per participant")
    return DesignBlock(1, "random assignment")
