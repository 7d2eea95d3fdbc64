"""Plots of the HTML report, as PNG bytes: diverging stacked bars of Likert answers, task
success with its interval, and ratings by turn.

Matplotlib is imported here only, inside the functions, and only ``matplotlib.figure`` is
used (no pyplot, no global state, no display): the terminal, Markdown and JSON reports
never load it. The diverging bar is a few lines of matplotlib (plot-likert does not work
with pandas 3): each bar is centred on the scale's midpoint, disagreement to the left.
"""

from __future__ import annotations

import io
from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

if TYPE_CHECKING:
    from matplotlib.figure import Figure

_DPI = 144
_WIDTH = 8.6  # inches: about 1240 px at 144 dpi, shown at 860 px
_INK = "#222222"
_SYSTEM_COLOURS = ("#1b6ca8", "#d1495b", "#2e933c", "#edae49", "#6a4c93", "#00798c")


def _figure(height: float) -> Figure:
    from matplotlib.figure import Figure

    figure = Figure(figsize=(_WIDTH, height), dpi=_DPI, layout="constrained")
    figure.set_facecolor("white")
    return figure


def _png(figure: Figure) -> bytes:
    buffer = io.BytesIO()
    figure.savefig(buffer, format="png", dpi=_DPI, facecolor="white")
    return buffer.getvalue()


def likert_pngs(
    distribution: pd.DataFrame, codebook: pd.DataFrame, systems: Sequence[str]
) -> list[bytes]:
    """Diverging stacked bars of one instrument: one bar per item and system, one figure
    per scale (an instrument may mix 1–5 items with yes/no ones)."""
    from matplotlib import colormaps

    numeric = distribution[distribution["answer"].map(lambda a: isinstance(a, int | float))]
    numeric = numeric[numeric["n"] > 0]
    if numeric.empty:
        return []
    spans = numeric.groupby("item_id", observed=True)["answer"].agg(["min", "max"])
    order = [i for i in codebook["item_id"] if i in spans.index]
    order += [i for i in spans.index if i not in order]
    reverse = dict(zip(codebook["item_id"], codebook["reverse"], strict=True))
    text = dict(zip(codebook["item_id"], codebook["text"], strict=True))
    images = []
    for _, group in spans.loc[order].groupby(["min", "max"], sort=False):
        items = list(group.index)
        points = np.arange(group["min"].iloc[0], group["max"].iloc[0] + 1)
        colours = colormaps["RdBu"](np.linspace(0.1, 0.9, len(points)))
        if len(points) % 2:
            colours[len(points) // 2] = (0.80, 0.80, 0.80, 1.0)  # neutral: grey, not white
        part = numeric[numeric["item_id"].isin(items)]
        labels = part.drop_duplicates("answer").set_index("answer")["label"].to_dict()
        present = [s for s in systems if s in set(part["system_id"])]
        present += sorted(set(part["system_id"]) - set(present))
        images.append(_likert(part, items, present, points, colours, labels, reverse, text))
    return images


def _likert(part, items, systems, points, colours, labels, reverse, text) -> bytes:
    middle = (points[0] + points[-1]) / 2
    several = len(systems) > 1
    per_group = len(systems) + (1 if several else 0)
    rows = len(items) * per_group
    figure = _figure(1.3 + 0.3 * rows)
    axes = figure.add_subplot()
    shares = part.pivot_table(
        index=["item_id", "system_id"], columns="answer", values="share", observed=True
    ).reindex(columns=points, fill_value=0)
    counts = part.groupby(["item_id", "system_id"], observed=True)["n"].first()
    ticks, names = [], []
    for g, item in enumerate(items):
        top = g * per_group
        title = f"{item}{' (R)' if reverse.get(item) else ''}: {_short(text.get(item, ''), 70)}"
        if several:
            axes.text(-1.0, top, title, va="center", ha="left", fontsize=8.5, weight="bold")
        for j, system in enumerate(systems):
            y = top + j + (1 if several else 0)
            if (item, system) not in shares.index:
                continue
            row = shares.loc[(item, system)].fillna(0).to_numpy(dtype=float)
            left = -row[points < middle].sum() - row[points == middle].sum() / 2
            for value, colour in zip(row, colours, strict=True):
                axes.barh(y, value, left=left, height=0.78, color=colour, edgecolor="white")
                if value >= 0.07:
                    dark = 0.299 * colour[0] + 0.587 * colour[1] + 0.114 * colour[2] < 0.55
                    axes.text(left + value / 2, y, f"{value:.0%}", ha="center", va="center",
                              fontsize=7, color="white" if dark else _INK)  # fmt: skip
                left += value
            axes.text(1.01, y, f"n={int(counts[(item, system)])}", va="center", fontsize=7.5)
            ticks.append(y)
            names.append(system if several else title)
    axes.set_yticks(ticks, names, fontsize=8.5 if several else 8)
    axes.set_ylim(rows - 0.5, -0.7)
    axes.set_xlim(-1, 1)
    axes.axvline(0, color=_INK, linewidth=0.8)
    grid = np.linspace(-1, 1, 9)
    axes.set_xticks(grid, [f"{abs(v):.0%}" for v in grid], fontsize=8)
    axes.spines[["top", "right", "left"]].set_visible(False)
    axes.tick_params(axis="y", length=0)
    handles = [
        _patch(
            colour, f"{int(p) if float(p).is_integer() else p} {labels.get(p, '') or ''}".strip()
        )
        for p, colour in zip(points, colours, strict=True)
    ]
    figure.legend(handles=handles, loc="outside lower center", ncol=min(len(points), 6),
                  fontsize=8, frameon=False)  # fmt: skip
    return _png(figure)


def _patch(colour, label: str):
    from matplotlib.patches import Patch

    return Patch(facecolor=colour, label=label)


def _short(text: str, width: int) -> str:
    line = " ".join(str(text).split())
    return line if len(line) <= width else line[: width - 1].rstrip() + "…"


def completion_png(by_system: pd.DataFrame, by_scenario: pd.DataFrame) -> bytes | None:
    """Success rate per system (and per scenario, lighter) with Wilson's 95% interval."""
    known = by_system[by_system["n"] > 0]
    if known.empty:
        return None
    scenarios = list(dict.fromkeys(by_scenario.loc[by_scenario["n"] > 0, "scenario_id"]))
    show_scenarios = len(scenarios) > 1
    step = 1 + (len(scenarios) if show_scenarios else 0)
    figure = _figure(1.0 + 0.42 * len(known) * step)
    axes = figure.add_subplot()
    ticks, names = [], []
    markers = ("s", "^", "D", "v", "P", "X")
    for i, r in enumerate(known.to_dict("records")):
        y = i * step
        colour = _SYSTEM_COLOURS[i % len(_SYSTEM_COLOURS)]
        rate = r["success_rate"]
        axes.errorbar(rate, y, xerr=[[rate - r["ci_low"]], [r["ci_high"] - rate]], fmt="o",
                      color=colour, capsize=4, markersize=7, linewidth=2)  # fmt: skip
        axes.text(1.02, y, f"{rate:.0%} ({r['successes']}/{r['n']})", va="center", fontsize=8.5)
        ticks.append(y)
        names.append(str(r["system_id"]))
        if not show_scenarios:
            continue
        mine = by_scenario[(by_scenario["system_id"] == r["system_id"]) & (by_scenario["n"] > 0)]
        for s in mine.to_dict("records"):
            k = scenarios.index(s["scenario_id"])
            sy, srate = y + 1 + k, s["success_rate"]
            axes.errorbar(srate, sy, xerr=[[srate - s["ci_low"]], [s["ci_high"] - srate]],
                          fmt=markers[k % len(markers)], color=colour, alpha=0.55, capsize=3,
                          markersize=5, linewidth=1.2)  # fmt: skip
            axes.text(1.02, sy, f"{srate:.0%} ({s['successes']}/{s['n']})", va="center",
                      fontsize=7.5, color="#555555")  # fmt: skip
            ticks.append(sy)
            names.append(f"  {s['scenario_id']}")
    axes.set_yticks(ticks, names, fontsize=8.5)
    axes.set_ylim(max(ticks) + 0.6, -0.6)
    axes.set_xlim(0, 1)
    axes.set_xticks(np.linspace(0, 1, 6), [f"{v:.0%}" for v in np.linspace(0, 1, 6)], fontsize=8)
    axes.set_xlabel("Tasks completed successfully (95% Wilson interval)", fontsize=8.5)
    axes.grid(axis="x", color="#dddddd", linewidth=0.6)
    axes.spines[["top", "right"]].set_visible(False)
    return _png(figure)


def by_turn_png(frame: pd.DataFrame, level: str, systems: Sequence[str]) -> bytes | None:
    """Mean rating by turn, one panel per construct (or item), one line per system."""
    from matplotlib.ticker import MaxNLocator

    if frame.empty:
        return None
    measures = list(dict.fromkeys(frame[level]))[:6]
    columns = min(len(measures), 2)
    lines = (len(measures) + columns - 1) // columns
    figure = _figure(0.6 + 2.5 * lines)
    grid = figure.subplots(lines, columns, squeeze=False, sharex=True)
    present = [s for s in systems if s in set(frame["system_id"])]
    present += sorted(set(frame["system_id"]) - set(present))
    low, high = frame["mean"].min(), frame["mean"].max()
    pad = max(0.2, (high - low) * 0.15)
    for index, measure in enumerate(measures):
        axes = grid[index // columns][index % columns]
        part = frame[frame[level] == measure]
        for k, system in enumerate(present):
            line = part[part["system_id"] == system].sort_values("turn")
            colour = _SYSTEM_COLOURS[k % len(_SYSTEM_COLOURS)]
            axes.plot(line["turn"], line["mean"], marker="o", markersize=3.5, color=colour,
                      label=str(system), linewidth=1.6)  # fmt: skip
        axes.set_title(str(measure), fontsize=9, loc="left")
        axes.set_ylim(low - pad, high + pad)
        axes.grid(color="#e5e5e5", linewidth=0.6)
        axes.spines[["top", "right"]].set_visible(False)
        axes.tick_params(labelsize=8)
        axes.xaxis.set_major_locator(MaxNLocator(integer=True))
        axes.set_xlabel("Turn", fontsize=8)
        axes.set_ylabel("Mean rating", fontsize=8)
    for index in range(len(measures), lines * columns):
        grid[index // columns][index % columns].set_visible(False)
    handles, names = grid[0][0].get_legend_handles_labels()
    figure.legend(handles, names, loc="outside lower center", ncol=len(present), fontsize=8,
                  frameon=False)  # fmt: skip
    return _png(figure)
