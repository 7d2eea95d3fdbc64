"""The two live panes: the sessions table and the selected session's transcript.

Both change only what changed since the last poll (cells, appended lines), so a console
watching two hundred sessions redraws little and keeps the cursor where the wizard left it.
"""

from __future__ import annotations

from collections.abc import Sequence

from rich.table import Table
from rich.text import Text
from textual.widgets import DataTable, RichLog, Static

from bot.core.visible_text import visible
from bot.desk import formatting as fmt
from bot.desk.model import Line, LiveSession

COLUMNS = (  # (label, width): 58 characters of cells + padding fit in 80 columns
    ("session", 9),
    ("study", 5),
    ("scenario", 8),
    ("system", 8),
    ("state", 8),
    ("exch", 6),
    ("time", 7),
    ("last", 4),
    ("!", 5),
)
STYLES = {
    "participant": "bold cyan",
    "system": "green",
    "wizard": "bold magenta",
    "edited": "bold yellow",
    "error": "bold red",
    "note": "blue",
    "end": "bold",
    "event": "dim",
}
WHO_WIDTH = 15
PREFIX_WIDTH = 1 + 9 + WHO_WIDTH


def cells(s: LiveSession, now: float | None = None) -> tuple[str | Text, ...]:
    widths = [w for _, w in COLUMNS]
    texts = (
        fmt.short_id(s.session_id, widths[0]),
        fmt.clip(s.study, widths[1]),
        fmt.clip(s.scenario, widths[2]),
        fmt.clip(s.system, widths[3]),
        fmt.clip(fmt.SHORT_STATES.get(s.state, s.state), widths[4]),
        fmt.clip(fmt.exchanges(s), widths[5]),
        fmt.clip(fmt.elapsed(s, now), widths[6]),
        fmt.clip(fmt.since_last(s, now), widths[7]),
    )
    return (*texts, Text(s.flags, style="bold red"))


class TextLine(Static):
    """One line of plain text that repaints only when the text changes (the console
    re-states it after every poll); what it quotes (an error, a name) shows its control
    characters as escapes."""

    def __init__(self, **options: object) -> None:
        super().__init__("", markup=False, **options)  # type: ignore[arg-type]
        self.text = ""

    def show(self, text: str) -> None:
        if text != self.text:
            self.text = text
            self.update(visible(text))


class SessionsTable(DataTable[str | Text]):
    """One row per session, keyed by session id."""

    def __init__(self, **options: object) -> None:
        super().__init__(cursor_type="row", zebra_stripes=True, **options)  # type: ignore[arg-type]
        self._shown: dict[str, tuple[str | Text, ...]] = {}

    def on_mount(self) -> None:
        for label, width in COLUMNS:
            self.add_column(label, width=width, key=label)

    @property
    def shown(self) -> list[str]:
        """The session ids in the table, top to bottom."""
        return list(self._shown)

    @property
    def selected(self) -> str | None:
        if not self.row_count:
            return None
        return self.coordinate_to_cell_key(self.cursor_coordinate).row_key.value

    def show(self, sessions: Sequence[LiveSession], now: float | None = None) -> None:
        """Show exactly these sessions, in this order, touching only what changed."""
        wanted = {s.session_id: cells(s, now) for s in sessions}
        if list(wanted) != list(self._shown):
            selected = self.selected
            self.clear()
            for key, row in wanted.items():
                self.add_row(*row, key=key)
            self._shown = wanted
            if selected in wanted:
                self.move_cursor(row=list(wanted).index(selected))
            return
        keys = [label for label, _ in COLUMNS]
        for key, row in wanted.items():
            before = self._shown[key]
            for column, old, new in zip(keys, before, row, strict=True):
                if str(old) != str(new):
                    self.update_cell(key, column, new)
        self._shown = wanted

    def select(self, session_id: str) -> bool:
        """Put the cursor on a session; False if it is not shown (filtered out)."""
        if session_id not in self._shown:
            return False
        self.move_cursor(row=list(self._shown).index(session_id))
        return True


class TranscriptView(RichLog):
    """The selected session's lines; the selected turn (for notes) is marked with ▸."""

    def __init__(self, **options: object) -> None:
        super().__init__(wrap=True, min_width=20, markup=False, **options)  # type: ignore[arg-type]
        self._shown: list[Line] = []
        self._session: str | None = None
        self._turn: int | None = None

    @property
    def shown(self) -> list[Line]:
        return list(self._shown)

    def show(self, session_id: str | None, found: Sequence[Line], turn: int | None) -> None:
        """Append what is new; redraw when the session, the selected turn or the past
        changed (a reply edited, a line inserted)."""
        found = list(found)
        same = session_id == self._session and turn == self._turn
        if same and found[: len(self._shown)] == self._shown:
            new = found[len(self._shown) :]
        else:
            self.clear()
            new = found
        for line in new:
            self.write(render(line, line.turn is not None and line.turn == turn))
        self._shown, self._session, self._turn = found, session_id, turn


def render(line: Line, marked: bool = False) -> Table:
    """``▸12:03:05 edited·ada    text``: the text wraps in its own column, and an edited
    reply shows what the system said. What participants, systems and wizards wrote keeps
    its lines and shows any other control character as its escape (never markup)."""
    style = STYLES.get(line.who, "")
    who = fmt.who(line)
    prefix = Text.assemble(
        ("▸" if marked else " ", "bold"),
        (fmt.clock(line.at) + " ", "dim"),
        (visible(who)[: WHO_WIDTH - 1], style),
    )
    body = Text()
    if line.who == "note" and line.turn is not None:
        body.append(f"[turn {line.turn}] ", "blue")
    body.append(
        visible(line.text, lines=True), "" if line.who in ("participant", "system") else style
    )
    if line.original is not None and line.who in ("edited", "wizard"):
        body.append(f"\n(the system said: {visible(line.original, lines=True)})", "dim italic")
    grid = Table.grid(expand=True)
    grid.add_column(width=PREFIX_WIDTH, no_wrap=True)
    grid.add_column(ratio=1)
    grid.add_row(prefix, body)
    return grid
