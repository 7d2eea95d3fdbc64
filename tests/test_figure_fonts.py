"""A figure's PDF embeds its font as TrueType (Type 42), subset to the glyphs drawn and
without the tables that shape text, which no PDF reader uses: it draws the same pixels as
matplotlib's own subset, which keeps them (and took two thirds of the PDF's time)."""

from __future__ import annotations

import io
import re
import shutil
import subprocess
import zlib
from pathlib import Path

import matplotlib
import pandas as pd
from fontTools import subset
from fontTools.ttLib import TTFont

from analytics.report import plots

SHAPING = {"GSUB", "GPOS", "GDEF", "kern", "MATH"}


def _chart() -> plots.Chart:
    """Regular and bold text with kerning pairs (AV, To, Ya) and a ligature's letters (fi)."""
    choices = pd.DataFrame(
        [("q", "q.y", 1, 1, "Yes, AVATAR fits"), ("q", "q.y", 2, 0, "No, Tower of fire")],
        columns=["questionnaire_id", "item_id", "position", "value", "label"],
    )
    codebook = pd.DataFrame(
        [{"questionnaire_id": "q", "item_id": "q.y", "type": "yes_no",
          "text": "To Yale, WAVE affine?", "reverse": False}]
    )  # fmt: skip
    distribution = pd.DataFrame(
        [(s, "q", "q.y", a, label, c, 4, c / 4)
         for s in ("sys-a", "sys-b") for a, label, c in ((1, "Yes", 3), (0, "No", 1))],
        columns=["system_id", "questionnaire_id", "item_id", "answer", "label", "count", "n",
                 "share"],
    )  # fmt: skip
    (chart,) = plots.proportion_charts(distribution, codebook, choices, ["sys-a", "sys-b"],
                                       "p", "Fit")  # fmt: skip
    return chart


def _embedded_fonts(pdf: bytes) -> list[TTFont]:
    """The TrueType font files (FontFile2 streams) a PDF embeds."""
    fonts = []
    for stream in re.findall(rb"stream\r?\n(.*?)\r?\nendstream", pdf, re.DOTALL):
        data = zlib.decompress(stream)
        if data[:4] == b"\x00\x01\x00\x00":
            fonts.append(TTFont(io.BytesIO(data)))
    return fonts


def _pixels(pdf: bytes, folder: Path, name: str) -> bytes:
    found = shutil.which("pdftoppm")
    assert found is not None, "pdftoppm is missing: apt-get install poppler-utils"
    (folder / f"{name}.pdf").write_bytes(pdf)
    subprocess.run([found, "-r", "150", "-png", "-singlefile", str(folder / f"{name}.pdf"),
                    str(folder / name)], check=True, timeout=60)  # fmt: skip
    return (folder / f"{name}.png").read_bytes()


def test_a_figure_embeds_its_fonts_as_truetype_glyphs_alone_and_looks_the_same(
    tmp_path: Path,
) -> None:
    pdf = plots.encode(_chart().figure, "pdf")
    assert b"/Type3" not in pdf and b"/FontFile2" in pdf and b"/CIDFontType2" in pdf
    fonts = _embedded_fonts(pdf)
    names = {f["name"].getDebugName(4) for f in fonts}
    assert names == {"DejaVu Sans", "DejaVu Sans Bold"}
    for font in fonts:
        assert {"glyf", "loca", "hmtx", "cmap", "fpgm", "prep", "cvt "} <= set(font.keys())
        assert not SHAPING & set(font.keys()), sorted(font.keys())
        assert len(font.getGlyphOrder()) < 60  # a subset: DejaVu Sans has about 6,000
    assert subset.Options().drop_tables == subset.Options._drop_tables_default
    assert not SHAPING & set(subset.Options().drop_tables)  # the defaults given back

    own = io.BytesIO()  # matplotlib's own subset, with the shaping tables, of the same chart
    with matplotlib.rc_context({"pdf.fonttype": 42}):
        _chart().figure.savefig(own, format="pdf", dpi=plots.PRINT_DPI, facecolor="white",
                       metadata={"CreationDate": None, "ModDate": None})  # fmt: skip
    assert any(SHAPING & set(f.keys()) for f in _embedded_fonts(own.getvalue()))
    assert _pixels(pdf, tmp_path, "lean") == _pixels(own.getvalue(), tmp_path, "own")
