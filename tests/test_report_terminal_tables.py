"""The terminal report's tables are drawn without Rich's table layout (its rendering was
mostly that layout), to the very bytes Rich draws them: every cell whole on one line, or
wrapped in columns narrower than the cells; in a file, in a colour terminal, and with the
ASCII rules of a terminal that cannot show box characters."""

from __future__ import annotations

import io
from collections.abc import Callable

from hypothesis import assume, given, settings
from hypothesis import strategies as st
from rich.console import Console, RenderableType

from analytics.report.document import Table
from analytics.report.render_terminal import _drawn, _drawn_here, _fitted, _shown, _table, _whole

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
) -> str | None:
    """What ``draw`` prints on a console ``width`` wide; None when it draws nothing."""
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
    if drawn is None:
        return None
    console.print(drawn)
    return out.getvalue()


_SCREENS = st.sampled_from([(False, "utf-8"), (True, "utf-8"), (True, "ascii")])


@given(_tables(), st.integers(30, 140), _SCREENS)
@settings(deadline=None)  # hypothesis's 100 examples, as the suite's other properties
def test_a_table_whose_cells_fit_is_written_as_rich_writes_it(
    block: Table, width: int, screen: tuple[bool, str]
) -> None:
    whole = _whole(block, headers=True)
    rich = _written(lambda console: _drawn(console, _table(block, whole)), width, screen)
    assume(rich is not None)  # Rich's table as wide as its cells fits the console
    assert _written(lambda console: _fitted(console, block), width, screen) == rich


@given(_tables(), st.data(), _SCREENS)
@settings(deadline=None)  # hypothesis's 100 examples, as the suite's other properties
def test_a_table_of_given_widths_wraps_its_cells_as_rich_wraps_them(
    block: Table, data: st.DataObject, screen: tuple[bool, str]
) -> None:
    """Columns narrower than their cells, which wrap and fold (headers too)."""
    widths = data.draw(st.lists(st.integers(1, 12), min_size=len(block.columns),
                                max_size=len(block.columns)))  # fmt: skip
    width = sum(widths) + 3 * (len(widths) - 1) + data.draw(st.integers(0, 5))
    heads = [_shown(name) for name in block.columns]
    rows = [[_shown(cell) for cell in row] for row in block.rows]
    ours = _written(lambda console: _drawn_here(console, block, heads, rows, widths), width, screen)
    exact = _table(block, widths)  # each column that wide, not wider
    for column, wide in zip(exact.columns, widths, strict=True):
        column.width = wide
    rich = _written(lambda console: _drawn(console, exact), width, screen)
    assert rich is not None  # it fits
    assert ours == rich
