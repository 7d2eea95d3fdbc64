"""Questionnaire sections as blocks: items, constructs with Cronbach's alpha, the IDIAL
summary, exchange-level ratings by turn, and agreement between raters."""

from __future__ import annotations

import pandas as pd

from analytics.report import document as d
from analytics.report.document import Block, Figure, Heading, Paragraph
from analytics.report.numbers import Report
from analytics.statistics.questionnaires import ALL_SYSTEMS

_ITEM_COLUMNS = ("Item", "System", "n", "Mean", "SD", "Median", "IQR", "Distribution")


def instruments(report: Report) -> list[str]:
    """Instruments in the study's order, then any others that have answers."""
    q = report.questionnaires
    found = [*q.codebook["questionnaire_id"], *q.items["questionnaire_id"].astype(object)]
    return list(dict.fromkeys([*report.study.instruments, *found]))


def questionnaire_blocks(report: Report) -> list[Block]:
    """The questionnaire section, one part per instrument that has answers."""
    q = report.questionnaires
    blocks: list[Block] = [Heading("Questionnaires")]
    answered = set(q.items["questionnaire_id"].astype(object))
    if not answered:
        blocks.append(Paragraph("No questionnaire answers yet.", "note"))
    else:
        blocks.append(
            Paragraph(
                "Items as answered (reverse items, marked R, are not recoded here); constructs "
                "are means of their items with reverse items recoded, so higher is better.",
                "method",
            )
        )
    for q_id in instruments(report):
        if q_id in answered:
            blocks += _instrument(report, q_id)
    blocks += _by_turn(report)
    blocks += _agreement(report)
    return blocks


CATEGORICAL = ("yes_no", "thumbs", "choice", "multi_choice")
"""Item types whose answers are categories: drawn and described as proportions."""
_KINDS = {
    "scale": "rating scale",
    "yes_no": "yes / no",
    "thumbs": "thumbs up / down",
    "choice": "one option",
    "multi_choice": "any of the options",
    "text": "free text",
    "slider": "visual-analogue scale",
}


def scale_words(kind: object, points: list[tuple[object, str]]) -> str:
    """Every point of an item's scale with its label: ``1 = Strongly disagree; …``."""
    if kind == "text":
        return "typed answer"
    if kind == "slider":  # its ends' words only: 101 points are not listed
        ends = {0: "", 100: ""} | {int(str(v)): f" = {label}" for v, label in points}
        return f"0{ends[0]} to 100{ends[100]}"
    if not points:
        return d.DASH
    return "; ".join(f"{value} = {label}" for value, label in points)


def item_scales(
    codebook: pd.DataFrame, choices: pd.DataFrame
) -> tuple[dict[str, str], list[tuple[str, str, str]]]:
    """Each item's scale as a key (A, B, …) and the distinct scales with their words, so
    that every item states its own scale without repeating it for every item."""
    keys: dict[str, str] = {}
    scales: dict[tuple[str, str], str] = {}
    for row in codebook.to_dict("records"):
        mine = choices[
            (choices["questionnaire_id"] == row["questionnaire_id"])
            & (choices["item_id"] == row["item_id"])
        ]
        points = list(zip(mine["value"], mine["label"], strict=True))
        kind = str(row["type"]) if not d.missing(row["type"]) else ""
        if not points and kind not in ("text", "slider"):
            low, high = row["min"], row["max"]
            if not (d.missing(low) or d.missing(high)):
                points = [(v, str(v)) for v in range(int(low), int(high) + 1)]
        identity = (_KINDS.get(kind, kind or "unknown"), scale_words(kind, points))
        if identity not in scales:
            scales[identity] = _letter(len(scales))
        keys[str(row["item_id"])] = scales[identity]
    return keys, [(key, kind, words) for (kind, words), key in scales.items()]


def _letter(index: int) -> str:
    letters = ""
    index += 1
    while index:
        index, rest = divmod(index - 1, 26)
        letters = chr(65 + rest) + letters
    return letters


def _item_name(row: dict) -> str:
    marks = " (R)" if row.get("reverse") else ""
    return f"{row['item_id']}{marks}"


def _distribution(value: object, labels: dict[object, str] | None = None) -> str:
    """``1:3 2:4 …`` for a scale; ``Yes 12 (60%) · No 8 (40%)`` for categories."""
    if not isinstance(value, dict) or not value:
        return d.DASH
    if labels is None:
        return " ".join(f"{answer}:{n}" for answer, n in value.items())
    total = sum(value.values())
    found = {str(answer): (answer, n) for answer, n in value.items()}
    order = [str(a) for a in labels if str(a) in found]
    order += [a for a in found if a not in order]
    return " · ".join(
        f"{labels.get(found[a][0], a)} {d.share_of(found[a][1], total)}" for a in order
    )


def _span(value: object) -> str:
    """A slider's answers as their range (``12–95``): its points are too many to list."""
    if not isinstance(value, dict) or not value:
        return d.DASH
    points = [float(str(v)) for v in value]
    return f"{d.num(min(points), 0)}–{d.num(max(points), 0)}"


def _instrument(report: Report, q_id: str) -> list[Block]:
    q = report.questionnaires
    items = q.items[q.items["questionnaire_id"].astype(object) == q_id]
    codebook = q.codebook[q.codebook["questionnaire_id"] == q_id]
    choices = q.choices[q.choices["questionnaire_id"] == q_id]
    title = q.title(q_id)
    named = f"{title} ({q_id})" if title != q_id else f"Instrument {q_id}"
    blocks: list[Block] = [Heading(named, 3)]
    checks = set(codebook.loc[codebook["attention"].notna(), "item_id"])
    kinds = set(codebook["type"].astype(object)) | set(items["type"].astype(object))
    if "scale" in kinds:
        caption = f"{q.title(q_id)}: answers to the rating items per system"
        blocks.append(Figure("likert", q_id, caption))
    if kinds & set(CATEGORICAL):
        caption = f"{q.title(q_id)}: share of each answer to the yes/no and choice items per system"
        blocks.append(Figure("proportions", q_id, caption))
    if len(codebook):
        keys, scales = item_scales(codebook, choices)
        legend: list[tuple[str, ...]] = [
            (r["item_id"] + (" (R)" if r["reverse"] else ""), d.shorten(r["text"], 110),
             keys[str(r["item_id"])],
             "attention check" if r["item_id"] in checks
             else (d.DASH if d.missing(r["construct"]) else str(r["construct"])))
            for r in codebook.to_dict("records")
        ]  # fmt: skip
        if all(row[3] == d.DASH for row in legend):  # no constructs: no empty column
            legend = [row[:3] for row in legend]
        columns = ("Item", "Wording", "Scale", "Construct")[: len(legend[0])]
        blocks.append(d.table(columns, legend, caption="Items"))
        blocks.append(d.table(("Scale", "Answer", "Points"), scales, caption="Scales of the items"))
    order = {item: i for i, item in enumerate(codebook["item_id"])}
    items = items.assign(_order=items["item_id"].astype(object).map(order).fillna(len(order)))
    items = items.sort_values(["_order", "item_id", "system_id"], kind="stable")
    labels = {
        item: dict(zip(part["value"], part["label"], strict=True))
        for item, part in choices.groupby("item_id", sort=False)
    }
    rows = []
    for r in items.to_dict("records"):
        spread = _span if r["type"] == "slider" else _distribution
        if r["type"] in CATEGORICAL:  # categories: counts, no mean of codes
            shares = _distribution(r["distribution"], labels.get(r["item_id"], {}))
            no_mean = (d.DASH,) * 4
            rows.append((_item_name(r), r["system_id"], d.count(r["n"]), *no_mean, shares))
            continue
        rows.append(
            (_item_name(r), r["system_id"], d.count(r["n"]), d.num(r["mean"]), d.num(r["sd"]),
             d.num(r["median"], 1), d.num(r["iqr"], 1),
             spread(r["distribution"]))
        )  # fmt: skip
    flags = (False, False, True, True, True, True, True, False)
    caption = "Answers per item and system"
    blocks.append(d.table(_ITEM_COLUMNS, rows, caption=caption, numeric=flags, group_by=0))
    blocks += _constructs(report, q_id)
    if q_id == "idial" and len(q.idial):
        blocks += _idial(q.idial)
    return blocks


def _constructs(report: Report, q_id: str) -> list[Block]:
    q = report.questionnaires
    scores = q.constructs[q.constructs["questionnaire_id"] == q_id]
    alphas = q.reliability[q.reliability["questionnaire_id"] == q_id]
    if scores.empty and alphas.empty:
        return []
    keys = ["construct", "system_id"]
    merged = scores.astype({k: object for k in keys}).merge(
        alphas.astype({k: object for k in keys}).drop(columns="questionnaire_id"),
        on=keys,
        how="outer",
    )
    systems = list(dict.fromkeys([*report.study.systems, *merged["system_id"]]))
    rank = {s: i for i, s in enumerate(systems)} | {ALL_SYSTEMS: len(systems)}
    merged = merged.assign(_rank=merged["system_id"].map(rank)).sort_values(["construct", "_rank"])
    rows = []
    for r in merged.to_dict("records"):
        alpha = d.DASH
        if not d.missing(r.get("alpha")):
            alpha = f"{d.num(r['alpha'])} ({d.num(r['ci_low'])}, {d.num(r['ci_high'])})"
        basis = ""
        if not d.missing(r.get("k_items")):
            basis = f"{int(r['k_items'])} items, {int(r['n_cases'])} sets"
        note = "" if d.missing(r.get("note")) else str(r["note"])
        if not d.missing(r.get("dropped")):
            basis += f"; left out, never varied: {r['dropped']}"
        if not d.missing(r.get("warning")):
            alpha += " ⚠"
            note = "; ".join(x for x in (note, f"⚠ {r['warning']}") if x)
        rows.append(
            (r["construct"], r["system_id"], d.count(r.get("n")), d.count(r.get("participants")),
             d.num(r.get("mean")), d.num(r.get("sd")), d.num(r.get("median")), alpha,
             "; ".join(x for x in (basis, note) if x))
        )  # fmt: skip
    columns = ("Construct", "System", "n", "Participants", "Mean", "SD", "Median")
    return [
        d.table(
            (*columns, "Cronbach's α (95% CI)", "α from (complete sets)"),
            rows,
            caption="Constructs (n counts answer sets: a session, a turn or the study)",
            numeric=(False, False, True, True, True, True, True, True, False),
            group_by=0,
        )
    ]


def _idial(idial: pd.DataFrame) -> list[Block]:
    aspects = list(dict.fromkeys(idial["aspect"]))
    rows = []
    for system, group in idial.groupby("system_id", sort=False):
        by_aspect = {r["aspect"]: r for r in group.to_dict("records")}
        rows.append(
            (system, *(
                f"average {by_aspect[a]['summary']}" if a in by_aspect else d.DASH
                for a in aspects
            ))
        )  # fmt: skip
    statements = {r["aspect"]: r["statements"] for r in idial.to_dict("records")}
    legend = "; ".join(f"{a}: statements {s}" for a, s in statements.items())
    return [
        Paragraph(
            "IDIAL summary (Cutugno et al., EVALITA 2018): the average of each aspect's "
            f"statements, reverse statements recoded ({legend}).",
            "method",
        ),
        d.table(("System", *aspects), rows, numeric=(False, *[True] * len(aspects))),
    ]


def _by_turn(report: Report) -> list[Block]:
    q = report.questionnaires
    if q.by_turn.empty:
        return []
    blocks: list[Block] = [
        Heading("Ratings by turn", 3),
        Paragraph(
            "Exchange-level ratings: mean by turn index (reverse items recoded, so higher is "
            "better), with the number of ratings in brackets. Later turns have fewer ratings.",
            "method",
        ),
    ]
    for q_id in dict.fromkeys(q.by_turn["questionnaire_id"]):
        constructs = q.by_turn_constructs[q.by_turn_constructs["questionnaire_id"] == q_id]
        items = q.by_turn[q.by_turn["questionnaire_id"] == q_id]
        frame, level = (constructs, "construct") if len(constructs) else (items, "item_id")
        blocks.append(Figure("by_turn", q_id, f"{q.title(q_id)}: mean rating by turn"))
        for measure, part in frame.groupby(level, sort=False):
            wide = part.pivot_table(index="turn", columns="system_id", values=["mean", "n"])
            systems = list(wide["mean"].columns)
            rows = [
                (str(turn), *(
                    d.DASH if d.missing(wide.loc[turn, ("mean", s)])
                    else f"{d.num(wide.loc[turn, ('mean', s)])} ({int(wide.loc[turn, ('n', s)])})"
                    for s in systems
                ))
                for turn in wide.index
            ]  # fmt: skip
            blocks.append(
                d.table(
                    ("Turn", *systems),
                    rows,
                    caption=f"{q_id}: {measure}",
                    numeric=(True, *[True] * len(systems)),
                )
            )
    return blocks


def _agreement(report: Report) -> list[Block]:
    agreement = report.questionnaires.agreement
    if agreement.empty:
        return []

    def icc(r: dict, k: str) -> str:
        value = r[f"icc2_{k}"]
        if d.missing(value):
            return d.DASH
        return f"{d.num(value)} ({d.num(r[f'icc2_{k}_ci_low'])}, {d.num(r[f'icc2_{k}_ci_high'])})"

    rows = [
        (r["item_id"], d.count(r["n_raters"]), d.count(r["n_stimuli"]),
         d.num(r["krippendorff_alpha"]), icc(r, "1"), icc(r, "k"),
         "" if d.missing(r["note"]) else str(r["note"]))
        for r in agreement.to_dict("records")
    ]  # fmt: skip
    columns = ("Item", "Raters", "Stimuli", "Krippendorff's α", "ICC(2,1) (95% CI)")
    return [
        Heading("Agreement between raters", 3),
        d.table(
            (*columns, "ICC(2,k) (95% CI)", "Note"),
            rows,
            numeric=(False, True, True, True, True, True, False),
        ),
    ]
