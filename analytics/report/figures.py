"""The report's figures as charts: drawn into the HTML (SVG) and written for a paper.

``charts(report, block)`` draws what a ``Figure`` block of the document shows;
``write_figures`` writes every figure of the report as PDF, SVG and PNG at print
resolution (300 dpi), each with a caption file beside it (``name.txt``), so that a paper
can include them as they are. Names are stable (``completion``, ``likert-idial``,
``proportions-post``, ``by-turn-exchange``) and the files are the same bytes on every run.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import TYPE_CHECKING

from analytics.report import plots
from analytics.report.document import Block, Figure
from analytics.report.numbers import Report
from analytics.report.plots import Chart
from bot.core.researcher_files import private_folder, write_private

if TYPE_CHECKING:
    from analytics.io.progress import Steps

FORMATS = ("pdf", "svg", "png")


def chart_name(block: Figure) -> str:
    """``likert-idial``: the kind and what it shows, safe as a file name."""
    key = re.sub(r"[^A-Za-z0-9._-]+", "-", block.key).strip("-")
    return "-".join(p for p in (block.kind.replace("_", "-"), key) if p)


def charts(report: Report, block: Figure) -> list[Chart]:
    """The charts of one ``Figure`` block (a rating instrument may need one per scale)."""
    q = report.questionnaires
    systems = report.study.systems
    name = chart_name(block)
    if block.kind == "completion":
        chart = plots.completion_chart(
            report.completion.by_system, report.completion.by_scenario, block.caption
        )
        return [chart] if chart else []
    if block.kind in ("likert", "proportions"):
        mine = q.distribution[q.distribution["questionnaire_id"].astype(object) == block.key]
        codebook = q.codebook[q.codebook["questionnaire_id"] == block.key]
        choices = q.choices[q.choices["questionnaire_id"] == block.key]
        draw = plots.likert_charts if block.kind == "likert" else plots.proportion_charts
        return draw(mine, codebook, choices, systems, name, block.caption)
    if block.kind == "by_turn":
        constructs = q.by_turn_constructs[q.by_turn_constructs["questionnaire_id"] == block.key]
        items = q.by_turn[q.by_turn["questionnaire_id"] == block.key]
        frame, level = (constructs, "construct") if len(constructs) else (items, "item_id")
        mine = q.codebook[q.codebook["questionnaire_id"] == block.key]
        wording = dict(zip(mine["item_id"], mine["text"], strict=True))
        chart = plots.by_turn_chart(frame, level, systems, name, block.caption, wording)
        return [chart] if chart else []
    if block.kind == "stress" and report.stress is not None:
        from analytics.report.stress import stress_chart

        stress = stress_chart(report.stress, systems, block.caption)
        return [stress] if stress else []
    if block.kind == "trajectories" and report.annotations is not None:
        paths = report.annotations.trajectories
        chart = plots.trajectory_chart(
            paths[paths["job"] == block.key], systems, name, block.caption
        )
        return [chart] if chart else []
    if block.kind.startswith("pairwise_") and report.pairwise is not None:
        from analytics.report.present_pairwise import pairwise_charts

        return pairwise_charts(report.pairwise, block, name)
    raise ValueError(f"no chart for figures of kind {block.kind!r}")


def write_figures(
    report: Report,
    blocks: Iterable[Block],
    directory: Path,
    step: Callable[[str], None] | None = None,
) -> list[Path]:
    """Every figure as PDF, SVG and 300-dpi PNG plus ``name.txt`` with its caption; the
    paths written, in the report's order."""
    from analytics.report.drawing import pictures

    private_folder(directory)  # figures show participants' data: their owner's only
    written: list[Path] = []
    for drawn in pictures(report, list(blocks), FORMATS, step).values():
        for name, caption, drawing in drawn:
            for fmt in FORMATS:
                written.append(write_private(directory / f"{name}.{fmt}", drawing[fmt]))
            written.append(write_private(directory / f"{name}.txt", caption + "\n"))
    return written


def write_report_figures(
    report: Report, directory: Path, *, source: str | None = None, step: Steps | None = None
) -> list[Path]:
    """``--figures DIR``: every figure the HTML report draws, written for a paper."""
    from analytics.report.present import document

    blocks = document(report, source=source)
    if step is not None:
        from analytics.report.drawing import figure_count

        step.add(figure_count(blocks))
    return write_figures(report, blocks, directory, step)
