"""What the console shows, as plain frozen records: no SQL, no Textual.

The desk builds these from the store's read model; the screens and the plain commands
only format them.
"""

from __future__ import annotations

from dataclasses import dataclass

# Alerts, in the order the console lists them.
ERROR = "error"  # the system's last answer failed
WAITING = "waiting"  # a reply waits for a wizard (gated, or a wizard-type system)
SILENT = "silent"  # the participant has been quiet for longer than the study's reminder time
GATED = "gated"  # every system reply of this session waits for a wizard
PAUSED = "paused"
ALERTS = (ERROR, WAITING, SILENT, GATED, PAUSED)
FLAGS = {ERROR: "E", WAITING: "W", SILENT: "S", GATED: "G", PAUSED: "P"}
"""One letter per alert: the sessions table has no room for words at 80 columns."""

ENDED_STATES = frozenset({"ended", "closed", "declined", "ineligible"})
"""States in which nothing more will happen (hidden unless ended sessions are shown)."""


@dataclass(frozen=True)
class LiveSession:
    """One row of the sessions table: a participant's current (or, if shown, past) session."""

    session_id: str
    participant: str
    study: str
    scenario: str | None
    system: str | None
    state: str  # consent, assigning, held, dialogue, questionnaire, ended, closed, ...
    exchanges: int
    exchange_limit: int | None
    elapsed: float | None  # seconds since the session started (to its end, once ended)
    time_limit: float | None
    since_last_message: float | None  # seconds since the participant last did something
    alerts: tuple[str, ...] = ()
    error: str | None = None  # the system's last error, when the ERROR alert is on
    turn: int = 0  # the participant's latest turn in this session
    system_type: str | None = None  # demo, http, wizard, ...
    current: bool = True  # the participant's current session (commands can reach it)
    own_gate: bool = False  # the session's own gate (the bot's view: the participant's state)
    started_at: float | None = None  # while the session runs: elapsed can be redrawn later
    last_at: float | None = None  # while the participant is live: when they last did something

    @property
    def ended(self) -> bool:
        return self.state in ENDED_STATES

    @property
    def flags(self) -> str:
        return "".join(FLAGS[a] for a in self.alerts)


@dataclass(frozen=True)
class Line:
    """One line of a transcript. ``who`` says who produced it: participant, system, wizard
    (the wizard's own words as the system), edited (the system's reply edited by a wizard,
    ``original`` kept), error, note, end, or event (anything else worth seeing)."""

    at: float
    who: str
    text: str
    turn: int | None = None
    wizard: str | None = None
    original: str | None = None
    key: str = ""  # stable across polls: the console appends only lines it has not shown


@dataclass(frozen=True)
class WaitingReply:
    """A turn waiting for a wizard: the shared queue of full Wizard-of-Oz studies."""

    session_id: str
    participant: str
    system: str | None
    turn: int
    message: str  # what the participant wrote
    proposed: tuple[str, ...]  # the system's reply, empty for a wizard-type system
    since: float
    auto_send_at: float | None
