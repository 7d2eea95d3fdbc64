"""The mistakes of an annotation job that need the rest of the study: an instrument that
does not exist, an extra-information item no instrument of the job has, a system or
scenario the study does not run. Each is placed at the line that must change.

``scenarios.loading`` opens the job files (by id beside the study, then shipped; or by a
path relative to the study) and loads the instruments they name; this module says what is
wrong with what it found.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from questionnaires.models import ChoiceItem, MatrixItem, Questionnaire, RankingItem, TextItem
from scenarios.yaml_lines import Document, Loc, Problem

LEVELS = ("exchange", "session", "pair")


def instrument_refs(document: Document) -> list[tuple[str, Loc]]:
    """Every instrument id the job names, with where it is named."""
    rate = document.data.get("rate")
    if not isinstance(rate, dict):
        return []
    found: list[tuple[str, Loc]] = []
    for level in LEVELS:
        refs = rate.get(level)
        if isinstance(refs, list):
            found += [
                (ref, ("rate", level, i)) for i, ref in enumerate(refs) if isinstance(ref, str)
            ]
    return found


def job_problems(
    document: Document,
    questionnaires: Mapping[str, Questionnaire | None],
    study: Mapping[str, Any],
) -> list[Problem]:
    """Repeated instruments, extra information for items the job does not ask, systems and
    scenarios the study lacks (only checked when the job rates this study's sessions)."""
    problems: list[Problem] = []
    seen: dict[str, Loc] = {}
    for ref, loc in instrument_refs(document):
        if ref in seen:
            where = ".".join(str(part) for part in seen[ref][:-1]) + f"[{seen[ref][-1]}]"
            problems.append(document.problem(loc, f"instrument {ref!r} is listed twice ({where})"))
        seen.setdefault(ref, loc)
    items = {
        item.id: ref
        for ref in seen
        if (questionnaire := questionnaires.get(ref)) is not None
        for item in questionnaire.items
    }
    every_loaded = all(questionnaires.get(ref) is not None for ref in seen)
    extras = document.data.get("extra_information")
    shown: dict[str, int] = {}
    if isinstance(extras, list) and every_loaded:
        for n, extra in enumerate(extras):
            named = extra.get("items") if isinstance(extra, dict) else None
            for i, item_id in enumerate(named if isinstance(named, list) else []):
                loc = ("extra_information", n, "items", i)
                if not isinstance(item_id, str):
                    continue
                if item_id not in items:
                    known = ", ".join(seen) or "none"
                    message = f"no item {item_id!r} in the job's instruments ({known})"
                    problems.append(document.problem(loc, message))
                elif item_id in shown:
                    message = (
                        f"item {item_id!r} already has extra information (entry {shown[item_id]})"
                    )
                    problems.append(document.problem(loc, message))
                shown.setdefault(item_id, n)
    problems += _forced_choices(document, questionnaires)
    problems += _unrated_items(document, questionnaires)
    problems += _study_names(document, study)
    return problems


_NOT_FOR_ANNOTATORS = (RankingItem, MatrixItem)
"""Item types an annotator is not asked: their answers are not ratings that agreement,
adjudication or known answers could compare."""


def _unrated_items(
    document: Document, questionnaires: Mapping[str, Questionnaire | None]
) -> list[Problem]:
    """An annotator's instruments ask no ranking and no matrix (give its statements as
    scale items)."""
    problems: list[Problem] = []
    for ref, loc in instrument_refs(document):
        questionnaire = questionnaires.get(ref)
        for item in questionnaire.items if questionnaire is not None else ():
            if isinstance(item, _NOT_FOR_ANNOTATORS):
                message = (
                    f"item {item.id!r} of {ref!r} is a {item.type}: annotators are asked"
                    " scale, yes/no, thumbs, choice, multi_choice, slider and text items"
                )
                problems.append(document.problem(loc, message))
    return problems


def _forced_choices(
    document: Document, questionnaires: Mapping[str, Questionnaire | None]
) -> list[Problem]:
    """A pair's instruments ask forced choices: each item a choice between exactly two
    options (the first conversation's speaker, the second's), or free text (a
    justification), and at least one choice."""
    rate = document.data.get("rate")
    refs = rate.get("pair") if isinstance(rate, dict) else None
    problems: list[Problem] = []
    for i, ref in enumerate(refs if isinstance(refs, list) else []):
        questionnaire = questionnaires.get(ref) if isinstance(ref, str) else None
        if questionnaire is None:
            continue
        loc = ("rate", "pair", i)
        for item in questionnaire.items:
            if isinstance(item, TextItem):
                continue
            if not isinstance(item, ChoiceItem) or len(item.options) != 2:
                message = (
                    f"item {item.id!r} of {ref!r} is not a forced choice: a pair's items are"
                    " choices of exactly two options (speaker 1, speaker 2) or text"
                )
                problems.append(document.problem(loc, message))
        if not any(isinstance(item, ChoiceItem) for item in questionnaire.items):
            problems.append(document.problem(loc, f"{ref!r} asks no forced choice"))
    return problems


def _study_names(document: Document, study: Mapping[str, Any]) -> list[Problem]:
    sessions = document.data.get("sessions")
    if not isinstance(sessions, dict):
        return []
    studies = sessions.get("studies") or []
    if isinstance(studies, list) and studies and study.get("id") not in studies:
        return []  # another study's sessions: its systems and scenarios are not known here
    known = {
        "systems": [s.get("id") for s in study.get("systems") or [] if isinstance(s, dict)],
        "scenarios": list(study.get("scenarios") or []),
    }
    problems = []
    for key, names in known.items():
        listed = sessions.get(key)
        for i, name in enumerate(listed if isinstance(listed, list) else []):
            if isinstance(name, str) and name not in names:
                message = f"the study runs no {key[:-1]} {name!r} ({', '.join(map(str, names))})"
                problems.append(document.problem(("sessions", key, i), message))
    return problems
