"""The study file's ``pairwise:`` choices reach the report, and the shipped pairwise studies
played by ``ozlab demo`` come out of ``ozlab report`` with the demo shop's reference
assistant (shop-v1) ranked above its weaker baseline (shop-v0), through the CLI as a
researcher runs them."""

from __future__ import annotations

import json
from importlib.resources import files
from pathlib import Path
from typing import Any

import pytest

from bot.cli import main
from scenarios.loading import StudyError, load_study
from scenarios.models import PairwiseChoices

ARENA = Path(str(files("scenarios") / "library" / "studies" / "arena.yaml"))
CHOSEN = """
pairwise:
  ties: davidson
  both_bad: tie
  anchor: shop-v0
  anchor_score: 1500
  bootstrap_rounds: 120
  seed: 7
"""


def line_of(text: str, needle: str) -> int:
    return next(n for n, line in enumerate(text.splitlines(), 1) if needle in line)


def arena_with(tmp_path: Path, block: str) -> tuple[Path, str]:
    text = ARENA.read_text(encoding="utf-8") + block
    study = tmp_path / "study.yaml"
    study.write_text(text, encoding="utf-8")
    return study, text


def report_json(
    capsys: pytest.CaptureFixture[str], study: str | Path, db: Path, *more: str
) -> dict[str, Any]:
    assert main(["demo", "--study", str(study), "--db", str(db), *more]) == 0
    out = db.parent / "report.json"
    assert main(["report", "--db", str(db), "--format", "json", "--out", str(out)]) == 0
    capsys.readouterr()
    found: dict[str, Any] = json.loads(out.read_text(encoding="utf-8"))
    return found


def test_the_defaults_are_the_documented_protocol() -> None:
    assert load_study("arena").study.pairwise == PairwiseChoices(
        ties="half", both_bad="exclude", anchor=None, anchor_score=1000.0,
        bootstrap_rounds=1000, seed=0, strength="ignore", slightly=0.75,
    )  # fmt: skip


@pytest.mark.parametrize(
    ("block", "needle", "field", "message"),
    [
        ("\npairwise:\n  anchor: shop-v9\n", "anchor: shop-v9", "pairwise.anchor",
         "no system 'shop-v9' in systems"),
        ("\npairwise:\n  ties: thirds\n", "ties: thirds", "pairwise.ties", "'half' or 'davidson'"),
        ("\npairwise:\n  bootstrap_rounds: 5\n", "bootstrap_rounds", "pairwise.bootstrap_rounds",
         "greater than or equal to 20"),
        ("\npairwise:\n  slightly: 0.4\n", "slightly: 0.4", "pairwise.slightly",
         "greater than or equal to 0.5"),
        ("\npairwise:\n  ties: davidson\n  strength: graded\n", "pairwise:", "pairwise",
         "needs ties: half"),
    ],
)  # fmt: skip
def test_a_wrong_choice_is_named_with_its_file_line_and_field(
    tmp_path: Path, block: str, needle: str, field: str, message: str
) -> None:
    study, text = arena_with(tmp_path, block)
    with pytest.raises(StudyError) as caught:
        load_study(study)
    [problem] = caught.value.problems
    assert (problem.file, problem.line, problem.field) == (study, line_of(text, needle), field)
    assert message in problem.message


@pytest.mark.slow
def test_the_study_files_choices_are_the_reports(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    study, _ = arena_with(tmp_path, CHOSEN)
    db = tmp_path / "arena.sqlite"
    found = report_json(capsys, study, db, "-n", "6")["pairwise"]
    options = found["options"]
    chosen = (options["ties"], options["both_bad"], options["anchor"])
    assert chosen == ("davidson", "tie", "shop-v0")
    assert (options["anchor_score"], options["rounds"], options["seed"]) == (1500, 120, 7)
    [question] = found["questions"]
    assert (question["model"], question["anchor"], question["rounds"]) == (
        "davidson", "shop-v0", 120
    )  # fmt: skip
    anchor = next(s for s in found["scores"] if s["system"] == "shop-v0")
    assert anchor["anchor"] and anchor["elo"] == 1500

    md = tmp_path / "report.md"
    assert main(["report", "--db", str(db), "--format", "md", "--out", str(md)]) == 0
    assert (
        "Choices (the study file's pairwise:): ties Davidson's tie model (ties: davidson); "
        "'both bad' votes counted as ties (both_bad: tie); preferences a win whatever its "
        "strength (strength: ignore); anchor shop-v0 at 1500; "
        "120 bootstrap rounds, seed 7."
    ) in md.read_text(encoding="utf-8").replace("\\_", "_")  # Markdown escapes ``_``


@pytest.mark.slow
@pytest.mark.parametrize(
    ("study", "question", "raters"), [("arena", "turn", 12), ("within", None, 40)]
)
def test_a_shipped_pairwise_study_is_ranked_the_right_way_round_in_the_report(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    study: str,
    question: str | None,
    raters: int,
) -> None:
    """One vote a participant within subjects: 12 of them, preferring shop-v1 two times in
    three, tie as often as not; 40 show the direction."""
    db = tmp_path / f"{study}.sqlite"
    found = report_json(capsys, study, db, "-n", str(raters))["pairwise"]
    [asked] = found["questions"]
    assert question is None or asked["question"] == question
    assert asked["identified"] and asked["raters"] == raters
    scores = {s["system"]: s for s in found["scores"]}
    assert set(scores) == {"shop-v0", "shop-v1"}
    better, worse = scores["shop-v1"], scores["shop-v0"]
    assert better["elo"] > worse["elo"]
    assert better["rank"] == 1 and better["rank"] <= worse["rank"]


@pytest.mark.slow
def test_a_within_subjects_study_grades_preference_strength_when_its_file_says_so(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The shipped within-subjects study, its preference item's strength graded: the fit
    says so, and the votes' own counts stay as given."""
    within = Path(str(files("scenarios") / "library" / "studies" / "within.yaml"))
    study = tmp_path / "study.yaml"
    study.write_text(
        within.read_text(encoding="utf-8") + "\npairwise:\n  strength: graded\n", encoding="utf-8"
    )
    found = report_json(capsys, study, tmp_path / "within.sqlite", "-n", "40")["pairwise"]
    assert (found["options"]["strength"], found["options"]["slightly"]) == ("graded", 0.75)
    [asked] = found["questions"]
    assert asked["model"] == "bradley_terry_half_ties_graded_strength" and asked["identified"]
    assert "'slightly' 0.75 of a win" in found["methods"]["model"]
    scores = {s["system"]: s for s in found["scores"]}
    assert scores["shop-v1"]["elo"] > scores["shop-v0"]["elo"]
    assert sum(s["wins"] + s["ties"] for s in scores.values()) > 0


@pytest.mark.slow
def test_the_demos_acute_annotators_rank_the_shop_assistants_the_right_way_round(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``make demo``: the HMD study's participants, then four simulated annotators of its
    hmd-acute job; the report ranks shop-v1 above shop-v0 on ACUTE's questions (20 votes a
    question: the simulated annotators prefer shop-v1, and one question of four may still
    come out even, never the other way round)."""
    found = report_json(capsys, "hmd", tmp_path / "hmd.sqlite")["pairwise"]
    questions = {q["question"]: q for q in found["questions"]}
    assert set(questions) == {"engagingness", "interestingness", "humanness", "knowledge"}
    # a question whose votes separate the systems is said and scored by Firth's estimates
    assert all(q["estimator"] and q["sources"] == "acute" for q in questions.values())
    assert all(q["onboarding"] > 0 and q["raters"] == 4 for q in questions.values())
    above = 0
    for question in questions:
        scores = {s["system"]: s for s in found["scores"] if s["question"] == question}
        assert scores["shop-v1"]["elo"] >= scores["shop-v0"]["elo"], question
        above += scores["shop-v1"]["elo"] > scores["shop-v0"]["elo"]
        assert scores["shop-v1"]["rank"] == 1
    assert above >= 3
