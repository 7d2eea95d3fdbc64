"""Published reliability values, reproduced through the path a researcher takes: each table
as a CSV, ``ozlab import annotations`` into a study database (with an instrument of the
stored study, or an instrument file), ``ozlab report --format json``.

Shrout & Fleiss (1979): all six ICC forms and both F tests; Krippendorff (2011): alpha with
missing data at the nominal, ordinal, interval and ratio levels; Fleiss' kappa of
Wikipedia's worked example (see ``tests/annotation_tables.py`` for every source). Papers
print two or three decimals: the tolerance is half of their last digit.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Mapping, Sequence
from pathlib import Path

import pytest

from bot.cli import main
from bot.store.definition import definition_json
from bot.store.sqlite import open_store
from scenarios.loading import load_questionnaire
from scenarios.models import StudyBundle
from tests.annotation_tables import (
    FLEISS_KAPPA,
    KRIPPENDORFF,
    KRIPPENDORFF_ALPHA,
    SHROUT_FLEISS,
    SHROUT_FLEISS_F,
    SHROUT_FLEISS_ICC,
    fleiss_table,
)


def _instrument(folder: Path, name: str, top: int, measurement: str = "ordinal") -> Path:
    """A one-item rating scale from 1 to ``top``, as a researcher's own instrument file."""
    labels = "\n".join(f"      {v}: '{v}'" for v in range(1, top + 1))
    path = folder / f"{name}.yaml"
    path.write_text(
        f"id: {name}\ntitle: Judges\nmeasurement: {measurement}\nitems:\n  - type: scale\n"
        f"    id: {name}.score\n    text: How good is it?\n    min: 1\n    max: {top}\n"
        f"    labels:\n{labels}\n",
        encoding="utf-8",
    )
    return path


def _store_study(db: Path, instruments: list[Path]) -> None:
    """A study whose definition (stored as the bot stores it) holds ``instruments``: the
    report then knows each item's scale and declared level of measurement."""
    questionnaires = {q.id: q.model_dump(mode="json", by_alias=True)
                      for q in map(load_questionnaire, instruments)}  # fmt: skip
    bundle = StudyBundle.model_validate(
        {
            "study": {"id": "known", "title": "Known answers", "scenarios": ["task"],
                      "texts": {"welcome": "Hi", "consent": "Agree?", "declined": "Bye"},
                      "systems": [{"type": "demo", "id": "s1"}]},
            "scenarios": {"task": {"id": "task", "title": "Task", "brief": "Do it.",
                                   "post_task": list(questionnaires)}},
            "questionnaires": questionnaires,
        }
    )  # fmt: skip

    async def write() -> None:
        store = await open_store(db)
        try:
            await store.record_definition("known", definition_json(bundle))
        finally:
            await store.close()

    asyncio.run(write())


def _csv(folder: Path, name: str, table: Mapping[str, Sequence[int | None]]) -> Path:
    """One row per rating (a missing rating is no row), as a spreadsheet exports them."""
    lines = ["target,annotator,item,value"]
    for annotator, values in table.items():
        lines += [
            f"unit{index:02d},{annotator},score,{value}"
            for index, value in enumerate(values, start=1)
            if value is not None
        ]
    path = folder / f"{name}.csv"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def _import(db: Path, csv: Path, instrument: Path | str, job: str) -> None:
    args = ["import", "annotations", str(csv), "--db", str(db), "--instrument", str(instrument)]
    assert main([*args, "--job", job]) == 0


@pytest.fixture(scope="module")
def report(tmp_path_factory: pytest.TempPathFactory) -> dict:
    """Shrout & Fleiss's and Krippendorff's tables rated with instruments of the stored
    study (by id; the judges' scale declared interval), Fleiss's with an instrument file."""
    folder = tmp_path_factory.mktemp("known")
    db = folder / "study.sqlite"
    judges_file = _instrument(folder, "judges", 10, "interval")
    _store_study(db, [judges_file, _instrument(folder, "coders", 5)])
    judges = {f"J{k}": v for k, v in enumerate(SHROUT_FLEISS.values(), start=1)}
    observers = {f"O{k}": v for k, v in enumerate(KRIPPENDORFF.values(), start=1)}
    _import(db, _csv(folder, "shrout", judges), "judges", "shrout")
    _import(db, _csv(folder, "kripp", observers), "coders", "kripp")
    _import(db, _csv(folder, "fleiss", fleiss_table()), _instrument(folder, "raters", 5), "fleiss")
    out = folder / "report.json"
    assert main(["report", "--db", str(db), "--format", "json", "--out", str(out)]) == 0
    found: dict = json.loads(out.read_text(encoding="utf-8"))
    return found


@pytest.fixture(scope="module")
def reliability(report: dict) -> list[dict]:
    rows: list[dict] = report["reliability"]
    return rows


def _of(rows: list[dict], job: str) -> dict[str, dict]:
    mine = [r for r in rows if r["job"] == job and r["system"] is None]
    return {r["statistic"]: r for r in mine}


def test_shrout_and_fleiss_six_forms_and_both_f_tests(reliability: list[dict]) -> None:
    rows = _of(reliability, "shrout")
    for name, published in SHROUT_FLEISS_ICC.items():
        assert rows[name]["value"] == pytest.approx(published, abs=0.005), name
        assert (rows[name]["n_targets"], rows[name]["n_annotators"]) == (6, 4)
        assert rows[name]["ci_low"] < rows[name]["value"] < rows[name]["ci_high"]
    for name, (f, df1, df2) in SHROUT_FLEISS_F.items():
        for form in (name, f"{name}k"):
            assert rows[form]["f"] == pytest.approx(f, abs=0.005), form
            assert (rows[form]["df1"], rows[form]["df2"]) == (df1, df2)


def test_the_instruments_say_which_alpha_to_report(report: dict) -> None:
    reported = {(r["job"], r["statistic"]) for r in report["reliability"] if r["reported"]}
    assert reported == {
        ("shrout", "alpha_interval"), ("kripp", "alpha_ordinal"), ("fleiss", "alpha_ordinal"),
    }  # fmt: skip
    assert report["annotations"]["notes"] == []  # every item's scale known, files included


def test_an_instrument_file_s_yes_no_item_is_reported_as_categories(tmp_path: Path) -> None:
    """The import keeps the instrument file it checked against with its job: a 1/0 item
    is yes/no for the report, not a scale of two points (no ICC)."""
    db = tmp_path / "study.sqlite"
    yes_no = tmp_path / "helpful.yaml"
    yes_no.write_text(
        "id: helpful\ntitle: H\nitems:\n  - {type: yes_no, id: helpful.ok, text: Helpful}\n",
        encoding="utf-8",
    )
    answers = {"R1": [1, 0, 1, 1, 0, 1], "R2": [1, 0, 0, 1, 0, 1]}
    lines = ["target,annotator,item,value"]
    lines += [f"clip{i},{who},ok,{v}" for who, vs in answers.items() for i, v in enumerate(vs)]
    (tmp_path / "helpful.csv").write_text("\n".join(lines) + "\n", encoding="utf-8")
    _import(db, tmp_path / "helpful.csv", yes_no, "clips")
    # A second instrument file into the same job: its scale is kept beside the first.
    _import(db, _csv(tmp_path, "judged", {"R1": [1, 2, 3], "R2": [1, 2, 2]}),
            _instrument(tmp_path, "graded", 3, "interval"), "clips")  # fmt: skip
    out = tmp_path / "report.json"
    assert main(["report", "--db", str(db), "--format", "json", "--out", str(out)]) == 0
    found = json.loads(out.read_text(encoding="utf-8"))
    statistics = {r["item"]: set() for r in found["reliability"]}
    for r in found["reliability"]:
        statistics[r["item"]].add(r["statistic"])
    assert statistics["helpful.ok"] == {"alpha_nominal", "cohen_kappa", "percent_agreement"}
    assert "ICC2" in statistics["graded.score"]
    reported = {r["item"]: r["statistic"] for r in found["reliability"] if r["reported"]}
    assert reported == {"helpful.ok": "alpha_nominal", "graded.score": "alpha_interval"}
    assert found["annotations"]["notes"] == []


def test_krippendorff_alpha_at_four_levels_with_missing_data(reliability: list[dict]) -> None:
    rows = _of(reliability, "kripp")
    for level, published in KRIPPENDORFF_ALPHA.items():
        row = rows[f"alpha_{level}"]
        assert row["value"] == pytest.approx(published, abs=5e-4), level
        assert (row["n_targets"], row["n_annotators"]) == (11, 4)  # unit 12 is not pairable
        assert row["ci_low"] <= row["value"] <= row["ci_high"]


def test_fleiss_kappa_of_the_published_example(reliability: list[dict]) -> None:
    row = _of(reliability, "fleiss")["fleiss_kappa"]
    assert row["value"] == pytest.approx(FLEISS_KAPPA, abs=5e-4)
    assert (row["n_targets"], row["n_annotators"]) == (10, 14)


def test_fleiss_kappa_with_unequal_numbers_of_ratings_through_import(
    reliability: list[dict],
) -> None:
    """Gwet (2014) p. 120 (R: ``irrCAC::fleiss.kappa.raw(cac.raw4raters)`` prints 0.76117):
    Krippendorff's units, no target rated by all four; see test_analytics_agreement."""
    row = _of(reliability, "kripp")["fleiss_kappa"]
    assert row["value"] == pytest.approx(0.76117, abs=5e-6)
    assert (row["n_targets"], row["n_annotators"]) == (11, 4)
