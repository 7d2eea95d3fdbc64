"""``ozlab check STUDY``: validate a study before participants meet it.

A researcher runs this after every edit: it prints one summary line when the study is
sound, or every problem (file, line, field, message) on its own line of stderr.
"""

from __future__ import annotations

import sys
from collections import Counter
from pathlib import Path

from questionnaires.models import Questionnaire
from scenarios.loading import StudyError, load_study
from scenarios.models import StudyBundle


def _count(number: int, noun: str) -> str:
    return f"{number} {noun}" if number == 1 else f"{number} {noun}s"


def _items(questionnaire: Questionnaire) -> str:
    kinds = Counter(item.type for item in questionnaire.items)
    detail = ", ".join(f"{number} {kind}" for kind, number in kinds.items())
    return f"{questionnaire.id}: {_count(len(questionnaire.items), 'item')}, {detail}"


def summary(bundle: StudyBundle) -> str:
    """One line telling what was loaded, so that a researcher sees the study they meant."""
    study = bundle.study
    systems = ", ".join(system.id for system in study.systems)
    scenarios = ", ".join(bundle.scenarios)
    questionnaires = "; ".join(_items(q) for q in bundle.questionnaires.values())
    return (
        f"OK: study {study.id!r} — {_count(len(study.systems), 'system')} ({systems}), "
        f"{_count(len(bundle.scenarios), 'scenario')} ({scenarios}), "
        f"{_count(len(bundle.questionnaires), 'questionnaire')}"
        + (f" ({questionnaires})" if questionnaires else "")
        + f", {study.design.type} design"
    )


def check(ref: str | Path) -> int:
    """Validate the study ``ref`` (a path or a shipped name); the exit code for the CLI."""
    try:
        bundle = load_study(ref)
    except StudyError as error:
        for problem in error.problems:
            print(problem, file=sys.stderr)
        print(f"{_count(len(error.problems), 'problem')} found.", file=sys.stderr)
        return 1
    print(summary(bundle))
    return 0
