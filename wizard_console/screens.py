"""The console's dialogs: a text prompt, the help screen, the gate chooser and the filters.
Each is a small modal screen that answers with ``dismiss``; Escape always cancels."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import ClassVar

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Grid, Vertical
from textual.screen import ModalScreen
from textual.widgets import Input, Label, Select, Static, TextArea

from bot.desk.formatting import LEGEND


class PromptScreen(ModalScreen[str | None]):
    """Ask for one text: Enter sends it; with ``multiline`` (editing a reply that has
    several paragraphs) Enter is a new line and Ctrl+S sends. The title may quote a
    participant: it is shown as text, never as markup."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "cancel", "Cancel"),
        Binding("ctrl+s", "send", "Send", show=False),
    ]

    def __init__(self, title: str, value: str = "", *, multiline: bool = False) -> None:
        super().__init__()
        self.title_text = title
        self.value = value
        self.multiline = multiline

    def compose(self) -> ComposeResult:
        with Vertical(id="dialog"):
            yield Label(self.title_text, id="prompt-title", markup=False)
            if self.multiline:
                yield TextArea(self.value, id="prompt-text", soft_wrap=True)
                yield Label("Ctrl+S: send · Esc: cancel", classes="hint")
            else:
                yield Input(self.value, id="prompt-input", select_on_focus=False)
                yield Label("Enter: send · Esc: cancel", classes="hint")

    @on(Input.Submitted)
    def submitted(self, event: Input.Submitted) -> None:
        self.dismiss(event.value)

    def action_send(self) -> None:
        if self.multiline:
            self.dismiss(self.query_one(TextArea).text)
        else:
            self.dismiss(self.query_one(Input).value)

    def action_cancel(self) -> None:
        self.dismiss(None)


class HelpScreen(ModalScreen[None]):
    """Every key of the console, taken from its bindings so the list never goes stale."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "close", "Close"),
        Binding("question_mark", "close", "Close", show=False),
        Binding("q", "close", "Close", show=False),
    ]

    def __init__(self, keys: Sequence[tuple[str, str]]) -> None:
        super().__init__()
        self.keys = keys

    def compose(self) -> ComposeResult:
        with Vertical(id="help"):
            yield Label("Keys of the wizard console", id="help-title")
            with Grid(id="help-keys"):
                for key, description in self.keys:
                    yield Static(Text.assemble((f"{key:>6}", "bold"), f"  {description}"))
            yield Static(f"Alerts: {LEGEND}", id="help-legend")
            yield Label("Esc, ? or q: close", classes="hint")

    def action_close(self) -> None:
        self.dismiss(None)


class GateScreen(ModalScreen[str | None]):
    """Choose what to gate or ungate: the session, its system, or the whole study."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("1", "pick(0)", "Session"),
        Binding("2", "pick(1)", "System"),
        Binding("3", "pick(2)", "Study"),
        Binding("escape", "cancel", "Cancel"),
    ]

    def __init__(self, scopes: Sequence[tuple[str, bool]]) -> None:
        super().__init__()
        self.scopes = scopes

    def compose(self) -> ComposeResult:
        with Vertical(id="dialog"):
            yield Label("Gate: every system reply waits for a wizard", id="prompt-title")
            for number, (scope, gated) in enumerate(self.scopes, start=1):
                state = "gated → ungate" if gated else "open → gate"
                yield Static(Text.assemble((str(number), "bold"), f"  {scope}  ({state})"))
            yield Label("1, 2 or 3: choose · Esc: cancel", classes="hint")

    def action_pick(self, index: int) -> None:
        if index < len(self.scopes):
            self.dismiss(self.scopes[index][0])

    def action_cancel(self) -> None:
        self.dismiss(None)


@dataclass(frozen=True)
class Filters:
    """What the sessions table shows; None means any."""

    study: str | None = None
    system: str | None = None
    state: str | None = None

    def describe(self) -> str:
        chosen = [f"{k}={v}" for k, v in vars(self).items() if v is not None]
        return " ".join(chosen) or "all"


class FilterScreen(ModalScreen[Filters | None]):
    """Filter by study, system and state; Enter on a list picks, Ctrl+S applies."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "cancel", "Cancel"),
        Binding("ctrl+s", "apply", "Apply"),
        Binding("ctrl+r", "reset", "Reset"),
    ]

    def __init__(self, current: Filters, choices: Mapping[str, Iterable[str]]) -> None:
        super().__init__()
        self.current = current
        self.choices = choices

    def compose(self) -> ComposeResult:
        with Vertical(id="dialog"):
            yield Label("Show only sessions of", id="prompt-title")
            for name in ("study", "system", "state"):
                value = getattr(self.current, name)
                options = sorted(set(self.choices.get(name, ())) | ({value} - {None}))
                yield Select(
                    [(option, option) for option in options],
                    prompt=f"any {name}",
                    value=value if value is not None else Select.NULL,
                    id=f"filter-{name}",
                )
            yield Label("Tab: next · Enter: open a list · Ctrl+S: apply · Esc", classes="hint")

    def chosen(self) -> Filters:
        values = {}
        for name in ("study", "system", "state"):
            value = self.query_one(f"#filter-{name}", Select).value
            values[name] = None if value is Select.NULL else str(value)
        return Filters(**values)

    def action_apply(self) -> None:
        self.dismiss(self.chosen())

    def action_reset(self) -> None:
        self.dismiss(Filters())

    def action_cancel(self) -> None:
        self.dismiss(None)
