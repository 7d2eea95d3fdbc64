"""The report's section on linguistic stress tests (IDIAL): per system, how many tests
were applied and passed, per phenomenon (ST-1 … ST-11), per group (spelling, lexical,
syntactic) and overall, with Wilson's 95% intervals; IDIAL's summary line; every failure
with both utterances and both replies; a bar chart per type and system.

Counting, the same in every format: a test is *applied* to a system when the unchanged
replay reached the logged behaviour and a verdict of pass or fail was given (the replay's
own comparison first, then a person's, then the language model's). *Not applicable*,
*unsure* and *awaiting* (no verdict yet) are counted apart and are not in the pass rate.
IDIAL's "average score on the three groups" is the mean of the group pass rates (groups
with applied tests); the overall ratio (passed / applied) is given beside it.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import pandas as pd

from analytics.report import document as d
from analytics.report.document import Block, Figure, Heading, Paragraph
from analytics.statistics.questionnaires import wilson_interval
from bot.core.phenomena import Group, StressType
from bot.store.stress_records import Judge, StressResult, Verdict
from bot.stress.replay.agreement import model_agreement

if TYPE_CHECKING:
    from analytics.report.plots import Chart

COLUMNS = (
    "system_id",
    "level",  # overall | group | type
    "name",  # "overall", a group ("spelling") or a type ("ST-2")
    "applied",
    "passed",
    "failed",
    "unsure",
    "awaiting",
    "not_applicable",
    "pass_rate",
    "ci_low",
    "ci_high",
)
FAILURE_COLUMNS = (
    "system_id",
    "test_id",
    "stress_type",
    "session_id",
    "turn",
    "original",
    "perturbed",
    "unchanged_reply",
    "perturbed_reply",
    "judge",
    "reason",
)


@dataclass(frozen=True)
class StressSection:
    rates: pd.DataFrame
    """One row per system and level (overall, each group, each type used): ``COLUMNS``."""
    summary: pd.DataFrame
    """Per system: ``mean_of_groups``, ``groups`` (how many had applied tests),
    ``overall`` (passed / applied)."""
    failures: pd.DataFrame
    agreement: pd.DataFrame
    """Per system: Cohen's ``kappa`` of the language model with people and ``n`` replays
    both judged (empty when no model judged)."""
    model_verdicts: int = 0


def counted_as(result: StressResult) -> str:
    """How the report counts a replay: passed, failed, unsure, awaiting or not_applicable."""
    if not result.replay.applicable:
        return "not_applicable"
    verdict = result.verdict
    if verdict is None:
        return "awaiting"
    return {
        Verdict.PASS: "passed",
        Verdict.FAIL: "failed",
        Verdict.UNSURE: "unsure",
        Verdict.NOT_APPLICABLE: "not_applicable",
    }[verdict]


def _row(system: str, level: str, name: str, states: Iterable[str]) -> dict[str, Any]:
    counts = {k: 0 for k in ("passed", "failed", "unsure", "awaiting", "not_applicable")}
    for state in states:
        counts[state] += 1
    applied = counts["passed"] + counts["failed"]
    low, high = wilson_interval(counts["passed"], applied)
    rate = counts["passed"] / applied if applied else float("nan")
    if applied:  # at 0 or 1 the interval's end is the rate itself, not a rounding below it
        low, high = min(low, rate), max(high, rate)
    return {
        "system_id": system,
        "level": level,
        "name": name,
        "applied": applied,
        **counts,
        "pass_rate": rate,
        "ci_low": low,
        "ci_high": high,
    }


def stress_section(
    results: Sequence[StressResult], session_ids: Iterable[str] | None = None
) -> StressSection | None:
    """The section, or None when nothing was replayed (of the sessions reported on)."""
    if session_ids is not None:
        keep = set(map(str, session_ids))
        results = [r for r in results if r.test.perturbation.session_id in keep]
    if not results:
        return None
    by_system: dict[str, list[StressResult]] = {}
    for result in results:
        by_system.setdefault(result.replay.system_id, []).append(result)
    rows: list[dict[str, Any]] = []
    summary: list[dict[str, Any]] = []
    failures: list[dict[str, Any]] = []
    agreement: list[dict[str, Any]] = []
    for system, mine in by_system.items():
        states = [(r.test.perturbation.stress_type, counted_as(r)) for r in mine]
        overall = _row(system, "overall", "overall", (s for _, s in states))
        rows.append(overall)
        group_rates: list[float] = []
        group_names: list[str] = []
        for group in Group:
            found = [s for t, s in states if t.group is group]
            if found:
                row = _row(system, "group", group.value, found)
                rows.append(row)
                if row["applied"]:
                    group_rates.append(row["pass_rate"])
                    group_names.append(group.value)
        for kind in StressType:
            found = [s for t, s in states if t is kind]
            if found:
                rows.append(_row(system, "type", kind.value, found))
        summary.append(
            {
                "system_id": system,
                "mean_of_groups": sum(group_rates) / len(group_rates)
                if group_rates
                else float("nan"),
                "groups": len(group_rates),
                "group_names": ", ".join(group_names),
                "overall": overall["pass_rate"],
                "applied": overall["applied"],
                "passed": overall["passed"],
            }
        )
        for r in mine:
            if counted_as(r) == "failed":
                judge = next(
                    j for j in r.judgements if j.verdict is Verdict.FAIL and r.verdict is j.verdict
                )
                p = r.test.perturbation
                failures.append(
                    {
                        "system_id": system,
                        "test_id": r.test.id,
                        "stress_type": p.stress_type.value,
                        "session_id": p.session_id,
                        "turn": p.turn,
                        "original": p.original,
                        "perturbed": p.perturbed,
                        "unchanged_reply": _said(r.replay.baseline.texts, r.replay.baseline.error),
                        "perturbed_reply": _said(
                            r.replay.perturbed.texts, r.replay.perturbed.error
                        ),
                        "judge": judge.judge.value,
                        "reason": judge.reason,
                    }
                )
        if any(r.by(Judge.LLM) is not None for r in mine):
            kappa, both = model_agreement(mine)
            agreement.append({"system_id": system, "kappa": kappa, "n": both})
    return StressSection(
        rates=pd.DataFrame(rows, columns=list(COLUMNS)),
        summary=pd.DataFrame(summary),
        failures=pd.DataFrame(failures, columns=list(FAILURE_COLUMNS)),
        agreement=pd.DataFrame(agreement, columns=["system_id", "kappa", "n"]),
        model_verdicts=sum(r.by(Judge.LLM) is not None for r in results),
    )


def _said(texts: Sequence[str], error: str | None) -> str:
    return f"(the system failed: {error})" if error else "\n\n".join(texts)


def idial_line(system: str, summary: Mapping[Any, Any]) -> str:
    """IDIAL's summary sentence, saying what the number is, with the overall ratio."""
    mean = d.num(summary["mean_of_groups"])
    groups = int(summary["groups"])
    which = (
        "the three groups (spelling, lexical and syntactic substitutions)"
        if groups == 3
        else f"the {d.plural(groups, 'group')} with applied tests ({summary['group_names']})"
    )
    return (
        f"{system}: average score on {which} is {mean}/1, the mean of the group pass"
        f" rates; overall {int(summary['passed'])} of {int(summary['applied'])} applied"
        f" tests passed ({d.num(summary['overall'])}/1)."
    )


# --- the document ---------------------------------------------------------------------


def stress_blocks(section: StressSection | None, limit: int | None = None) -> list[Block]:
    """The section's blocks; none at all without stress tests."""
    if section is None:
        return []
    blocks: list[Block] = [
        Heading("Linguistic stress tests"),
        Paragraph(
            "A logged participant utterance was minimally changed by one phenomenon (IDIAL's"
            " ST-1 to ST-11) and replayed to the system after the logged dialogue, in a fresh"
            " conversation; a test is applied when the unchanged replay reached the logged"
            " behaviour, and passed when the change did not harm it. Pass rates are passed /"
            " applied with Wilson's 95% interval; unsure and not yet judged replays are"
            " counted apart.",
            "method",
        ),
    ]
    blocks += [Paragraph(idial_line(s["system_id"], s)) for s in section.summary.to_dict("records")]
    rows = []
    for r in section.rates.to_dict("records"):
        label = r["name"]
        if r["level"] == "type":
            label = f"  {r['name']} {StressType(r['name']).title}"
        elif r["level"] == "group":
            label = f"{r['name']} (group)"
        rows.append(
            (
                r["system_id"],
                label,
                d.count(r["applied"]),
                d.count(r["passed"]),
                d.count(r["not_applicable"]),
                d.count(r["unsure"]),
                d.count(r["awaiting"]),
                d.rate(r["pass_rate"], r["ci_low"], r["ci_high"]) if r["applied"] else d.DASH,
            )
        )
    blocks.append(
        d.table(
            (
                "System",
                "Phenomena",
                "Applied",
                "Passed",
                "Not applicable",
                "Unsure",
                "Awaiting",
                "Pass rate (95% CI)",
            ),
            rows,
            numeric=(False, False, True, True, True, True, True, True),
            group_by=0,
        )
    )
    blocks.append(Figure("stress", "", "Stress-test pass rate per phenomenon and system"))
    if len(section.agreement):
        for a in section.agreement.to_dict("records"):
            kappa = d.DASH if d.missing(a["kappa"]) else d.num(a["kappa"])
            blocks.append(
                Paragraph(
                    f"{a['system_id']}: the language-model judge agrees with people with"
                    f" Cohen's kappa {kappa} on {d.plural(int(a['n']), 'replay')} both judged.",
                    "method",
                )
            )
    failures = section.failures
    if len(failures):
        blocks.append(Heading("Failed stress tests", 3))
        shown = failures if limit is None else failures.head(limit)

        def cut(text: str) -> str:  # a terminal gets the start of a long reply
            return text if limit is None else d.shorten(text, 160)

        blocks.append(
            d.table(
                (
                    "System",
                    "Test",
                    "Original",
                    "Perturbed",
                    "Reply (unchanged)",
                    "Reply (perturbed)",
                ),
                [
                    (
                        f["system_id"],
                        f"{f['stress_type']} #{f['test_id']}",
                        f["original"],
                        f["perturbed"],
                        cut(f["unchanged_reply"]),
                        cut(f["perturbed_reply"]),
                    )
                    for f in shown.to_dict("records")
                ],
            )
        )
        if limit is not None and len(failures) > limit:
            blocks.append(Paragraph(f"… and {len(failures) - limit} more failures.", "note"))
    return blocks


# --- JSON -------------------------------------------------------------------------------


def _rates(row: Mapping[Any, Any]) -> dict[str, Any]:
    def value(x: Any) -> Any:
        return None if d.missing(x) else float(x)

    return {
        "applied": int(row["applied"]),
        "passed": int(row["passed"]),
        "failed": int(row["failed"]),
        "unsure": int(row["unsure"]),
        "awaiting": int(row["awaiting"]),
        "not_applicable": int(row["not_applicable"]),
        "pass_rate": value(row["pass_rate"]),
        "ci_low": value(row["ci_low"]),
        "ci_high": value(row["ci_high"]),
    }


def stress_json(section: StressSection) -> dict[str, Any]:
    """``{system: {overall, groups {name: rates}, types {ST-n: rates}, mean_of_groups,
    failures [...], model_agreement}}``."""
    out: dict[str, Any] = {}
    summary = {s["system_id"]: s for s in section.summary.to_dict("records")}
    agreement = {a["system_id"]: a for a in section.agreement.to_dict("records")}
    for row in section.rates.to_dict("records"):
        system = out.setdefault(row["system_id"], {"overall": None, "groups": {}, "types": {}})
        if row["level"] == "overall":
            system["overall"] = _rates(row)
        else:
            system["groups" if row["level"] == "group" else "types"][row["name"]] = _rates(row)
    for name, system in out.items():
        mean = summary[name]["mean_of_groups"]
        system["mean_of_groups"] = None if d.missing(mean) else float(mean)
        system["failures"] = [
            {k: (int(v) if k in ("test_id", "turn") else v) for k, v in f.items()}
            for f in section.failures[section.failures["system_id"] == name].to_dict("records")
        ]
        found = agreement.get(name)
        system["model_agreement"] = (
            None
            if found is None
            else {
                "kappa": None if d.missing(found["kappa"]) else float(found["kappa"]),
                "n": int(found["n"]),
            }
        )
    return out


# --- the chart --------------------------------------------------------------------------


def stress_chart(section: StressSection, systems: Sequence[str], caption: str) -> Chart | None:
    """Pass rate per type (bars side by side per system) with Wilson's 95% interval and the
    number of applied tests beside each bar; a system none of whose tests of a type applied
    keeps its place, marked "none applied" (left out, it would look like a missing system).
    The legend sits above the bars, never on them."""
    from analytics.report.plots import Chart, _figure, _ordered, system_colour

    types = section.rates[section.rates["level"] == "type"]
    if types.empty:
        return None
    names = [t.value for t in StressType if t.value in set(types["name"])]
    order = _ordered(systems, set(section.rates["system_id"]))
    figure = _figure(1.4 + 0.32 * len(names) * len(order))
    axes = figure.add_subplot()
    height = 0.8 / len(order)
    for k, system in enumerate(order):
        mine = {r["name"]: r for r in types[types["system_id"] == system].to_dict("records")}
        ys, rates, lows, highs, counts = [], [], [], [], []
        for i, name in enumerate(names):
            y = i + (k - (len(order) - 1) / 2) * height
            r = mine.get(name)
            if r is None or not r["applied"]:
                said = f"{system}: " + ("none applied" if r is not None else "not tested")
                axes.text(0.01, y, said, va="center", ha="left", fontsize=7, color="#555555",
                          style="italic")  # fmt: skip
                continue
            ys.append(y)
            rates.append(float(r["pass_rate"]))
            lows.append(float(r["pass_rate"] - r["ci_low"]))
            highs.append(float(r["ci_high"] - r["pass_rate"]))
            counts.append((float(r["ci_high"]), int(r["applied"])))
        axes.barh(ys, rates, height=height * 0.9, color=system_colour(k),
                  xerr=[lows, highs], error_kw={"elinewidth": 0.8, "capsize": 2})  # fmt: skip
        for y, (end, n) in zip(ys, counts, strict=True):
            axes.text(end + 0.01, y, f"n = {n}", va="center", ha="left", fontsize=7,
                      color="#333333")  # fmt: skip
    axes.set_yticks(range(len(names)), [f"{n} {StressType(n).title}" for n in names], fontsize=8)
    axes.set_ylim(len(names) - 0.5, -0.5)
    axes.set_xlim(0, 1.12)  # room for "n = 12" beside a bar that reaches 1
    axes.set_xticks([0, 0.25, 0.5, 0.75, 1.0])
    axes.set_xlabel("Pass rate (95% Wilson interval); n: tests applied", fontsize=8.5)
    axes.grid(axis="x", color="#dddddd", linewidth=0.6)
    axes.spines[["top", "right"]].set_visible(False)
    from matplotlib.patches import Patch

    figure.legend(
        [Patch(color=system_colour(k)) for k in range(len(order))],
        order,
        loc="outside upper left",
        ncols=min(len(order), 4),
        fontsize=8,
        frameon=False,
    )
    return Chart("stress", caption + ".", figure)
