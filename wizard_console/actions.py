"""What the wizard's keys do: each action checks it makes sense for the selected session,
asks for what it needs (a text, a reason, a gate), and appends one command for the bot."""

from __future__ import annotations

import time
from typing import Any

from textual import work
from textual.binding import Binding

from bot.core.errors import OzlabError
from bot.core.visible_text import visible
from bot.core.vocabulary import GateScope
from bot.desk.model import PAUSED, LiveSession, WaitingReply
from wizard_console.console import Console
from wizard_console.screens import Filters, FilterScreen, GateScreen, HelpScreen, PromptScreen

ANSWERS_AS: dict[str | None, str] = {
    None: "as the task sends replies",
    "voice": "as a voice note",
    "text": "as text",
}
"""How the wizard's words may go, in the order a key cycles through them."""


class Actions(Console):
    """The ``action_*`` methods of the console (:class:`~wizard_console.app.WizardApp`
    binds them to keys)."""

    # --- helpers -------------------------------------------------------------------------

    def _session(self) -> LiveSession | None:
        session = self.current()
        if session is None:
            self.say("select a session first (arrow keys)", error=True)
        return session

    def _waiting(self, *, proposal: bool = False) -> tuple[LiveSession, WaitingReply] | None:
        session = self._session()
        if session is None:
            return None
        waiting = self.waiting.get(session.session_id)
        if waiting is None:
            self.say("no reply is waiting in this session (j: the oldest waiting)", error=True)
            return None
        if proposal and not waiting.proposed:
            self.say("the system proposed nothing (wizard-type): r writes the reply", error=True)
            return None
        return session, waiting

    def send(self, label: str, kind: str, session_id: str | None, **payload: Any) -> None:
        self._issue(label, kind, session_id, payload)

    def _words(self, label: str, kind: str, session_id: str, **payload: Any) -> None:
        """The wizard's words, sent as a voice note or as text where they chose."""
        if self.answer_as is not None:
            payload["as"] = self.answer_as
            label = f"{label} {ANSWERS_AS[self.answer_as]}"
        self.send(label, kind, session_id, **payload)

    @work(group="commands")
    async def _issue(
        self, label: str, kind: str, session_id: str | None, payload: dict[str, Any]
    ) -> None:
        try:
            command_id = await self.desk.command(kind, session_id, **payload)
        except OzlabError as error:
            self.say(f"{label}: not sent: {error}", error=True)
            return
        self.pending[command_id] = (label, time.monotonic())
        self.say(f"{label}: sent (#{command_id}), waiting for the bot to apply it")
        self.wake()

    def _ask(self, title: str, then: Any, value: str = "", *, multiline: bool = False) -> None:
        """Ask for a text; ``then(text)`` runs only for a non-empty answer."""

        def answered(text: str | None) -> None:
            if text is not None and text.strip():
                then(text.strip())

        self.push_screen(PromptScreen(title, value, multiline=multiline), answered)

    # --- speaking and replies ------------------------------------------------------------

    def action_say(self) -> None:
        if (s := self._session()) is not None:
            sid = s.session_id
            self._ask(
                f"Write to {sid} as the system",
                lambda text: self._words("say", "say", sid, text=text),
            )

    def action_approve(self) -> None:
        if (found := self._waiting(proposal=True)) is not None:
            sid = found[0].session_id
            self.send("send as is", "reply", sid, action="approve")

    def action_edit(self) -> None:
        if (found := self._waiting(proposal=True)) is not None:
            # The wizard edits what they see: a control character as its escape.
            proposed = "\n\n".join(visible(text, lines=True) for text in found[1].proposed)
            sid = found[0].session_id
            self._ask(
                f"Edit the system's reply to turn {found[1].turn} of {sid}",
                lambda text: self._words("edited reply", "reply", sid, action="edit", text=text),
                proposed,
                multiline=True,
            )

    def action_replace(self) -> None:
        if (found := self._waiting()) is not None:
            sid = found[0].session_id
            self._ask(
                f"Reply to {sid} instead of the system: {visible(found[1].message)[:40]}",
                lambda text: self._words("reply", "reply", sid, action="replace", text=text),
            )

    def action_answer_as(self) -> None:
        """The wizard's words from now on: as the task sends replies, as voice notes, as
        text, and round again."""
        order = list(ANSWERS_AS)
        self.answer_as = order[(order.index(self.answer_as) + 1) % len(order)]
        self.say(f"what you write goes {ANSWERS_AS[self.answer_as]}")

    def action_next_waiting(self) -> None:
        oldest = sorted(self.waiting.values(), key=lambda w: w.since)
        for waiting in oldest:
            if self.table.select(waiting.session_id):
                return
        self.say("no reply is waiting" if not oldest else "the waiting ones are filtered out")

    # --- gates -----------------------------------------------------------------------------

    def action_gate(self) -> None:
        if (s := self._session()) is None:
            return
        scopes = [f"session:{s.session_id}", f"system:{s.system}", f"study:{s.study}"]
        states = [(scope, self._gated(scope)) for scope in scopes if s.system or "session" in scope]

        def chosen(scope: str | None) -> None:
            if scope is None:
                return
            if self._gated(scope):
                self._gate(scope, False, None)
                return

            def seconds(text: str | None) -> None:
                if text is not None:
                    self._gate(scope, True, text)

            self.push_screen(
                PromptScreen(
                    f"Gate {scope}: send by itself after how many seconds? (empty: never)"
                ),
                seconds,
            )

        self.push_screen(GateScreen(states), chosen)

    def _gated(self, scope: str) -> bool:
        """As the bot sees it: a session's gate lives in the participant's state."""
        session = self.current()
        if scope.startswith("session:") and session is not None:
            return session.own_gate
        gate = self.gate_states.get(GateScope.parse(scope))
        return gate is not None and gate.gated

    def _gate(self, scope: str, on: bool, seconds: str | None) -> None:
        auto = None
        if seconds and seconds.strip():
            try:
                auto = float(seconds)
            except ValueError:
                self.say(f"{seconds!r} is not a number of seconds", error=True)
                return
        label = f"{'gate' if on else 'ungate'} {scope}"
        kind, _, target = scope.partition(":")
        if kind == "session":
            self.send(label, "gate", target, on=on, auto_send_after=auto)
        else:
            self.send(label, "gate", None, scope=scope, on=on, auto_send_after=auto)

    # --- the session ---------------------------------------------------------------------

    def action_success(self) -> None:
        if (s := self._session()) is not None:
            self.send("success", "success", s.session_id)

    def action_fail(self) -> None:
        if (s := self._session()) is not None:
            self.send("failure", "fail", s.session_id)

    def action_end(self) -> None:
        if (s := self._session()) is not None:
            sid = s.session_id
            self._ask(
                f"End {sid} (closing line, then the questionnaire): the reason",
                lambda reason: self.send("end", "end", sid, reason=reason),
            )

    def action_pause(self) -> None:
        if (s := self._session()) is not None:
            kind = "resume" if PAUSED in s.alerts else "pause"
            self.send(kind, kind, s.session_id)

    def action_start(self) -> None:
        if (s := self._session()) is None:
            return
        if s.state != "held":
            self.say("only a held session (lab studies) can be started", error=True)
            return
        self.send("start", "start", s.session_id)

    def action_note(self) -> None:
        if (s := self._session()) is not None:
            sid, turn = s.session_id, self.turn if self.turn is not None else s.turn
            self._ask(
                f"Note on turn {turn} of {sid}",
                lambda text: self.send("note", "note", sid, turn=turn, text=text),
            )

    def action_turn(self, step: int) -> None:
        turns = sorted({line.turn for line in self.lines if line.turn is not None})
        if (s := self.current()) is None or not turns:
            return
        now = self.turn if self.turn is not None else s.turn
        index = min(range(len(turns)), key=lambda i: abs(turns[i] - now))
        self.turn = turns[max(0, min(len(turns) - 1, index + step))]
        self._show_transcript()

    # --- what is shown ---------------------------------------------------------------------

    def action_toggle_ended(self) -> None:
        self.show_ended = not self.show_ended
        self.say(f"ended sessions {'shown' if self.show_ended else 'hidden'}")

    def action_filter(self) -> None:
        choices = {
            "study": {s.study for s in self.sessions},
            "system": {s.system for s in self.sessions if s.system},
            "state": {s.state for s in self.sessions},
        }

        def chosen(filters: Filters | None) -> None:
            if filters is not None:
                self.filters = filters

        self.push_screen(FilterScreen(self.filters, choices), chosen)

    def action_help(self) -> None:
        keys = [
            (b.key_display or b.key, self.KEY_HELP.get(b.action, b.description))
            for b in self.BINDINGS
            if isinstance(b, Binding)
        ]
        keys.append(("↑ ↓", "choose a session"))
        self.push_screen(HelpScreen(keys))
