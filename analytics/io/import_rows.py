"""Checking one row of an import file against the study definition, and turning it into
the answer the bot would have stored for it (with its moment, and the system it rates)."""

from __future__ import annotations

import csv
import io
import math
import re
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from analytics.data.loading import NO_SYSTEM, SEVERAL_SYSTEMS
from bot.annotation.invitations import PSEUDONYM_FORM
from bot.core.storable_text import storable
from bot.core.vocabulary import AnswerStatus, Moment
from bot.store.erasure import ledger_digest
from bot.store.interface import OperatorTasks
from bot.store.model import ImportedAnswer
from questionnaires.models import MultiChoiceItem, RankingItem, SliderItem, TextItem
from scenarios.models import StudyBundle

STATUSES = tuple(status.value for status in AnswerStatus)
"""What the bot stores; only ``answered`` rows carry an answer."""
_NO_SYSTEM = ("", NO_SYSTEM, SEVERAL_SYSTEMS)
IMPORTED_SCOPE = "import:{system}|{scope}"
"""The uniqueness key of an imported answer (written, never parsed back: the system it
rates and its origin have columns of their own)."""


_PSEUDONYM = re.compile(rf"^(?:(?=.*[0-9])[A-Za-z0-9][A-Za-z0-9._:-]{{0,63}}|{PSEUDONYM_FORM})$")


def not_a_pseudonym(role: str, person: str, example: str) -> str | None:
    """Why ``person`` may not name someone in an imported file, or None: a code with at least
    one digit (P017, A1), which no name is, or an annotator's pseudonym as ozlab makes them
    (A-FSGZ, which may have none)."""
    if _PSEUDONYM.match(person):
        return None
    return (
        f"{role} {person!r} does not look like a pseudonym: use a code such as {example} "
        "(letters, digits and . _ : -, with at least one digit), never a name"
    )


def csv_file(raw: bytes, aliases: Mapping[str, str] | None = None) -> csv.DictReader[str] | str:
    """An imported CSV file's rows, keyed by its header in lower case (``aliases`` renaming
    some names), or why it cannot be read: a file from a spreadsheet may start with a BOM.
    Rows end where the CSV says (CR, LF or CRLF outside quotes), never at a U+2028 or U+0085
    inside a cell."""
    try:
        text = storable(raw.decode("utf-8-sig"))  # a NUL becomes U+FFFD, as on every door
    except UnicodeDecodeError as error:
        return f"not UTF-8 text ({error})"
    reader = csv.DictReader(io.StringIO(text, newline=""))
    names = aliases or {}
    reader.fieldnames = [
        names.get(h.strip().lower(), h.strip().lower()) for h in reader.fieldnames or []
    ]
    return reader


async def erased(store: OperatorTasks) -> frozenset[str]:
    """The erasure ledger's digests: who may not come back through an import (the one
    authority, for pseudonyms of every kind, participants' and annotators' alike)."""
    return frozenset(line.digest for line in await store.erasure_ledger())


def kept_out(
    ledger: frozenset[str], row: Mapping[str, Any], person: str, session: str
) -> str | None:
    """Why a row may not come in, when it names someone erased: the pseudonym in column
    ``person``, or the owner of the session in column ``session`` (a session id is its
    participant's pseudonym and the task, ``P017-2``; an exchange adds ``#TURN``; an ACUTE
    pair is two, ``a~b``), has its digest in ``ledger`` (:func:`erased`)."""
    who = str(row.get(person) or "").strip()
    if who and ledger_digest(who) in ledger:
        return f"{who!r} was erased: the erasure ledger keeps them out of every import"
    for one in str(row.get(session) or "").strip().split("~"):
        owner = one.partition("#")[0].rpartition("-")[0]
        if owner and ledger_digest(owner) in ledger:
            return f"session {one!r} was erased with its participant: the ledger keeps it out"
    return None


@dataclass(frozen=True)
class Problem:
    line: int
    """The file's line where the row starts (1 is the header; 0: the file as a whole)."""
    message: str


class RowChecker:
    """Checks rows one by one; remembers what it noticed for the summary."""

    def __init__(
        self, bundle: StudyBundle, sessions: dict[str, tuple[str, str]], now: float
    ) -> None:
        self.bundle, self.sessions, self.now = bundle, sessions, now
        self.screening = set(bundle.study.screening)
        self.systems = {s.id for s in bundle.study.systems} | {s for _, s in sessions.values()}
        self.unknown_sessions = 0
        self.without_system = 0

    def notes(self) -> tuple[str, ...]:
        notes = []
        if self.unknown_sessions:
            notes.append(
                f"{self.unknown_sessions} answers name a session that is not in this database: "
                "they are kept with the system their row names, without a session."
            )
        if self.without_system:
            notes.append(
                f"{self.without_system} answers name no system: the report counts them under "
                "the participant's system if they have one, else under (no system)."
            )
        return tuple(notes)

    def check(
        self, record: dict[str, Any], line: int = 0
    ) -> tuple[list[str], ImportedAnswer | None]:
        """The problems of one row (from ``line`` of the file), or its answer."""

        def get(name: str) -> str:
            return (record.get(name) or "").strip()

        person, q_id, item_id = get("participant_id"), get("questionnaire_id"), get("item_id")
        problems = [f"{n} is empty" for n, v in (("participant_id", person),
                    ("questionnaire_id", q_id), ("item_id", item_id)) if not v]  # fmt: skip
        if problems:
            return problems, None
        questionnaire = self.bundle.questionnaires.get(q_id)
        if questionnaire is None:
            known = ", ".join(self.bundle.questionnaires)
            return [f"no questionnaire {q_id!r} in study {self.bundle.study.id!r} ({known})"], None
        item = next((i for i in questionnaire.answered_items() if i.id == item_id), None)
        if item is None:
            return [f"questionnaire {q_id!r} has no item {item_id!r}"], None
        status = get("status") or AnswerStatus.ANSWERED.value
        if status not in STATUSES:
            return [f"status {status!r} is not one of {', '.join(STATUSES)}"], None
        answer: tuple[Any, Any, Any, Any] = (None, None, None, None)
        if status == AnswerStatus.ANSWERED:
            answer, problem = checked_answer(item, get("value"), get("label"), get("text"))
            if problem:
                return [f"{item_id}: {problem}"], None
        elif get("value") or get("text"):
            return [f"a {status} row carries no answer, but value or text is given"], None
        where, problem = self._where(person, get("session_id"), get("system_id"), get("scope"))
        if problem:
            return [problem], None
        session_id, system, scope = where
        turn, problem = _whole(get("turn"), "turn")
        if problem:
            return [problem], None
        stimulus = get("stimulus_id") or None
        if not get("scope"):  # one answer per turn and per row rated, as the bot keys them
            scope += f"#turn{turn}" if turn is not None else ""
            scope += f"#{stimulus}" if stimulus is not None else ""
        (shown, answered), problem = self._times(get("shown_at"), get("answered_at"))
        if problem:
            return [problem], None
        value, label, text, ok = answer
        return [], ImportedAnswer(
            line=line,
            participant_id=person,
            questionnaire_id=q_id,
            item_id=item_id,
            status=AnswerStatus(status),
            moment=self._moment(q_id, session_id, turn, stimulus),
            scope=scope,
            shown_at=shown,
            answered_at=answered,
            session_id=session_id,
            system_id=system or None,
            value=value,
            label=label,
            text=text,
            turn=turn,
            stimulus_id=stimulus,
            attention_ok=None if ok is None else bool(ok),
        )

    def _moment(
        self, q_id: str, session: str | None, turn: int | None, stimulus: str | None
    ) -> Moment:
        """When the bot would have asked it (the rule migration 6 applied to old rows)."""
        if session is None and q_id in self.screening:
            return Moment.SCREENING
        if turn is not None:
            return Moment.EXCHANGE
        if stimulus is not None:
            return Moment.RATING
        return Moment.POST_TASK if session is not None else Moment.POST_STUDY

    def _where(
        self, person: str, session: str, system: str, scope: str
    ) -> tuple[tuple[str | None, str, str], str | None]:
        """The stored session id (only for sessions in this database), the system rated,
        and the answer's uniqueness key."""
        nowhere: tuple[str | None, str, str] = (None, "", "")
        system = "" if system in _NO_SYSTEM else system
        if "|" in system:
            return nowhere, f"system id {system!r} contains '|'"
        if system and system not in self.systems:
            known = ", ".join(sorted(self.systems))
            return nowhere, f"no system {system!r} in this study ({known})"
        stored = None
        if session in self.sessions:
            owner, session_system = self.sessions[session]
            if owner != person:
                return nowhere, f"session {session!r} belongs to another participant"
            if system and system != session_system:
                message = f"session {session!r} was with system {session_system!r}, not {system!r}"
                return nowhere, message
            stored, system = session, session_system
        elif session:
            self.unknown_sessions += 1
        if not system:
            self.without_system += 1
        key = IMPORTED_SCOPE.format(system=system, scope=scope or session or "form")
        if scope.startswith(IMPORTED_SCOPE.partition("{")[0]):
            key = scope  # an export of imported answers, imported again: the same key
        return (stored, system, key), None

    def _times(self, shown: str, answered: str) -> tuple[tuple[float, float], str | None]:
        """Unix seconds or ISO 8601; without a time, the import's (then shown = answered,
        which the report reads as "timing unknown")."""
        values: list[float | None] = []
        for name, raw in (("answered_at", answered), ("shown_at", shown)):
            if not raw:
                values.append(None)
                continue
            try:
                values.append(float(raw))
            except ValueError:
                try:
                    values.append(datetime.fromisoformat(raw.replace("Z", "+00:00")).timestamp())
                except ValueError:
                    return (0.0, 0.0), f"{name} {raw!r} is neither Unix seconds nor ISO 8601"
        answered_at = self.now if values[0] is None else values[0]
        shown_at = answered_at if values[1] is None else values[1]
        if shown_at > answered_at:
            return (0.0, 0.0), "shown_at is later than answered_at"
        return (shown_at, answered_at), None


def _whole(raw: str, name: str) -> tuple[int | None, str | None]:
    if not raw:
        return None, None
    try:
        number = float(raw)
    except ValueError:
        return None, f"{name} {raw!r} is not a number"
    if not math.isfinite(number) or not number.is_integer():
        return None, f"{name} {raw!r} is not a whole number"
    return int(number), None


def checked_answer(
    item: Any, value: str, label: str, text: str
) -> tuple[tuple[Any, ...], str | None]:
    """(value, label, text, attention_ok) as the bot stores them, or the problem."""
    if isinstance(item, TextItem):
        text = text or value
        if not text:
            return (), "a free-text item needs text (or status skipped)"
        if len(text) > item.max_length:
            return (), f"text longer than {item.max_length} characters"
        return (None, None, text, None), None
    if isinstance(item, SliderItem):  # any whole number, as one typed in the bot
        number, problem = _whole(value or label, "answer")
        if problem is not None or number is None:
            return (), problem or "no answer: give value (or status skipped)"
        if not item.min <= number <= item.max:
            return (), f"answer {number} is not on the slider ({item.min} to {item.max})"
        return (number, str(number), None, None), None
    options = item.choices()
    if isinstance(item, RankingItem):
        codes = [c.strip() for c in (text or value).split(",")]
        by_code = {str(v): lab for v, lab in options}
        if sorted(codes) != sorted(by_code):
            return (), f"a ranking's text orders every option once: {', '.join(by_code)}"
        return (None, "; ".join(by_code[c] for c in codes), ",".join(codes), None), None
    if isinstance(item, MultiChoiceItem):
        codes = [c.strip() for c in (text or value).split(",") if c.strip()]
        by_code = {str(v): lab for v, lab in options}
        wrong = [c for c in codes if c not in by_code]
        if not codes or wrong:
            listed = ", ".join(by_code)
            return (), f"options {', '.join(wrong) or '(none)'} are not among {listed}"
        return (None, "; ".join(by_code[c] for c in codes), ",".join(codes), None), None
    chosen = _option(options, value or text, label)
    if isinstance(chosen, str):
        return (), chosen
    stored, wording = chosen
    attention = getattr(item, "attention", None)
    ok = None if attention is None else int(stored == attention)
    if isinstance(stored, int):  # scales, yes/no, thumbs and numbered options
        return (stored, wording, None, ok), None
    return (None, wording, str(stored), ok), None  # options coded as words


def _option(options: list[tuple[Any, str]], value: str, label: str) -> tuple[Any, str] | str:
    """The option a value (or, without one, a label) names; a message when none does."""
    if value:
        key = value
        try:
            number = float(value)
            key = str(int(number)) if number.is_integer() else value
        except ValueError:
            pass
        match = next(((v, lab) for v, lab in options if str(v) == key), None)
        if match is None:
            points = ", ".join(str(v) for v, _ in options)
            return f"answer {value!r} is not on the scale ({points})"
        other = next((v for v, lab in options if lab.casefold() == label.casefold()), match[0])
        if label and other != match[0]:  # a label of another answer (translations pass)
            return f"value {value} is {match[1]!r}, but the label says {label!r}"
        return match
    if label:
        match = next(((v, lab) for v, lab in options if lab.casefold() == label.casefold()), None)
        if match is None:
            listed = "; ".join(lab for _, lab in options)
            return f"label {label!r} is not one of: {listed}"
        return match
    return "no answer: give value or label (or status skipped)"


def whole_number(raw: str, name: str, problems: list[str]) -> int | None:
    """A cell that may be empty (None) or hold a whole number from 0; anything else is a
    problem of ``name``'s."""
    if not raw:
        return None
    try:
        number = float(raw)
    except ValueError:
        number = math.nan
    if not math.isfinite(number) or not number.is_integer() or number < 0:
        problems.append(f"{name}: {raw!r} is not a whole number from 0")
        return None
    return int(number)


def moment(raw: str, name: str, problems: list[str]) -> float | None:
    """A cell that may be empty (None) or hold a time: Unix seconds, or ISO 8601 with its
    time zone (a time without one could be any of 26 hours)."""
    if not raw:
        return None
    try:
        return float(raw)
    except ValueError:
        pass
    try:
        at = datetime.fromisoformat(raw.replace("Z", "+00:00"))
    except ValueError:
        problems.append(f"{name}: {raw!r} is neither Unix seconds nor ISO 8601")
        return None
    if at.tzinfo is None:
        problems.append(f"{name}: {raw!r} has no time zone (write Z for UTC)")
        return None
    return at.timestamp()
