"""The report's sections as blocks: which numbers are shown, in which order, in which words.

``document(report)`` is what every human-readable format shows; renderers only lay the
blocks out. ``limit`` shortens long lists (comments, flagged participants) for a terminal;
Markdown and HTML show them all.
"""

from __future__ import annotations

import pandas as pd

from analytics.report import document as d
from analytics.report.document import Block, Bullets, Figure, Heading, Paragraph
from analytics.report.examples import example_blocks
from analytics.report.media import media_blocks
from analytics.report.numbers import Report
from analytics.report.present_annotations import annotation_blocks
from analytics.report.present_headline import headline_table, result_words
from analytics.report.present_judges import judges_blocks
from analytics.report.present_models import interval_caption, interval_words, model_blocks
from analytics.report.present_pairwise import pairwise_blocks
from analytics.report.present_questionnaires import questionnaire_blocks
from analytics.report.present_ranking import ranking_blocks
from analytics.report.present_success import NOT_MEASURED, not_measured, success_source_blocks
from analytics.report.present_systems import provenance_blocks, reliability_blocks
from analytics.report.stress import stress_blocks
from bot.core.vocabulary import EndReason, ReplySource

_OVERALL = {
    "participants": "Participants",
    "consented": "Consented",
    "declined_consent": "Declined consent",
    "consent_pending": "Consent pending",
    "withdrawn": "Withdrew",
    "not_eligible": "Not eligible (screened out)",
    "unreachable": "Unreachable (blocked the bot)",
    "with_sessions": "Participants with sessions",
    "completed_study": "Completed the study",
    "sessions": "Sessions",
    "completed_sessions": "Completed sessions",
    "abandoned_sessions": "Abandoned sessions",
    "imported_answers": "Answers imported from files",
    "imported_participants": "Participants with imported answers",
}
_REASONS = {
    EndReason.SUCCESS.value: "success",
    EndReason.EXCHANGE_LIMIT.value: "exchange limit",
    EndReason.TIME_LIMIT.value: "time limit",
    EndReason.PARTICIPANT_DONE.value: "participant done",
    EndReason.WIZARD.value: "wizard",
    EndReason.ABANDONED.value: "abandoned",
    "(in progress)": "in progress",
}
_SOURCES = {
    ReplySource.SYSTEM.value: "As the system wrote it",
    ReplySource.EDITED.value: "Edited by a wizard",
    ReplySource.WIZARD.value: "Written by a wizard",
}


def document(report: Report, *, limit: int | None = None, source: str | None = None) -> list[Block]:
    """Every section of the report, in reading order: what a reader wants first comes
    first (the systems compared, by their measures and by people's preferences), then
    completion, the systems' reliability and their voice notes and pictures, the
    questionnaires in detail and the models of repeated measures, example conversations,
    the annotators, stress tests, data quality and how the report was made.
    Every format (terminal, Markdown, HTML, LaTeX) shows this order; the JSON keeps it too."""
    blocks: list[Block] = [*_title(report, source)]
    if report.notes:
        blocks += [Heading("Notes"), Bullets(report.notes)]
    blocks += _comparisons(report)
    blocks += pairwise_blocks(report, limit)
    blocks += _participation(report)
    blocks += _completion(report)
    blocks += reliability_blocks(report)
    blocks += media_blocks(report, limit)
    blocks += _wizard(report)
    blocks += questionnaire_blocks(report)
    blocks += ranking_blocks(report)
    blocks += model_blocks(report)
    blocks += _comments(report, limit)
    blocks += example_blocks(
        report.examples, report.questionnaires.codebook, limit, report.example_marks
    )
    blocks += annotation_blocks(report)
    blocks += judges_blocks(report)
    blocks += stress_blocks(report.stress, limit)
    blocks += _quality(report, limit)
    blocks += provenance_blocks(report, source)
    return blocks


def _title(report: Report, source: str | None) -> list[Block]:
    info = report.study
    title = info.title or ", ".join(info.study_ids) or "an empty study database"
    design = info.design + ("-subjects" if info.design == "between" else "-subject")
    facts = [
        f"Study: {', '.join(info.study_ids) or d.DASH}",
        f"systems: {', '.join(info.systems) or d.DASH}",
        f"design: {design}" + (f" ({info.assignment} assignment)" if info.assignment else ""),
        f"instruments: {', '.join(info.instruments) or d.DASH}",
    ]
    made = report.provenance
    generated = made.generated_at.replace("T", " ").replace("Z", " UTC")
    origin = f"Database {source} (schema {info.schema_version}), " if source else ""
    return [
        Heading(f"Evaluation report: {title}", 1),
        Paragraph("; ".join(facts) + "."),
        Paragraph(
            f"{origin}ozlab {made.ozlab_version}, report generated {generated}; how to "
            "reproduce it is at the end.",
            "method",
        ),
    ]


def _participation(report: Report) -> list[Block]:
    overall = report.participation.overall
    rows = [
        (label, d.count(overall[key]))
        for key, label in _OVERALL.items()
        if key in overall and (not key.startswith("imported") or overall[key])
    ]
    blocks: list[Block] = [
        Heading("Participation"),
        d.table(("", "Count"), rows, numeric=(False, True)),
    ]
    by_system = report.participation.by_system
    if len(by_system):
        blocks.append(
            d.table(
                (
                    "System",
                    "Participants",
                    "Sessions",
                    "Completed",
                    "Abandoned",
                    "In progress",
                    "Withdrew",
                ),
                [
                    (
                        r.system_id,
                        d.count(r.participants),
                        d.count(r.sessions),
                        d.share_of(r.completed, r.sessions),
                        d.share_of(r.abandoned, r.sessions),
                        d.count(r.in_progress),
                        d.count(r.withdrawn),
                    )
                    for r in by_system.itertuples()
                ],
                caption="Per system (withdrawals counted per system where the study asks)",
                numeric=(False, *[True] * 6),
            )
        )
    return blocks


_SUCCESS_COLUMNS = ("Tasks", "Succeeded", "Success rate (95% CI)")
_JUDGED_COLUMNS = (
    "Tasks", "Succeeded", "Rate (95% CI)", "Judged", "Done correctly",
    "Rate (95% CI)",
)  # fmt: skip
_EFFORT_COLUMNS = (
    "Exchanges: mean (SD)", "median", "Failed exchanges", "Time: mean (SD)", "median",
    "Expected", "Median time / expected",
)  # fmt: skip


def judged(table: pd.DataFrame) -> bool:
    """Whether any task's correctness (the scenario's ``success_if``) is known."""
    return "correct_n" in table.columns and bool((table["correct_n"] > 0).any())


def _success_rows(table: pd.DataFrame, keys: list[str]) -> list[tuple[str, ...]]:
    both = judged(table)
    rows = []
    for r in table.to_dict("records"):
        row = (*(str(r[k]) for k in keys), d.count(r["n"]), d.count(r["successes"]),
               d.rate(r["success_rate"], r["ci_low"], r["ci_high"]))  # fmt: skip
        if not_measured(r):
            row = (*row[:-2], NOT_MEASURED, NOT_MEASURED)
        if both:
            rate = d.rate(r["correct_rate"], r["correct_ci_low"], r["correct_ci_high"])
            row += (d.count(r["correct_n"]), d.count(r["correct"]), rate)
        rows.append(row)
    return rows


def _versus_expected(r: dict) -> str:
    """``64% (3 of 40 longer)``: the median of time over expected time, and how many tasks
    took longer than expected."""
    ratio = r["duration_vs_expected"]
    if d.missing(ratio):
        return d.DASH
    return f"{d.pct(ratio)} ({int(r['over_expected'])} of {int(r['expected_n'])} longer)"


def _effort_rows(table: pd.DataFrame, keys: list[str]) -> list[tuple[str, ...]]:
    rows = []
    for r in table.to_dict("records"):
        rows.append(
            (
                *(str(r[k]) for k in keys),
                f"{d.num(r['exchanges_mean'], 1)} ({d.num(r['exchanges_sd'], 1)})",
                d.num(r["exchanges_median"], 1),
                d.count(r["failed_exchanges"]),
                f"{d.seconds(r['duration_mean_s'])} ({d.seconds(r['duration_sd_s'])})",
                d.seconds(r["duration_median_s"]),
                d.seconds(r["expected_duration_s"]),
                _versus_expected(r),
            )
        )
    return rows


def _completion_tables(table: pd.DataFrame, keys: list[str], label: str) -> list[Block]:
    names = {"system_id": "System", "scenario_id": "Scenario"}
    heads = tuple(names[k] for k in keys)
    left = (False,) * len(keys)
    group = 0 if len(keys) > 1 else None
    success = _JUDGED_COLUMNS if judged(table) else _SUCCESS_COLUMNS
    return [
        d.table(
            (*heads, *success),
            _success_rows(table, keys),
            caption=f"Task success{label}",
            numeric=(*left, *[True] * len(success)),
            group_by=group,
        ),
        d.table(
            (*heads, *_EFFORT_COLUMNS),
            _effort_rows(table, keys),
            caption=f"Exchanges and time per task{label}",
            numeric=(*left, *[True] * len(_EFFORT_COLUMNS)),
            group_by=group,
        ),
    ]


def _completion(report: Report) -> list[Block]:
    completion = report.completion
    blocks: list[Block] = [Heading("Task completion")]
    if completion.by_system.empty:
        blocks.append(Paragraph("No dialogue task has ended yet.", "note"))
        return blocks
    both = judged(completion.by_system)
    kinds = (
        "Two kinds of success: the system reported success (it said the task was done), and "
        "the task was done correctly as the scenario's success_if defines it; the second is "
        "rated over the tasks where it was judged. "
        if both
        else ""
    )
    blocks += [
        Paragraph(
            "Dialogue tasks whose outcome is known (ended or abandoned; abandoned ones count "
            f"as not completed). {kinds}{interval_words(completion.by_system)}; time from "
            "the start of the task to its end. Exchanges count the system's replies; failed "
            "exchanges (an error or no reply in time) are counted apart.",
            "method",
        ),
        Figure(
            "completion",
            caption="Task success per system"
            + (" (system reported; done correctly)" if both else "")
            + f", with {interval_caption(completion.by_system)}",
        ),
        *_completion_tables(completion.by_system, ["system_id"], ""),
        *success_source_blocks(completion.sources, completion.success_judge),
    ]
    scenarios = completion.by_scenario["scenario_id"].nunique()
    if scenarios > 1:
        keys = ["system_id", "scenario_id"]
        blocks += _completion_tables(completion.by_scenario, keys, ", per scenario")
    blocks += _end_reasons(completion.end_reasons, ["system_id"], "How tasks ended")
    if scenarios > 1:
        caption = "How tasks ended, per scenario"
        blocks += _end_reasons(completion.end_reasons_by_scenario, keys, caption)
    return blocks


def _end_reasons(reasons: pd.DataFrame, keys: list[str], caption: str) -> list[Block]:
    if reasons.empty:
        return []
    wide = reasons.pivot_table(index=keys, columns="end_reason", values="count", aggfunc="sum")
    order = [r for r in _REASONS if r in wide.columns]
    order += sorted(c for c in wide.columns if c not in _REASONS)
    wide = wide[order].fillna(0)
    totals = wide.sum(axis=1)
    names = {"system_id": "System", "scenario_id": "Scenario"}
    rows = [
        (*(key if isinstance(key, tuple) else (key,)),
         *(d.share_of(v, totals[key]) if v else "0" for v in values))
        for key, values in zip(wide.index, wide.to_numpy().tolist(), strict=True)
    ]  # fmt: skip
    columns = (*(names[k] for k in keys), *(_REASONS.get(c, c) for c in order))
    flags = (*[False] * len(keys), *[True] * len(order))
    group = 0 if len(keys) > 1 else None
    return [d.table(columns, rows, caption=caption, numeric=flags, group_by=group)]


def _wizard(report: Report) -> list[Block]:
    blocks: list[Block] = [Heading("Wizard involvement")]
    wizard = report.wizard
    if wizard.note:
        blocks.append(Paragraph(wizard.note[0].upper() + wizard.note[1:] + ".", "note"))
    if wizard.table.empty:
        return blocks
    wide = wizard.table.pivot_table(index="system_id", columns="source", values="count")
    wide = wide.reindex(columns=list(_SOURCES)).fillna(0)
    rows = [
        (system, *(d.share_of(v, sum(values)) for v in values))
        for system, values in zip(wide.index, wide.to_numpy().tolist(), strict=True)
    ]
    blocks.append(
        d.table(
            ("System", *_SOURCES.values()),
            rows,
            caption="System turns by who wrote them",
            numeric=(False, True, True, True),
        )
    )
    return blocks


def _measure(row: dict) -> str:
    if row["measure_kind"] == "construct":
        return f"{row['questionnaire_id']}: {row['measure']}"
    return str(row["measure"])


def _comparisons(report: Report) -> list[Block]:
    comparisons = report.comparisons
    blocks: list[Block] = [
        Heading("Systems compared"),
        Paragraph(comparisons.method, "method"),
    ]
    if report.provenance.detectable:
        blocks.append(Paragraph(report.provenance.detectable, "method"))
    glance = headline_table(report)
    if glance is not None:
        blocks.append(glance)
    if comparisons.table.empty:
        return blocks
    rows = []
    for r in comparisons.table.to_dict("records"):
        per_group = r["n_per_group"] if isinstance(r["n_per_group"], dict) else {}
        if r["design"] == "within":
            n = f"{d.count(r['n_total'])} paired"
        else:
            n = " + ".join(str(v) for v in per_group.values())
            n += f" = {r['n_total']}" if len(per_group) > 1 else ""
        test = r["test"] + (" (pairwise)" if r["kind"] == "pairwise" else "")
        how = "" if d.missing(r["p_method"]) else str(r["p_method"])
        result = result_words(r, comparisons.family, comparisons.adjust)
        rows.append((_measure(r), test, r["groups"], n, result, how))
    blocks.append(
        d.table(
            ("Measure", "Test", "Systems", "n", "Result", "p-value computed by"),
            rows,
            caption="Every test: n (participants), statistic, p and effect size",
            numeric=(False, False, False, True, False, False),
            group_by=0,
        )
    )
    return blocks


def _comments(report: Report, limit: int | None) -> list[Block]:
    comments = report.comments
    blocks: list[Block] = [Heading("Comments")]
    if comments.empty:
        blocks.append(Paragraph("No free-text comments.", "note"))
        return blocks
    for system, group in comments.groupby("system_id", sort=False):
        blocks.append(Heading(f"{system} ({d.plural(len(group), 'comment')})", 3))
        for (q_id, item_id), answers in group.groupby(
            ["questionnaire_id", "item_id"], sort=False, dropna=False
        ):
            question = answers["question"].iloc[0]
            asked = f"“{question}”" if not d.missing(question) else "a free-text item"
            blocks.append(
                Paragraph(
                    f"Answers to {asked} ({q_id}: {item_id}, {d.plural(len(answers), 'answer')}):"
                )
            )
            lines = [
                f"“{d.shorten(r.text, 500)}” — {r.participant_id}"
                + ("" if d.missing(r.scenario_id) else f", {r.scenario_id}")
                for r in answers.itertuples()
            ]
            more = 0
            if limit is not None and len(lines) > limit:
                more, lines = len(lines) - limit, lines[:limit]
            blocks.append(Bullets(tuple(lines), more))
    return blocks


def _quality(report: Report, limit: int | None) -> list[Block]:
    quality = report.quality
    blocks: list[Block] = [
        Heading("Data quality"),
        Paragraph("A participant is flagged when they:", "method"),
        Bullets(tuple(f"{kind}: {rule}" for kind, rule in quality.rules.items())),
    ]
    if quality.simulated:
        blocks.append(
            Paragraph(
                f"Simulated: {len(quality.simulated)} of {quality.participants_in_data} "
                "participants (ozlab demo or ozlab pilot), not people. Being simulated is not "
                "a flag: they are left out only for a flag of their own.",
                "note",
            )
        )
    exclusion = quality.exclusion
    if exclusion is not None:
        reasons = ", ".join(
            f"{r['flag']} {r['participants']}"
            for r in exclusion.by_flag.to_dict("records")
            if r["participants"]
        )
        blocks.append(
            Paragraph(
                f"Excluded: {exclusion.excluded} of {exclusion.participants_before} participants "
                f"({reasons or 'none flagged'}); one participant may have several reasons. "
                "Every number in this report is computed without them.",
                "note",
            )
        )
    flagged = quality.participants
    if flagged.empty:
        blocks.append(Paragraph("No participant is flagged.", "text"))
        return blocks
    counts = quality.flags.groupby("flag")["participant_id"].nunique()
    summary = ", ".join(f"{flag} {n}" for flag, n in counts.items())
    among = int(flagged["simulated"].sum())
    simulated = f", {among} of them simulated" if among else ""
    blocks.append(Paragraph(f"{len(flagged)} participants flagged ({summary}){simulated}.", "text"))
    if exclusion is None:
        blocks.append(
            Paragraph(
                "Run the report with --exclude-flagged to compute every number without them.",
                "method",
            )
        )
    blocks.append(
        d.table(
            ("Participant", "Flags", "Details"),
            [
                (f"{r.participant_id}{' (simulated)' if r.simulated else ''}", r.flags, r.details)
                for r in flagged.itertuples()
            ],
            caption="Flagged participants" + (" (excluded)" if exclusion else ""),
            limit=limit,
        )
    )
    return blocks
