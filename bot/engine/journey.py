"""A participant's place in a study: the whole state the engine needs, nothing more.

The state is a frozen dataclass that round-trips through JSON, so the bot can commit it
beside the rows it produces and rebuild every participant after a restart.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, replace
from enum import StrEnum

from bot.engine.asking import Survey
from bot.systems.base import Turn


class Stage(StrEnum):
    CONSENT = "consent"  # the agreement is shown, no answer yet
    DECLINED = "declined"
    ASSIGNING = "assigning"  # consent given, waiting for the design's assignment
    DIALOGUE = "dialogue"
    QUESTIONNAIRE = "questionnaire"
    FINISHED = "finished"
    INELIGIBLE = "ineligible"  # screened out: thanked and released
    CLOSED = "closed"  # abandoned, and the study closes abandoned sessions
    HELD = "held"  # assigned, waiting for an experimenter to start the session (lab studies)


@dataclass(frozen=True)
class Task:
    scenario_id: str
    system_id: str


@dataclass(frozen=True)
class Waiting:
    """A system reply held for a wizard to send as is, edit or replace (empty for a system
    of type wizard, which has no program behind it)."""

    texts: tuple[str, ...]
    events: tuple[str, ...]
    latency_ms: float
    since: float
    auto_send_at: float | None = None


@dataclass(frozen=True)
class Journey:
    participant: str
    stage: Stage
    started_at: float
    last_activity_at: float
    tasks: tuple[Task, ...] = ()
    design: str = ""
    seed: str = ""
    task_index: int = 0
    session_started_at: float = 0.0
    exchanges: int = 0  # successful exchanges in the current session, towards the limit
    turns: int = 0  # user turns logged in the current session, failed ones included
    history: tuple[Turn, ...] = ()
    pending_message: str | None = None  # logged, waiting for the system's reply
    offered: tuple[tuple[str, str], ...] = ()  # (title, payload) buttons of the last reply
    survey: Survey | None = None  # the questionnaire in front of the participant
    exchange_survey: Survey | None = None  # rating the last system reply, beside the chat
    stimulus_index: int = 0  # rating tasks: the row being rated
    asked: int = 0  # increases with every item shown: buttons carry it to detect old taps
    language: str | None = None  # Telegram's language code, for translated texts
    gated: bool = False  # a wizard decides every system reply of this session
    gate_auto_send: float | None = None  # ...or the reply goes out by itself after this long
    waiting: Waiting | None = None
    paused: bool = False
    reminded: bool = False
    abandoned: bool = False

    @property
    def task(self) -> Task:
        return self.tasks[self.task_index]

    @property
    def session_id(self) -> str:
        return f"{self.participant}-{self.task_index + 1}"

    def touched(self, now: float) -> Journey:
        """The participant did something: they are not silent any more."""
        return replace(self, last_activity_at=now, reminded=False, abandoned=False)

    def to_json(self) -> str:
        # json's C encoder walks dicts, lists and tuples itself and asks ``vars`` only for
        # the dataclasses: ``asdict`` deep-copied every string, a sixth of the bot's time.
        return json.dumps(self, default=vars, separators=(",", ":"))

    @classmethod
    def from_json(cls, raw: str) -> Journey:
        data = json.loads(raw)
        return cls(
            **{
                **data,
                "stage": Stage(data["stage"]),
                "tasks": tuple(Task(**t) for t in data["tasks"]),
                "history": tuple(Turn(**t) for t in data["history"]),
                "offered": tuple((title, payload) for title, payload in data.get("offered", ())),
                "survey": _survey(data.get("survey")),
                "exchange_survey": _survey(data.get("exchange_survey")),
                "waiting": _waiting(data.get("waiting")),
            }
        )


def _waiting(data: dict | None) -> Waiting | None:
    if data is None:
        return None
    return Waiting(**{**data, "texts": tuple(data["texts"]), "events": tuple(data["events"])})


def _survey(data: dict | None) -> Survey | None:
    if data is None:
        return None
    return Survey(
        **{
            **data,
            "questionnaires": tuple(data["questionnaires"]),
            "order": tuple(data["order"]),
            "answers": tuple((item, value) for item, value in data["answers"]),
            "selected": tuple(data["selected"]),
        }
    )
