"""Authored stress tests from YAML and CSV: what they give, and every mistake told with its
file, line and field."""

from __future__ import annotations

from pathlib import Path

import pytest

from bot.core.errors import StudyFileError
from bot.core.phenomena import StressType
from bot.core.stress import Perturbation, Source, Utterance
from bot.stress.authored import match_log, read_authored, read_authored_tests

YAML = """\
tests:
  - session: s-1
    turn: 2
    type: ST-9
    perturbed: "a game cheap for Linux"
  - session: s-1
    turn: 3
    type: st-7
    ad_hoc: true
    original: "Is it on Linux?"
    perturbed: "Is it on the penguin's system?"
    change: Linux → the penguin's system
"""

CSV = """\
session,turn,type,perturbed,original,ad_hoc
s-1,2,ST-9,"a game cheap, for Linux",,
s-2,1,ST-10,the second,,no
s-2,5,ST-6,"c'e un posto indiano","buongiorno, vorrei mangiare in un ristorante indiano",yes
"""

LOG = [
    Utterance("s-1", 2, "a cheap game for Linux", "shop-v1", "gift"),
    Utterance("s-2", 1, "Milan", "shop-v0", "trip", previous_reply="Rome or Milan?"),
]


def write(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def problems(path: Path) -> list[str]:
    with pytest.raises(StudyFileError) as caught:
        read_authored(path)
    return str(caught.value).splitlines()[:-1]


def test_yaml_tests_and_their_lines(tmp_path: Path) -> None:
    path = write(tmp_path, "tests.yaml", YAML)
    assert read_authored(path) == [
        Perturbation("s-1", 2, StressType.ST_9, "", "a game cheap for Linux", Source.AUTHORED),
        Perturbation(
            "s-1",
            3,
            StressType.ST_7,
            "Is it on Linux?",
            "Is it on the penguin's system?",
            Source.AUTHORED,
            ad_hoc=True,
            change="Linux → the penguin's system",
        ),
    ]
    assert [t.line for t in read_authored_tests(path)] == [2, 6]


def test_csv_tests(tmp_path: Path) -> None:
    found = read_authored(write(tmp_path, "tests.csv", CSV))
    assert [(p.session_id, p.turn, p.stress_type, p.ad_hoc) for p in found] == [
        ("s-1", 2, StressType.ST_9, False),
        ("s-2", 1, StressType.ST_10, False),
        ("s-2", 5, StressType.ST_6, True),
    ]
    assert found[0].perturbed == "a game cheap, for Linux" and found[0].original == ""
    assert found[2].original.startswith("buongiorno")


def test_originals_come_from_the_log_and_unknown_turns_are_told_at_their_line(
    tmp_path: Path,
) -> None:
    path = write(tmp_path, "tests.csv", CSV)
    matched = match_log(read_authored_tests(path), LOG)
    assert [p.original for p in matched] == [
        "a cheap game for Linux",
        "Milan",
        "buongiorno, vorrei mangiare in un ristorante indiano",  # ad hoc: the author's own
    ]
    with pytest.raises(StudyFileError) as caught:
        match_log(read_authored_tests(path), LOG[:1])
    assert str(caught.value).splitlines() == [
        f"{path}:3: session: no logged participant message at turn 1 of session 's-2' "
        "(mark the test ad_hoc: true and give its original if none fits)",
        "1 problem found.",
    ]


def test_a_written_original_must_match_the_log(tmp_path: Path) -> None:
    text = "session,turn,type,perturbed,original\ns-1,2,ST-9,game cheap,a nice game\n"
    tests = read_authored_tests(write(tmp_path, "t.csv", text))
    with pytest.raises(StudyFileError, match=r"t.csv:2: original: differs from the logged"):
        match_log(tests, LOG)


def test_yaml_mistakes_with_file_line_and_field(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        "bad.yaml",
        """\
tests:
  - session: s-1
    turn: 2
    type: ST-12
    perturbed: "x"
  - session: s-1
    turn: 3
    type: ST-7
  - session: s-1
    turn: 0
    type: ST-7
    perturbed: "   "
  - session: s-1
    turn: 5
    type: ST-8
    ad_hoc: true
    perturbed: "y"
  - session: s-1
    turn: 6
    type: ST-8
    perturbed: "y"
    colour: red
""",
    )
    assert problems(path) == [
        f"{path}:4: tests[0].type: unknown stress test type 'ST-12' (known: ST-1 … ST-11)",
        f"{path}:6: tests[1].perturbed: missing: the perturbed utterance "
        "(session, turn, type, perturbed are needed)",
        f"{path}:10: tests[2].turn: Input should be greater than or equal to 1",
        f"{path}:12: tests[2].perturbed: the perturbed utterance is empty",
        f"{path}:13: tests[3].original: an ad hoc test needs its original "
        "(no logged utterance has it)",
        f"{path}:22: tests[4].colour: unknown field 'colour' (allowed: session, turn, type, "
        "perturbed, ad_hoc, original, change)",
    ]


def test_csv_mistakes_with_file_line_and_column(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        "bad.csv",
        "session,turn,type,perturbed,original\n"
        "s-1,two,ST-1,foo,\n"
        "s-1,3,ST-99,foo,\n"
        "s-1,4,ST-2,,\n"
        "s-1,5,ST-2\n"
        "\n"
        "s-1,6,ST-2,fine,\n"
        "s-1,7,ST-5,same,same\n",
    )
    assert problems(path) == [
        f"{path}:2: turn: Input should be a valid integer, unable to parse string as an integer",
        f"{path}:3: type: unknown stress test type 'ST-99' (known: ST-1 … ST-11)",
        f"{path}:4: perturbed: the perturbed utterance is empty",
        f"{path}:5: this row has 3 values but the header has 5 columns "
        '(a value with a comma needs "quotes")',
        f"{path}:8: original: the perturbed utterance is the same as the original",
    ]
    header = write(tmp_path, "h.csv", "session,turn,kind,text\n")
    assert problems(header) == [
        f"{header}:1: unknown column 'kind'; unknown column 'text'; missing column 'type'; "
        "missing column 'perturbed' (columns: session, turn, type, perturbed, original, "
        "ad_hoc, change)"
    ]


def test_files_that_cannot_be_used(tmp_path: Path) -> None:
    assert problems(write(tmp_path, "t.txt", "x")) == [
        f"{tmp_path / 't.txt'}: must be a .yaml, .yml or .csv file"
    ]
    assert problems(tmp_path / "missing.yaml") == [f"{tmp_path / 'missing.yaml'}: file not found"]
    assert problems(write(tmp_path, "e.csv", "")) == [
        f"{tmp_path / 'e.csv'}: the file is empty (no header, no tests)"
    ]
    assert problems(write(tmp_path, "n.yaml", "tests: []\n")) == [
        f"{tmp_path / 'n.yaml'}: has no tests"
    ]
    syntax = problems(write(tmp_path, "s.yaml", "tests:\n  - session: [\n"))
    assert syntax[0].startswith(f"{tmp_path / 's.yaml'}:") and "YAML" in syntax[0]
