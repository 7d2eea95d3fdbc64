"""Published reliability tables as annotators' ratings, and the values their papers print.

Shared by the known-answer tests on the analytics' own input (a frame with the store's
``AnnotationRating`` fields) and by those that go through ``ozlab import annotations``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import pandas as pd

from analytics.annotations.ratings import RATING_COLUMNS

# Shrout & Fleiss (1979), "Intraclass correlations: uses in assessing rater reliability",
# Psychological Bulletin 86(2):420-428, Table 2: four judges rate six targets on a 1-10 scale.
SHROUT_FLEISS: dict[str, list[int | None]] = {
    "j1": [9, 6, 8, 7, 10, 6],
    "j2": [2, 1, 4, 1, 5, 2],
    "j3": [5, 3, 6, 2, 6, 4],
    "j4": [8, 2, 8, 6, 9, 7],
}
# Table 4 (to 2 dp): ICC(1,1) .17, ICC(2,1) .29, ICC(3,1) .71, ICC(1,4) .44, ICC(2,4) .62,
# ICC(3,4) .91. The F tests (Table 3's mean squares BMS 11.24, WMS 6.26, EMS 1.02): for the
# one-way model F = BMS/WMS = 1.79 with df (5, 18); for the two-way models F = BMS/EMS =
# 11.03 with df (5, 15).
SHROUT_FLEISS_ICC = {
    "ICC1": 0.17, "ICC2": 0.29, "ICC3": 0.71, "ICC1k": 0.44, "ICC2k": 0.62, "ICC3k": 0.91,
}  # fmt: skip
SHROUT_FLEISS_F = {"ICC1": (1.79, 5, 18), "ICC2": (11.03, 5, 15), "ICC3": (11.03, 5, 15)}

# Krippendorff (2011), "Computing Krippendorff's Alpha-Reliability", Annenberg School for
# Communication Departmental Papers 43, section C: four observers, twelve units, values 1-5,
# with missing data. Its alphas: nominal .743, ordinal .815, interval .849, ratio .797.
KRIPPENDORFF: dict[str, list[int | None]] = {
    "a": [1, 2, 3, 3, 2, 1, 4, 1, 2, None, None, None],
    "b": [1, 2, 3, 3, 2, 2, 4, 1, 2, 5, None, 3],
    "c": [None, 3, 3, 3, 2, 3, 4, 2, 2, 5, 1, None],
    "d": [1, 2, 3, 3, 2, 4, 4, 1, 2, 5, 1, None],
}
KRIPPENDORFF_ALPHA = {"nominal": 0.743, "ordinal": 0.815, "interval": 0.849, "ratio": 0.797}

# Fleiss' kappa, the worked example of Wikipedia's "Fleiss' kappa" article (10 subjects,
# 14 raters, 5 categories; kappa = 0.210), also statsmodels' test table (table0 in
# statsmodels/stats/tests/test_inter_rater.py). Each row: how many raters chose each
# category for one subject. Fleiss' kappa needs the same number of raters per subject, not
# the same raters, so the ratings are given to raters r01..r14 in order.
FLEISS_COUNTS = [
    [0, 0, 0, 0, 14],
    [0, 2, 6, 4, 2],
    [0, 0, 3, 5, 6],
    [0, 3, 9, 2, 0],
    [2, 2, 8, 1, 1],
    [7, 7, 0, 0, 0],
    [3, 2, 6, 3, 0],
    [2, 5, 3, 2, 2],
    [6, 5, 2, 1, 0],
    [0, 2, 2, 3, 7],
]
FLEISS_KAPPA = 0.210


def fleiss_table() -> dict[str, list[int | None]]:
    """``FLEISS_COUNTS`` as raters' ratings (categories 1-5)."""
    raters: dict[str, list[int | None]] = {f"r{k:02d}": [] for k in range(1, 15)}
    for counts in FLEISS_COUNTS:
        values = [c + 1 for c, n in enumerate(counts) for _ in range(n)]
        for name, value in zip(raters, values, strict=True):
            raters[name].append(value)
    return raters


def ratings_frame(
    table: Mapping[str, Sequence[int | str | None]],
    *,
    job: str = "known",
    instrument: str = "judge",
    item: str = "judge.score",
    level: str = "session",
    systems: Sequence[str | None] | None = None,
    targets: Sequence[str] | None = None,
) -> pd.DataFrame:
    """One rating per annotator and target, as ``StudyStore.annotation_ratings()`` gives."""
    rows = []
    for annotator, values in table.items():
        for index, value in enumerate(values):
            if value is None:
                continue
            target = targets[index] if targets is not None else f"t{index + 1:02d}"
            rows.append(
                {
                    "job": job,
                    "level": level,
                    "target": target,
                    "session_id": None,
                    "turn": None,
                    "system": systems[index] if systems is not None else None,
                    "scenario": None,
                    "annotator": annotator,
                    "instrument_id": instrument,
                    "item_id": item,
                    "value": str(value),
                    "round": "first",
                    "origin": "import",
                    "recorded_at": f"2026-01-01T00:00:{index:02d}Z",
                }
            )
    return pd.DataFrame(rows, columns=RATING_COLUMNS)
