"""The rule every CSV writer of ozlab applies to a text cell: OWASP's leading ``'`` before
``= + - @``, a tab or a carriage return, at the start of every line of the cell; plain
numbers kept; exactly reversible; a cell with a line break quoted whatever the break."""

from __future__ import annotations

import csv
import io
import random

import pytest

from bot.core.researcher_files import neutralised, restored, write_rows


@pytest.mark.parametrize(
    ("typed", "written"),
    [
        ('=HYPERLINK("http://evil.example","x")', '\'=HYPERLINK("http://evil.example","x")'),
        ("+1+1", "'+1+1"),
        ("-1+cmd", "'-1+cmd"),
        ("@SUM(1,1)", "'@SUM(1,1)"),
        ("\t=1+1", "'\t=1+1"),
        ("\r=1+1", "'\r'=1+1"),  # the carriage return ends a row: its next line is one
        ("crq\r=2+5+cmd|' /C calc'!A0", "crq\r'=2+5+cmd|' /C calc'!A0"),
        ("fine\n@SUM(1,1)", "fine\n'@SUM(1,1)"),
        ("fine\r\n+1+1", "fine\r\n'+1+1"),
        ("fine\u2028-1+cmd", "fine\u2028'-1+cmd"),
        ("fine\x85=1", "fine\x85'=1"),
        ("a\r\r\n=1", "a\r'\r\n'=1"),
        ("a\n'=1", "a\n''=1"),
        ("-3\nfine", "'-3\nfine"),  # a number only as the whole cell
        ("fine\n-3", "fine\n-3"),
        ("fine\n", "fine\n"),
        ("-2+cmd|' /C calc'!A0", "'-2+cmd|' /C calc'!A0"),
        ("'=1+1", "''=1+1"),  # already quoted by the participant: one more, so it comes back
        ("''@x", "'''@x"),
        ("-3", "-3"),  # plain numbers are numbers to a spreadsheet, not formulas
        ("+2.5", "+2.5"),
        ("-1e5", "-1e5"),
        ("-", "'-"),
        ("-3=Strongly disagree; 3=Strongly agree", "'-3=Strongly disagree; 3=Strongly agree"),
        ("I'd say =1+1", "I'd say =1+1"),
        (" =1+1", " =1+1"),
        ("'quoted'", "'quoted'"),
        ("", ""),
    ],
)
def test_a_cell_that_would_run_is_shown_as_text(typed: str, written: str) -> None:
    assert neutralised(typed) == written
    assert restored(written) == typed


def test_restoring_gives_back_whatever_was_typed() -> None:
    rng = random.Random(7)
    alphabet = ["=", "+", "-", "@", "\t", "\r", "\n", "\u2028", "\x85", "'", "1", "a", " ", "."]
    for _ in range(20_000):
        typed = "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 6)))
        written = neutralised(typed)
        assert restored(written) == typed
        for line in written.splitlines():
            if line.startswith(("=", "+", "-", "@", "\t")):
                float(line)  # only a plain number may start so


def test_an_older_export_of_a_carriage_return_is_read_back() -> None:
    """Before the rule held per line, only the cell's start had its ``'``."""
    assert restored("'\r=1+1") == "\r=1+1"


@pytest.mark.parametrize("brk", ["\r", "\n", "\r\n", "\u2028", "\x85"])
def test_a_cell_with_a_line_break_is_quoted(brk: str) -> None:
    buffer = io.StringIO()
    write_rows(buffer, ["a", "b"], [(f"x{brk}=1+3", "y"), ("z", 1)])
    written = buffer.getvalue()
    assert written == f'a,b\n"x{brk}\'=1+3",y\nz,1\n'
    read = list(csv.reader(io.StringIO(written, newline="")))
    assert read == [["a", "b"], [f"x{brk}'=1+3", "y"], ["z", "1"]]


def test_rows_are_written_safe_unless_raw() -> None:
    rows = [("=1+1", 3, -3.5, None), ("@me", "-3", "", "x")]
    for raw, first in ((False, "'=1+1"), (True, "=1+1")):
        buffer = io.StringIO()
        write_rows(buffer, ["a", "b", "c", "d"], rows, raw=raw)
        read = list(csv.reader(io.StringIO(buffer.getvalue())))
        assert read[1] == [first, "3", "-3.5", ""]
        assert read[2] == ["@me" if raw else "'@me", "-3", "", "x"]
