"""``ozlab check``: one summary line for a sound study, every problem for a broken one."""

from __future__ import annotations

from pathlib import Path

import pytest

from scenarios.check import check

BROKEN = """\
id: broken
title: Broken
texts:
  welcome: Hello
  consent: Do you agree?
systems:
  - type: demo
    id: a
    variant: v3
scenarios: [hmd-gift, missing]
"""


def test_shipped_study_is_ok(capsys: pytest.CaptureFixture[str]) -> None:
    assert check("hmd") == 0
    out, err = capsys.readouterr()
    assert err == ""
    assert out == (
        "OK: study 'hmd' — 2 systems (shop-v1, shop-v0), 1 scenario (hmd-gift), "
        "1 questionnaire (hmd: 5 items, 4 scale, 1 text), random design\n"
    )


def test_every_problem_on_its_own_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    study = tmp_path / "broken.yaml"
    study.write_text(BROKEN, encoding="utf-8")
    assert check(str(study)) == 1
    out, err = capsys.readouterr()
    assert out == ""
    assert err.splitlines() == [
        f"{study}:3: texts.declined: Field required",
        f"{study}:9: systems[0].variant: Input should be 'v1' or 'v0'",
        f"{study}:10: scenarios[1]: no scenario 'missing': neither "
        f"{tmp_path / 'scenarios' / 'missing.yaml'} nor the shipped "
        "scenarios/library/scenarios/missing.yaml exists",
        "3 problems found.",
    ]


def test_missing_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert check(str(tmp_path / "absent.yaml")) == 1
    _, err = capsys.readouterr()
    assert err.splitlines() == [f"{tmp_path / 'absent.yaml'}: file not found", "1 problem found."]


def test_unknown_name(capsys: pytest.CaptureFixture[str]) -> None:
    assert check("absent") == 1
    assert "no shipped study of that name (shipped: hmd)" in capsys.readouterr().err
