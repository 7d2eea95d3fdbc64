"""A slider (0 to 100) in an annotation job: a scale whose distances mean something. Its
agreement is reported at the interval level (Krippendorff's alpha, as the ``krippendorff``
package computes it on the same ratings) with the ICC forms of any scale, and ``ozlab
export`` gives its final value as a number, not as text."""

from __future__ import annotations

# pingouin, the reference, is imported by the tests that compare with it: at the top it
# cost every test process a third of a second of collection.
from pathlib import Path

import krippendorff
import numpy as np
import pandas as pd
import pytest

from analytics.annotations import agreement as ag
from analytics.annotations.ratings import analyse, item_scales
from analytics.data.loading import load_study_data
from analytics.io.export_annotations import annotation_tables
from bot.cli import analytics_main as main
from questionnaires.models import Questionnaire
from tests.annotation_support import stored_study
from tests.annotation_tables import ratings_frame

WARMTH = {
    "A1": [80, 35, 62, 10, 55, 90],
    "A2": [75, 40, 70, 5, 50, 95],
    "A3": [85, 20, 65, 15, None, 88],
}
INSTRUMENT = {
    "id": "vas",
    "title": "How warm did the assistant sound?",
    "items": [
        {"type": "slider", "id": "vas.warmth", "text": "How warm was the reply?",
         "left": "Cold", "right": "Warm"},
    ],
}  # fmt: skip


def test_a_slider_is_an_interval_scale_with_the_packages_alpha_and_the_icc_forms() -> None:
    import pingouin as pg

    (scale,) = item_scales([Questionnaire.model_validate(INSTRUMENT)]).values()
    assert (scale.kind, scale.measurement) == ("scale", "interval")
    assert scale.domain == tuple(float(v) for v in range(101))
    ratings = ratings_frame(WARMTH, instrument="vas", item="vas.warmth")
    result = analyse(ratings, {("vas", "vas.warmth"): scale})
    assert result is not None
    rows = {r["statistic"]: r for r in result.reliability.to_dict("records")}
    matrix = np.array([[np.nan if v is None else v for v in row] for row in WARMTH.values()])
    expected = krippendorff.alpha(reliability_data=matrix, level_of_measurement="interval")
    assert rows["alpha_interval"]["value"] == pytest.approx(expected, abs=1e-12)
    assert [s for s, r in rows.items() if r["reported"]] == ["alpha_interval"]
    assert rows["alpha_interval"]["ci_low"] < expected < rows["alpha_interval"]["ci_high"]
    long = ratings.assign(score=ratings["value"].astype(float))
    complete = long[long["target"] != "t05"]  # the ICC takes targets every annotator rated
    with ag.unrounded():
        icc = pg.intraclass_corr(complete, targets="target", raters="annotator", ratings="score")
    for label, form in ag.ICC_FORMS.items():
        published = float(icc.set_index("Type").loc[label, "ICC"])
        assert rows[form]["value"] == pytest.approx(published, abs=1e-12), form
        assert rows[form]["n_targets"] == 5
    annotator = result.annotators.set_index("annotator").loc["A1", "distribution"]
    assert annotator == {10: 1, 35: 1, 55: 1, 62: 1, 80: 1, 90: 1}  # only the values given


def test_a_sliders_final_value_is_exported_as_a_number(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Typed values between the buttons' points (35, 62) are imported as the bot takes
    them; 101 is refused."""
    one = "p0123456789abcde-1"
    db = stored_study(
        tmp_path / "study.sqlite", "hri-cues", "hri-cues-chat", [(one, "companion", 3)]
    )
    targets = [f"{one}#1", f"{one}#2", f"{one}#3"]
    rows = "target,annotator,item,value\n" + "".join(
        f"{target},{annotator},warmth,{value}\n"
        for annotator, values in {
            "A1": (80, 35, 62),
            "A2": (75, 40, 71),
            "A3": (85, 20, 66),
        }.items()
        for target, value in zip(targets, values, strict=True)
    )
    (tmp_path / "vas.yaml").write_text(
        "id: vas\ntitle: Warmth\nitems:\n  - type: slider\n    id: vas.warmth\n"
        "    text: How warm was the reply?\n    left: Cold\n    right: Warm\n"
    )
    (tmp_path / "ratings.csv").write_text(rows)
    imported = ["import", "annotations", str(tmp_path / "ratings.csv"), "--db", str(db)]
    assert main([*imported, "--instrument", str(tmp_path / "vas.yaml"), "--job", "vas"]) == 0
    (tmp_path / "off.csv").write_text(f"target,annotator,item,value\n{one}#1,A4,warmth,101\n")
    off = ["import", "annotations", str(tmp_path / "off.csv"), "--db", str(db)]
    assert main([*off, "--instrument", str(tmp_path / "vas.yaml"), "--job", "vas"]) != 0
    assert "answer 101 is not on the slider (0 to 100)" in capsys.readouterr().err
    tables = annotation_tables(load_study_data(db), wide=True)
    wide = tables["annotation_final_wide"]
    (column,) = [c for c in wide.columns if c.name == "vas.warmth"]
    assert column.kind == "number" and "0 to 100" in column.meaning
    assert column.labels == {0: "Cold", 100: "Warm"}
    assert pd.api.types.is_float_dtype(wide.frame["vas.warmth"])
    assert list(wide.frame.set_index("target")["vas.warmth"].loc[targets]) == [80.0, 35.0, 66.0]
    final = tables["annotation_final"].frame.set_index("target")
    assert list(final.loc[targets, "score"]) == [80.0, 35.0, 66.0]
