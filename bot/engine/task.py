"""What every task shares, dialogue or rating: opening its session with the brief, and
ending it (the session closed, the closing line, the participant told)."""

from __future__ import annotations

from dataclasses import replace

from bot.core.vocabulary import EndReason, EventKind
from bot.engine import effects as fx
from bot.engine.common import FINISH, Doing, Phase, Result, over, scenario_of, texts_of
from bot.engine.journey import Journey, Stage
from scenarios.models import StudyBundle


def brief(bundle: StudyBundle, journey: Journey) -> fx.Send:
    texts = texts_of(bundle, journey)
    scenario = scenario_of(bundle, journey)
    if scenario.kind == "rating":
        return fx.Send(f"{texts.brief_heading}: {scenario.title}\n\n{scenario.brief}")
    body = f"{texts.brief_heading}: {scenario.title}\n\n{scenario.brief}\n\n{texts.brief_footer}"
    return fx.Send(body, (((texts.finish_button, FINISH),),), until=fx.Until.PHASE_END)


def open_session(bundle: StudyBundle, journey: Journey, index: int, now: float) -> Result:
    """Task ``index`` begins: a fresh session with the brief."""
    journey = replace(
        journey,
        stage=Stage.DIALOGUE,
        task_index=index,
        session_started_at=now,
        exchanges=0,
        turns=0,
        history=(),
        pending_message=None,
        pending_files=(),
        offered=(),
        survey=None,
        exchange_survey=None,
        stimulus_index=0,
        gated=False,  # a gate belongs to a session: the next task starts ungated
        gate_auto_send=None,
        sides=None,
    )
    task = journey.task
    opened = fx.OpenSession(
        journey.session_id, task.scenario_id, task.system_id, index, journey.design, journey.seed
    )
    return journey, [opened, brief(bundle, journey)]


def end_task(
    bundle: StudyBundle,
    journey: Journey,
    reason: EndReason,
    success: bool,
    phase: Phase,
    effects: list[Doing] | None = None,
    correct: bool | None = None,
) -> Result:
    """The task is over: ``effects`` (what its own ending needs) come after the session is
    closed and before the closing line. A task ended any other way than by a success was
    not done correctly, where the scenario says what correct is (a success its tests do not
    speak to, the system's own where they test tool calls, stays undecided)."""
    scenario = scenario_of(bundle, journey)
    if correct is None and scenario.success_if and not success:
        correct = False
    closed = fx.CloseSession(journey.session_id, reason, success, correct)
    done: list[Doing] = [closed, *(effects or ())]
    if scenario.closing_line:
        text = scenario.closing_line
        done.append(fx.RecordEvent(EventKind.CLOSING_LINE, journey.session_id, {"text": text}))
        done.append(fx.Send(text))
    done.append(fx.Send(texts_of(bundle, journey).task_over))
    journey = replace(
        journey,
        pending_message=None,
        pending_files=(),
        offered=(),
        exchange_survey=None,
        waiting=None,
        paused=False,
    )
    return journey, done + over(phase)
