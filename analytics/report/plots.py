"""The report's figures: diverging stacked bars of rating items, proportions of yes/no and
choice answers with their intervals, task success, and ratings by turn.

Matplotlib is imported here only, inside the functions, and only ``matplotlib.figure`` is
used (no pyplot, no global state, no display): the terminal, Markdown and JSON reports
never load it. The diverging bar is a few lines of matplotlib (plot-likert does not work
with pandas 3): each bar is centred on the scale's midpoint, disagreement to the left.

Colours are safe for colour-blind readers: systems take the Okabe–Ito palette (Okabe &
Ito 2008) with a marker of their own where lines or points are drawn, and rating scales
ColorBrewer's RdBu, a diverging scheme marked colour-blind safe, with a grey midpoint.

Figures are reproducible to the byte: SVG and PDF carry no date, SVG ids come from a
fixed salt, and text in SVG is drawn as paths, so a figure looks the same on every
machine (``encode``). A PDF embeds its font as TrueType (Type 42: publishers' checks
refuse Type 3 fonts), subset to the glyphs drawn, without the tables that shape text.
"""

from __future__ import annotations

import contextlib
import io
import math
import textwrap
import unicodedata
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from analytics.statistics.questionnaires import wilson_interval

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

WIDTH = 8.6  # inches: a page's text width with margins, and 860 px in the HTML
PRINT_DPI = 300
_INK = "#222222"
OKABE_ITO = ("#0072B2", "#D55E00", "#009E73", "#E69F00", "#CC79A7", "#56B4E9", "#000000")
"""Okabe & Ito's colour-blind-safe palette, strongest first (its yellow is left out: it
does not show on white)."""
MARKERS = ("o", "s", "^", "D", "v", "P", "X")
_METADATA: dict[str, dict[str, Any]] = {
    "svg": {"Date": None},
    "pdf": {"CreationDate": None, "ModDate": None},
    "png": {},
}
_SHAPING_TABLES = ("GSUB", "GPOS", "GDEF", "kern", "MATH", "BASE", "JSTF")
"""What turns characters into placed glyphs (ligatures, kerning, marks, math layout): a PDF
places every glyph itself, so no reader of the figure ever uses them."""


@dataclass(frozen=True)
class Chart:
    """One figure with the name its files get and the caption a paper would print."""

    name: str
    caption: str
    figure: Figure


def encode(figure: Figure, fmt: str, dpi: int = PRINT_DPI) -> bytes:
    """``figure`` as ``svg``, ``pdf`` or ``png`` bytes, the same bytes on every run."""
    import matplotlib

    buffer = io.BytesIO()
    _name_what_the_font_lacks(figure)
    # SVG ids from a fixed salt, text as paths (no font needed to view it), TrueType in PDF.
    with (
        matplotlib.rc_context(
            {"svg.hashsalt": "ozlab", "svg.fonttype": "path", "pdf.fonttype": 42}
        ),
        _fonts_subset_without_shaping() if fmt == "pdf" else contextlib.nullcontext(),
    ):
        figure.savefig(buffer, format=fmt, dpi=dpi, facecolor="white", metadata=_METADATA[fmt])
    return buffer.getvalue()


@contextlib.contextmanager
def _fonts_subset_without_shaping() -> Iterator[None]:
    """Matplotlib subsets a PDF's TrueType font with fontTools, which by default keeps (and
    so reads and rewrites) the font's shaping tables: DejaVu's kerning and substitutions,
    0.12 s of the 0.17 s it took a face, for tables no PDF reader uses (it draws each
    glyph where the page says). Dropped here, the glyphs, their outlines, hinting and metrics
    are the same: the figure looks the same, its file is smaller."""
    from fontTools import subset

    dropped = subset.Options._drop_tables_default
    subset.Options._drop_tables_default = [*dropped, *_SHAPING_TABLES]
    try:
        yield
    finally:
        subset.Options._drop_tables_default = dropped


def _name_what_the_font_lacks(figure: Figure) -> None:
    """Each character of the figure's text that its font has no glyph for (an emoji on a
    thumbs item's button, 👍) written as its Unicode name, ``[thumbs up sign]``: an empty
    box would say nothing, and matplotlib would warn in the middle of a report run. Tick
    labels given as a list are made again at drawing from it, so the list is rewritten."""
    from matplotlib.font_manager import FontProperties, findfont, get_font
    from matplotlib.text import Text
    from matplotlib.ticker import FuncFormatter

    def named(words: str, font: FontProperties) -> str:
        if words.isascii():
            return words
        glyphs = get_font(findfont(font))
        drawn = []
        for character in words:
            if character.isascii() or glyphs.get_char_index(ord(character)):
                drawn.append(character)
            # a combining mark or a joiner only shapes its neighbour: left out, not named
            elif unicodedata.category(character) not in ("Mn", "Me", "Cf"):
                name = unicodedata.name(character, f"U+{ord(character):04X}")
                drawn.append(f"[{name.lower()}]")
        return "".join(drawn)

    for text in figure.findobj(Text):
        text.set_text(named(text.get_text(), text.get_fontproperties()))
    for axes in figure.axes:
        for axis in (axes.xaxis, axes.yaxis):
            labels = axis.get_ticklabels()
            if isinstance(axis.get_major_formatter(), FuncFormatter) and not all(
                label.get_text().isascii() for label in labels
            ):
                axis.set_ticklabels([named(t.get_text(), t.get_fontproperties()) for t in labels])


def system_colour(index: int) -> str:
    return OKABE_ITO[index % len(OKABE_ITO)]


def _figure(height: float) -> Figure:
    from matplotlib.figure import Figure

    figure = Figure(figsize=(WIDTH, height), dpi=100, layout="constrained")
    figure.set_facecolor("white")
    return figure


def _ordered(systems: Sequence[str], found: set[str]) -> list[str]:
    present = [s for s in systems if s in found]
    return present + sorted(found - set(present))


def _short(text: str, width: int) -> str:
    line = " ".join(str(text).split())
    return line if len(line) <= width else line[: width - 1].rstrip() + "…"


def _wording(texts: Mapping[Any, Any], key: Any, width: int) -> str:
    """What a reader was asked (the item's wording), the id only when there is none."""
    text = texts.get(key)
    return _short(str(key) if text is None or text != text or not str(text).strip() else text,
                  width)  # fmt: skip


def _point(value: Any) -> str:
    return str(int(value)) if isinstance(value, float) and value.is_integer() else str(value)


# --- rating items: diverging stacked bars ------------------------------------------------


def likert_charts(
    distribution: pd.DataFrame,
    codebook: pd.DataFrame,
    choices: pd.DataFrame,
    systems: Sequence[str],
    name: str,
    caption: str,
) -> list[Chart]:
    """Diverging stacked bars of an instrument's rating items: one bar per item and system,
    one figure per scale (items with other labels or another width get their own)."""
    scales = codebook[codebook["type"] == "scale"]
    part = distribution[distribution["item_id"].isin(set(scales["item_id"]))]
    part = part[part["n"] > 0]
    if part.empty:
        return []
    groups: dict[tuple[tuple[Any, str], ...], list[str]] = {}
    for item in scales["item_id"]:
        if item not in set(part["item_id"]):
            continue
        mine = choices[choices["item_id"] == item]
        points = tuple(zip(mine["value"].tolist(), mine["label"].tolist(), strict=True))
        groups.setdefault(points, []).append(str(item))
    reverse = dict(zip(codebook["item_id"], codebook["reverse"], strict=True))
    text = dict(zip(codebook["item_id"], codebook["text"], strict=True))
    charts = []
    for index, (points, items) in enumerate(groups.items(), start=1):
        shown = part[part["item_id"].isin(items)]
        present = _ordered(systems, set(shown["system_id"]))
        scale = "; ".join(f"{_point(v)} = {label}" for v, label in points)
        figure = _likert(shown, items, present, points, reverse, text)
        suffix = f"-{index}" if len(groups) > 1 else ""
        marked = any(reverse.get(i) for i in items)
        words = "; (R) marks reverse-worded items, shown as answered" if marked else ""
        charts.append(
            Chart(
                f"{name}{suffix}",
                f"{caption}. Share of answers per item and system, centred on the scale's "
                f"midpoint ({scale}); n answers at the right{words}.",
                figure,
            )
        )
    return charts


def _likert(
    part: pd.DataFrame,
    items: list[str],
    systems: list[str],
    points: tuple[tuple[Any, str], ...],
    reverse: dict[str, bool],
    text: dict[str, str],
) -> Figure:
    from matplotlib import colormaps

    values = np.array([float(v) for v, _ in points])
    colours = colormaps["RdBu"](np.linspace(0.1, 0.9, len(values)))
    if len(values) % 2:
        colours[len(values) // 2] = (0.80, 0.80, 0.80, 1.0)  # neutral: grey, not white
    middle = (values[0] + values[-1]) / 2
    several = len(systems) > 1
    per_group = len(systems) + (1 if several else 0)
    rows = len(items) * per_group
    columns = len(values) if len(values) <= 7 else math.ceil(len(values) / 2)
    legend_lines = math.ceil(len(values) / columns) * 2
    figure = _figure(1.0 + 0.3 * rows + 0.16 * legend_lines)
    axes = figure.add_subplot()
    shares = part.pivot_table(
        index=["item_id", "system_id"], columns="answer", values="share", observed=True
    )
    shares.columns = [float(c) for c in shares.columns]
    shares = shares.reindex(columns=values, fill_value=0)
    bars = dict(zip(shares.index, np.nan_to_num(shares.to_numpy(dtype=float)), strict=True))
    counts = part.groupby(["item_id", "system_id"], observed=True)["n"].first()
    ticks, names = [], []
    for g, item in enumerate(items):
        top = g * per_group
        title = f"{_wording(text, item, 90)}{' (R)' if reverse.get(item) else ''}"
        if several:
            axes.text(-1.0, top, title, va="center", ha="left", fontsize=8.5, weight="bold")
        for j, system in enumerate(systems):
            y = top + j + (1 if several else 0)
            row = bars.get((item, system))
            if row is None:
                continue
            left = -row[values < middle].sum() - row[values == middle].sum() / 2
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
        _patch(colour, "\n".join(textwrap.wrap(f"{_point(v)} {label}".strip(), 16)))
        for (v, label), colour in zip(points, colours, strict=True)
    ]
    figure.legend(handles=handles, loc="outside lower center", ncol=columns, fontsize=7.5,
                  frameon=False, handlelength=1.2, columnspacing=1.0)  # fmt: skip
    return figure


def _patch(colour: Any, label: str) -> Any:
    from matplotlib.patches import Patch

    return Patch(facecolor=colour, label=label)


# --- yes/no and choice items: proportions --------------------------------------------------


def proportion_charts(
    distribution: pd.DataFrame,
    codebook: pd.DataFrame,
    choices: pd.DataFrame,
    systems: Sequence[str],
    name: str,
    caption: str,
) -> list[Chart]:
    """The share of each answer per system with Wilson's 95% interval: a category is not a
    point on a scale, so no diverging bars. One panel per item."""
    kinds = ("yes_no", "thumbs", "choice", "multi_choice")
    categorical = codebook[codebook["type"].isin(kinds)]
    part = distribution[distribution["item_id"].isin(set(categorical["item_id"]))]
    part = part[part["n"] > 0]
    if part.empty:
        return []
    items = [i for i in categorical["item_id"] if i in set(part["item_id"])]
    present = _ordered(systems, set(part["system_id"]))
    options = {
        item: [(v, label) for v, label in zip(mine["value"], mine["label"], strict=True)]
        for item, mine in choices[choices["item_id"].isin(items)].groupby("item_id", sort=False)
    }
    heights = [0.55 + 0.2 * max(1, len(options.get(i, ()))) * len(present) for i in items]
    figure = _figure(0.55 + sum(heights))
    grid = figure.subplots(len(items), 1, squeeze=False, height_ratios=heights)
    text = dict(zip(codebook["item_id"], codebook["text"], strict=True))
    kind = dict(zip(codebook["item_id"], codebook["type"], strict=True))
    for axes, item in zip(grid[:, 0], items, strict=True):
        mine = part[part["item_id"] == item]
        _proportions(axes, mine, options.get(item, []), present)
        multi = (
            " (several answers allowed: shares of participants)"
            if kind[item] == "multi_choice"
            else ""
        )
        axes.set_title(f"{_wording(text, item, 90)}{multi}", fontsize=8.5,
                       loc="left", weight="bold")  # fmt: skip
    handles = [_patch(system_colour(k), str(system)) for k, system in enumerate(present)]
    figure.legend(handles=handles, loc="outside lower center", ncol=min(len(present), 6),
                  fontsize=8, frameon=False)  # fmt: skip
    return [
        Chart(
            name,
            f"{caption}. Bars are the share of each system's answers (count/n at the right); "
            "whiskers are 95% Wilson intervals.",
            figure,
        )
    ]


def _proportions(
    axes: Axes, part: pd.DataFrame, options: list[tuple[Any, str]], systems: list[str]
) -> None:
    answers = [v for v, _ in options] or list(dict.fromkeys(part["answer"]))
    labels = dict(options)
    step = len(systems) + 0.6
    bar = 0.8
    ticks = []
    for k, answer in enumerate(answers):
        top = k * step
        ticks.append(top + (len(systems) - 1) / 2)
        for j, system in enumerate(systems):
            row = part[(part["system_id"] == system) & (part["answer"].astype(str) == str(answer))]
            total = part.loc[part["system_id"] == system, "n"]
            if total.empty:
                continue
            n = int(total.iloc[0])
            count = int(row["count"].iloc[0]) if len(row) else 0
            share = count / n
            low, high = wilson_interval(count, n)
            y = top + j
            axes.barh(y, share, height=bar, color=system_colour(systems.index(system)))
            axes.errorbar(share, y, xerr=[[share - low], [high - share]], fmt="none",
                          ecolor=_INK, elinewidth=0.9, capsize=2.5)  # fmt: skip
            axes.text(1.02, y, f"{share:.0%} ({count}/{n})", va="center", fontsize=7)
    names = ["\n".join(textwrap.wrap(str(labels.get(a, a)), 22)) for a in answers]
    axes.set_yticks(ticks, names, fontsize=8)
    axes.set_ylim(len(answers) * step - 0.6 - 0.5, -0.6)
    axes.set_xlim(0, 1)
    axes.set_xticks(np.linspace(0, 1, 6), [f"{v:.0%}" for v in np.linspace(0, 1, 6)], fontsize=7.5)
    axes.grid(axis="x", color="#e5e5e5", linewidth=0.6)
    axes.set_axisbelow(True)
    axes.spines[["top", "right"]].set_visible(False)
    axes.tick_params(axis="y", length=0)


# --- task success -------------------------------------------------------------------------


def completion_chart(
    by_system: pd.DataFrame, by_scenario: pd.DataFrame, caption: str
) -> Chart | None:
    """Success rate per system (and per scenario, lighter) with Wilson's 95% interval; the
    task done correctly beside the success the system reported, when it was judged."""
    decided = "success_n" if "success_n" in by_system.columns else "n"
    known = by_system[by_system[decided] > 0]
    if known.empty:
        return None
    judged = "correct_n" in known.columns and bool((known["correct_n"] > 0).any())
    scenarios = list(dict.fromkeys(by_scenario.loc[by_scenario[decided] > 0, "scenario_id"]))
    show_scenarios = len(scenarios) > 1
    step = 1 + (len(scenarios) if show_scenarios else 0)
    figure = _figure(1.1 + 0.42 * len(known) * step * (1.5 if judged else 1))
    axes = figure.add_subplot()
    ticks, names = [], []
    for i, r in enumerate(known.to_dict("records")):
        y = i * step * (1.5 if judged else 1)
        colour = system_colour(i)
        _rate(axes, y - (0.2 if judged else 0), r, "", colour, "o", 7, 2.0)
        if judged and r["correct_n"] > 0:
            _rate(axes, y + 0.2, r, "correct_", colour, "s", 6, 1.4, hollow=True)
        ticks.append(y)
        names.append(str(r["system_id"]))
        if not show_scenarios:
            continue
        mine = by_scenario[
            (by_scenario["system_id"] == r["system_id"]) & (by_scenario[decided] > 0)
        ]
        for s in mine.to_dict("records"):
            k = scenarios.index(s["scenario_id"])
            sy = y + (1 + k) * (1.5 if judged else 1)
            _rate(axes, sy, s, "", colour, MARKERS[(k + 1) % len(MARKERS)], 5, 1.2, faint=True)
            ticks.append(sy)
            names.append(f"  {s['scenario_id']}")
    axes.set_yticks(ticks, names, fontsize=8.5)
    axes.set_ylim(max(ticks) + 0.7, -0.7)
    axes.set_xlim(0, 1)
    axes.set_xticks(np.linspace(0, 1, 6), [f"{v:.0%}" for v in np.linspace(0, 1, 6)], fontsize=8)
    axes.set_xlabel("Share of tasks (95% Wilson interval)", fontsize=8.5)
    axes.grid(axis="x", color="#dddddd", linewidth=0.6)
    axes.spines[["top", "right"]].set_visible(False)
    if judged:
        from matplotlib.lines import Line2D

        handles = [
            Line2D([], [], marker="o", color=_INK, linestyle="", label="system reported success"),
            Line2D([], [], marker="s", color=_INK, markerfacecolor="white", linestyle="",
                   label="task done correctly (success_if)"),
        ]  # fmt: skip
        figure.legend(handles=handles, loc="outside lower center", ncol=2, fontsize=8,
                      frameon=False)  # fmt: skip
    return Chart("completion", caption + ".", figure)


def _rate(
    axes: Axes,
    y: float,
    r: dict[Any, Any],
    prefix: str,
    colour: str,
    marker: str,
    size: float,
    width: float,
    *,
    hollow: bool = False,
    faint: bool = False,
) -> None:
    rate = r[f"{prefix}rate"] if prefix else r["success_rate"]
    low, high = r[f"{prefix}ci_low"], r[f"{prefix}ci_high"]
    count = r["correct"] if prefix else r["successes"]
    n = r["correct_n"] if prefix else r["n"]
    axes.errorbar(rate, y, xerr=[[rate - low], [high - rate]], fmt=marker, color=colour,
                  markerfacecolor="white" if hollow else colour, capsize=3 if faint else 4,
                  markersize=size, linewidth=width, alpha=0.6 if faint else 1.0)  # fmt: skip
    axes.text(1.02, y, f"{rate:.0%} ({int(count)}/{int(n)})", va="center",
              fontsize=7.5 if faint else 8.5, color="#555555" if faint else _INK)  # fmt: skip


# --- ratings by turn ----------------------------------------------------------------------


def by_turn_chart(
    frame: pd.DataFrame,
    level: str,
    systems: Sequence[str],
    name: str,
    caption: str,
    wording: Mapping[Any, Any] | None = None,
) -> Chart | None:
    """Mean rating by turn, one panel per construct (or item, titled with its wording),
    one line per system."""
    from matplotlib.ticker import MaxNLocator

    if frame.empty:
        return None
    measures = list(dict.fromkeys(frame[level]))[:6]
    columns = min(len(measures), 2)
    lines = (len(measures) + columns - 1) // columns
    figure = _figure(0.8 + 2.5 * lines)
    grid = figure.subplots(lines, columns, squeeze=False, sharex=True)
    present = _ordered(systems, set(frame["system_id"]))
    low, high = frame["mean"].min(), frame["mean"].max()
    pad = max(0.2, (high - low) * 0.15)
    for index, measure in enumerate(measures):
        axes = grid[index // columns][index % columns]
        part = frame[frame[level] == measure]
        for k, system in enumerate(present):
            line = part[part["system_id"] == system].sort_values("turn")
            axes.plot(line["turn"], line["mean"], marker=MARKERS[k % len(MARKERS)],
                      markersize=3.5, color=system_colour(k), label=str(system),
                      linewidth=1.6)  # fmt: skip
        axes.set_title(_wording(wording or {}, measure, 60), fontsize=9, loc="left")
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
    return Chart(
        name,
        f"{caption}: exchange-level ratings, reverse items recoded so higher is better; "
        "later turns rest on fewer ratings.",
        figure,
    )


# --- annotators' ratings of each conversation, turn by turn --------------------------------


def trajectory_chart(
    frame: pd.DataFrame, systems: Sequence[str], name: str, caption: str
) -> Chart | None:
    """One panel per item rated per exchange, one line per conversation (the mean of its
    annotators at each turn), coloured and marked by system: where conversations rise or
    fall, and whether one system's conversations fall apart."""
    from matplotlib.lines import Line2D
    from matplotlib.ticker import MaxNLocator

    if frame.empty:
        return None
    items = list(dict.fromkeys(zip(frame["instrument_id"], frame["item"], strict=True)))[:6]
    columns = min(len(items), 2)
    lines = (len(items) + columns - 1) // columns
    figure = _figure(0.9 + 2.6 * lines)
    grid = figure.subplots(lines, columns, squeeze=False, sharex=True)
    found = {str(s) for s in frame["system"].dropna()}
    present = _ordered(systems, found)
    for index, (instrument, item) in enumerate(items):
        axes = grid[index // columns][index % columns]
        part = frame[(frame["instrument_id"] == instrument) & (frame["item"] == item)]
        for _session, path in part.groupby("session_id", sort=True):
            system = path["system"].iloc[0]
            k = present.index(str(system)) if str(system) in present else len(present)
            path = path.sort_values("turn")
            axes.plot(path["turn"], path["mean"], marker=MARKERS[k % len(MARKERS)],
                      markersize=2.5, linewidth=1.0, alpha=0.7,
                      color=system_colour(k) if str(system) in present else "#777777")  # fmt: skip
        axes.set_title(str(item), fontsize=9, loc="left")
        axes.grid(color="#e5e5e5", linewidth=0.6)
        axes.spines[["top", "right"]].set_visible(False)
        axes.tick_params(labelsize=8)
        axes.xaxis.set_major_locator(MaxNLocator(integer=True))
        axes.set_xlabel("Turn", fontsize=8)
        axes.set_ylabel("Mean of annotators", fontsize=8)
    for index in range(len(items), lines * columns):
        grid[index // columns][index % columns].set_visible(False)
    handles = [
        Line2D([], [], color=system_colour(k), marker=MARKERS[k % len(MARKERS)], label=system)
        for k, system in enumerate(present)
    ]
    if handles:
        figure.legend(handles=handles, loc="outside lower center", ncol=len(handles),
                      fontsize=8, frameon=False)  # fmt: skip
    conversations = frame["session_id"].nunique()
    return Chart(
        name,
        f"{caption}: {conversations} conversations, one line each, coloured by system.",
        figure,
    )
