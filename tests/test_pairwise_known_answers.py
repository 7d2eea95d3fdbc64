"""Known answers through the researcher's path: votes imported with ``ozlab import votes``
come out of ``ozlab report --format json`` with R's Bradley–Terry fit and its clustered
sandwich standard errors (tests/r/pairwise.R), and the section is in every format."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest

from analytics.data.synthetic import write_synthetic_study
from tests.command_line import ozlab_here
from tests.test_pairwise_statistics import FIXTURE, R_HALF, R_MODEL_SE, R_SANDWICH_SE

pytestmark = pytest.mark.slow  # whole commands: make test, not make check

SYSTEMS = {"alpha": "system-a", "beta": "system-b", "gamma": "system-c", "delta": "system-d"}


@pytest.fixture(scope="module")
def imported(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A study of four systems with the fixture's 81 votes and two left out of the fit."""
    folder = tmp_path_factory.mktemp("known")
    db = folder / "study.sqlite"
    write_synthetic_study(db, sessions=8, responses_per_session=4, seed=1, systems=4)
    with FIXTURE.open(encoding="utf-8") as given:
        votes = list(csv.DictReader(given))
    rows = [
        {
            "vote_id": f"v{k:03d}",
            "source": "side_by_side",
            "rater": vote["rater"],
            "system_a": SYSTEMS[vote["system_a"]],
            "system_b": SYSTEMS[vote["system_b"]],
            "winner": vote["winner"],
            "question": "turn",
            "time": f"2026-11-27T09:{k // 60:02d}:{k % 60:02d}Z",
        }
        for k, vote in enumerate(votes)
    ]
    rows.append({**rows[0], "vote_id": "v900", "winner": "both_bad"})
    rows.append({**rows[0], "vote_id": "v901", "winner": "not_comparable"})
    path = folder / "votes.csv"
    with path.open("w", encoding="utf-8", newline="") as out:
        writer = csv.DictWriter(out, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    done = ozlab_here("import", "votes", path, "--db", db)
    assert done.returncode == 0, done.stderr
    assert "83 votes of 10 raters imported" in done.stdout
    return db


def test_the_report_gives_rs_fit_for_imported_votes(imported: Path) -> None:
    done = ozlab_here("report", "--db", imported, "--format", "json")
    assert done.returncode == 0, done.stderr
    section = json.loads(done.stdout)["pairwise"]
    (turn,) = section["questions"]
    assert (turn["votes"], turn["fitted"], turn["both_bad"], turn["not_comparable"]) == (
        83, 81, 1, 1,
    )  # fmt: skip
    assert turn["anchor"] == "system-a" and turn["raters"] == 10
    scores = {r["system"]: r for r in section["scores"]}
    for name, value, robust, model in zip(
        ("system-b", "system-c", "system-d"), R_HALF, R_SANDWICH_SE, R_MODEL_SE, strict=False
    ):
        assert scores[name]["log_strength"] == pytest.approx(value, abs=1e-4)
        assert scores[name]["se_sandwich"] == pytest.approx(robust, abs=1e-4)
        assert scores[name]["se_model"] == pytest.approx(model, abs=1e-4)
    assert scores["system-a"]["elo"] == 1000 and scores["system-a"]["anchor"] is True
    (shown_first,) = section["parameters"]
    assert shown_first["estimate"] == pytest.approx(R_HALF[3], abs=1e-4)
    assert shown_first["se_sandwich"] == pytest.approx(R_SANDWICH_SE[3], abs=1e-4)
    assert section["options"]["seed"] == 0 and section["options"]["rounds"] == 1000


def test_the_section_shows_in_markdown_and_html(imported: Path) -> None:
    for fmt in ("md", "html"):
        done = ozlab_here("report", "--db", imported, "--format", fmt)
        assert done.returncode == 0, done.stderr
        assert "Pairwise comparisons" in done.stdout and "Shown first" in done.stdout
    assert 'id="pairwise-forest-turn"' in done.stdout


def test_the_export_has_one_row_per_vote_with_its_sides(imported: Path) -> None:
    out = imported.parent / "export"
    done = ozlab_here("export", "--db", imported, "--out", out)
    assert done.returncode == 0, done.stderr
    with (out / "votes.csv").open(encoding="utf-8") as given:
        rows = list(csv.DictReader(given))
    assert len(rows) == 83
    first = next(r for r in rows if r["vote_id"] == "v000")
    with FIXTURE.open(encoding="utf-8") as given:
        vote = next(csv.DictReader(given))
    assert (first["system_a"], first["system_b"]) == (
        SYSTEMS[vote["system_a"]], SYSTEMS[vote["system_b"]],
    )  # fmt: skip
    assert first["winner"] == vote["winner"] and first["rater"] == vote["rater"]
    assert first["winner_system"] == first["system_" + vote["winner"]]
    assert (first["question"], first["source"], first["in_fit"]) == ("turn", "side_by_side", "1")
    assert first["voted_at_iso"] == "2026-11-27T09:00:00Z"
    assert first["study_id"] == "synthetic"
    left_out = {r["vote_id"]: r for r in rows if r["in_fit"] == "0"}
    assert set(left_out) == {"v900", "v901"} and left_out["v900"]["winner_system"] == ""
    with (out / "columns.csv").open(encoding="utf-8") as given:
        described = {r["column"] for r in csv.DictReader(given) if r["table"] == "votes"}
    assert {"system_a", "system_b", "rater", "scenario_id", "question", "voted_at"} <= described
