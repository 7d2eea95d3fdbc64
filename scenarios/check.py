"""``ozlab check STUDY``: validate a study before participants meet it.

A researcher runs this after every edit: it prints a summary when the study is sound (a
first line naming what was loaded, then one line per part: design, screening, each task
and what is asked when, so that a wrong reference shows as the wrong name), or every
problem (file, line, field, message) on its own line of stderr, through the CLI, which
exits with :class:`~bot.errors.StudyFileError`'s status. Every system is built as
``ozlab run`` builds it (``scenarios.check_systems``): what would stop the bot at start-up
stops the check.
"""

from __future__ import annotations

import os
from collections import Counter
from collections.abc import Mapping
from pathlib import Path

from questionnaires.models import Condition, Questionnaire
from scenarios.check_systems import system_problems
from scenarios.loading import StudyError, load_study, study_document
from scenarios.models import Scenario, StudyBundle


def _count(number: int, noun: str) -> str:
    return f"{number} {noun}" if number == 1 else f"{number} {noun}s"


def _items(questionnaire: Questionnaire) -> str:
    kinds = Counter(item.type for item in questionnaire.items)
    detail = ", ".join(f"{number} {kind}" for kind, number in kinds.items())
    return f"{questionnaire.id}: {_count(len(questionnaire.items), 'item')}, {detail}"


def _duration(seconds: float) -> str:
    for unit, size in (("h", 3600), ("m", 60)):
        if seconds >= size and seconds % size == 0:
            return f"{seconds / size:g}{unit}"
    return f"{seconds:g}s"


def _condition(condition: Condition) -> str:
    if condition.equals is not None:
        return f"{condition.item} = {condition.equals!r}"
    return f"{condition.item} in ({', '.join(repr(v) for v in condition.any_of)})"


def _design(bundle: StudyBundle) -> str:
    design, scenarios = bundle.study.design, len(bundle.study.scenarios)
    tasks = min(design.tasks_per_participant or scenarios, scenarios)
    each = f"{tasks} of {scenarios} scenarios" if tasks < scenarios else _count(tasks, "scenario")
    if tasks > 1:
        order = "latin-square" if design.type == "latin_square" else design.order
        each += f" in {order} order"
    return (
        f"design: {design.type} (seed {design.seed}); each participant: {each}; "
        f"systems {design.systems} subjects"
    )


def _screening(bundle: StudyBundle) -> str:
    parts = []
    for questionnaire_id in bundle.study.screening:
        conditions = bundle.questionnaire(questionnaire_id).eligible_if
        rule = " and ".join(_condition(c) for c in conditions)
        parts.append(f"{questionnaire_id} (eligible if {rule})" if rule else questionnaire_id)
    return "screening: " + ", ".join(parts)


def _scenario(bundle: StudyBundle, scenario: Scenario) -> str:
    if scenario.kind == "rating":
        rows = len(bundle.stimuli.get(scenario.id, ()))
        parts = [
            f"rating task, {_count(rows, 'row')} from {scenario.stimuli}",
            f"each rated with {', '.join(scenario.rate_with)}",
        ]
    else:
        limits = []
        if scenario.max_exchanges:
            limits.append(f"at most {_count(scenario.max_exchanges, 'exchange')}")
        if scenario.time_limit:
            limits.append(f"{_duration(scenario.time_limit)} limit")
        parts = [", ".join(["dialogue", *limits])]
        if scenario.exchange:
            parts.append(f"after each reply: {', '.join(scenario.exchange)}")
    if scenario.post_task:
        parts.append(f"after the task: {', '.join(scenario.post_task)}")
    if scenario.translations:
        parts.append(f"translated: {', '.join(scenario.translations)}")
    return f"scenario {scenario.id}: " + "; ".join(parts)


def summary(bundle: StudyBundle) -> str:
    """What was loaded, so that a researcher sees the study they meant."""
    study = bundle.study
    systems = ", ".join(system.id for system in study.systems)
    scenarios = ", ".join(bundle.scenarios)
    questionnaires = "; ".join(_items(q) for q in bundle.questionnaires.values())
    lines = [
        f"OK: study {study.id!r} — {_count(len(study.systems), 'system')} ({systems}), "
        f"{_count(len(bundle.scenarios), 'scenario')} ({scenarios}), "
        f"{_count(len(bundle.questionnaires), 'questionnaire')}"
        + (f" ({questionnaires})" if questionnaires else "")
        + f", {study.design.type} design",
        _design(bundle),
    ]
    if study.screening:
        lines.append(_screening(bundle))
    lines.extend(_scenario(bundle, bundle.scenario(s)) for s in study.scenarios)
    if study.post_study:
        lines.append(f"after the study: {', '.join(study.post_study)}")
    if study.translations:
        lines.append(f"languages: {study.language}, {', '.join(study.translations)}")
    return "\n  ".join(lines)


def check(ref: str | Path, env: Mapping[str, str] | None = None) -> None:
    """Validate the study ``ref`` (a path or a shipped name), build its systems with ``env``
    (the process's environment unless given) and print its summary; a broken study raises
    :class:`~scenarios.loading.StudyError`, which the CLI prints."""
    bundle = load_study(ref)
    environment = os.environ if env is None else env
    problems = system_problems(study_document(ref), bundle.study.systems, environment)
    if problems:
        raise StudyError(problems)
    print(summary(bundle))
