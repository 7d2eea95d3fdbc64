"""Two defects of ``ozlab import responses``, reproduced first:

1. a rater's second stimulus was refused as a duplicate of the first when the file has no
   ``scope`` column (every row of a rater got the same uniqueness key);
2. agreement pooled stimuli with the same id across systems (and scenarios): three
   stimuli rated for each of two systems are six targets, not three, and alpha and ICC
   were computed on the wrong matrix.
"""

from __future__ import annotations

import csv
from pathlib import Path

import krippendorff
import numpy as np

from analytics.data.loading import load_study_data
from analytics.io.importing import import_responses
from analytics.statistics.questionnaires import rater_agreement

ITEM = "xrec-exchange.q13_overall"


def write(path: Path, header: list[str], rows: list[list[object]]) -> Path:
    with path.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(header)
        writer.writerows(rows)
    return path


def test_a_raters_second_stimulus_is_not_a_duplicate_without_a_scope(tmp_path: Path) -> None:
    rows = [
        ["R1", "xrec-exchange", ITEM, 4, "shop-v1", "s1"],
        ["R1", "xrec-exchange", ITEM, 2, "shop-v1", "s2"],
        ["R2", "xrec-exchange", ITEM, 5, "shop-v1", "s1"],
        ["R2", "xrec-exchange", ITEM, 1, "shop-v1", "s2"],
    ]
    header = ["participant_id", "questionnaire_id", "item_id", "value", "system_id",
              "stimulus_id"]  # fmt: skip
    csv_file = write(tmp_path / "ratings.csv", header, rows)
    result = import_responses(csv_file, tmp_path / "study.sqlite", study="xrec")
    assert result.problems == ()
    assert result.rows == 4
    # the same stimulus twice by the same rater is still a duplicate
    again = write(tmp_path / "twice.csv", header, [rows[0], rows[0]])
    twice = import_responses(again, tmp_path / "other.sqlite", study="xrec")
    assert [p.line for p in twice.problems] == [3]


# Three raters, three stimuli, each rated for two systems: six targets.
RATINGS = {
    ("shop-v1", "s1"): (5, 4, 5),
    ("shop-v1", "s2"): (2, 2, 3),
    ("shop-v1", "s3"): (4, 3, 4),
    ("shop-v0", "s1"): (1, 2, 1),
    ("shop-v0", "s2"): (3, 3, 2),
    ("shop-v0", "s3"): (5, 5, 4),
}


def test_agreement_keeps_stimuli_of_different_systems_apart(tmp_path: Path) -> None:
    rows = [
        [f"R{rater + 1}", "xrec-exchange", ITEM, values[rater], system, stimulus,
         f"{system}-{stimulus}"]
        for (system, stimulus), values in RATINGS.items()
        for rater in range(3)
    ]  # fmt: skip
    header = ["participant_id", "questionnaire_id", "item_id", "value", "system_id",
              "stimulus_id", "scope"]  # fmt: skip
    db = tmp_path / "study.sqlite"
    result = import_responses(write(tmp_path / "r.csv", header, rows), db, study="xrec")
    assert result.problems == () and result.rows == 18
    (row,) = rater_agreement(load_study_data(db).responses).to_dict("records")
    assert (row["n_raters"], row["n_stimuli"]) == (3, 6)
    matrix = np.array(list(RATINGS.values()), dtype=float).T  # raters x targets
    expected = krippendorff.alpha(reliability_data=matrix, level_of_measurement="interval")
    assert abs(row["krippendorff_alpha"] - expected) < 1e-9
