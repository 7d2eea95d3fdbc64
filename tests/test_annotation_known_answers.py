"""Published reliability values, reproduced through the path a researcher takes: each table
as a CSV, ``ozlab import annotations`` into a study database, ``ozlab report --format json``.

Shrout & Fleiss (1979): all six ICC forms and both F tests; Krippendorff (2011): alpha with
missing data at the nominal, ordinal, interval and ratio levels; Fleiss' kappa of
Wikipedia's worked example (see ``tests/annotation_tables.py`` for every source). Papers
print two or three decimals: the tolerance is half of their last digit.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path

import pytest

from bot.cli import main
from tests.annotation_tables import (
    FLEISS_KAPPA,
    KRIPPENDORFF,
    KRIPPENDORFF_ALPHA,
    SHROUT_FLEISS,
    SHROUT_FLEISS_F,
    SHROUT_FLEISS_ICC,
    fleiss_table,
)


def _instrument(folder: Path, name: str, top: int) -> Path:
    """A one-item rating scale from 1 to ``top``, as a researcher's own instrument file."""
    labels = "\n".join(f"      {v}: '{v}'" for v in range(1, top + 1))
    path = folder / f"{name}.yaml"
    path.write_text(
        f"id: {name}\ntitle: Judges\nitems:\n  - type: scale\n    id: {name}.score\n"
        f"    text: How good is it?\n    min: 1\n    max: {top}\n    labels:\n{labels}\n",
        encoding="utf-8",
    )
    return path


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


def _import(db: Path, csv: Path, instrument: Path, job: str) -> None:
    args = ["import", "annotations", str(csv), "--db", str(db), "--instrument", str(instrument)]
    assert main([*args, "--job", job]) == 0


@pytest.fixture(scope="module")
def reliability(tmp_path_factory: pytest.TempPathFactory) -> list[dict]:
    folder = tmp_path_factory.mktemp("known")
    db = folder / "study.sqlite"
    judges = {f"J{k}": v for k, v in enumerate(SHROUT_FLEISS.values(), start=1)}
    observers = {f"O{k}": v for k, v in enumerate(KRIPPENDORFF.values(), start=1)}
    _import(db, _csv(folder, "shrout", judges), _instrument(folder, "judges", 10), "shrout")
    _import(db, _csv(folder, "kripp", observers), _instrument(folder, "coders", 5), "kripp")
    _import(db, _csv(folder, "fleiss", fleiss_table()), _instrument(folder, "raters", 5), "fleiss")
    out = folder / "report.json"
    assert main(["report", "--db", str(db), "--format", "json", "--out", str(out)]) == 0
    rows: list[dict] = json.loads(out.read_text(encoding="utf-8"))["reliability"]
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


def test_krippendorff_alpha_at_four_levels_with_missing_data(reliability: list[dict]) -> None:
    rows = _of(reliability, "kripp")
    for level, published in KRIPPENDORFF_ALPHA.items():
        row = rows[f"alpha_{level}"]
        assert row["value"] == pytest.approx(published, abs=5e-4), level
        assert (row["n_targets"], row["n_annotators"]) == (11, 4)  # unit 12 is not pairable
        assert row["ci_low"] <= row["value"] <= row["ci_high"]
    assert [s for s, r in rows.items() if r["reported"]] == ["alpha_ordinal"]


def test_fleiss_kappa_of_the_published_example(reliability: list[dict]) -> None:
    row = _of(reliability, "fleiss")["fleiss_kappa"]
    assert row["value"] == pytest.approx(FLEISS_KAPPA, abs=5e-4)
    assert (row["n_targets"], row["n_annotators"]) == (10, 14)
