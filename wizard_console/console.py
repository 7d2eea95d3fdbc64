"""The console's state and screen: a worker polls the study store four times a second
(``Desk``, asynchronous like the screen), re-reading only what changed; every action
appends a command and the status line follows it until the bot has applied it (or says
that the bot is not there).
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from dataclasses import dataclass, field
from typing import ClassVar

from textual import on, work
from textual.app import App, ComposeResult
from textual.reactive import reactive
from textual.widgets import DataTable, Footer

from bot.core.errors import OzlabError
from bot.core.vocabulary import CommandOutcome, Gate, GateScope
from bot.desk import formatting as fmt
from bot.desk.desk import Desk
from bot.desk.model import Line, LiveSession, WaitingReply
from bot.engine.assignment import CellProgress
from wizard_console.screens import Filters
from wizard_console.widgets import SessionsTable, TextLine, TranscriptView

SLOW_BOT = 1.5  # seconds without an outcome before the console says the bot is not there
OUTCOME_WORDS: dict[str, str] = {
    "applied": "applied",
    "expired": "expired (no longer possible: ended, or another wizard was first)",
    "rejected": "rejected by the bot",
}


@dataclass(frozen=True)
class Ask:
    """What the screen needs from the next poll (taken on the UI side)."""

    ended: bool
    selected: str | None
    pending: tuple[int, ...]
    seen: tuple[int, bool] | None  # (data version, ended shown) of the sessions on screen
    read: tuple[int, str | None] | None  # (data version, session) of the transcript shown


@dataclass
class View:
    """One poll's worth of the database; None: unchanged since asked."""

    version: int
    ask: Ask
    sessions: list[LiveSession] | None = None
    waiting: dict[str, WaitingReply] = field(default_factory=dict)
    gates: dict[GateScope, Gate] = field(default_factory=dict)
    cells: list[CellProgress] = field(default_factory=list)
    lines: list[Line] | None = None
    outcomes: dict[int, CommandOutcome | None] = field(default_factory=dict)


class Console(App[None]):
    """The console's state and screen: sessions table, transcript of the selected one,
    status line; what the keys do is in :class:`~wizard_console.actions.Actions`."""

    KEY_HELP: ClassVar[dict[str, str]] = {}
    """The help screen's words for each action (the footer has room for one word)."""

    show_ended: reactive[bool] = reactive(False)
    answer_as: str | None = None
    """How the wizard's words go to the participant: ``voice`` (a voice note the study's
    text-to-speech speaks), ``text``, or None: as the task sends the system's replies."""
    filters: reactive[Filters] = reactive(Filters)

    def __init__(self, desk: Desk, *, interval: float = 0.25, slow_bot: float = SLOW_BOT) -> None:
        super().__init__()
        self.desk = desk
        self.interval = interval
        self.slow_bot = slow_bot
        self.sessions: list[LiveSession] = []
        self.waiting: dict[str, WaitingReply] = {}
        self.gate_states: dict[GateScope, Gate] = {}
        self.cells: list[CellProgress] = []  # a quota's progress, cell by cell
        self.lines: list[Line] = []
        self.selected: str | None = None
        self.turn: int | None = None  # the turn a note goes to; None: the latest
        self.pending: dict[int, tuple[str, float]] = {}  # command id -> (label, sent at)
        self.outcomes: dict[int, CommandOutcome] = {}
        self._read_key: tuple[int, str | None] | None = None
        self._seen: tuple[int, bool] | None = None
        self._drawn: int | None = None  # the second the table was last drawn for
        self._wake = asyncio.Event()

    def compose(self) -> ComposeResult:
        # Kept by reference: while a dialog is open, queries would search the dialog.
        self.bar, self.detail = TextLine(id="bar"), TextLine(id="detail")
        self.status = TextLine(id="status")
        self.table, self.log_view = SessionsTable(id="sessions"), TranscriptView(id="transcript")
        yield self.bar
        yield self.table
        yield self.detail
        yield self.log_view
        yield self.status
        yield Footer(compact=True, show_command_palette=False)

    def on_mount(self) -> None:
        self.table.focus()
        self.set_interval(1.0, self._tick)
        self._poll()

    # --- the database, in a worker ---------------------------------------------------

    @work(exclusive=True, group="poll")
    async def _poll(self) -> None:
        while True:
            ask = Ask(
                self.show_ended, self.selected, tuple(self.pending), self._seen, self._read_key
            )
            try:
                view = await self._read(ask)
            except OzlabError as error:
                self.say(f"cannot read the database: {error}", error=True)
            else:
                self._show(view)
            self._wake.clear()
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._wake.wait(), self.interval)

    async def _read(self, ask: Ask) -> View:
        """The only place the app reads the database. When nobody has committed since the
        last poll, only the change token is read (an idle console)."""
        view = View(await self.desk.changes(), ask)
        if (view.version, ask.ended) != ask.seen:
            view.sessions = await self.desk.live_sessions(include_ended=ask.ended)
            view.waiting = {w.session_id: w for w in await self.desk.waiting_replies()}
            view.gates = await self.desk.gates()
            view.cells = await self.desk.cells()
        if ask.selected is not None and (view.version, ask.selected) != ask.read:
            view.lines = await self.desk.transcript(ask.selected)
        view.outcomes = await self.desk.outcomes(ask.pending) if ask.pending else {}
        return view

    def wake(self) -> None:
        """Poll now rather than at the next interval (the wizard changed something)."""
        self._wake.set()

    # --- showing -----------------------------------------------------------------------

    def _show(self, view: View) -> None:
        if view.sessions is not None:
            self.sessions, self.waiting, self.gate_states = view.sessions, view.waiting, view.gates
            self.cells = view.cells
            self._seen, self._drawn = (view.version, view.ask.ended), None
        if view.lines is not None and view.ask.selected == self.selected:
            self.lines, self._read_key = view.lines, (view.version, view.ask.selected)
        second = int(time.time())
        if self._drawn != second:  # new rows, or the times to redraw (once a second)
            self._show_table()
            self._drawn = second
        self._show_transcript()
        for command_id, outcome in view.outcomes.items():
            if outcome is not None and command_id in self.pending:
                label, _ = self.pending.pop(command_id)
                self.outcomes[command_id] = outcome
                failed = outcome is not CommandOutcome.APPLIED
                self.say(f"{label}: {OUTCOME_WORDS.get(outcome, outcome)}", failed)
        self._tick()

    def shown_sessions(self) -> list[LiveSession]:
        """The sessions the filters and the ended switch let through."""
        f = self.filters
        return [
            s
            for s in self.sessions
            if (self.show_ended or not s.ended)
            and f.study in (None, s.study)
            and f.system in (None, s.system)
            and f.state in (None, s.state)
        ]

    def _show_table(self) -> None:
        table = self.table
        table.show(self.shown_sessions(), int(time.time()))
        if self.selected != table.selected:
            self._select(table.selected)
        live = sum(not s.ended for s in self.sessions)
        ended = "shown" if self.show_ended else "hidden"
        quota = f" · {fmt.cells(self.cells)}" if self.cells else ""
        self.bar.show(
            f" ozlab wizard · {self.desk.wizard} · {live} live · {len(self.waiting)} waiting"
            f" · filter: {self.filters.describe()} · ended {ended}{quota}"
        )

    def _show_transcript(self) -> None:
        session = self.current()
        view = self.log_view
        if session is None:
            view.show(None, [], None)
            self.detail.show(" no session selected")
            return
        turn = self.turn if self.turn is not None else session.turn
        view.show(session.session_id, self.lines, turn)
        parts = [
            f" {session.session_id} {session.state}",
            f"{fmt.clip(session.system, 12)} ({session.system_type or '?'})",
            f"exch {fmt.exchanges(session)}",
            f"turn {turn}",
        ]
        if session.alerts:
            parts.append(fmt.alerts(session))
        self.detail.show(" · ".join(parts))

    def _tick(self) -> None:
        """Once a second: say which commands the bot has not taken yet."""
        now = time.monotonic()
        slow = [label for label, sent in self.pending.values() if now - sent > self.slow_bot]
        if slow:
            self.say(f"{slow[-1]}: waiting for the bot (is ozlab run running?)")

    def say(self, text: str, error: bool = False) -> None:
        self.status.show(" " + text)
        self.status.set_class(error, "error")

    # --- selection ---------------------------------------------------------------------

    @on(DataTable.RowHighlighted)
    def _highlighted(self, event: DataTable.RowHighlighted) -> None:
        self._select(event.row_key.value)

    def _select(self, session_id: str | None) -> None:
        if session_id == self.selected:
            return
        self.selected, self.turn, self.lines = session_id, None, []
        self._show_transcript()
        self.wake()

    def current(self) -> LiveSession | None:
        return next((s for s in self.sessions if s.session_id == self.selected), None)

    def watch_show_ended(self) -> None:
        self.wake()

    def watch_filters(self) -> None:
        # ``App.is_mounted`` is a method (about a widget): asked as a truth, it always holds.
        if self.is_mounted(self.table):
            self._show_table()
