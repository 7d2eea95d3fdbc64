"""Designs that cannot do what they say: ``ozlab check`` warns, and the study still runs.

A within-subjects design where nobody meets a second system, or a balanced design whose
cells cannot stay even with the tasks each participant plays, are valid files: the bot
runs them, and the report finds out too late (no within-subjects comparison, cells two or
more sessions apart). Each warning is placed at the setting to change.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from bot.engine.assignment import balance_holds, balancing_tasks, design_block, design_cells
from questionnaires.models import PreferenceItem
from scenarios.models import Study, StudyBundle
from scenarios.yaml_lines import Loc


@dataclass(frozen=True)
class DesignWarning:
    loc: Loc
    message: str


def _plural(number: int, noun: str) -> str:
    return f"{number} {noun}" if number == 1 else f"{number} {noun}s"


def design_warnings(study: Study) -> list[DesignWarning]:
    design = study.design
    scenarios, systems = len(study.scenarios), len(study.systems)
    tasks = min(design.tasks_per_participant or scenarios, scenarios)
    at_tasks: Loc = (
        ("design", "tasks_per_participant")
        if design.tasks_per_participant is not None
        else ("scenarios",)
    )
    warnings: list[DesignWarning] = []
    within = design.systems == "within"
    if within and systems > 1 and tasks == 1:
        why = "the study has one scenario" if scenarios == 1 else "tasks_per_participant is 1"
        warnings.append(
            DesignWarning(
                ("design", "systems"),
                f"systems: within, but {why}: each participant plays one task and meets one"
                " system, so no participant compares systems; write systems: between, or give"
                f" each participant {systems} tasks (one per system)",
            )
        )
    elif within and 1 < tasks < systems:
        warnings.append(
            DesignWarning(
                at_tasks,
                f"systems: within, but each participant plays {_plural(tasks, 'task')} of"
                f" {systems} systems: nobody meets every system; a within-subjects comparison"
                f" needs {systems} tasks per participant (and as many scenarios)",
            )
        )
    if design.type == "balanced" and not balance_holds(
        scenarios, systems, tasks, between=not within
    ):
        keeping = balancing_tasks(scenarios, systems, between=not within)
        warnings.append(
            DesignWarning(
                at_tasks,
                f"a balanced design cannot keep its {scenarios * systems} (scenario, system)"
                f" cells even with {_plural(scenarios, 'scenario')}, {_plural(systems, 'system')}"
                f" and {_plural(tasks, 'task')} per participant ({design.systems} subjects):"
                " some cells fall two or more sessions behind the others; tasks per"
                f" participant that keep them even: {', '.join(map(str, keeping))}",
            )
        )
    return warnings


def quota_warning(study: Study) -> DesignWarning | None:
    """A quota the design cannot fill evenly: its cells' completed participants are not a
    whole number of the design's blocks (a balanced design's (scenario, system) cells, a
    Latin square's orders), so the report's cells come out uneven however people arrive."""
    quota = study.design.quota
    if quota is None:
        return None
    cells = len(design_cells(study))
    block = design_block(study)
    if quota * cells % block.participants == 0:
        return None
    step = block.participants // math.gcd(cells, block.participants)
    choices = [n for n in (quota // step * step, -(-quota // step) * step) if n > 0]
    return DesignWarning(
        ("design", "quota"),
        f"quota: {quota} in each of {_plural(cells, 'cell')} ({quota * cells} participants)"
        f" cannot fill the design evenly ({block.cells}: whole multiples of"
        f" {block.participants} participants); a quota of {' or '.join(map(str, choices))}"
        " per cell does",
    )


def planned_warning(study: Study, participants: int) -> DesignWarning | None:
    """The planned number of participants (``ozlab check -n``) that leaves the design's
    cells uneven: some rows of a Latin square, or some cells, get one participant more; or
    that is not what the design's quota fills."""
    quota = study.design.quota
    if quota is not None and participants != quota * len(design_cells(study)):
        cells = len(design_cells(study))
        return DesignWarning(
            ("design", "quota"),
            f"-n {participants} is not what the quota fills: {quota} in each of"
            f" {_plural(cells, 'cell')} is {quota * cells} completed participants; change"
            " the quota or the plan",
        )
    if quota is not None:
        return None  # the quota's own evenness is ``quota_warning``'s
    block = design_block(study)
    if participants % block.participants == 0:
        return None
    lower = participants // block.participants * block.participants
    choices = [n for n in (lower, block.whole(participants)) if n > 0]
    return DesignWarning(
        ("design", "type"),
        f"-n {participants} leaves the design uneven ({block.cells}): whole multiples of"
        f" {block.participants} participants fill it evenly (plan"
        f" {' or '.join(map(str, choices))})",
    )


def strength_warning(bundle: StudyBundle) -> DesignWarning | None:
    """``pairwise: strength: graded`` with nothing to grade: no preference item of the
    study asks how much, so every vote is a whole win and the setting changes nothing."""
    if bundle.study.pairwise.strength != "graded":
        return None
    asked = any(
        isinstance(item, PreferenceItem) and item.strength
        for questionnaire in bundle.questionnaires.values()
        for item in questionnaire.items
    )
    if asked:
        return None
    return DesignWarning(
        ("pairwise", "strength"),
        "strength: graded, but no preference item of the study asks for strength"
        " (strength: true): every vote counts as a whole win; ask for it, or leave strength out",
    )
