"""``ozlab check``: a summary of a sound study, every problem of a broken one."""

from __future__ import annotations

from pathlib import Path

import pytest

from bot.cli import main
from scenarios.starter import write_starter
from tests.conftest import VARIANTS

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


def check(ref: str) -> int:
    """``ozlab check REF`` as a researcher runs it: its exit status."""
    return main(["check", ref])


def test_shipped_study_is_ok(capsys: pytest.CaptureFixture[str]) -> None:
    assert check("hmd") == 0
    out, err = capsys.readouterr()
    assert err == ""
    assert out.splitlines() == [
        "OK: study 'hmd' — 2 systems (shop-v1, shop-v0), 1 scenario (hmd-gift), "
        "1 questionnaire (hmd: 5 items, 4 scale, 1 text), random design",
        "  design: random (seed 20241); each participant: 1 scenario; systems between subjects",
        "  scenario hmd-gift: dialogue, at most 10 exchanges; after the task: hmd",
    ]


def test_every_problem_on_its_own_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    study = tmp_path / "broken.yaml"
    study.write_text(BROKEN, encoding="utf-8")
    assert check(str(study)) == 2
    out, err = capsys.readouterr()
    assert out == ""
    assert err.splitlines() == [
        f"{study}:3: texts.declined: Field required",
        f"{study}:9: systems[0].variant: {VARIANTS}",
        f"{study}:10: scenarios[1]: no scenario 'missing': neither "
        f"{tmp_path / 'scenarios' / 'missing.yaml'} nor the shipped "
        "scenarios/library/scenarios/missing.yaml exists",
        "3 problems found.",
    ]


def test_missing_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert check(str(tmp_path / "absent.yaml")) == 2
    _, err = capsys.readouterr()
    assert err.splitlines() == [f"{tmp_path / 'absent.yaml'}: file not found", "1 problem found."]


def test_unknown_name(capsys: pytest.CaptureFixture[str]) -> None:
    assert check("absent") == 2
    err = capsys.readouterr().err
    assert "no shipped study of that name (shipped: " in err
    assert "hmd" in err


def write(root: Path, name: str, text: str) -> Path:
    path = root / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def test_summary_tells_the_new_parts(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    write_starter(tmp_path / "pilot")
    study = tmp_path / "pilot" / "study.yaml"
    text = study.read_text(encoding="utf-8")
    text = text.replace("scenarios: [my-task]", "scenarios: [my-task, sentences, hmd-gift]")
    text = text.replace("post_study: []", "post_study: [closing]")
    text = text.replace(
        "  # tasks_per_participant: 3\n  # order: random",
        "  tasks_per_participant: 2\n  order: random",
    )
    study.write_text(text, encoding="utf-8")
    write(
        tmp_path,
        "pilot/scenarios/sentences.yaml",
        "id: sentences\nkind: rating\ntitle: T\nbrief: Rate.\nstimuli: rows.jsonl\n"
        "rate_with: [sentence]\n",
    )
    write(tmp_path, "pilot/scenarios/rows.jsonl", '{"text": "a"}\n{"text": "b"}\n{"text": "c"}\n')
    item = "items:\n  - {type: thumbs, id: ID, text: 'Good?'}\n"
    write(
        tmp_path,
        "pilot/questionnaires/sentence.yaml",
        "id: sentence\ntitle: S\n" + item.replace("ID", "s.good"),
    )
    write(
        tmp_path,
        "pilot/questionnaires/closing.yaml",
        "id: closing\ntitle: C\n" + item.replace("ID", "c.good"),
    )
    assert check(str(study)) == 0
    out, err = capsys.readouterr()
    assert err == ""
    lines = out.splitlines()
    assert lines[0].startswith("OK: study 'pilot' — 2 systems (shop-v1, shop-v0), 3 scenarios")
    assert lines[1:] == [
        "  design: balanced (seed 1); each participant: 2 of 3 scenarios in random order; "
        "systems between subjects",
        "  screening: my-screening (eligible if my-screening.adult = 1 and "
        "my-screening.english in ('native', 'fluent'))",
        "  scenario my-task: dialogue, at most 10 exchanges, 7m limit; after each reply: "
        "my-reply-rating; after the task: my-questionnaire; translated: it",
        "  scenario sentences: rating task, 3 rows from rows.jsonl; each rated with sentence",
        "  scenario hmd-gift: dialogue, at most 10 exchanges; after the task: hmd",
        "  after the study: closing",
        "  languages: en, it",
    ]


def test_broken_stimuli_fail_the_check(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    write_starter(tmp_path / "pilot")
    study = tmp_path / "pilot" / "study.yaml"
    study.write_text(
        study.read_text(encoding="utf-8").replace("[my-task]", "[sentences]"), encoding="utf-8"
    )
    write(
        tmp_path,
        "pilot/scenarios/sentences.yaml",
        "id: sentences\nkind: rating\ntitle: T\nbrief: Rate.\nstimuli: rows.csv\n"
        "stimulus_template: '{mr} / {text}'\nrate_with: [my-questionnaire]\n",
    )
    rows = write(tmp_path, "pilot/scenarios/rows.csv", "id,text\na,b\n")
    assert check(str(study)) == 2
    _, err = capsys.readouterr()
    assert err.splitlines() == [
        f"{rows}:1: no 'mr' for {{mr}} of the scenario's stimulus_template (columns: text)",
        "1 problem found.",
    ]
