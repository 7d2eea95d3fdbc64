"""The report names simulated participants where it lists the data-quality flags and in its
notes, so a demo's data are never taken for people's; ``--exclude-flagged`` leaves them out
only for a flag of their own, never for being simulated."""

from __future__ import annotations

import contextlib
import io
import json
from pathlib import Path

import pytest

from analytics.data.loading import load_study_data
from analytics.report.numbers import build_report
from bot.cli import analytics_main
from bot.store.sqlite import open_store
from tests.test_analytics_quality import PARTICIPANTS, _study

pytestmark = pytest.mark.slow  # whole commands, reports or renderings: make test, not make check

# "good" and "neutral" have no flag; "speedy" answered too fast.
SIMULATED = ("good", "neutral", "speedy")


async def _with_simulated(db: Path, simulated: tuple[str, ...] = SIMULATED) -> None:
    await _study(db)
    store = await open_store(db)
    try:
        await store.mark_simulated(list(simulated))
    finally:
        await store.close()


def _report(db: Path, *options: str) -> str:
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert analytics_main(["report", "--db", str(db), *options]) == 0
    return out.getvalue()


async def test_the_report_says_how_many_participants_were_simulated(tmp_path: Path) -> None:
    db = tmp_path / "study.sqlite"
    await _with_simulated(db)
    report = build_report(load_study_data(db))
    assert report.quality.simulated == ("good", "neutral", "speedy")
    assert [n for n in report.notes if "simulated" in n] == [
        "3 of 6 participants were simulated (ozlab demo or ozlab pilot), not people: their "
        "answers and flags describe the simulation, not a study's participants."
    ]
    flagged = report.quality.participants
    assert dict(zip(flagged["participant_id"], flagged["simulated"], strict=True)) == {
        "inattentive": False,
        "liner": False,
        "quitter": False,
        "speedy": True,
    }

    quality = json.loads(_report(db, "--format", "json"))["quality"]
    assert quality["simulated"] == 3
    assert quality["simulated_participants"] == ["good", "neutral", "speedy"]
    assert {p["participant_id"] for p in quality["participants"] if p["simulated"]} == {"speedy"}

    markdown = _report(db, "--format", "md")
    section = markdown[markdown.index("Data quality") :]
    assert "Simulated: 3 of 6 participants (ozlab demo or ozlab pilot), not people." in section
    assert "4 participants flagged" in section and "1 of them simulated" in section
    assert "speedy (simulated)" in section
    assert "3 of 6 participants were simulated" in markdown


async def test_excluding_the_flagged_keeps_simulated_participants_without_flags(
    tmp_path: Path,
) -> None:
    db = tmp_path / "study.sqlite"
    await _with_simulated(db)
    report = build_report(load_study_data(db), exclude_flagged=True)
    exclusion = report.quality.exclusion
    assert exclusion is not None
    assert exclusion.participant_ids == ("inattentive", "liner", "quitter", "speedy")
    assert report.participation.overall["participants"] == 2  # good and neutral: simulated, kept
    assert report.quality.simulated == SIMULATED  # said of the data before the exclusion
    assert any(n.startswith("3 of 6 participants were simulated") for n in report.notes)

    quality = json.loads(_report(db, "--format", "json", "--exclude-flagged"))["quality"]
    assert quality["exclusion"]["participant_ids"] == ["inattentive", "liner", "quitter", "speedy"]
    assert quality["simulated"] == 3


async def test_a_study_of_people_only_says_nothing_of_simulation(tmp_path: Path) -> None:
    db = tmp_path / "study.sqlite"
    await _with_simulated(db, ())
    report = build_report(load_study_data(db))
    assert report.quality.simulated == ()
    assert not [n for n in report.notes if "simulated" in n]
    assert "Simulated:" not in _report(db, "--format", "md")
    assert not report.quality.participants["simulated"].any()


async def test_all_simulated_is_said_as_all(tmp_path: Path) -> None:
    db = tmp_path / "study.sqlite"
    await _with_simulated(db, tuple(PARTICIPANTS))
    report = build_report(load_study_data(db))
    assert any(n.startswith("All 6 participants were simulated") for n in report.notes)
