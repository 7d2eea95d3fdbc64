"""The mistakes no single model can see: they need the kind of a scenario, the study's
language, or every questionnaire of a study at once.

Each rule reads the parsed files (the raw data, so that a file with other problems is still
checked in the same run) and returns problems placed at the line that must change.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from questionnaires.models import Item, Questionnaire, RankingItem
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
    elif kind in ("dialogue", "side_by_side"):
        for key in _RATING_ONLY:
            if key in data:
                message = f"{key} is for rating tasks: add 'kind: rating', or remove it"
                problems.append(document.problem((key,), message))
    if kind == "side_by_side" and "exchange" in data:
        message = "side by side, each turn is a vote between two replies: no exchange ratings"
        problems.append(document.problem(("exchange",), message))
    return problems


def side_by_side_systems(document: Document, scenarios: Mapping[str, Document]) -> list[Problem]:
    """A side-by-side task shows two systems with a program behind them (never a wizard's)."""
    systems = document.data.get("systems")
    named = document.data.get("scenarios")
    if not isinstance(systems, list) or not isinstance(named, list):
        return []
    programs = [s for s in systems if isinstance(s, dict) and s.get("type") != "wizard"]
    side_by_side = [
        ref for ref in named
        if isinstance(ref, str) and ref in scenarios
        and scenarios[ref].data.get("kind") == "side_by_side"
    ]  # fmt: skip
    if not side_by_side or len(programs) >= 2:
        return []
    message = (
        f"scenario {side_by_side[0]!r} is side by side: it needs two systems that are not"
        f" wizards, and the study has {len(programs)}"
    )
    return [document.problem(("systems",), message)]


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
    owners: dict[str, tuple[str, Document, Loc]] = {}
    for questionnaire_id, questionnaire in questionnaires.items():
        document = documents.get(questionnaire_id)
        if questionnaire is None or document is None:
            continue
        stored: list[tuple[str, Loc]] = []  # a matrix's statements are stored as items too
        for index, item in enumerate(questionnaire.items):
            stored.append((item.id, ("items", index, "id")))
            stored += [
                (statement.id, ("items", index, "statements", n, "id"))
                for n, statement in enumerate(getattr(item, "statements", ()))
            ]
        for item_id, loc in stored:
            owner, owner_document, owner_loc = owners.setdefault(
                item_id, (questionnaire_id, document, loc)
            )
            if owner != questionnaire_id:
                line, _ = owner_document.where(owner_loc)
                message = (
                    f"item id {item_id!r} is also used by questionnaire {owner!r} "
                    f"({owner_document.file}:{line}); answers are stored by item id, so every "
                    "item of a study needs its own id"
                )
                problems.append(document.problem(loc, message))
    return problems


def simulated_answers(
    scenarios: Mapping[str, Document],
    systems: Iterable[str],
    questionnaires: Mapping[str, Questionnaire | None],
) -> tuple[list[Problem], list[Problem]]:
    """A scenario's ``simulation.answers`` that would answer wrongly (errors: a mean off
    the item's scale, a share of "yes" outside 0 to 1, a distribution over answers the item
    cannot take) or never be used in this study (warnings, as a scenario may serve several
    studies: a system or an item the study does not have), each at its line."""
    from scenarios.simulation import ITEM_TYPES  # the model's own list of types

    if any(questionnaire is None for questionnaire in questionnaires.values()):
        return [], []  # an item may be missing only because its file has problems of its own
    items = {
        item.id: item
        for questionnaire in questionnaires.values()
        if questionnaire is not None
        for item in questionnaire.answered_items()
    }  # a matrix's statements are answered, and so given settings, as scale items
    known_systems = set(systems)
    errors: list[Problem] = []
    unused: list[Problem] = []
    for document in scenarios.values():
        simulation = document.data.get("simulation")
        answers = simulation.get("answers") if isinstance(simulation, dict) else None
        if not isinstance(answers, dict):
            continue
        at: Loc = ("simulation", "answers")
        settings: list[tuple[Loc, str, object]] = []
        profiles = answers.get("profiles")
        for system, profile in (profiles if isinstance(profiles, dict) else {}).items():
            if system not in known_systems:
                message = (
                    f"no system {system!r} in this study (its systems:"
                    f" {', '.join(sorted(known_systems)) or 'none'}): the profile is not used"
                )
                unused.append(document.problem((*at, "profiles", system), message))
                continue
            for key, setting in (profile if isinstance(profile, dict) else {}).items():
                settings.append(((*at, "profiles", system, key), str(key), setting))
        for part in ("items", "types"):
            found = answers.get(part)
            for key, setting in (found if isinstance(found, dict) else {}).items():
                if part == "items" or key in ITEM_TYPES:  # another type: the model says so
                    settings.append(((*at, part, key), str(key), setting))
        for loc, key, setting in settings:
            if key != "default" and key not in ITEM_TYPES and key not in items:
                message = (
                    f"{key!r} is neither an item of this study's questionnaires, nor an item"
                    f" type ({', '.join(ITEM_TYPES)}), nor default: the setting is not used"
                )
                unused.append(document.problem(loc, message))
            else:
                errors += _setting_problems(document, loc, key, setting, items, ITEM_TYPES)
    return errors, unused


def _setting_problems(
    document: Document,
    loc: Loc,
    key: str,
    setting: object,
    items: Mapping[str, Item],
    types: tuple[str, ...],
) -> list[Problem]:
    """One setting (a mean, a share or a distribution) checked against what it answers."""
    answered: list[Item]
    if key == "default":
        answered = [item for item in items.values() if item.type == "scale"]
    elif key in types:
        answered = [item for item in items.values() if item.type == key]
    else:
        answered = [items[key]]
    for item in answered:
        if isinstance(item, RankingItem):
            if found := _ranking_setting(item, setting):
                return [document.problem(loc, found)]
            continue
        values = [v for v, _ in item.choices()] if hasattr(item, "choices") else []
        numbers = sorted(v for v in values if isinstance(v, int))
        if not values or len(numbers) != len(values):
            why = "is answered by typing" if not values else "has options named by words"
            message = f"item {item.id!r} {why}: simulated participants choose its answer alone"
            return [document.problem(loc, message)]
        if isinstance(setting, dict):
            strange = [v for v in setting if v not in numbers]
            if strange:
                message = (
                    f"item {item.id!r} has no answer {strange[0]!r} (its answers:"
                    f" {', '.join(map(str, numbers))})"
                )
                return [document.problem(loc, message)]
        elif isinstance(setting, int | float) and len(numbers) == 2 and not 0 <= setting <= 1:
            message = (
                f"item {item.id!r} has two buttons: give the share of its higher answer"
                f" ({numbers[1]}) from 0 to 1, not {setting:g}"
            )
            return [document.problem(loc, message)]
        elif isinstance(setting, int | float) and not numbers[0] <= setting <= numbers[-1]:
            message = (
                f"a mean of {setting:g} is off the scale of item {item.id!r}"
                f" ({numbers[0]} to {numbers[-1]})"
            )
            return [document.problem(loc, message)]
    return []


def _ranking_setting(item: RankingItem, setting: object) -> str | None:
    """What is wrong with a ranking's setting: it weighs the item's own options."""
    options = [str(o.value) for o in item.options]
    if not isinstance(setting, dict):
        return (
            f"item {item.id!r} is a ranking: give its options weights (the heaviest tends to"
            f" come first), as {{{options[0]}: 3, {options[1]}: 1}}, not {setting!r}"
        )
    strange = [key for key in setting if str(key) not in options]
    if strange:
        return f"item {item.id!r} has no option {strange[0]!r} (its options: {', '.join(options)})"
    return None


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


def success_judge(document: Document, scenarios: Mapping[str, Document]) -> list[Problem]:
    """A warning: the study names a ``success_judge`` and none of its scenarios states a
    ``success_criterion``, so the judge would have nothing to judge."""
    if not isinstance(document.data.get("success_judge"), dict):
        return []
    if any(isinstance(s.data.get("success_criterion"), str) for s in scenarios.values()):
        return []
    message = (
        "the success_judge has nothing to judge: no scenario of the study states a"
        " success_criterion (what the task's success is, in words)"
    )
    return [document.problem(("success_judge",), message)]


def speech_engines(document: Document, scenarios: Mapping[str, Document]) -> list[Problem]:
    """A task that transcribes voice notes or speaks its replies needs the study's engine
    for it (``speech.speech_to_text``, ``speech.text_to_speech``)."""
    speech = document.data.get("speech")
    speech = speech if isinstance(speech, dict) else {}
    problems = []
    for scenario in scenarios.values():
        media = scenario.data.get("media")
        if not isinstance(media, dict):
            continue
        sends, returns = media.get("participant_sends"), media.get("system_returns")
        receives = media.get("system_receives", "transcript")
        if (
            isinstance(sends, list)
            and "voice" in sends
            and receives != "media"
            and not speech.get("speech_to_text")
        ):
            message = (
                f"voice notes are transcribed (system_receives: {receives}), and the study"
                f" {document.file.name} has no speech.speech_to_text"
            )
            problems.append(scenario.problem(("media", "participant_sends"), message))
        if isinstance(returns, list) and "voice" in returns and not speech.get("text_to_speech"):
            message = (
                f"replies are spoken, and the study {document.file.name} has no"
                " speech.text_to_speech"
            )
            problems.append(scenario.problem(("media", "system_returns"), message))
    return problems
