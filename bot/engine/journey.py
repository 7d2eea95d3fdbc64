"""A participant's place in a study: the whole state the engine needs, nothing more.

The state is a frozen dataclass that round-trips through JSON, so the bot can commit it
beside the rows it produces and rebuild every participant after a restart.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field, fields
from typing import Any, NamedTuple

from bot.core.conversation import Turn
from bot.core.participants import HeldReply, ParticipantStatus
from bot.core.vocabulary import Moment, Stage
from bot.engine.asking import Survey
from bot.engine.effects import Until

__all__ = ["Journey", "Keyboard", "Sides", "Stage", "Task", "Waiting"]


@dataclass(frozen=True)
class Task:
    scenario_id: str
    system_id: str
    partner: str | None = None
    """A side-by-side task's second system, chosen with the design (``bot.engine.arena``)."""


class Keyboard(NamedTuple):
    """A message of the chat whose buttons still mean something, until ``until``.

    ``data``: what its buttons carry, the only taps it can bring (``None``: a keyboard kept
    by an ozlab from before taps were tied to their messages, whose taps the phase judges).
    ``resent``: sent again after a restart, so an earlier copy may show the same buttons."""

    until: Until
    message_id: int
    data: tuple[str, ...] | None = None
    resent: bool = False

    @classmethod
    def from_list(cls, stored: list[Any]) -> Keyboard:
        until, message_id, *rest = stored
        shown = rest[0] if rest else None
        resent = bool(rest[1]) if len(rest) > 1 else False
        return cls(Until(until), message_id, None if shown is None else tuple(shown), resent)


@dataclass(frozen=True)
class Waiting:
    """A system reply held for a wizard to send as is, edit or replace (empty for a system
    of type wizard, which has no program behind it)."""

    texts: tuple[str, ...]
    events: tuple[str, ...]
    latency_ms: float
    since: float
    auto_send_at: float | None = None
    event_data: Mapping[str, Mapping[str, object]] = field(default_factory=dict)


@dataclass(frozen=True)
class Sides:
    """A side-by-side task: the systems shown as A and B (A first), each one's own history
    of the conversation, and the turn whose vote is open (``flagged``: one of its replies
    named its own system)."""

    systems: tuple[str, ...]
    histories: tuple[tuple[Turn, ...], ...]
    ballot: int | None = None
    flagged: bool = False


@dataclass(frozen=True)
class Journey:
    participant: str
    stage: Stage
    started_at: float
    last_activity_at: float
    tasks: tuple[Task, ...] = ()
    design: str = ""
    seed: str = ""
    cell: str = ""  # the cell of the design they were assigned to, which a quota counts
    task_index: int = 0
    session_started_at: float = 0.0
    exchanges: int = 0  # successful exchanges in the current session, towards the limit
    turns: int = 0  # user turns logged in the current session, failed ones included
    history: tuple[Turn, ...] = ()
    pending_message: str | None = None  # logged, waiting for the system's reply
    pending_files: tuple[tuple[str, str, str], ...] = ()
    """The files the pending message came with, for the system: (kind, mime, content
    hash); their bytes are the runner's (a kept file's, the store's)."""
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
    keyboards: tuple[Keyboard, ...] = ()  # messages whose buttons go away later
    sides: Sides | None = None  # a side-by-side task's two systems
    platform_tag: str | None = None  # keyed hash of the recruitment platform id bound to them

    @property
    def task(self) -> Task:
        return self.tasks[self.task_index]

    @property
    def session_id(self) -> str:
        return f"{self.participant}-{self.task_index + 1}"

    @property
    def current_session(self) -> str | None:
        """The session the participant's doings belong to, if any."""
        if self.stage is Stage.QUESTIONNAIRE and self.survey is not None:
            return self.survey.session_id
        return self.session_id if self.tasks else None

    def status(self) -> ParticipantStatus:
        """The read model the console shows; written with every step."""
        task = self.task if self.tasks else None
        waiting = self.waiting
        return ParticipantStatus(
            stage=self.stage,
            last_activity_at=self.last_activity_at,
            session_id=self.session_id if task else None,
            scenario_id=task.scenario_id if task else None,
            system_id=task.system_id if task else None,
            session_started_at=self.session_started_at if self.session_started_at else None,
            exchanges=self.exchanges,
            turns=self.turns,
            pending_message=self.pending_message,
            held=None
            if waiting is None
            else HeldReply(waiting.texts, waiting.since, waiting.auto_send_at),
            paused=self.paused,
            gated=self.gated,
            gate_auto_send=self.gate_auto_send,
            reminded=self.reminded,
            abandoned=self.abandoned,
            cell=self.cell or None,
        )

    def touched(self, now: float) -> Journey:
        """The participant did something: they are not silent any more."""
        return self.evolve(last_activity_at=now, reminded=False, abandoned=False)

    def evolve(self, **changes: Any) -> Journey:
        """A copy with ``changes``, as ``dataclasses.replace`` makes it but without going
        through every field and ``__init__`` again: the engine makes a new journey several
        times an exchange, and ``replace`` was a tenth of the bot's time (bench/)."""
        unknown = changes.keys() - _FIELDS
        if unknown:
            raise TypeError(f"Journey has no field {', '.join(sorted(unknown))}")
        new = object.__new__(Journey)
        values = new.__dict__
        values.update(self.__dict__)  # the fields' order, which the JSON keeps
        values.update(changes)
        return new

    def to_json(self) -> str:
        # json's C encoder walks dicts, lists and tuples itself and asks ``vars`` only for
        # the dataclasses: ``asdict`` deep-copied every string, a sixth of the bot's time.
        # One encoder made once (``json.dumps`` makes one a call), one call per state, and
        # the history, which grows by one turn an exchange and is written with every step,
        # encoded once per turn: the same text as one ``json.dumps`` of the whole.
        if not self.history:
            return _ENCODER.encode(self)
        encoded = _ENCODER.encode({**vars(self), "history": 0})
        # Only the key can read ``"history":0`` unescaped: inside a string a quote is
        # ``\"``, and no field before the history holds a mapping of its own.
        before, _, after = encoded.partition('"history":0')
        history = _history_json(self.participant, self.history)
        return f'{before}"history":[{history}]{after}'

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
                "pending_files": tuple(
                    (kind, mime, digest) for kind, mime, digest in data.get("pending_files", ())
                ),
                "survey": _survey(data.get("survey")),
                "exchange_survey": _survey(data.get("exchange_survey")),
                "waiting": _waiting(data.get("waiting")),
                "keyboards": tuple(Keyboard.from_list(k) for k in data.get("keyboards", ())),
                "sides": _sides(data.get("sides")),
            }
        )


_ENCODER = json.JSONEncoder(default=vars, separators=(",", ":"), check_circular=False)
_FIELDS = frozenset(f.name for f in fields(Journey))
_HISTORIES: dict[str, tuple[tuple[Turn, ...], str]] = {}
"""participant -> the history last encoded for them and its JSON (the turns, no brackets)."""
_HISTORIES_KEPT = 4096


def _turn_json(turn: Turn) -> str:
    """One turn as the journey's JSON holds it."""
    return _ENCODER.encode(vars(turn))


def _history_json(participant: str, history: tuple[Turn, ...]) -> str:
    """The history's turns in JSON, from the text last encoded for this participant when
    the history is the same or that one with a turn more (an exchange's two steps)."""
    kept = _HISTORIES.pop(participant, None)
    if kept is not None and kept[0] is history:
        encoded = kept[1]
    elif kept is not None and len(history) == len(kept[0]) + 1 and history[:-1] == kept[0]:
        last = _turn_json(history[-1])
        encoded = f"{kept[1]},{last}" if kept[0] else last
    else:
        encoded = ",".join(map(_turn_json, history))
    if len(_HISTORIES) >= _HISTORIES_KEPT:
        del _HISTORIES[next(iter(_HISTORIES))]  # the longest unused
    _HISTORIES[participant] = (history, encoded)
    return encoded


def forget_encoded_turns() -> None:
    """Drop the turns kept encoded in memory: after an erasure nothing of what the person
    said stays in the process."""
    _HISTORIES.clear()


def _waiting(data: dict[str, Any] | None) -> Waiting | None:
    if data is None:
        return None
    return Waiting(**{**data, "texts": tuple(data["texts"]), "events": tuple(data["events"])})


def _sides(data: dict[str, Any] | None) -> Sides | None:
    if data is None:
        return None
    histories = tuple(tuple(Turn(**t) for t in h) for h in data["histories"])
    return Sides(**{**data, "systems": tuple(data["systems"]), "histories": histories})


_OLD_MOMENTS = {"stimulus": Moment.RATING}  # as snapshots before schema 6 named it


def _survey(data: dict[str, Any] | None) -> Survey | None:
    if data is None:
        return None
    moment = data.pop("purpose", None) or data.pop("moment")
    return Survey(
        **{
            **data,
            "moment": _OLD_MOMENTS.get(moment) or Moment(moment),
            "questionnaires": tuple(data["questionnaires"]),
            "order": tuple(data["order"]),
            "answers": tuple((item, value) for item, value in data["answers"]),
            "selected": tuple(data["selected"]),
        }
    )
