"""The pairwise section's figures: a forest plot of each system's score with its two
intervals, and the heat map of win rates.

As in ``analytics.report.plots``: matplotlib's object interface only (no pyplot), imported
inside the functions, colour-blind-safe colours (Okabe–Ito for the two intervals, a
diverging ColorBrewer RdBu for win rates centred on 50%).
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from analytics.report.plots import OKABE_ITO, WIDTH, Chart

if TYPE_CHECKING:
    from matplotlib.figure import Figure


def _figure(height: float, width: float = WIDTH) -> Figure:
    from matplotlib.figure import Figure

    figure = Figure(figsize=(width, height), dpi=100, layout="constrained")
    figure.set_facecolor("white")
    return figure


def forest_chart(scores: pd.DataFrame, name: str, caption: str, level: float) -> Chart | None:
    """One row per system, best at the top: the score on the Elo-like scale, the bootstrap
    interval (thick) and the sandwich interval (thin) beside it."""
    if scores.empty:
        return None
    rows = scores.reset_index(drop=True)
    figure = _figure(1.0 + 0.38 * len(rows))
    axes = figure.subplots()
    y = np.arange(len(rows))[::-1]
    finite = rows[["elo_boot_low", "elo_boot_high", "elo_sandwich_low", "elo_sandwich_high"]]
    values = finite.to_numpy(dtype=float)
    seen = values[np.isfinite(values)]
    low = float(min(seen.min(), rows["elo"].min())) if seen.size else float(rows["elo"].min())
    high = float(max(seen.max(), rows["elo"].max())) if seen.size else float(rows["elo"].max())
    pad = max(10.0, (high - low) * 0.08)
    for index, r in enumerate(rows.to_dict("records")):
        position = y[index]
        for offset, (lo, hi), colour, width in (
            (0.12, (r["elo_boot_low"], r["elo_boot_high"]), OKABE_ITO[0], 3.0),
            (-0.12, (r["elo_sandwich_low"], r["elo_sandwich_high"]), OKABE_ITO[1], 1.4),
        ):
            start = low - pad if math.isinf(lo) or pd.isna(lo) else lo
            end = high + pad if math.isinf(hi) or pd.isna(hi) else hi
            axes.plot([start, end], [position + offset] * 2, color=colour, linewidth=width,
                      solid_capstyle="butt")  # fmt: skip
        axes.plot(r["elo"], position, "o", color="#222222", markersize=4.5, zorder=3)
    labels = [
        f"{r['system']}{' (anchor)' if r['anchor'] else ''}  #{int(r['rank'])}"
        for r in rows.to_dict("records")
    ]
    axes.set_yticks(y, labels, fontsize=8)
    axes.set_xlim(low - pad, high + pad)
    axes.set_xlabel(
        "Score (Elo-like scale: 400 points = odds of 10 to 1, as the model counts a win)",
        fontsize=8,
    )
    axes.grid(axis="x", color="#e5e5e5", linewidth=0.6)
    axes.spines[["top", "right"]].set_visible(False)
    axes.tick_params(labelsize=8)
    level_words = f"{100 * level:g}%"
    axes.plot([], [], color=OKABE_ITO[0], linewidth=3.0, label=f"{level_words} rater bootstrap")
    axes.plot([], [], color=OKABE_ITO[1], linewidth=1.4, label=f"{level_words} sandwich")
    axes.legend(loc="lower right", fontsize=7, frameon=False)
    return Chart(
        name,
        f"{caption}. Dots: maximum-likelihood scores; thick lines: {level_words} intervals "
        "resampling raters; thin lines: sandwich intervals clustered by rater; # the rank "
        "(shared where intervals overlap). Intervals are relative to the anchor.",
        figure,
    )


def heatmap_chart(rates: pd.DataFrame, order: list[str], name: str, caption: str) -> Chart | None:
    """Win rate of each row's system against each column's, ties as half."""
    if rates.empty or len(order) < 2:
        return None
    matrix = (
        rates.pivot(index="system", columns="opponent", values="win_rate")
        .reindex(index=order, columns=order)
        .to_numpy(dtype=float)
    )
    counts = (
        rates.pivot(index="system", columns="opponent", values="comparisons")
        .reindex(index=order, columns=order)
        .to_numpy(dtype=float)
    )
    side = min(WIDTH, 2.6 + 0.6 * len(order))
    figure = _figure(side * 0.85, side)
    axes = figure.subplots()
    image = axes.imshow(np.ma.masked_invalid(matrix), cmap="RdBu", vmin=0, vmax=1)
    if len(order) <= 12:
        for i in range(len(order)):
            for j in range(len(order)):
                if not math.isnan(matrix[i, j]):
                    ink = "white" if abs(matrix[i, j] - 0.5) > 0.3 else "#222222"
                    axes.text(j, i, f"{100 * matrix[i, j]:.0f}%\n({int(counts[i, j])})",
                              ha="center", va="center", fontsize=6.5, color=ink)  # fmt: skip
    axes.set_xticks(range(len(order)), order, rotation=45, ha="right", fontsize=8)
    axes.set_yticks(range(len(order)), order, fontsize=8)
    axes.set_xlabel("Opponent", fontsize=8)
    axes.set_ylabel("System", fontsize=8)
    bar = figure.colorbar(image, ax=axes, shrink=0.8)
    bar.ax.tick_params(labelsize=7)
    bar.set_label("Win rate (ties as half)", fontsize=8)
    return Chart(
        name,
        f"{caption}: how often the row's system was preferred to the column's, ties as "
        "half a win, either side shown first; comparisons in brackets.",
        figure,
    )
