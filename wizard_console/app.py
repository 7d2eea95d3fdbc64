"""``ozlab wizard``: watch every live session and step in, Wizard-of-Oz style."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import ClassVar

from textual.binding import Binding, BindingType

from bot.desk.desk import Desk
from wizard_console.actions import Actions
from wizard_console.annotation import AnnotationScreen


class WizardApp(Actions):
    """The console with its keys."""

    CSS_PATH = "console.tcss"
    TITLE = "ozlab wizard"
    ENABLE_COMMAND_PALETTE = False
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("question_mark", "help", "Help", key_display="?"),
        Binding("w", "say", "Write"),
        Binding("a", "approve", "Send"),
        Binding("e", "edit", "Edit"),
        Binding("r", "replace", "Replace"),
        Binding("g", "gate", "Gate"),
        Binding("s", "success", "Success", show=False),
        Binding("x", "fail", "Failure", show=False),
        Binding("d", "end", "End", show=False),
        Binding("p", "pause", "Pause", show=False),
        Binding("n", "note", "Note", show=False),
        Binding("left_square_bracket", "turn(-1)", "Turn before", False, key_display="["),
        Binding("right_square_bracket", "turn(1)", "Turn after", False, key_display="]"),
        Binding("t", "start", "Start", show=False),
        Binding("j", "next_waiting", "Next waiting", show=False),
        Binding("f", "filter", "Filter", show=False),
        Binding("h", "toggle_ended", "Ended"),
        Binding("b", "answer_as", "Voice/text", show=False),
        Binding("v", "stress", "Stress tests", show=False),
        Binding("o", "annotation", "Annotators", show=False),
        Binding("q", "quit", "Quit"),
    ]
    KEY_HELP: ClassVar[dict[str, str]] = {
        "help": "this help",
        "say": "write as the system",
        "approve": "send the waiting reply as is",
        "edit": "edit the waiting reply",
        "replace": "reply instead of the system",
        "gate": "gate session/system/study",
        "success": "mark the task a success",
        "fail": "mark the task a failure",
        "end": "end the session (a reason)",
        "pause": "pause / resume",
        "note": "note on the marked turn",
        "turn(-1)": "mark the turn before",
        "turn(1)": "mark the turn after",
        "start": "start a held session",
        "next_waiting": "go to the oldest waiting",
        "filter": "filter study/system/state",
        "toggle_ended": "show / hide ended",
        "answer_as": "write as the task / voice notes / text",
        "stress": "judge stress-test replays",
        "annotation": "annotators' progress",
        "quit": "quit",
    }

    def action_stress(self) -> None:
        """Stress tests: judge the replays that need a person."""
        from wizard_console.stress_screen import StressJudgeScreen

        self.push_screen(StressJudgeScreen(self.desk.store, self.desk.wizard))

    def action_annotation(self) -> None:
        """The annotators' progress per job, over the sessions."""
        self.push_screen(AnnotationScreen(self.desk.store))


def run_console(db: Path, wizard: str) -> int:
    """``ozlab wizard``: the console until the wizard quits."""
    return asyncio.run(_console(db, wizard))


async def _console(db: Path, wizard: str) -> int:
    # Opened before Textual starts: a database that cannot be used is told by the CLI.
    async with await Desk.open(db, wizard) as desk:
        await WizardApp(desk).run_async()
    return 0
