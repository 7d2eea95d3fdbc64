"""The report as JSON: every number, with stable keys, for scripts.

Top-level layout (``"format": "ozlab-report"``, ``"version": 1``), in the document's
order; every table is a list of row objects whose keys are the columns of the matching
``Report`` table, present in every row (a value that cannot be computed is ``null``, never NaN)::

    format, version, generated_at (ISO 8601 UTC; SOURCE_DATE_EPOCH when set),
                    source (the database file name or null)
    study:          study_ids, title, systems, scenarios, design, declared_design,
                    assignment, instruments, schema_version
    notes:          [sentence, ...]  what is missing, excluded or imported
    comparisons:    design, method, family (tests in the Holm family), adjust ("headline":
                    each measure's omnibus test, or "all": every test), table [...]
    pairwise:       (only when the study has votes) options {ties, both_bad, anchor,
                    anchor_score, rounds, seed, level, position, onboarding_threshold,
                    alpha, power}, methods {model, scale, bootstrap, sandwich, rank,
                    shown_first, win_rate, agreement, onboarding, sample_size: sentences},
                    questions [...], scores [...], parameters [...], win_rates [...], pairs
                    [...], sample_size [...], raters [...], onboarding [...], notes [...]
                    (docs/pairwise.md; an unbounded interval end is null)
    participation:  overall {participants, consented, ..., imported_answers,
                    imported_participants}, by_system [...], events [...]
    completion:     by_system [...], by_scenario [...], end_reasons [...],
                    end_reasons_by_scenario [...], sources [...] (which source decided
                    each system's task success; null: not measured), success_judge [...]
                    (the model judge's settings, verdicts and cost)
    system_reliability: by_system [...], errors [...], periods [...]
    media:          (only when the study has voice notes, photos or spoken replies) method,
                    by_system [system_id, voice_notes, voice_seconds, photos, refused,
                    transcribed, recognition_failed, recognition_failure_rate, doubted,
                    spoken_replies, speaking_failed, pictures_shown], refused [system_id,
                    kind, problem, n], latency [system_id, stage (fetch, speech_to_text,
                    system, text_to_speech), n, median_ms, p95_ms, mean_ms, share],
                    word_error_rate [system_id, utterances, reference_words,
                    substitutions, deletions, insertions, wer, engines] ([] without
                    reference transcripts), utterances [system_id, session_id, turn,
                    reference, transcript, wer] (every voice note compared, worst first)
    wizard:         table [...], note
    questionnaires: items, items_by_scenario, distribution, constructs, reliability,
                    idial, by_turn, by_turn_constructs, agreement, codebook, choices
                    (tables), titles {questionnaire id: its title}
    models:         (empty tables unless some participant did several tasks or gave a
                    score more than once) {success {test [method, n_sessions, n_participants,
                    systems, chi2, df, p, working_correlation, note], odds_ratios
                    [system_id, reference, odds_ratio, ci_low, ci_high, p]}, mixed {fits
                    [measure_kind, questionnaire_id, measure, method, formula, n_scores,
                    n_participants, n_scenarios, var_participant, var_scenario,
                    var_residual, reml_criterion, log_likelihood, thresholds, statistic,
                    dropped, note], terms [measure_kind, questionnaire_id, measure, term,
                    kind, estimate, se, df, ci_low, ci_high, statistic, p]}} (statistic:
                    t with Satterthwaite's df for a linear model, Wald z for a cumulative
                    link model of an ordinal item); completion rows say their
                    interval's method in ci_method and correct_ci_method (Wilson's, or a
                    GEE's clustered by participant)
    comments:       [...]
    examples:       [...] the example conversations' exchanges: system_id, session_id,
                    participant_id, scenario_id, end_reason, turn, user_text, system_text,
                    source, error, ratings {item: answer}
    reliability:    [...] agreement between annotators, one object per job, item, level,
                    system and statistic: job, instrument_id, item, level ("exchange" |
                    "session"), system (null: all systems pooled), n_targets,
                    n_annotators, statistic (ICC1 ICC2 ICC3 ICC1k ICC2k ICC3k,
                    alpha_nominal alpha_ordinal alpha_interval alpha_ratio, cohen_kappa
                    cohen_kappa_linear cohen_kappa_quadratic, fleiss_kappa,
                    percent_agreement), value, ci_low, ci_high, f, df1, df2, p (ICC only),
                    reported (the alpha that fits the item), note; [] without annotations;
                    where a model judge rated the item, with_judges: the same figure with
                    the judges as more raters {raters ("people + model ID"), value, ci_low,
                    ci_high, n_targets, n_annotators} (null where it has none)
    annotations:    null without annotation ratings, else {method, adjudication_rule,
                    leave_one_out [... as reliability, with left_out: the annotator left
                    out], annotators [job, instrument_id, item, level, annotator, n,
                    n_adjudication, mean, sd, distribution], adjudication [job,
                    instrument_id, item, level, n_targets, n_disagreed, n_adjudicated,
                    share_adjudicated, n_unresolved], final_values [job, instrument_id,
                    item, level, target, session_id, turn, system, scenario, value, score,
                    n_ratings, how], final_by_system [job, instrument_id, item, level,
                    system, n_targets, n_resolved, mean, sd, distribution], self_report
                    [job, instrument_id, item, system (null: all systems pooled),
                    questionnaire_id, measure, measure_kind, n, rho, ci_low, ci_high,
                    ci_method, p, p_method, note], trajectories [job, instrument_id, item,
                    session_id, system, turn, n_annotators, mean], notes [...]}
    judges:         (only when a model judge rated or voted) agreement [job, level,
                    instrument_id, item, judge, comparison (human-human, judge-annotator,
                    judge-adjudicated), with, statistic, value, low, high, targets],
                    verdicts [...], reliability_with_judges [... as reliability],
                    position_bias [...], length_bias [...], pair_agreement [...],
                    prediction_powered [...],
                    self_preference [job, level, instrument_id, item, judge, family,
                    own_systems, judge_own, judge_other, people_own, people_other,
                    self_preference, low, high, n_own, n_other], provenance [job, judge, model,
                    host, prompt_hash, temperature, seed, first_at, last_at, rated,
                    unparseable, failed, calls, prompt_tokens, completion_tokens]
                    (docs/judges.md)
    stress:         (only when stress tests were replayed) {system: {overall, groups
                    {spelling, lexical, syntactic}, types {ST-1, ...}: each {applied,
                    passed, failed, unsure, awaiting, not_applicable, pass_rate, ci_low,
                    ci_high}, mean_of_groups, failures [...], model_agreement}}
    quality:        flags [...], participants [... with simulated true|false],
                    rules {flag: rule}, simulated (how many participants a simulation
                    played: not a flag), simulated_participants [...],
                    exclusion null | {participants_before, excluded, by_flag [...],
                    participant_ids [...], kinds [...]}
    provenance:     ozlab_version, generated_at, schema_version, definitions [[study id,
                    sha256]], design {type, systems, seed, tasks_per_participant, order} |
                    null, assignments [...], seeds [...], exclusions (words),
                    excluded_participants [...], detectable (a sentence) | null

Dict cells: ``items[].distribution`` (and the annotators' and final values' distributions)
becomes ``[{"answer": a, "count": n}, ...]`` in scale order (answers may be numbers or
codes, which JSON object keys could not keep apart);
other dict cells (``comparisons.table[].n_per_group``) become objects keyed by system.
"""

from __future__ import annotations

import json
import math
from dataclasses import asdict, fields, is_dataclass
from datetime import datetime
from typing import Any

import numpy as np
import pandas as pd

from analytics.report.numbers import Report

FORMAT = "ozlab-report"
VERSION = 1
_PAIR_COLUMNS = {"distribution": ("answer", "count")}


def report_to_dict(report: Report, *, source: str | None = None) -> dict[str, Any]:
    """The report as plain JSON-ready Python values (see the module docstring)."""
    from analytics.report.present_judges import reliability_records

    q = report.questionnaires
    exclusion = report.quality.exclusion
    whole = {
        "format": FORMAT,
        "version": VERSION,
        "generated_at": report.provenance.generated_at,
        "source": source,
        "provenance": _plain(asdict(report.provenance)),
        "study": _plain(asdict(report.study)),
        "notes": list(report.notes),
        "participation": {
            "overall": _plain(report.participation.overall),
            "by_system": records(report.participation.by_system),
            "events": records(report.participation.events),
        },
        "completion": {
            name: records(getattr(report.completion, name))
            for name in (
                "by_system",
                "by_scenario",
                "end_reasons",
                "end_reasons_by_scenario",
                "sources",
                "success_judge",
            )
        },
        "wizard": {"table": records(report.wizard.table), "note": report.wizard.note},
        "system_reliability": {
            name: records(getattr(report.system_reliability, name))
            for name in ("by_system", "errors", "periods")
        },
        "questionnaires": {
            f.name: records(value)
            if isinstance(value := getattr(q, f.name), pd.DataFrame)
            else value
            for f in fields(q)
        },
        "comparisons": {
            "design": report.comparisons.design,
            "method": report.comparisons.method,
            "family": report.comparisons.family,
            "adjust": report.comparisons.adjust,
            "table": records(report.comparisons.table),
        },
        "comments": records(report.comments),
        "examples": records(report.examples),
        "quality": {
            "flags": records(report.quality.flags),
            "participants": records(report.quality.participants),
            "rules": dict(report.quality.rules),
            "simulated": len(report.quality.simulated),
            "simulated_participants": list(report.quality.simulated),
            "exclusion": None
            if exclusion is None
            else {
                "participants_before": exclusion.participants_before,
                "excluded": exclusion.excluded,
                "by_flag": records(exclusion.by_flag),
                "participant_ids": list(exclusion.participant_ids),
                "kinds": list(exclusion.kinds),
            },
        },
        "reliability": reliability_records(report),
        "annotations": _annotations(report),
    }
    if report.judges is not None:
        from analytics.report.present_judges import judges_json

        whole["judges"] = judges_json(report.judges)
    if report.pairwise is not None:
        from analytics.report.present_pairwise import pairwise_json

        whole["pairwise"] = pairwise_json(report.pairwise)
    if report.rankings is not None:
        from analytics.report.present_ranking import rankings_json

        whole["rankings"] = rankings_json(report.rankings)
    if report.media is not None:
        from analytics.report.media import media_json

        whole["media"] = media_json(report.media)
    whole["models"] = _models(report)
    return in_reading_order(_with_stress(whole, report))


READING_ORDER = (
    "format", "version", "generated_at", "source", "study", "notes", "comparisons",
    "pairwise", "participation", "completion", "system_reliability", "media", "wizard",
    "questionnaires", "models", "comments", "examples", "reliability", "annotations", "judges",
    "stress", "quality", "provenance",
)  # fmt: skip
"""The sections in the order of the document (``analytics.report.present.document``)."""


def in_reading_order(whole: dict[str, Any]) -> dict[str, Any]:
    """``whole``'s sections in the document's order; a section this list does not name
    goes before data quality, with the other findings."""
    known = [key for key in READING_ORDER if key in whole]
    others = [key for key in whole if key not in READING_ORDER]
    at = known.index("quality") if "quality" in known else len(known)
    return {key: whole[key] for key in (*known[:at], *others, *known[at:])}


def _annotations(report: Report) -> dict[str, Any] | None:
    found = report.annotations
    if found is None:
        return None
    from analytics.annotations.ratings import ADJUDICATION_RULE, ICC_QUESTION

    tables = [
        "leave_one_out", "annotators", "adjudication", "final_values", "final_by_system",
        "self_report",
    ]  # fmt: skip
    return {
        "method": ICC_QUESTION,
        "adjudication_rule": ADJUDICATION_RULE,
        **{name: records(getattr(found, name)) for name in (*tables, "trajectories")},
        "notes": list(found.notes),
    }


def _models(report: Report) -> dict[str, Any]:
    """Always the same keys (empty tables where no participant did several tasks or gave a
    score twice), as every other section."""
    from analytics.report.models import empty_section

    models = report.models or empty_section()
    return {
        "success": {
            "test": records(models.success_test),
            "odds_ratios": records(models.success_terms),
        },
        "mixed": {"fits": records(models.fits), "terms": records(models.terms)},
    }


def _with_stress(out: dict[str, Any], report: Report) -> dict[str, Any]:
    if report.stress is not None:
        from analytics.report.stress import stress_json

        out["stress"] = stress_json(report.stress)
    return out


def render_json(report: Report, *, source: str | None = None, indent: int | None = 1) -> str:
    return json.dumps(
        report_to_dict(report, source=source), ensure_ascii=False, indent=indent, allow_nan=False
    )


def records(frame: pd.DataFrame) -> list[dict[str, Any]]:
    """Rows as dicts of plain values; column order kept, NaN as None."""
    columns = [str(c) for c in frame.columns]
    out = []
    for row in frame.itertuples(index=False, name=None):
        record = {}
        for name, value in zip(columns, row, strict=True):
            if name in _PAIR_COLUMNS and isinstance(value, dict):
                key, val = _PAIR_COLUMNS[name]
                record[name] = [{key: _plain(k), val: _plain(v)} for k, v in value.items()]
            else:
                record[name] = _plain(value)
        out.append(record)
    return out


def _plain(value: Any) -> Any:
    """A JSON-ready value: numpy and pandas scalars unwrapped, NaN/NA/NaT to None."""
    if value is None or value is pd.NA or value is pd.NaT:
        return None
    if isinstance(value, dict):
        return {str(_plain(k)): _plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple | set | frozenset | np.ndarray):
        return [_plain(v) for v in value]
    if is_dataclass(value) and not isinstance(value, type):
        return _plain(asdict(value))
    if isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, bool | int | str):
        return value
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, pd.Timestamp | datetime):
        return value.isoformat()
    return str(value)
