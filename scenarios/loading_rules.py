"""The mistakes no single model can see: they need the kind of a scenario, the study's
language, or every questionnaire of a study at once.

Each rule reads the parsed files (the raw data, so that a file with other problems is still
checked in the same run) and returns problems placed at the line that must change.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from questionnaires.models import Questionnaire
from scenarios.yaml_lines import Document, Loc, Problem

LANGUAGE = re.compile(r"[a-z]{2,3}")
"""Telegram reports IETF tags ("it", "en-GB"); texts are matched by the first part."""
_DIALOGUE_ONLY = ("exchange", "max_exchanges", "opening_line", "closing_line", "system_prompt")
_RATING_ONLY = ("stimuli", "stimulus_template", "rate_with")
_RATING_NEEDS = {
    "stimuli": "a CSV or JSONL file beside this one, one row per thing to rate",
    "rate_with": "the questionnaires answered for every row",
}


@dataclass(frozen=True)
class Use:
    """Where a questionnaire is named, to tell a misuse at the reference itself."""

    questionnaire: str
    key: str
    document: Document
    loc: Loc


def scenario_kind(document: Document) -> list[Problem]:
    """Rating tasks need rows and a questionnaire for them; dialogues have neither."""
    data, kind = document.data, document.data.get("kind", "dialogue")
    problems = []
    if kind == "rating":
        line, _ = document.where(("kind",))
        for key, what in _RATING_NEEDS.items():
            if not data.get(key):
                message = f"a rating task (kind: rating) needs {key}: {what}"
                problems.append(Problem(document.file, line, key, message))
        for key in _DIALOGUE_ONLY:
            if key in data:
                message = f"a rating task has no dialogue: {key} is for kind: dialogue"
                problems.append(document.problem((key,), message))
    elif kind == "dialogue":
        for key in _RATING_ONLY:
            if key in data:
                message = f"{key} is for rating tasks: add 'kind: rating', or remove it"
                problems.append(document.problem((key,), message))
    return problems


def translation_keys(document: Document, language: str) -> list[Problem]:
    """Translations under a key Telegram never sends would silently never be shown."""
    translations = document.data.get("translations")
    if not isinstance(translations, dict):
        return []
    problems = []
    for code in translations:
        message = None
        if not isinstance(code, str) or not LANGUAGE.fullmatch(code):
            message = (
                f"{code!r} is not a language code: use a lower-case code such as 'it' or "
                "'de' (any region, as in en-GB, is matched by its first part)"
            )
        elif code == language:
            message = (
                f"{code!r} is the study's own language (language: {language}), so these "
                "translations would never be used: change the texts themselves"
            )
        if message:
            problems.append(document.problem(("translations", code), message))
    return problems


def study_language(document: Document) -> list[Problem]:
    language = document.data.get("language", "en")
    if isinstance(language, str) and not LANGUAGE.fullmatch(language):
        message = f"{language!r} is not a language code such as 'en' or 'it'"
        return [document.problem(("language",), message)]
    return []


def design_size(document: Document) -> list[Problem]:
    """A participant cannot play more scenarios than the study has."""
    design, scenarios = document.data.get("design"), document.data.get("scenarios")
    if not isinstance(design, dict) or not isinstance(scenarios, list):
        return []
    tasks = design.get("tasks_per_participant")
    if isinstance(tasks, int) and not isinstance(tasks, bool) and tasks > len(scenarios):
        message = (
            f"{tasks} tasks per participant, but the study lists only "
            f"{len(scenarios)} scenario{'' if len(scenarios) == 1 else 's'}"
        )
        return [document.problem(("design", "tasks_per_participant"), message)]
    return []


def misplaced_questionnaires(
    uses: Iterable[Use],
    questionnaires: Mapping[str, Questionnaire | None],
    documents: Mapping[str, Document],
) -> list[Problem]:
    """Questionnaires named where part of them cannot work, told at the reference.

    ``eligible_if`` releases a participant, which only makes sense before the study; and
    after a system reply, typed text goes to the system, so free-text items are never asked.
    """
    problems = []
    for use in uses:
        questionnaire = questionnaires.get(use.questionnaire)
        if questionnaire is None:
            continue
        if use.key != "screening" and questionnaire.eligible_if:
            message = (
                f"questionnaire {use.questionnaire!r} has eligible_if, which only screening"
                " questionnaires may have: list it under the study's screening instead"
            )
            problems.append(use.document.problem(use.loc, message))
        texts = [i for i, item in enumerate(questionnaire.items) if item.type == "text"]
        document = documents.get(use.questionnaire)
        if use.key == "exchange" and texts and document is not None:
            line, _ = document.where(("items", texts[0], "id"))
            message = (
                f"questionnaire {use.questionnaire!r} has a free-text item "
                f"({questionnaire.items[texts[0]].id!r}, {document.file}:{line}), which is "
                "never asked after a reply because typed messages go to the system: ask it "
                "after the task (post_task) instead"
            )
            problems.append(use.document.problem(use.loc, message))
    return problems


def shared_item_ids(
    questionnaires: Mapping[str, Questionnaire | None], documents: Mapping[str, Document]
) -> list[Problem]:
    """Answers are stored by item id, so two questionnaires of a study must not share one."""
    problems = []
    owners: dict[str, tuple[str, Document, int]] = {}
    for questionnaire_id, questionnaire in questionnaires.items():
        document = documents.get(questionnaire_id)
        if questionnaire is None or document is None:
            continue
        for index, item in enumerate(questionnaire.items):
            owner, owner_document, owner_index = owners.setdefault(
                item.id, (questionnaire_id, document, index)
            )
            if owner != questionnaire_id:
                line, _ = owner_document.where(("items", owner_index, "id"))
                message = (
                    f"item id {item.id!r} is also used by questionnaire {owner!r} "
                    f"({owner_document.file}:{line}); answers are stored by item id, so every "
                    "item of a study needs its own id"
                )
                problems.append(document.problem(("items", index, "id"), message))
    return problems


def success_item(
    document: Document, uses: Iterable[Use], questionnaires: Mapping[str, Questionnaire | None]
) -> list[Problem]:
    """The study's ``success_item`` must be a yes/no item asked after a task."""
    wanted = document.data.get("success_item")
    if not isinstance(wanted, str):
        return []
    after_task = {use.questionnaire for use in uses if use.key == "post_task"}
    for questionnaire_id in after_task:
        questionnaire = questionnaires.get(questionnaire_id)
        for item in questionnaire.items if questionnaire is not None else ():
            if item.id == wanted:
                if item.type == "yes_no":
                    return []
                message = f"{wanted!r} is a {item.type} item; the success item must be yes_no"
                return [document.problem(("success_item",), message)]
    message = f"no yes/no item {wanted!r} in a questionnaire asked after a task (post_task)"
    return [document.problem(("success_item",), message)]
