"""Which scenarios, with which systems, a participant gets: the study's design.

Every assignment is reproducible from what is stored with it (the design and the seed):
the generator is seeded per participant from the study's seed, never the global one.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

from scenarios.models import Study


@dataclass(frozen=True)
class Assignment:
    tasks: tuple[tuple[str, str], ...]  # (scenario id, system id), in the order played
    design: str
    seed: str


def assign_scenarios(
    study: Study, participant: str, unavailable: frozenset[str] = frozenset()
) -> Assignment:
    """``random``: one system drawn per participant (between subjects), all scenarios.

    Systems currently ``unavailable`` are left out of the draw while others remain.
    """
    seed = f"{study.design.seed}:{participant}"
    rng = random.Random(seed)
    systems = [s.id for s in study.systems if s.id not in unavailable] or [
        s.id for s in study.systems
    ]
    system = rng.choice(systems)
    return Assignment(
        tasks=tuple((scenario, system) for scenario in study.scenarios),
        design=study.design.type,
        seed=seed,
    )
