"""A study at a glance, from the store's read model: whether its bot runs, participants by
stage, finished sessions per design cell, each cell's progress against the design's quota
(the desk's, as the console's status bar has it), drop-outs and the stage they left at, each
system's exchanges, failures and latency in the last hour, replies waiting for a wizard, and
erasures."""

from __future__ import annotations

import time
from collections import Counter
from dataclasses import dataclass

from bot.core.vocabulary import EndReason, SessionState, Stage
from bot.engine.assignment import CellProgress
from bot.store.model import SystemHealth
from lab_web.lab import Study

LAST_HOUR = 3600.0


@dataclass(frozen=True)
class Glance:
    slug: str
    running: bool
    by_stage: list[tuple[str, int]]
    cells: list[tuple[str, str, int, int]]  # scenario, system, finished, running now
    quotas: list[CellProgress]  # each design cell against the quota (none without one)
    dropped: list[tuple[str, int]]  # the stage they left at, how many
    health: list[SystemHealth]  # each system in the last hour
    waiting: int
    erasures: int
    last_erasure: float | None
    last_activity: float | None

    @property
    def participants(self) -> int:
        return sum(n for _, n in self.by_stage)


async def glance(study: Study) -> Glance:
    store = study.store
    participants = await store.live_participants()
    sessions = await store.sessions()
    ledger = await store.erasure_ledger()
    finished: Counter[tuple[str, str]] = Counter()
    now_running: Counter[tuple[str, str]] = Counter()
    for s in sessions:
        cell = (s.scenario_id, s.system_id)
        if s.state is SessionState.ENDED and s.end_reason is not EndReason.ABANDONED:
            finished[cell] += 1
        elif s.state in (SessionState.DIALOGUE, SessionState.QUESTIONNAIRE):
            now_running[cell] += 1
    stages = Counter(p.status.stage.value for p in participants)
    dropped = Counter(
        p.status.stage.value
        for p in participants
        if p.status.abandoned or p.status.stage is Stage.CLOSED
    )
    return Glance(
        slug=study.slug,
        running=await study.bot_running(),
        by_stage=sorted(stages.items(), key=lambda kv: list(Stage).index(Stage(kv[0]))),
        cells=[
            (scenario, system, finished[(scenario, system)], now_running[(scenario, system)])
            for scenario, system in sorted(set(finished) | set(now_running))
        ],
        quotas=await study.desk.cells(),
        dropped=sorted(dropped.items()),
        health=await store.system_health(time.time() - LAST_HOUR),
        waiting=sum(p.status.held is not None for p in participants),
        erasures=len(ledger),
        last_erasure=max((e.erased_at for e in ledger), default=None),
        last_activity=max((p.status.last_activity_at for p in participants), default=None),
    )
