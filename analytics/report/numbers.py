"""Everything the per-system report says, as numbers, strings and tidy DataFrames.

``build_report`` computes; renderers (terminal, Markdown, HTML, JSON) only format. Tables
keep one row per system (and scenario, item, construct, …) with a ``system_id`` column
rather than one nested block per system, so that a renderer can pivot or plot them;
``Report.for_system`` gives one system's rows. A missing part of the study (no sessions
yet, no definition stored, one system only) becomes a sentence in ``Report.notes``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from analytics.annotations.ratings import Annotations
from analytics.annotations.ratings import from_study as annotation_section
from analytics.data.loading import NO_SYSTEM, SEVERAL_SYSTEMS, StudyData
from analytics.report.examples import example_conversations
from analytics.report.media import MediaSection, media_section
from analytics.report.models import ModelsSection, models_section
from analytics.report.present_judges import JudgesSection, judges_from_study
from analytics.report.provenance import Provenance, provenance
from analytics.report.stress import StressSection, stress_section
from analytics.statistics import completion as tasks
from analytics.statistics import questionnaires as stats
from analytics.statistics import side_by_side
from analytics.statistics.compare import family_holm
from analytics.statistics.effect_intervals import RESAMPLES
from analytics.statistics.pairwise import Pairwise, pairwise_from_study
from analytics.statistics.proportions import compare_proportions
from analytics.statistics.quality import (
    READING,
    Exclusion,
    ReadingTime,
    flagged_participants,
    quality_flags,
    simulated_participants,
)
from analytics.statistics.quality import (
    exclude_flagged as drop_flagged,
)
from analytics.statistics.ranking import Rankings, rankings_from_study
from analytics.statistics.success_sources import JUDGE_COLUMNS, SOURCE_COLUMNS, judge_provenance
from analytics.statistics.success_sources import decide as decide_success
from analytics.statistics.system_reliability import SystemReliability, system_reliability
from bot.core.vocabulary import AnswerStatus, Moment
from scenarios.models import Examples


@dataclass(frozen=True)
class StudyInfo:
    study_ids: tuple[str, ...]
    title: str | None
    systems: tuple[str, ...]
    """Declared systems first (study order), then any others found in the sessions."""
    scenarios: tuple[str, ...]
    design: str
    """``between`` or ``within``: what the comparisons assume."""
    declared_design: str | None
    assignment: str | None
    """How systems were assigned: random, balanced, latin_square."""
    instruments: tuple[str, ...]
    schema_version: int


@dataclass(frozen=True)
class Participation:
    overall: dict[str, int]
    by_system: pd.DataFrame
    events: pd.DataFrame


@dataclass(frozen=True)
class Completion:
    by_system: pd.DataFrame
    by_scenario: pd.DataFrame
    end_reasons: pd.DataFrame
    end_reasons_by_scenario: pd.DataFrame
    sources: pd.DataFrame = field(default_factory=lambda: pd.DataFrame(columns=SOURCE_COLUMNS))
    """Per system, which source decided its task success (``None``: not measured)."""
    success_judge: pd.DataFrame = field(default_factory=lambda: pd.DataFrame(columns=JUDGE_COLUMNS))
    """The study's success judge: its settings, verdicts and cost (no rows: none judged)."""


@dataclass(frozen=True)
class WizardShare:
    table: pd.DataFrame
    note: str | None


@dataclass(frozen=True)
class Questionnaires:
    items: pd.DataFrame
    items_by_scenario: pd.DataFrame
    distribution: pd.DataFrame
    constructs: pd.DataFrame
    reliability: pd.DataFrame
    idial: pd.DataFrame
    by_turn: pd.DataFrame
    by_turn_constructs: pd.DataFrame
    agreement: pd.DataFrame
    codebook: pd.DataFrame
    choices: pd.DataFrame
    """Answer options of closed items in asking order: every item's own scale."""
    titles: dict[str, str] = field(default_factory=dict)
    """Each questionnaire's title, as participants saw it (none for an imported study's)."""

    def title(self, questionnaire_id: str) -> str:
        """What a figure calls the questionnaire: its title, or its id where none is known."""
        return self.titles.get(questionnaire_id, questionnaire_id)


@dataclass(frozen=True)
class Comparisons:
    design: str
    method: str
    """The tests used, in one sentence for the report."""
    table: pd.DataFrame
    family: int = 0
    """How many tests are in the family of Holm's correction in ``p_family``."""
    adjust: str = "headline"
    """Holm's family: each measure's headline test, or ``all`` the tests in the table."""


@dataclass(frozen=True)
class Quality:
    flags: pd.DataFrame
    participants: pd.DataFrame
    rules: dict[str, str]
    exclusion: Exclusion | None
    simulated: tuple[str, ...] = ()
    """Participants a simulation played (``ozlab demo``, ``ozlab pilot``), whether or not
    flagged: excluded only for a flag, never for being simulated."""
    participants_in_data: int = 0
    """Every participant in the data, before any exclusion (what ``simulated`` is out of)."""


@dataclass(frozen=True)
class Report:
    study: StudyInfo
    participation: Participation
    completion: Completion
    wizard: WizardShare
    questionnaires: Questionnaires
    comparisons: Comparisons
    comments: pd.DataFrame
    quality: Quality
    notes: tuple[str, ...]
    system_reliability: SystemReliability
    provenance: Provenance
    stress: StressSection | None = None
    """Linguistic stress tests (IDIAL), when any were replayed."""
    annotations: Annotations | None = None
    """Annotators' agreement, adjudication and self-report correlations; None (and no
    section) when the study has no annotation ratings."""
    judges: JudgesSection | None = None
    """Model judges beside people (``analytics.report.present_judges``); None without."""
    pairwise: Pairwise | None = None
    """Bradley–Terry scores and the rest of the pairwise votes' numbers; None (and no
    section) when the study has no votes."""
    rankings: Rankings | None = None
    """Ranking items' mean ranks per option and system and their rank tests; None (and no
    section) when no ranking was answered."""
    models: ModelsSection | None = None
    """Models for repeated measures (GEE of success, mixed models of scores); None (and no
    section) when every participant did one task and gave each score once."""
    media: MediaSection | None = None
    """Voice notes and pictures per system (``analytics.report.media``); None (and no
    section) when the study has none."""
    examples: pd.DataFrame = field(default_factory=pd.DataFrame)
    """A few whole conversations per system with their exchanges' ratings
    (``analytics.report.examples``)."""
    example_marks: Examples | None = None
    """The study file's ``examples``: the sessions and scenarios it marks (None: several
    studies, or no definition)."""

    def for_system(self, system_id: str) -> dict[str, pd.DataFrame]:
        """Every table's rows about one system, by table name."""
        tables = {
            "participation": self.participation.by_system,
            "completion": self.completion.by_system,
            "completion_by_scenario": self.completion.by_scenario,
            "end_reasons": self.completion.end_reasons,
            "wizard": self.wizard.table,
            "items": self.questionnaires.items,
            "distribution": self.questionnaires.distribution,
            "constructs": self.questionnaires.constructs,
            "reliability": self.questionnaires.reliability,
            "idial": self.questionnaires.idial,
            "by_turn": self.questionnaires.by_turn,
            "comments": self.comments,
            "system_reliability": self.system_reliability.by_system,
            "system_errors": self.system_reliability.errors,
            "unavailable": self.system_reliability.periods,
        }
        return {
            name: table[table["system_id"] == system_id].reset_index(drop=True)
            for name, table in tables.items()
        }


RULES = {
    "attention_failed": "gave another answer than an attention check asked for",
    "straight_lining": "gave the same answer to every item of an instrument with reverse items",
    "too_fast": READING.describe(),
    "abandoned": "left a session unfinished",
}


def simulated_note(simulated: int, everyone: int) -> str:
    """What a report of simulated participants says, so it is never taken for people's data."""
    every = "All" if simulated == everyone else f"{simulated} of"
    return (
        f"{every} {everyone} participants were simulated (ozlab demo or ozlab pilot), not "
        "people: their answers and flags describe the simulation, not a study's participants."
    )


def build_report(
    data: StudyData,
    *,
    exclude_flagged: bool = False,
    reading: ReadingTime = READING,
    adjust: str = "headline",
    every_model: bool = False,
) -> Report:
    """The whole report; with ``exclude_flagged`` every number is computed without the
    participants that data-quality checks flagged, and the report says how many and why;
    ``adjust`` is Holm's family across measures (``analytics.statistics.compare.ADJUST``);
    ``every_model``: mixed models fitted on a measure of any size (``--models``)."""
    flags = quality_flags(data, reading)
    simulated = simulated_participants(data.participants)
    everyone = len(data.participants)
    exclusion = None
    if exclude_flagged:
        data, exclusion = drop_flagged(data, flags)
    info = _study_info(data)
    bundle = data.bundle
    marks = bundle.study.examples if bundle is not None else None
    notes = [*data.notes, *_missing(data, info)]
    wizard_table, wizard_note = tasks.wizard_share(data.exchanges, data.has_wizard_source)
    scores = stats.construct_scores(data.responses)
    comparisons = _comparisons(data, info, scores, adjust)
    if simulated:
        notes.append(simulated_note(len(simulated), everyone))
    one_system = side_by_side.one_system_sessions(data.sessions)
    if shared := side_by_side.left_out_note(data.sessions):
        notes.append(shared)
    if answered := side_by_side.answers_note(data.sessions, data.responses):
        notes.append(answered)
    if exclusion is not None:
        notes.append(
            f"{exclusion.excluded} of {exclusion.participants_before} participants were "
            "excluded because data-quality checks flagged them; every number below is "
            "computed without them."
        )
    decided, sources = decide_success(
        one_system, data.events, data.responses, data.bundles, data.judgements
    )
    return Report(
        study=info,
        participation=Participation(
            overall=tasks.participation(data),
            by_system=tasks.participation_by_system(one_system, data.withdrawals),
            events=tasks.events_by_kind(data.events),
        ),
        completion=Completion(
            by_system=tasks.completion(decided),
            by_scenario=tasks.completion(decided, by=("system_id", "scenario_id")),
            sources=sources,
            success_judge=judge_provenance(data.bundles, data.judgements, data.judge_costs),
            end_reasons=tasks.end_reasons(one_system),
            end_reasons_by_scenario=tasks.end_reasons(one_system, ("system_id", "scenario_id")),
        ),
        wizard=WizardShare(wizard_table, wizard_note),
        questionnaires=_questionnaires(data, scores),
        comparisons=comparisons,
        comments=tasks.comments(data.responses, data.items),
        quality=Quality(
            flags=flags,
            participants=flagged_participants(flags, simulated),
            rules={**RULES, "too_fast": reading.describe()},
            exclusion=exclusion,
            simulated=simulated,
            participants_in_data=everyone,
        ),
        notes=tuple(notes),
        system_reliability=system_reliability(
            side_by_side.per_side_exchanges(data.exchanges, data.events, data.sessions),
            data.events,
            data.sessions,
            has_source=data.has_wizard_source,
        ),
        provenance=provenance(data, exclusion, info.design, info.systems),
        stress=stress_section(data.stress, data.sessions["session_id"]) if data.stress else None,
        annotations=annotation_section(data, scores, info.systems),
        pairwise=pairwise_from_study(data, info.systems),
        rankings=rankings_from_study(
            data.responses, data.items, data.choices, info.design, info.systems
        ),
        models=models_section(data, scores, every_size=every_model),
        media=media_section(data),
        examples=example_conversations(data, info.systems, marks),
        example_marks=marks,
        judges=judges_from_study(data),
    )


def _study_info(data: StudyData) -> StudyInfo:
    bundles = list(data.bundles.values())
    declared = [s.id for b in bundles for s in b.study.systems]
    found = sorted(set(data.sessions["system_id"].dropna().astype(str)) - set(declared))
    designs = {b.study.design.systems for b in bundles}
    declared_design = "within" if "within" in designs else (designs.pop() if designs else None)
    return StudyInfo(
        study_ids=tuple(data.bundles) or tuple(sorted(set(data.sessions["study_id"].astype(str)))),
        title=bundles[0].study.title if len(bundles) == 1 else None,
        systems=tuple(dict.fromkeys([*declared, *found])),
        scenarios=tuple(dict.fromkeys(s for b in bundles for s in b.study.scenarios)),
        design=stats.detect_design(data.sessions, declared_design),
        declared_design=declared_design,
        assignment=bundles[0].study.design.type if len(bundles) == 1 else None,
        instruments=tuple(dict.fromkeys(q for b in bundles for q in b.questionnaires)),
        schema_version=data.schema_version,
    )


def _questionnaires(data: StudyData, scores: pd.DataFrame) -> Questionnaires:
    responses = data.responses
    answered = stats.answered_closed(responses, by=("system_id", "scenario_id"))
    labels = stats.answer_labels(answered, data.choices)
    items, distribution = stats.item_tables(answered, labels=labels)
    # answers outside a scenario drop out here: groups never have a NaN key
    by_scenario, _ = stats.item_tables(answered, ("system_id", "scenario_id"), labels=labels)
    constructs = scores.groupby(["system_id", "questionnaire_id", "construct"]).agg(
        n=("score", "size"),
        participants=("participant_id", "nunique"),
        mean=("score", "mean"),
        sd=("score", "std"),
        median=("score", "median"),
    )
    return Questionnaires(
        items=items,
        items_by_scenario=by_scenario,
        distribution=distribution,
        constructs=constructs.reset_index(),
        reliability=stats.construct_reliability(responses),
        idial=stats.idial_summary(responses),
        by_turn=stats.ratings_by_turn(responses),
        by_turn_constructs=stats.ratings_by_turn(responses, "construct", scores),
        agreement=stats.rater_agreement(responses),
        codebook=data.items,
        choices=data.choices,
        titles={
            q_id: q.title for b in data.bundles.values() for q_id, q in b.questionnaires.items()
        },
    )


_METHODS = {
    ("between", 2): "Mann–Whitney U with rank-biserial r",
    ("between", 3): "Kruskal–Wallis H with ε² = H/(n − 1), then Mann–Whitney U for every pair "
    "with Holm's correction",
    ("within", 2): "Wilcoxon signed-rank with matched-pairs rank-biserial r",
    ("within", 3): "Friedman with Kendall's W, then Wilcoxon signed-rank for every pair with "
    "Holm's correction",
}
_CATEGORICAL_METHODS = {
    ("between", 2): "Fisher's exact test (for yes/no the odds ratio of the first answer, the "
    "first system over the second; Cramér's V for more options)",
    ("between", 3): "Pearson's χ² without continuity correction with Cramér's V, then "
    "Fisher's exact test for every pair with Holm's correction",
    ("within", 2): "McNemar's test (exact p) with the matched-pairs odds ratio",
    ("within", 3): "Cochran's Q, then McNemar's test for every pair with Holm's correction",
}
CATEGORICAL_TYPES = ("yes_no", "thumbs", "choice")
"""Items whose answers are categories: compared as proportions, never as ranks."""


def _comparisons(
    data: StudyData, info: StudyInfo, scores: pd.DataFrame, adjust: str = "headline"
) -> Comparisons:
    responses = data.responses
    found = responses["system_id"].unique()  # not .dropna() first: a copy of every answer
    systems = [s for s in found if pd.notna(s) and s not in _PSEUDO]
    design = info.design
    if len(systems) < 2:
        method = "No comparison: fewer than two systems have questionnaire answers."
        return Comparisons(design, method, pd.DataFrame(columns=_COMPARISON_COLUMNS), adjust=adjust)
    size = min(len(systems), 3)
    within = design == "within"
    tables = []
    # Only the columns a comparison reads: each measure's part is a copy of them.
    scores = scores.loc[scores["moment"] != Moment.SCREENING.value, _COMPARED]
    for (q_id, construct), part in scores.groupby(["questionnaire_id", "construct"]):
        table = stats.compare_systems(part, within=within, systems=info.systems)
        tables.append(
            table.assign(
                measure_kind="construct", questionnaire_id=str(q_id), measure=str(construct)
            )
        )
    checks = data.items.loc[data.items["attention"].notna(), "item_id"]
    # Items outside constructs are few: the other tests run on them, not on every answer.
    loose = responses[responses["construct"].isna()]
    asked = loose[
        (loose["status"] == AnswerStatus.ANSWERED.value)
        & (loose["moment"] != Moment.SCREENING.value)
        & ~loose["item_id"].isin(set(checks))
    ]
    categorical = asked["type"].isin(CATEGORICAL_TYPES)
    single = asked[~categorical & asked["score"].notna()]
    for (q_id, item_id), part in single.groupby(["questionnaire_id", "item_id"], observed=True):
        table = stats.compare_systems(part, within=within, systems=info.systems)
        tables.append(
            table.assign(measure_kind="item", questionnaire_id=str(q_id), measure=str(item_id))
        )
    tables += _categorical(asked[categorical], data.choices, within, info.systems)
    table = pd.concat(tables, ignore_index=True) if tables else pd.DataFrame()
    table = table.reindex(columns=_COMPARISON_COLUMNS)
    family = family_holm(table, adjust)
    across = _family_sentence(family, adjust)
    method = (
        f"{design.capitalize()}-subjects design, {len(systems)} systems. Scale items and "
        f"constructs: {_METHODS[(design, size)]}; yes/no and choice items, as proportions: "
        f"{_CATEGORICAL_METHODS[(design, size)]}. Each participant counts once per system "
        "(answers averaged; for yes/no and choice items the answer given most often). Rows "
        f"with too few participants give no p-value. Each p-value says how it was computed.{across}"
        " Multiple-choice items are described, not tested. An effect between two systems "
        "reads the way the table's columns do, the study's first system over its second "
        "(each row names them). Each effect size has its 95% "
        "interval: rank-biserial r by Fisher's z with the rank sum's normal SE; Fisher's odds "
        "ratio by its exact conditional interval; McNemar's by the Clopper–Pearson interval "
        "of the discordant pairs; ε², Kendall's W, η²_Q and Cramér's V by a percentile "
        f"bootstrap over participants ({RESAMPLES:,} resamples, within each system between "
        "subjects)."
    )
    if (table["kind"] == "repeated").any():
        method += (
            " A yes/no or two-answer item that participants answered several times about one "
            "system (after every reply) also gets the model of every answer beside its test: a "
            "logistic GEE with participants as clusters (exchangeable working correlation, "
            "robust standard errors), its Wald χ² and the odds ratio of the first answer."
        )
    if within and (table["design"] == "between").any():
        method += (
            " A measure that no participant answered for two systems (a form asked after one "
            "of the tasks only) has nothing to pair: it is compared between subjects "
            f"({_METHODS[('between', size)]}), as its row says."
        )
    return Comparisons(design, method, table, family, adjust)


def _family_sentence(family: int, adjust: str) -> str:
    """Which tests Holm's correction across measures covers, said in the report because a
    reader cannot tell from the numbers."""
    if family < 2:
        return ""
    if adjust == "all":
        return (
            f" Holm's correction covers every test in the table, {family} tests (headline and "
            "pairwise), each p-value also given corrected (the raw p beside it)."
        )
    return (
        f" Across the {family} measures tested, each p-value is also corrected with Holm's "
        "method for the family (the raw p beside it): the headline test of each measure only; "
        "pairwise tests are corrected within their measure, and ozlab report --adjust all "
        "corrects across every test in the table."
    )


def _categorical(
    answers: pd.DataFrame, choices: pd.DataFrame, within: bool, systems: Sequence[str]
) -> list[pd.DataFrame]:
    """Yes/no and choice items compared as proportions, one answer per participant."""
    if answers.empty:
        return []
    answers = answers.sort_values("answered_at", kind="stable")
    answers = answers.assign(answer=_coded_answers(answers["value"], answers["text"]))
    tables = []
    for (q_id, item_id), part in answers.groupby(["questionnaire_id", "item_id"], observed=True):
        mine = choices[(choices["questionnaire_id"] == q_id) & (choices["item_id"] == item_id)]
        labels = dict(zip(mine["value"], mine["label"], strict=True))
        table = compare_proportions(
            part, within=within, order=list(mine["value"]), labels=labels, systems=systems
        )
        tables.append(
            table.assign(measure_kind="item", questionnaire_id=str(q_id), measure=str(item_id))
        )
    return tables


def _coded_answers(value: pd.Series, text: pd.Series) -> pd.Series:
    """Each answer as the item's choices name it: a whole value as an int (1, not 1.0), any
    other value as a float, the text where there is no value. Converted once per distinct
    value, not per answer: an item asked after every exchange has a million answers."""
    numbers = value.to_numpy(dtype=float)
    known = ~np.isnan(numbers)
    distinct, codes = np.unique(numbers[known], return_inverse=True)
    named = [int(v) if v.is_integer() else v for v in distinct.tolist()]
    coded = text.astype(object).to_numpy(copy=True)
    coded[known] = np.array(named, dtype=object)[codes]
    return pd.Series(coded, index=value.index, dtype=object)


_PSEUDO = (NO_SYSTEM, SEVERAL_SYSTEMS)
_COMPARED = ["questionnaire_id", "construct", "participant_id", "system_id", "score"]
_COMPARISON_COLUMNS = [
    "measure_kind", "questionnaire_id", "measure", *stats.COMPARE_COLUMNS, "p_family",
]  # fmt: skip


def _missing(data: StudyData, info: StudyInfo) -> list[str]:
    """What the report cannot say yet, and why."""
    notes = []
    sessions, responses = data.sessions, data.responses
    if data.participants.empty:
        notes.append("No participants yet.")
    if sessions.empty:
        notes.append("No sessions yet: there is nothing to report on task completion.")
    if responses.empty:
        notes.append("No questionnaire answers yet.")
    elif responses["construct"].notna().sum() == 0 and not data.items.empty:
        notes.append(
            "No instrument in this study groups items into constructs: items are reported "
            "one by one, without construct scores or Cronbach's alpha."
        )
    unknown = responses["type"].isna().sum()
    if unknown and not data.items.empty:
        notes.append(
            f"{unknown} answers belong to items the stored study definition does not describe: "
            "they are scored as given."
        )
    in_progress = sessions["state"].astype(object).isin(tasks.IN_PROGRESS).sum()
    if in_progress:
        notes.append(
            f"{in_progress} sessions are still in progress: they are not counted in task "
            "completion."
        )
    dialogues = sessions[sessions["scenario_kind"] != "rating"]
    if len(dialogues) and dialogues["expected_duration_s"].isna().all():
        notes.append(
            "No scenario gives an expected duration: time per task is reported without a "
            "comparison."
        )
    if len([s for s in sessions["system_id"].dropna().unique()]) == 1:
        notes.append("Only one system has sessions: systems are not compared.")
    if info.declared_design == "within" and info.design == "within":
        met = sessions.groupby("participant_id")["system_id"].nunique()
        if len(met) and (met < 2).all():
            notes.append("The study is within-subject, but no participant has met two systems yet.")
    if "imported" in responses.columns and responses["imported"].any():
        imported = responses[responses["imported"]]
        notes.append(
            f"{len(imported)} answers of {imported['participant_id'].nunique()} participants "
            "were imported from a file (ozlab import responses) rather than given over Telegram."
        )
    if not info.systems:
        notes.append("No systems are known: the study definition is missing and no session ran.")
    return notes
