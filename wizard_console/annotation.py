"""The annotators' progress, per job and annotator (key ``o``): how many targets and
conversations each has rated of those assigned, and whether they joined, paused or dropped
out, and per job how many targets wait for an annotator (fewer first-round annotators than
the job asks for: a drop-out's targets nobody else could take, or too few invited). Ratings
brought in by ``ozlab import annotations`` count: their annotators show as "imported". Read
from the store's ``annotation_progress`` and ``annotation_state``, refreshed while open; it
shows no rating, only counts."""

from __future__ import annotations

import json
import time
from collections.abc import Mapping, Sequence
from typing import ClassVar

from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import DataTable, Label

from bot.core.annotation import AnnotationState
from bot.core.vocabulary import AnnotationRound
from bot.store.interface import AnnotationPlanning
from bot.store.model import AnnotationProgress

COLUMNS = ("job", "annotator", "targets", "conversations", "state", "last active")


def state_of(row: AnnotationProgress) -> str:
    if row.imported and not row.assigned and not row.joined:
        return "imported"
    if row.dropped:
        return "dropped"
    if not row.joined:
        return "not joined"
    if row.paused:
        return "paused"
    if row.assigned and row.done == row.assigned:
        return "done"
    return "rating"


def ago(at: float | None, now: float) -> str:
    if at is None:
        return "—"
    seconds = max(0, int(now - at))
    if seconds < 60:
        return f"{seconds} s ago"
    if seconds < 3600:
        return f"{seconds // 60} min ago"
    return f"{seconds // 3600} h ago"


def waiting_for_an_annotator(state: AnnotationState) -> int:
    """How many of the job's targets have fewer first-round annotators than it asks for
    (an annotator who rated it in a file brought in by import counts)."""
    wanted = json.loads(state.job.definition).get("annotators")
    if not isinstance(wanted, int):
        return 0  # an imported job: nobody is assigned anything
    have: dict[tuple[str, str], set[str]] = {}
    for a in state.assignments:
        if a.round is AnnotationRound.FIRST:
            have.setdefault((a.target, a.level), set()).add(a.annotator)
    for target, level, who in state.imported:
        have.setdefault((target, level), set()).add(who)
    return sum(1 for t in state.targets if len(have.get((t.target, t.level), ())) < wanted)


def rows_of(
    progress: Sequence[AnnotationProgress], now: float, waiting: Mapping[str, int] | None = None
) -> list[tuple[str, ...]]:
    """One row per job and annotator, with a total row per job (and its targets waiting for
    an annotator)."""
    rows: list[tuple[str, ...]] = []
    for job in dict.fromkeys(p.job for p in progress):
        mine = [p for p in progress if p.job == job]
        for p in mine:
            by_file = state_of(p) == "imported"
            rows.append(
                (
                    job,
                    p.annotator,
                    _targets(p.done, p.assigned, p.imported, alone=by_file),
                    "" if by_file else f"{p.conversations_done}/{p.conversations}",
                    state_of(p),
                    ago(p.last_active_at, now),
                )
            )
        done, assigned = sum(p.done for p in mine), sum(p.assigned for p in mine)
        imported = sum(p.imported for p in mine)
        short = (waiting or {}).get(job, 0)
        state = f"{short} waiting for an annotator" if short else ""
        rows.append((job, "all", _targets(done, assigned, imported, alone=False), "", state, ""))
    return rows


def _targets(done: int, assigned: int, imported: int, *, alone: bool) -> str:
    """Rated of assigned in Telegram, and the targets rated in files brought in by import."""
    by_file = f"{imported} by import"
    if alone:
        return by_file
    return f"{done}/{assigned}" + (f" + {by_file}" if imported else "")


class AnnotationScreen(ModalScreen[None]):
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "close", "Close"),
        Binding("o", "close", "Close", show=False),
        Binding("q", "close", "Close", show=False),
    ]

    def __init__(self, store: AnnotationPlanning, *, interval: float = 1.0) -> None:
        super().__init__()
        self.store = store
        self.interval = interval

    def compose(self) -> ComposeResult:
        with Vertical(id="annotation"):
            yield Label("Annotation progress: rated / assigned", id="annotation-title")
            yield DataTable(id="annotation-table", cursor_type="row")
            yield Label("", id="annotation-empty", classes="hint")
            yield Label("Esc, o or q: close", classes="hint")

    async def on_mount(self) -> None:
        self.query_one(DataTable).add_columns(*COLUMNS)
        await self.refresh_rows()
        self.set_interval(self.interval, self.refresh_rows)

    async def refresh_rows(self) -> None:
        progress = await self.store.annotation_progress()
        waiting: dict[str, int] = {}
        for job in dict.fromkeys(p.job for p in progress):
            state = await self.store.annotation_state(job)
            waiting[job] = 0 if state is None else waiting_for_an_annotator(state)
        table = self.query_one(DataTable)
        table.clear()
        table.add_rows(rows_of(progress, time.time(), waiting))
        empty = "" if progress else "No annotators yet: ozlab invite --annotators N --job NAME"
        self.query_one("#annotation-empty", Label).update(empty)

    def action_close(self) -> None:
        self.dismiss(None)
