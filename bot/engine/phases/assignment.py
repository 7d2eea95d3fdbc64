"""Assignment: the study's design gives the participant their tasks; lab studies then hold
them until an experimenter starts the session from the console."""

from __future__ import annotations

from dataclasses import replace

from bot.core.vocabulary import EventKind
from bot.engine import effects as fx
from bot.engine import events as ev
from bot.engine.arena import partners
from bot.engine.assignment import Cell, assign_scenarios
from bot.engine.common import Phase, Result, Transition, over, stale_tap, texts_of
from bot.engine.context import Context
from bot.engine.journey import Journey, Stage, Task

HELD = "held"
TRANSITIONS = (
    Transition(Phase.ASSIGNMENT, HELD, "tasks assigned [hold_after_consent]"),
    Transition(HELD, Phase.DIALOGUE, 'wizard "start"'),
)


def enter(ctx: Context, journey: Journey, now: float) -> Result:
    assignment = assign_scenarios(
        ctx.bundle.study,
        journey.participant,
        ctx.unavailable,
        arrival=ctx.arrival,
        cells=ctx.cells,
        places=ctx.places,
    )
    paired = partners(ctx.bundle, assignment.tasks, ctx.cells, ctx.unavailable)
    tasks = tuple(
        Task(scenario, system, partner)
        for (scenario, system), partner in zip(assignment.tasks, paired, strict=True)
    )
    journey = replace(
        journey,
        stage=Stage.ASSIGNING,
        tasks=tasks,
        design=assignment.design,
        seed=assignment.seed,
        cell=assignment.cell,
    )
    if ctx.bundle.study.hold_after_consent:
        # Lab studies: the experimenter starts the session when the room is ready.
        held = replace(journey, stage=Stage.HELD)
        return held, [fx.RecordEvent(EventKind.HELD), fx.Send(texts_of(ctx.bundle, held).held)]
    return journey, over(Phase.ASSIGNMENT)


def start(journey: Journey) -> Result:
    """An experimenter starts a held participant's session."""
    return journey, over(Phase.ASSIGNMENT)


def cells_held(journey: Journey) -> tuple[Cell, ...]:
    """The (scenario, system) cells this participant counts towards in a balanced design:
    all their tasks while active or completed, none once they dropped out."""
    if not journey.tasks or journey.abandoned or journey.stage is Stage.CLOSED:
        return ()
    return tuple((t.scenario_id, t.system_id) for t in journey.tasks)


def place_held(journey: Journey) -> str | None:
    """The cell of the design whose place this participant takes (``design.quota``): their
    cell once assigned, while they completed or are on their way; none once they dropped
    out (abandoned, closed), were screened out or declined."""
    if not journey.cell or journey.abandoned or journey.stage is Stage.CLOSED:
        return None
    return journey.cell


def waiting(journey: Journey) -> bool:
    """Consented and not assigned yet (in screening), and not silent past abandonment: a
    place of the design will be theirs."""
    consented = journey.stage in (Stage.QUESTIONNAIRE, Stage.ASSIGNING)
    return consented and not journey.tasks and not journey.abandoned


def on_event(ctx: Context, journey: Journey, event: ev.Event, now: float) -> Result:
    if journey.stage is Stage.ASSIGNING and not journey.tasks:
        # Assigned nothing yet: a snapshot from before assignment moved into the engine.
        return enter(ctx, journey, now)
    if isinstance(event, ev.ButtonTapped):
        return stale_tap(ctx.bundle, journey)
    if journey.stage is Stage.HELD and isinstance(event, ev.PARTICIPANT_EVENTS):
        return journey, [fx.Send(texts_of(ctx.bundle, journey).held)]
    return journey, []
