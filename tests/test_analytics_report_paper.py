"""A report you can put in a paper, on a study written in the test through the
store (tests/report_study.py): every item states its own scale, yes/no and choice items
are compared and drawn as proportions, each p-value says how it was computed, failed
exchanges are counted apart in a system reliability section, both kinds of task success
have their intervals, comments say what they answer, figures are written for print, and
the same database gives the same bytes in every format."""

from __future__ import annotations

import asyncio
import hashlib
import importlib.metadata
import json
import os
import re
import subprocess
import sys
import textwrap
import warnings
from dataclasses import replace
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from analytics.data.loading import load_study_data
from analytics.report import figures, plots
from analytics.report.document import Bullets, Figure, Heading, Paragraph, Table
from analytics.report.numbers import Report, build_report
from analytics.report.present import document
from analytics.statistics.power import smallest_detectable_effect
from analytics.statistics.proportions import FREEMAN_HALTON, fisher_exact_two_rows
from analytics.statistics.questionnaires import wilson_interval
from analytics.statistics.system_reliability import failure_kind
from bot.cli import analytics_main as main
from bot.store.definition import definition_json
from bot.systems.served_model import model_app
from tests.fake_servers import serving
from tests.report_study import HTTP_503, PEOPLE, report_bundle, write_report_study

TWO = ("alpha", "beta")
THREE = ("alpha", "beta", "gamma")
EPOCH = "1760000000"  # 2025-10-09 08:53:20 UTC


@pytest.fixture(scope="module")
def two_db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    db = tmp_path_factory.mktemp("two") / "study.sqlite"
    asyncio.run(write_report_study(db, TWO))
    return db


@pytest.fixture(scope="module")
def three_db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    db = tmp_path_factory.mktemp("three") / "study.sqlite"
    asyncio.run(write_report_study(db, THREE))
    return db


@pytest.fixture(scope="module")
def three_written(three_db: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The three-system study's report in each format as ``analytics report`` writes it,
    once for the tests that only read the files."""
    out = tmp_path_factory.mktemp("three-report")
    files = [a for suffix in ("txt", "md", "html", "json")
             for a in ("--out", str(out / f"report.{suffix}"))]  # fmt: skip
    assert main(["report", "--db", str(three_db), *files]) == 0
    return out


@pytest.fixture(scope="module")
def two(two_db: Path) -> Report:
    return build_report(load_study_data(two_db))


@pytest.fixture(scope="module")
def three(three_db: Path) -> Report:
    return build_report(load_study_data(three_db))


def _table(blocks: list, caption: str) -> Table:
    return next(b for b in blocks if isinstance(b, Table) and b.caption == caption)


def _row(report: Report, measure: str) -> dict:
    table = report.comparisons.table
    return table[(table["measure"] == measure) & (table["kind"] == "omnibus")].iloc[0].to_dict()


# --- every item states its own scale ------------------------------------------------------


def test_every_item_states_its_own_scale(two: Report) -> None:
    blocks = document(two)
    items = _table(blocks, "Items")
    scales = _table(blocks, "Scales of the items")
    assert items.columns == ("Item", "Wording", "Scale", "Construct")
    key = {row[0]: row[2] for row in items.rows}
    described = {row[0]: (row[1], row[2]) for row in scales.rows}
    seven = described[key["post.ease1"]]
    assert seven[0] == "rating scale"
    assert seven[1].startswith("1 = Strongly disagree; 2 = Disagree; 3 = Somewhat disagree;")
    assert seven[1].endswith("6 = Agree; 7 = Strongly agree")
    assert key["post.ease2 (R)"] == key["post.ease1"]  # reverse-worded, same scale
    # The frequency item has its own scale, every point of it.
    assert described[key["post.freq"]] == (
        "rating scale",
        "0 = Never; 1 = Rarely; 2 = Sometimes; 3 = Often; 4 = Always",
    )
    assert described[key["post.again"]] == ("yes / no", "1 = Yes; 0 = No")
    assert described[key["post.best"]][1] == (
        "speed = Its speed; accuracy = Its accuracy; tone = Its tone"
    )
    assert described[key["post.comment"]] == ("free text", "typed answer")
    # No instrument-wide legend that would describe one scale for all.
    assert not any(isinstance(b, Paragraph) and b.text.startswith("Answers: ") for b in blocks)


# --- yes/no and choice items: proportions -------------------------------------------------


def test_yes_no_and_choice_items_are_compared_as_proportions(two: Report) -> None:
    again = _row(two, "post.again")
    assert (again["test"], again["p_method"]) == ("Fisher's exact test", "exact")
    # R: fisher.test(matrix(c(2, 10, 15, 3), 2)): p-value = 0.0005367, odds ratio 0.04693661
    assert again["p"] == pytest.approx(0.0005367, abs=5e-8)
    assert again["effect"] == pytest.approx(0.04693661, rel=1e-5)
    assert again["effect_name"] == "odds ratio of Yes"
    best = _row(two, "post.best")
    assert (best["test"], best["p_method"]) == ("Fisher's exact test", FREEMAN_HALTON)
    observed = np.array([[6, 4, 2], [3, 9, 6]])  # speed, accuracy, tone per system
    assert best["p"] == pytest.approx(fisher_exact_two_rows(observed))
    table = two.comparisons.table
    ranked = set(table.loc[table["test"] == "Mann–Whitney U", "measure"])
    assert ranked == {"ease", "trust", "post.freq"}  # never the yes/no or choice items


def test_three_systems_take_chi_squared_with_cramers_v_and_pairwise_fisher(three: Report) -> None:
    table = three.comparisons.table
    again = table[table["measure"] == "post.again"]
    omnibus = again.iloc[0]
    assert omnibus["test"] == "χ² test of independence"
    counts = np.array([[2, 10], [15, 3], [5, 5]])  # yes, no per system
    expected = counts.sum(axis=1)[:, None] * counts.sum(axis=0)[None, :] / counts.sum()
    chi2 = ((counts - expected) ** 2 / expected).sum()
    assert omnibus["statistic"] == pytest.approx(chi2)
    assert omnibus["statistic_name"] == "χ²(2)"
    assert omnibus["effect"] == pytest.approx(np.sqrt(chi2 / counts.sum()))
    assert list(again["test"][1:]) == ["Fisher's exact test"] * 3


def test_a_monte_carlo_p_value_is_printed_with_its_error_in_every_format(
    three: Report, three_written: Path
) -> None:
    """post.best's expected counts are small: its χ² p comes from random tables, and every
    format shows the standard error beside it (the JSON as ``p_mc_error``)."""
    table = three.comparisons.table
    (sampled,) = table[table["p_method"].str.startswith("Monte Carlo")].to_dict("records")
    error = sampled["p_mc_error"]
    assert 0 < error < 0.002
    shown = f"Monte Carlo standard error {error:.4f}".replace(" 0.", " .")
    for suffix in ("txt", "md", "html"):
        out = three_written / f"report.{suffix}"
        text = " ".join(out.read_text(encoding="utf-8").split())
        if suffix == "txt":  # the terminal's table wraps the cell over lines
            assert "standard error" in text and f"{shown.split()[-1]})" in text
        else:
            assert shown in text, suffix
    out = three_written / "report.json"
    rows = json.loads(out.read_text(encoding="utf-8"))["comparisons"]["table"]
    assert [r["p_mc_error"] for r in rows if r["p_mc_error"] is not None] == [error]


def test_holm_covers_the_headline_tests_unless_asked_to_cover_every_test(
    three_db: Path, three: Report, three_written: Path, tmp_path: Path
) -> None:
    """By default the family is each measure's headline (omnibus) test, and every format
    says so; ``--adjust all`` corrects across every test of the table, pairs included."""
    table = three.comparisons.table
    headline = table["p_family"].notna()
    assert three.comparisons.family == 5 and (table.loc[headline, "kind"] == "omnibus").all()
    assert "headline test of each measure only" in three.comparisons.method
    for suffix in ("txt", "md", "html"):
        out = three_written / f"report.{suffix}"
        text = " ".join(out.read_text(encoding="utf-8").split())
        assert "headline test of each measure only" in text, suffix
        assert "--adjust all" in text, suffix
    out, md = tmp_path / "all.json", tmp_path / "all.md"
    command = ["report", "--db", str(three_db), "--out", str(out), "--out", str(md)]
    assert main([*command, "--adjust", "all"]) == 0
    found = json.loads(out.read_text(encoding="utf-8"))["comparisons"]
    tested = [r for r in found["table"] if r["p"] is not None]
    assert (found["adjust"], found["family"], len(tested)) == ("all", 20, 20)
    raw = np.array([r["p"] for r in tested])
    order = np.argsort(raw)
    holm = np.minimum(1, np.maximum.accumulate(raw[order] * np.arange(20, 0, -1)))
    corrected = np.empty(20)
    corrected[order] = holm
    assert [r["p_family"] for r in tested] == pytest.approx(corrected.tolist())
    assert "every test in the table" in found["method"]
    assert "(Holm across all 20 tests:" in md.read_text(encoding="utf-8")


def test_yes_no_items_are_drawn_as_proportions_not_diverging_bars(two: Report) -> None:
    blocks = document(two)
    kinds = [(b.kind, b.key) for b in blocks if isinstance(b, Figure)]
    assert ("likert", "post") in kinds and ("proportions", "post") in kinds
    likert = figures.charts(two, Figure("likert", "post", "post"))
    assert [c.name for c in likert] == ["likert-post-1", "likert-post-2"]  # 7-point; 0–4
    drawn = " ".join(t.get_text() for c in likert for t in c.figure.axes[0].texts)
    # titled with what participants read, never the items' ids
    assert "The assistant was easy to talk to." in drawn and "How often did" in drawn
    assert "Would you use it again?" not in drawn and "post." not in drawn
    (shares,) = figures.charts(two, Figure("proportions", "post", "post"))
    titles = [a.get_title(loc="left") for a in shares.figure.axes]
    assert titles == ["Would you use it again?", "What was best about it?"]
    assert "Wilson" in shares.caption
    # The yes/no answers, as shares with their counts, in the item's own order.
    answers = _table(blocks, "Answers per item and system")
    first = next(i for i, row in enumerate(answers.rows) if row[0] == "post.again")
    alpha, beta = answers.rows[first : first + 2]
    assert alpha[1:] == ("alpha", "12", "—", "—", "—", "—", "Yes 2 (17%) · No 10 (83%)")
    assert beta[-1] == "Yes 15 (83%) · No 3 (17%)"


# --- every p-value says how it was computed; a family is corrected -------------------------


def test_every_p_value_names_its_method_and_the_family_is_holm_corrected(two: Report) -> None:
    table = two.comparisons.table
    tested = table[table["p"].notna()]
    assert tested["p_method"].notna().all()
    omnibus = tested[tested["kind"] == "omnibus"]
    assert two.comparisons.family == len(omnibus) == 5
    p = omnibus["p"].to_numpy()
    order = np.argsort(p)
    holm = np.minimum(1, np.maximum.accumulate(p[order] * np.arange(5, 0, -1)))
    assert omnibus["p_family"].to_numpy()[order] == pytest.approx(holm)
    comparison = _table(document(two), "Every test: n (participants), statistic, p and effect size")
    assert comparison.columns[-1] == "p-value computed by"
    assert any("(Holm across 5 measures: " in row[4] for row in comparison.rows)
    assert "Holm's method for the family (the raw p beside it)" in two.comparisons.method


def test_alpha_names_the_items_left_out_and_warns_about_two_items(two: Report) -> None:
    alphas = two.questionnaires.reliability.set_index(["construct", "system_id"])
    assert alphas.loc[("ease", "alpha"), "dropped"] == "post.steady"
    assert alphas.loc[("ease", "alpha"), "k_items"] == 3
    assert alphas.loc[("trust", "beta"), "warning"].startswith("two items only")
    constructs = _table(
        document(two), "Constructs (n counts answer sets: a session, a turn or the study)"
    )
    assert any("left out, never varied: post.steady" in row[-1] for row in constructs.rows)
    assert any(row[7].endswith("⚠") for row in constructs.rows)


# --- failed exchanges and system reliability ----------------------------------------------


def test_failed_exchanges_are_counted_apart_from_real_ones(two: Report) -> None:
    by_system = two.completion.by_system.set_index("system_id")
    assert by_system.loc["alpha", "exchanges_mean"] == 3.0
    assert by_system.loc["beta", "exchanges_mean"] == pytest.approx((54 - 11) / 18)
    assert by_system.loc["beta", "failed_exchanges"] == 11


def test_system_reliability_per_system(two: Report) -> None:
    health = two.system_reliability
    rows = health.by_system.set_index("system_id")
    beta, alpha = rows.loc["beta"], rows.loc["alpha"]
    assert (beta["exchanges"], beta["replied"], beta["failed"]) == (54, 43, 11)
    assert (beta["timeouts"], beta["errors"]) == (6, 5)  # turn 2 of b00, b03…; turn 3 of b01…
    assert (alpha["failed"], alpha["wizard_written"], alpha["wizard_edited"]) == (0, 2, 1)
    # Latency of beta's replies, by the study's own rule (400 + 150 turn + 37 i + 900 ms).
    replied = [
        400 + 150 * turn + 37 * i + 900
        for i in range(18)
        for turn in (1, 2, 3)
        if not (turn == 2 and i % 3 == 0) and not (turn == 3 and i % 4 == 1)
    ]
    assert beta["latency_p50_ms"] == pytest.approx(np.percentile(replied, 50))
    assert beta["latency_p95_ms"] == pytest.approx(np.percentile(replied, 95))
    assert beta["latency_max_ms"] == max(replied)
    errors = health.errors.set_index("kind")
    assert errors.loc["timeout", "count"] == 6 and errors.loc["HTTP 503", "count"] == 5
    periods = health.periods
    assert list(periods["system_id"]) == ["beta", "beta"]
    assert periods["duration_s"].iloc[0] == 120.0 and not periods["ongoing"].iloc[0]
    assert periods["ongoing"].iloc[1] and np.isnan(periods["duration_s"].iloc[1])
    assert (beta["unavailable_periods"], beta["unavailable_s"]) == (2, 120.0)
    blocks = document(two)
    assert any(isinstance(b, Heading) and b.text == "System reliability" for b in blocks)
    shown = _table(blocks, "Exchanges, failures and reply latency (p50, p95, max) per system")
    assert shown.rows[1][3] == "11 (20%)" and shown.rows[1][9] == "2× (2.0 min), 1 ongoing"


@pytest.mark.parametrize(
    ("error", "kind"),
    [
        ("no reply within 10 s", "timeout"),
        ("no answer from http://x/chat within 5 s (3 attempts; last: …)", "timeout"),
        ("timeout", "timeout"),
        (HTTP_503, "HTTP 503"),
        ("SystemFailure: cannot connect to http://x/chat: connection refused", "cannot connect"),
        ("the system returned an empty reply", "empty reply"),
        ("SystemFailure: http://x/chat answered with text/html, not JSON", "malformed answer"),
        ("RuntimeError: the model is overloaded", "RuntimeError"),
    ],
)  # fmt: skip
def test_failures_are_read_by_kind(error: str, kind: str) -> None:
    assert failure_kind(error) == kind


# --- task success: reported and done correctly ---------------------------------------------


def test_both_kinds_of_success_with_wilson_intervals(two: Report) -> None:
    """alpha: success unless i % 4 == 3 (9 of 12); judged unless i % 6 == 5 (10), correct
    when successful and i % 5 != 1: i = 0, 2, 4, 8, 9, 10 (6 of 10)."""
    rows = two.completion.by_system.set_index("system_id")
    alpha = rows.loc["alpha"]
    assert (alpha["n"], alpha["successes"], alpha["correct_n"], alpha["correct"]) == (12, 9, 10, 6)
    assert (alpha["correct_ci_low"], alpha["correct_ci_high"]) == pytest.approx(
        wilson_interval(6, 10)
    )
    assert (alpha["ci_low"], alpha["ci_high"]) == pytest.approx(wilson_interval(9, 12))
    table = _table(document(two), "Task success")
    assert table.columns[2:] == (
        "Succeeded", "Rate (95% CI)", "Judged", "Done correctly", "Rate (95% CI)",
    )  # fmt: skip
    assert table.rows[0] == ("alpha", "12", "9", "75% (47%–91%)", "10", "6", "60% (31%–83%)")


def test_without_judged_tasks_the_report_keeps_one_success_rate(two_db: Path) -> None:
    """A database from before success_if (no ``correct`` column) or a study without it."""
    data = load_study_data(two_db)
    older = replace(data, sessions=data.sessions.drop(columns="correct"))
    table = _table(document(build_report(older)), "Task success")
    assert table.columns == ("System", "Tasks", "Succeeded", "Success rate (95% CI)")
    assert table.rows[0] == ("alpha", "12", "9", "75% (47%–91%)")


# --- small things a reader notices ----------------------------------------------------------


def test_comments_say_what_they_answer_and_count_in_words(three: Report) -> None:
    blocks = document(three)
    headings = [b.text for b in blocks if isinstance(b, Heading) and b.level == 3]
    assert "gamma (1 comment)" in headings and "beta (3 comments)" in headings
    asked = [b.text for b in blocks if isinstance(b, Paragraph) and b.text.startswith("Answers to")]
    assert "Answers to “What was missing?” (post: post.missing, 1 answer):" in asked
    assert (
        "Answers to “Anything else you want to tell us?” (post: post.comment, 2 answers):" in asked
    )
    comments = three.comments
    assert set(comments["question"]) == {"Anything else you want to tell us?", "What was missing?"}


def test_time_against_the_expected_time_in_words(two: Report) -> None:
    table = _table(document(two), "Exchanges and time per task")
    cell = table.rows[0][-1]
    assert re.fullmatch(r"\d+% \(\d+ of 12 longer\)", cell), cell
    assert "×" not in cell


def test_the_rating_legend_fits_inside_its_figure() -> None:
    """An eleven-point scale with long labels: the legend wraps instead of running off
    both edges of the figure."""
    labels = {v: f"Label number {v} that is rather long" for v in range(11)}
    choices = pd.DataFrame(
        [("q", "q.a", v, v, text) for v, text in labels.items()],
        columns=["questionnaire_id", "item_id", "position", "value", "label"],
    )
    codebook = pd.DataFrame(
        [{"questionnaire_id": "q", "item_id": "q.a", "type": "scale", "text": "An item",
          "reverse": False}]
    )  # fmt: skip
    distribution = pd.DataFrame(
        [("s1", "q", "q.a", v, labels[v], 1, 11, 1 / 11) for v in range(11)],
        columns=["system_id", "questionnaire_id", "item_id", "answer", "label", "count", "n",
                 "share"],
    )  # fmt: skip
    (chart,) = plots.likert_charts(distribution, codebook, choices, ["s1"], "likert-q", "q")
    chart.figure.draw_without_rendering()
    (legend,) = chart.figure.legends
    box, frame = legend.get_window_extent(), chart.figure.bbox
    assert frame.x0 <= box.x0 and box.x1 <= frame.x1, (box, frame)


# --- provenance ----------------------------------------------------------------------------


def test_the_report_carries_its_provenance(two: Report, two_db: Path) -> None:
    made = two.provenance
    assert made.ozlab_version == importlib.metadata.version("ozlab")
    digest = hashlib.sha256(definition_json(report_bundle(TWO)).encode()).hexdigest()
    assert made.definitions == (("report-study", digest),)
    assert made.design == {
        "type": "random", "systems": "between", "seed": 7, "tasks_per_participant": None,
        "order": "fixed",
    }  # fmt: skip
    assert made.assignments == ("random",)
    assert len(made.seeds) == sum(PEOPLE[s] for s in TWO) and "7:a00" in made.seeds
    assert made.schema_version == load_study_data(two_db).schema_version > 0
    assert made.exclusions.startswith("none")
    sentence = smallest_detectable_effect("between", (12, 18)).sentence()
    assert made.detectable is not None and made.detectable.startswith(sentence)
    blocks = document(two, source="study.sqlite")
    bullets = next(
        b for i, b in enumerate(blocks)
        if isinstance(b, Bullets) and isinstance(blocks[i - 1], Heading)
        and blocks[i - 1].text == "Provenance"
    )  # fmt: skip
    text = "\n".join(bullets.items)
    for words in (f"ozlab version: {made.ozlab_version}", digest, "seed 7", "Exclusions: none",
                  "Database: study.sqlite (schema version", sentence):  # fmt: skip
        assert words in text, words


def test_exclusions_are_part_of_the_provenance(two_db: Path) -> None:
    excluded = build_report(load_study_data(two_db), exclude_flagged=True).provenance
    assert excluded.exclusions.startswith("0 of 30 participants excluded (--exclude-flagged:")


# --- the same bytes in every format, and figures for print ----------------------------------

_RUN = textwrap.dedent(
    """
    import sys
    from pathlib import Path
    from bot.cli import analytics_main as main
    db, out = Path(sys.argv[1]), Path(sys.argv[2])
    files = [a for suffix in ("txt", "md", "html", "json")
             for a in ("--out", str(out / f"report.{suffix}"))]
    assert main(["report", "--db", str(db), *files, "--figures", str(out / "figures")]) == 0
    """
)


def _start(db: Path, out: Path, hash_seed: str) -> subprocess.Popen[bytes]:
    out.mkdir()
    env = {**os.environ, "SOURCE_DATE_EPOCH": EPOCH, "PYTHONHASHSEED": hash_seed}
    root = Path(__file__).resolve().parent.parent
    return subprocess.Popen(
        [sys.executable, "-c", _RUN, str(db), str(out)], env=env, cwd=root,
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
    )  # fmt: skip


def _runs(db: Path, outs: dict[str, Path]) -> None:
    """One process per hash seed, side by side (neither reads what the other writes)."""
    started = [_start(db, out, seed) for seed, out in outs.items()]
    try:
        for run in started:
            _, err = run.communicate(timeout=300)
            assert run.returncode == 0, err.decode(errors="replace")[-2000:]
    finally:
        for run in started:
            if run.returncode is None:
                run.kill()
                run.wait()


@pytest.mark.slow
def test_two_runs_give_the_same_bytes_in_every_format(three_db: Path, tmp_path: Path) -> None:
    _runs(three_db, {"1": tmp_path / "first", "2": tmp_path / "second"})
    first = sorted(p.relative_to(tmp_path / "first") for p in (tmp_path / "first").rglob("*"))
    second = sorted(p.relative_to(tmp_path / "second") for p in (tmp_path / "second").rglob("*"))
    assert first == second
    for name in first:
        a, b = tmp_path / "first" / name, tmp_path / "second" / name
        if a.is_file():
            assert a.read_bytes() == b.read_bytes(), name
    report = json.loads((tmp_path / "first" / "report.json").read_text(encoding="utf-8"))
    assert report["generated_at"] == "2025-10-09T08:53:20Z"
    assert report["provenance"]["generated_at"] == "2025-10-09T08:53:20Z"
    assert "2025-10-09 08:53:20 UTC" in (tmp_path / "first" / "report.md").read_text("utf-8")

    made = tmp_path / "first" / "figures"
    names = sorted(p.name for p in made.iterdir())
    for stem in ("completion", "likert-post-1", "likert-post-2", "proportions-post"):
        assert {f"{stem}.{ext}" for ext in ("pdf", "svg", "png", "txt")} <= set(names), stem
    from PIL import Image

    with Image.open(made / "completion.png") as png:
        assert png.size[0] == round(plots.WIDTH * plots.PRINT_DPI)
        assert tuple(round(v) for v in png.info["dpi"]) == (300, 300)
    svg = (made / "proportions-post.svg").read_text(encoding="utf-8")
    assert "<dc:date>" not in svg
    assert "#0072b2" in svg.lower() and "#d55e00" in svg.lower()  # Okabe–Ito blue, vermillion
    assert b"/CreationDate" not in (made / "completion.pdf").read_bytes()
    caption = (made / "likert-post-1.txt").read_text(encoding="utf-8")
    assert "1 = Strongly disagree" in caption and "(R) marks reverse-worded items" in caption
    page = (tmp_path / "first" / "report.html").read_text(encoding="utf-8")
    assert page.count("data:image/svg+xml;base64,") == 4 and "data:image/png" not in page


def test_a_label_the_font_cannot_draw_is_named_in_the_figure_without_a_warning() -> None:
    """Thumbs items' buttons are emoji (👍, 👎), which the figures' font has no glyph for:
    the figure names the character instead of drawing an empty box, and matplotlib has
    nothing to warn about (warnings are errors here, as they must be in a report run)."""
    choices = pd.DataFrame(
        [("q", "q.t", 1, 1, "👍"), ("q", "q.t", 2, 0, "👎")],
        columns=["questionnaire_id", "item_id", "position", "value", "label"],
    )
    codebook = pd.DataFrame(
        [{"questionnaire_id": "q", "item_id": "q.t", "type": "thumbs", "text": "Good? 🙂",
          "reverse": False}]
    )  # fmt: skip
    distribution = pd.DataFrame(
        [("s1", "q", "q.t", 1, "👍", 3, 4, 0.75), ("s1", "q", "q.t", 0, "👎", 1, 4, 0.25)],
        columns=["system_id", "questionnaire_id", "item_id", "answer", "label", "count", "n",
                 "share"],
    )  # fmt: skip
    (chart,) = plots.proportion_charts(distribution, codebook, choices, ["s1"], "p", "q")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for fmt in ("svg", "png", "pdf"):
            assert plots.encode(chart.figure, fmt, dpi=50)
    [axes] = chart.figure.axes
    ticks = [t.get_text() for t in axes.get_yticklabels()]
    assert ticks == ["[thumbs up sign]", "[thumbs down sign]"]
    assert axes.get_title(loc="left") == "Good? [slightly smiling face]"


@pytest.mark.slow  # a whole demo of the starter study, then its report with figures
async def test_a_report_run_on_the_starter_with_its_thumbs_items_warns_of_nothing(
    tmp_path: Path,
) -> None:
    """The starter rates replies with thumbs (👍, 👎): its demo's report and figures, with
    Python's warnings made errors, end well, the thumbs' figure drawn."""
    ozlab = [sys.executable, "-W", "error", "-m", "bot.cli"]
    db, study = tmp_path / "pilot.sqlite", tmp_path / "pilot" / "study.yaml"
    async with serving(model_app()) as url:  # the starter's language model, on loopback
        for args in (
            ["new", str(tmp_path / "pilot")],
            ["demo", "--study", str(study), "--db", str(db)],
            ["report", "--db", str(db), "--out", str(tmp_path / "report.html"),
             "--figures", str(tmp_path / "figures")],
        ):  # fmt: skip
            process = await asyncio.create_subprocess_exec(
                *ozlab, *args,
                env={**os.environ, "OZLAB_MODEL_URL": url},
                stdout=asyncio.subprocess.DEVNULL, stderr=asyncio.subprocess.PIPE,
            )  # fmt: skip
            _, said = await asyncio.wait_for(process.communicate(), 300)
            told = said.decode()
            assert process.returncode == 0 and "Warning" not in told, told[-2000:]
    assert (tmp_path / "figures" / "proportions-my-reply-rating.png").stat().st_size > 0
