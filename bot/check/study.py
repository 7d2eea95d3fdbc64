"""``ozlab check STUDY``: validate a study before participants meet it.

A researcher runs this after every edit: it prints a summary when the study is sound (a
first line naming what was loaded, then one line per part: design, screening, each task
and what is asked when, so that a wrong reference shows as the wrong name), or every
problem (file, line, field, message) on its own line of stderr, through the CLI, which
exits with :class:`~bot.core.errors.StudyFileError`'s status. Every system is built as
``ozlab run`` builds it (``bot.check.systems``): what would stop the bot at start-up
stops the check.
"""

from __future__ import annotations

import asyncio
import os
from collections import Counter
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING

from bot.check.design import design_warnings, planned_warning, quota_warning, strength_warning
from bot.check.systems import system_problems, tool_problems
from bot.core.errors import SystemSetupError
from bot.engine.assignment import design_cells
from questionnaires.models import Condition, Questionnaire
from scenarios.jobs import AnnotationJob
from scenarios.loading import StudyError, checked_study, study_document
from scenarios.models import Scenario, ScenarioText, StudyBundle, Texts
from scenarios.sentences import catalogue
from scenarios.sentences import languages as sentence_languages

if TYPE_CHECKING:
    from bot.systems.ping import Ping


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
    quota = ""
    if design.quota is not None:
        cells = design_cells(bundle.study)
        quota = (
            f"; quota: {design.quota} completed in each of {_count(len(cells), 'cell')}"
            f" ({', '.join(cells)})"
        )
    return (
        f"design: {design.type} (seed {design.seed}); each participant: {each}; "
        f"systems {design.systems} subjects{quota}"
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
        kind = "side by side" if scenario.kind == "side_by_side" else "dialogue"
        parts = [", ".join([kind, *limits])]
        if scenario.exchange:
            parts.append(f"after each reply: {', '.join(scenario.exchange)}")
        if scenario.tools:
            named = [t.name + (" (ends the task)" if t.ends_task else "") for t in scenario.tools]
            parts.append(f"tools for language models: {', '.join(named)}")
        if media := _media(bundle, scenario):
            parts.append(media)
    if scenario.post_task:
        parts.append(f"after the task: {', '.join(scenario.post_task)}")
    if scenario.translations:
        parts.append(f"translated: {', '.join(scenario.translations)}")
    return f"scenario {scenario.id}: " + "; ".join(parts)


_RECEIVES = {"transcript": "the words", "media": "the file", "both": "the file and its words"}


def _media(bundle: StudyBundle, scenario: Scenario) -> str:
    """What a task takes and gives besides text, and what is kept of a voice ("" for text
    only)."""
    media = scenario.media
    parts = []
    if media.participant_sends:
        sends = " and ".join(media.participant_sends)
        gets = _RECEIVES[media.system_receives]
        parts.append(f"takes {sends} (the system gets {gets})")
        if "voice" in media.participant_sends:
            parts.append("audio kept" if bundle.study.speech.keep_audio else "audio discarded")
    if media.system_returns:
        parts.append(f"systems return {' and '.join(media.system_returns)}")
    return ", ".join(parts)


def _job(job: AnnotationJob) -> str:
    rated = [
        f"each {level} ({', '.join(ids)})"
        for level, ids in (
            ("exchange", job.rate.exchange),
            ("session", job.rate.session),
            ("pair of conversations", job.rate.pair),
        )
        if ids
    ]
    rule = job.adjudication.third_annotator_when if job.adjudication else None
    parts = [" and ".join(rated), _count(job.annotators, "annotator")]
    if rule is not None:
        parts.append("one more where they disagree")
    parts.append("each seen once, in order" if job.seen_once_in_order else "revisitable")
    if job.kind == "pairwise":
        pairing = job.pairing
        per = pairing.pairs_per_system_pair
        parts.append(f"{pairing.selection} pairs, {per} per pair of systems")
        if pairing.onboarding is not None:
            known = _count(len(pairing.onboarding.pairs), "onboarding pair")
            parts.append(f"{known} first (pass mark {pairing.onboarding.threshold:.0%})")
    if job.sessions.sample is not None:
        parts.append(f"a sample of {job.sessions.sample.n} sessions by system")
    return f"annotation job {job.id}: " + ", ".join(parts)


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
    lines.extend(_job(job) for job in bundle.jobs.values())
    languages = bundle.languages()
    if len(languages) > 1:
        lines.append(f"languages: {', '.join(languages)}")
    for code, gaps in missing_translations(bundle).items():
        lines.append(
            f"missing in {code}: " + "; ".join(gaps) if gaps else f"{code}: all translated"
        )
    return "\n  ".join(lines)


_SCENARIO_WORDS = ("title", "brief", "opening_line", "closing_line")


def missing_translations(bundle: StudyBundle) -> dict[str, list[str]]:
    """For every language the study is offered in (its own included when an instrument is
    written in another), what a participant in it would still read in another language:
    "texts: welcome, consent", "scenario s1: brief", "questionnaire q: idial.s1 text"."""
    study = bundle.study
    written = study.texts.model_fields_set
    languages = bundle.languages()
    found: dict[str, list[str]] = {}
    for code in languages:
        gaps: list[str] = []
        if code != study.language:
            sentences = study.translations.get(code, {})
            own = [f for f in Texts.model_fields if f in written and f not in sentences]
            if own:
                gaps.append("texts: " + ", ".join(own))
            defaults = catalogue(code)
            bare = [
                f
                for f, info in Texts.model_fields.items()
                if f not in written
                and f not in sentences
                and f not in defaults
                and info.default is not None  # a sentence only a study writes (audio_kept_note)
            ]
            if bare and defaults:
                gaps.append(f"scenarios/texts/{code}.yaml lacks " + ", ".join(bare))
            elif bare:
                gaps.append(
                    f"the bot's default sentences: ozlab ships them in "
                    f"{', '.join(sentence_languages())}; add scenarios/texts/{code}.yaml, or "
                    f"translations.{code} for all {len(bare)}"
                )
            for scenario_id in study.scenarios:
                scenario = bundle.scenario(scenario_id)
                words = scenario.translations.get(code, ScenarioText())
                missing = [
                    f for f in _SCENARIO_WORDS if getattr(scenario, f) and not getattr(words, f)
                ]
                if missing:
                    gaps.append(f"scenario {scenario_id}: " + ", ".join(missing))
        for questionnaire in bundle.questionnaires.values():
            if missing := questionnaire.missing_in(code):
                gaps.append(f"questionnaire {questionnaire.id}: " + ", ".join(missing))
        if gaps or code != study.language:
            found[code] = gaps
    return found


def check(
    ref: str | Path,
    env: Mapping[str, str] | None = None,
    *,
    ping: bool = False,
    participants: int | None = None,
) -> None:
    """Validate the study ``ref`` (a path or a shipped name), build its systems with ``env``
    (the process's environment unless given) and print its summary and the warnings about
    its design; a broken study raises :class:`~scenarios.loading.StudyError`, which the CLI
    prints. ``ping`` then sends every networked system one message (``bot.systems.ping``):
    one that fails raises :class:`~bot.core.errors.SystemSetupError`, finding it is the point.
    ``participants``: the number planned, warned about when it leaves the design uneven."""
    bundle, unused = checked_study(ref)
    environment = os.environ if env is None else env
    document = study_document(ref)
    problems = system_problems(document, bundle.study.systems, environment)
    problems += tool_problems(bundle)
    if problems:
        raise StudyError(problems)
    print(summary(bundle))
    warnings = design_warnings(bundle.study)
    if participants is not None and (uneven := planned_warning(bundle.study, participants)):
        warnings.append(uneven)
    if ungraded := strength_warning(bundle):
        warnings.append(ungraded)
    if unfilled := quota_warning(bundle.study):
        warnings.append(unfilled)
    for warning in warnings:
        line, field = document.where(warning.loc)
        print(f"{document.file}:{line}: warning: {field}: {warning.message}")
    for problem in unused:
        print(f"{problem.file}:{problem.line}: warning: {problem.field}: {problem.message}")
    if ping:
        _ping(bundle, environment)


def _ping(bundle: StudyBundle, env: Mapping[str, str]) -> None:
    from bot.check.judges import ping_judges  # aiohttp: only when asked
    from bot.systems.ping import ping_lines, ping_systems

    async def both() -> tuple[list[Ping], list[Ping]]:
        return await ping_systems(bundle, env), await ping_judges(bundle, env)

    pings, judges = asyncio.run(both())
    for line in ping_lines(pings) + ping_lines(judges, none=None):
        print(line, flush=True)
    failed = [ping.system_id for ping in pings if not ping.up]
    failed_judges = [ping.system_id for ping in judges if not ping.up]
    if failed or failed_judges:
        said = []
        if failed:
            said.append(
                f"{len(failed)} of {len(pings)} systems did not answer the ping with a reply"
                f" the bot can use: {', '.join(failed)}"
            )
        if failed_judges:
            said.append(
                f"{len(failed_judges)} of {len(judges)} judges did not answer with one of the"
                f" values they were offered: {', '.join(failed_judges)}"
            )
        raise SystemSetupError("; ".join(said) + " (see above)")
