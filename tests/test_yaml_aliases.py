"""YAML aliases in study files: shared labels load, a file whose aliases multiply without
end ("billion laughs") or point into themselves is refused at its line, at once."""

from __future__ import annotations

import time
from itertools import pairwise
from pathlib import Path

import pytest

from bot.cli import main
from scenarios.loading import load_questionnaire
from scenarios.yaml_lines import StudyError

LEVELS = "abcdefghi"
LIBRARY = Path(__file__).parents[1] / "questionnaires" / "library"


def bomb() -> str:
    """The classic: nine lists of nine aliases to the list before, 9⁹ strings in all."""
    lines = [
        "id: bomb",
        "title: Bomb",
        'a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]',
    ]
    for before, name in pairwise(LEVELS):
        lines.append(f"{name}: &{name} [{','.join([f'*{before}'] * 9)}]")
    return "\n".join(lines) + "\n"


@pytest.mark.timeout(10, func_only=True)  # not the session's teardown after it
def test_an_alias_bomb_is_refused_at_its_line_at_once(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    study = tmp_path / "study.yaml"
    study.write_text(bomb(), encoding="utf-8")
    started = time.monotonic()
    assert main(["check", str(study)]) == 10
    assert time.monotonic() - started < 1.0
    assert capsys.readouterr().err.splitlines() == [
        f"{study}:8: the aliases up to *e here repeat more than 100000 values (a YAML"
        ' "billion laughs" file?): ozlab reads no further',
        "1 problem found.",
    ]


@pytest.mark.timeout(10, func_only=True)  # not the session's teardown after it
def test_an_alias_inside_its_own_anchor_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    study = tmp_path / "study.yaml"
    study.write_text("id: loop\ntitle: Loop\nx: &x\n  - 1\n  - *x\n", encoding="utf-8")
    assert main(["check", str(study)]) == 10
    assert capsys.readouterr().err.splitlines() == [
        f"{study}:5: the alias *x is inside its own anchor: it would repeat without end",
        "1 problem found.",
    ]


def test_shared_labels_still_load_and_a_duplicate_under_an_anchor_is_told_once(
    tmp_path: Path,
) -> None:
    shipped = load_questionnaire(LIBRARY / "idial.yaml")
    labels = [item.labels for item in shipped.items if getattr(item, "labels", None)]
    assert len(labels) > 3 and all(found == labels[0] for found in labels)
    questionnaire = tmp_path / "q.yaml"
    questionnaire.write_text(
        "id: q\ntitle: Q\nitems:\n"
        "  - id: a\n    type: scale\n    text: A?\n"
        "    labels: &points {1: No, 2: Maybe, 1: Yes}\n"
        "  - id: b\n    type: scale\n    text: B?\n    labels: *points\n",
        encoding="utf-8",
    )
    with pytest.raises(StudyError) as raised:
        load_questionnaire(str(questionnaire))
    told = [line for line in str(raised.value).splitlines() if "appears twice" in line]
    assert told == [f"{questionnaire}:7: items[0].labels.1: '1' appears twice (first on line 7);"
                    " only the last one would count"]  # fmt: skip


def test_a_key_a_merge_brings_may_be_given_again(tmp_path: Path) -> None:
    study = tmp_path / "study.yaml"
    study.write_text(
        "id: merge\ntitle: Merge\nbase: &base {x: 1, y: 2}\nother:\n  <<: *base\n  x: 3\n",
        encoding="utf-8",
    )
    with pytest.raises(StudyError) as raised:
        load_questionnaire(study)
    assert "appears twice" not in str(raised.value)


@pytest.mark.timeout(10, func_only=True)  # not the session's teardown after it
def test_values_nested_too_deeply_are_one_problem(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    study = tmp_path / "study.yaml"
    study.write_text("id: deep\ntitle: Deep\nx: " + "[" * 5000 + "]" * 5000 + "\n")
    assert main(["check", str(study)]) == 10
    assert capsys.readouterr().err.splitlines() == [
        f"{study}:3: values nested deeper than ozlab can read: a study needs a few levels",
        "1 problem found.",
    ]
