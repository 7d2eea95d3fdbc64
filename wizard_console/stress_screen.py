"""The console's screen for stress tests: the replays no automatic comparison settled,
one at a time, the reply to the unchanged and to the perturbed utterance side by side;
p / f / u record a person's verdict (``ozlab stress judge`` does the same at a plain
terminal), s skips, Escape goes back to the sessions. Utterances and replies are shown as
text: their control characters as escapes, their brackets as brackets."""

from __future__ import annotations

import time
from typing import ClassVar

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical
from textual.screen import Screen
from textual.widgets import Footer, Static

from bot.core.visible_text import visible
from bot.store.interface import StressTests
from bot.store.stress_records import Judge, Judgement, ReplyTaken, StressResult, Verdict
from bot.stress.replay.judges import awaiting


def _said(taken: ReplyTaken) -> str:
    if taken.error is not None:
        return f"(the system failed: {visible(taken.error, lines=True)})"
    text = "\n\n".join(visible(text, lines=True) for text in taken.texts) or "(no reply)"
    events = visible(", ".join(sorted(taken.events)))
    return text + (f"\n\nevents: {events}" if taken.events else "")


class StressJudgeScreen(Screen[None]):
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("p", "verdict('pass')", "Pass"),
        Binding("f", "verdict('fail')", "Fail"),
        Binding("u", "verdict('unsure')", "Unsure"),
        Binding("s", "skip", "Skip"),
        Binding("escape", "back", "Back"),
    ]

    def __init__(self, store: StressTests, person: str) -> None:
        super().__init__()
        self.store = store
        self.person = person
        self.todo: list[StressResult] = []
        self.judged = 0

    def compose(self) -> ComposeResult:
        with Vertical(id="stress"):
            yield Static("Reading the replays…", id="stress-test")
            with Horizontal(id="stress-replies"):
                yield Static("", id="stress-unchanged", classes="stress-reply")
                yield Static("", id="stress-perturbed", classes="stress-reply")
        yield Footer()

    async def on_mount(self) -> None:
        self.todo = awaiting(await self.store.stress_results(), Judge.HUMAN)
        self._show()

    @property
    def current(self) -> StressResult | None:
        return self.todo[0] if self.todo else None

    def _show(self) -> None:
        head, left, right = self.query_one("#stress-test", Static), "", ""
        result = self.current
        if result is None:
            head.update(f"Nothing (more) to judge: {self.judged} verdicts given. Escape: back.")
        else:
            test, replay = result.test.perturbation, result.replay
            head.update(
                Text.assemble(
                    (f"{len(self.todo)} to judge · ", "dim"),
                    f"test {result.test.id} · {test.stress_type.value} {test.stress_type.title}"
                    f" · {visible(replay.system_id)} · session {visible(test.session_id)},"
                    f" turn {test.turn}\n",
                    ("original:  ", "bold"),
                    f"{visible(test.original)}\n",
                    ("perturbed: ", "bold"),
                    visible(test.perturbed),
                )
            )
            left = "Reply to the unchanged utterance\n\n" + _said(replay.baseline)
            right = "Reply to the perturbed utterance\n\n" + _said(replay.perturbed)
        self.query_one("#stress-unchanged", Static).update(Text(left))
        self.query_one("#stress-perturbed", Static).update(Text(right))

    async def action_verdict(self, verdict: str) -> None:
        result = self.current
        if result is None:
            return
        await self.store.record_stress_verdict(
            Judgement(
                result.test.id,
                result.replay.system_id,
                Judge.HUMAN,
                Verdict(verdict),
                self.person,
                at=time.time(),
            )
        )
        self.judged += 1
        self.todo.pop(0)
        self._show()

    def action_skip(self) -> None:
        if self.todo:
            self.todo.append(self.todo.pop(0))
            self._show()

    def action_back(self) -> None:
        self.app.pop_screen()
