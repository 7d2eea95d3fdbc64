"""The HTML report in a real browser: headless Chromium renders the file and takes a
screenshot, which must show a page (text, tables and coloured plots), not a blank one."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest

from analytics.data.synthetic import write_synthetic_study
from bot.cli import analytics_main as main

pytestmark = pytest.mark.slow

CHROMIUM = next(
    (
        found
        for name in ("chromium", "chromium-browser", "google-chrome")
        if (found := shutil.which(name))
    ),
    None,
)


def screenshot(html: Path, png: Path, profile: Path, height: int = 2000) -> None:
    """A browser is part of what the suite needs, as a database is: without one the test
    fails and says how to get it (``.ci/packages`` installs it), never skips."""
    assert CHROMIUM is not None, "no chromium: run .ci/packages as root (Debian's chromium)"
    subprocess.run(
        [
            CHROMIUM,
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-quic",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            f"--user-data-dir={profile}",
            f"--screenshot={png}",
            f"--window-size=1280,{height}",
            html.as_uri(),
        ],
        check=True,
        capture_output=True,
        timeout=90,
    )


def colours(png: Path) -> tuple[int, float]:
    """Distinct colours, and the share of pixels that are not background white."""
    import matplotlib.image

    pixels = matplotlib.image.imread(png)[..., :3]
    flat = (pixels.reshape(-1, 3) * 255).round().astype(np.uint8)
    packed = flat[:, 0].astype(np.int32) << 16 | flat[:, 1].astype(np.int32) << 8 | flat[:, 2]
    distinct = len(np.unique(packed))
    inked = float((flat.min(axis=1) < 235).mean())
    return distinct, inked


def test_the_html_report_renders_in_chromium(tmp_path: Path) -> None:
    db = tmp_path / "study.sqlite"
    write_synthetic_study(db, sessions=120, responses_per_session=36, seed=2, systems=3)
    html = tmp_path / "report.html"
    assert main(["report", "--db", str(db), "--out", str(html)]) == 0
    top, tall = tmp_path / "top.png", tmp_path / "tall.png"
    screenshot(html, top, tmp_path / "profile")
    screenshot(html, tall, tmp_path / "profile", height=9000)
    for png in (top, tall):
        assert png.is_file() and png.stat().st_size > 20_000
        distinct, inked = colours(png)
        assert distinct > 200, distinct  # text antialiasing, tables and the plots' colours
        assert 0.02 < inked < 0.9, inked  # neither blank nor a solid block
    import matplotlib.image

    image = matplotlib.image.imread(tall)[..., :3]
    red = (image[..., 0] > 0.6) & (image[..., 1] < 0.35) & (image[..., 2] < 0.35)
    blue = (image[..., 2] > 0.5) & (image[..., 0] < 0.3)
    assert red.sum() > 500 and blue.sum() > 500  # the diverging bars' two ends are drawn


def test_the_paper_report_draws_its_svg_figures_in_chromium(tmp_path: Path) -> None:
    """The report study (7-point, frequency, yes/no and choice items; failures; two kinds
    of success): its SVG figures are drawn, in Okabe–Ito colours for the systems."""
    import asyncio

    import matplotlib.image

    from tests.report_study import write_report_study

    db = tmp_path / "study.sqlite"
    asyncio.run(write_report_study(db))
    html = tmp_path / "report.html"
    assert main(["report", "--db", str(db), "--out", str(html)]) == 0
    page = tmp_path / "page.png"
    screenshot(html, page, tmp_path / "profile", height=12000)
    distinct, inked = colours(page)
    assert distinct > 200 and 0.02 < inked < 0.9, (distinct, inked)
    image = matplotlib.image.imread(page)[..., :3]

    def near(hex_colour: str) -> int:
        target = np.array([int(hex_colour[i : i + 2], 16) / 255 for i in (1, 3, 5)])
        return int((np.abs(image - target).max(axis=-1) < 0.06).sum())

    assert near("#0072B2") > 2000 and near("#D55E00") > 2000  # alpha, beta: bars and points
    red = (image[..., 0] > 0.6) & (image[..., 1] < 0.35) & (image[..., 2] < 0.35)
    assert red.sum() > 500  # the rating scales' diverging bars
