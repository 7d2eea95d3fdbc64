"""A table whose cells all fit on one line is drawn without Rich's table layout (the terminal
report's rendering was mostly that layout), to the very bytes Rich draws: in a file, in a
colour terminal, and with the ASCII rules of a terminal that cannot show box characters."""

from __future__ import annotations

import io
from collections.abc import Callable

from hypothesis import assume, given, settings
from hypothesis import strategies as st
from rich.console import Console, RenderableType

from analytics.report.document import Table
from analytics.report.render_terminal import _drawn, _on_one_line, _table, _whole

_CELLS = st.text(
    alphabet=st.sampled_from(list("aZ7 \xa0[]/\\:é中😀\x1b\n\t\u202e…")),
    max_size=10,
)


class _Screen(io.StringIO):
    """Where the console writes: a terminal or a file, in an encoding."""

    def __init__(self, *, terminal: bool, encoding: str) -> None:
        super().__init__()
        self._terminal, self._encoding = terminal, encoding

    def isatty(self) -> bool:
        return self._terminal

    @property
    def encoding(self) -> str:
        return self._encoding


@st.composite
def _tables(draw: st.DrawFn) -> Table:
    columns = draw(st.integers(1, 5))
    rows = draw(st.lists(st.tuples(*[_CELLS] * columns), max_size=6))
    return Table(
        columns=draw(st.tuples(*[_CELLS] * columns)),
        rows=tuple(rows),
        caption=draw(st.none() | st.text(alphabet="ab [/]: ", max_size=90)),
        numeric=draw(st.just(()) | st.tuples(*[st.booleans()] * columns)),
        more=draw(st.integers(0, 2)),
        group_breaks=tuple(draw(st.lists(st.integers(0, len(rows)), max_size=3))),
    )


def _written(
    draw: Callable[[Console], RenderableType | None], width: int, screen: tuple[bool, str]
) -> str:
    terminal, encoding = screen
    out = _Screen(terminal=terminal, encoding=encoding)
    console = Console(
        file=out,
        width=width,
        color_system="truecolor" if terminal else None,
        highlight=False,
        emoji=False,
        soft_wrap=False,
    )
    drawn = draw(console)
    assume(drawn is not None)  # a table too wide to go on one line is Rich's to lay out
    console.print(drawn)
    return out.getvalue()


@given(
    _tables(),
    st.integers(30, 140),
    st.sampled_from([(False, "utf-8"), (True, "utf-8"), (True, "ascii")]),
)
@settings(max_examples=400, deadline=None)
def test_a_table_on_one_line_is_written_as_rich_writes_it(
    block: Table, width: int, screen: tuple[bool, str]
) -> None:
    whole = _whole(block, headers=True)
    fast = _written(lambda console: _on_one_line(console, block, whole), width, screen)
    rich = _written(lambda console: _drawn(console, _table(block, whole)), width, screen)
    assert fast == rich
