"""Synthetic studies written straight into a study database, for tests and benchmarks.

Rows are made in memory and loaded through the store in one transaction (``bulk_load``), so
that a benchmark database of 10,000 sessions and 1,000,000 responses takes seconds, not hours of
simulated chatting. The data are plausible rather than realistic: systems differ by a known
effect, later turns are rated lower, and a few participants straight-line, fail the attention
check, answer too fast or abandon, so that every part of the report has something to show.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from importlib.resources import files
from pathlib import Path
from typing import Any, Literal

import numpy as np
import yaml

from bot.core.errors import StudyDataError
from bot.core.vocabulary import Consent, Moment
from bot.store import open_store
from bot.store.blocking import run_blocking
from bot.store.definition import definition_json
from bot.store.model import BulkRows
from questionnaires.models import Questionnaire, ScaleItem
from scenarios.models import StudyBundle

_BASE_TIME = 1_750_000_000.0
_EFFECTS = (0.5, -0.3, 0.1, -0.1, 0.3)
"""Latent quality of each system in turn: the first is the best one."""
_SUCCESS = (0.75, 0.5, 0.65, 0.6, 0.7)
_SOURCES = ("system", "edited", "wizard")


@dataclass(frozen=True)
class SyntheticStudy:
    """What was written, for assertions and for the benchmark's note."""

    participants: int
    sessions: int
    exchanges: int
    responses: int
    events: int
    bundle: StudyBundle


def _scale(q: str, n: int, text: str, construct: str | None, **extra: Any) -> dict[str, Any]:
    labels = {1: "Strongly disagree", 2: "Disagree", 3: "Neutral", 4: "Agree", 5: "Strongly agree"}
    item = {"type": "scale", "id": f"{q}.q{n}", "text": text, "min": 1, "max": 5}
    return {**item, "labels": labels, "construct": construct, **extra}


def synthetic_bundle(
    systems: int = 2, design: Literal["between", "within"] = "between"
) -> StudyBundle:
    """A two-scenario study with the real IDIAL instrument after each task, a usability
    scale with a reverse item and an attention check, and ratings after every reply."""
    idial_file = files("questionnaires") / "library" / "idial.yaml"
    idial = Questionnaire.model_validate(yaml.safe_load(idial_file.read_text(encoding="utf-8")))
    post = {
        "id": "synthetic-post",
        "title": "About this task",
        "items": [
            _scale("synthetic-post", 1, "The assistant understood what I wanted.", "usability"),
            _scale(
                "synthetic-post", 2, "The assistant was hard to use.", "usability", reverse=True
            ),
            _scale("synthetic-post", 3, "I found what I was looking for.", "usability"),
            _scale(
                "synthetic-post", 4, "Please choose Agree for this statement.", None, attention=4
            ),
            _scale("synthetic-post", 5, "I would use the assistant again.", "usability"),
            {"type": "text", "id": "synthetic-post.comment", "text": "Any comments?"},
        ],
    }
    reply_texts = ("relevant", "clear", "confusing", "polite", "concise", "helpful")
    exchange = {
        "id": "synthetic-exchange",
        "title": "This reply",
        "items": [
            _scale(
                "synthetic-exchange",
                n,
                f"The reply was {word}.",
                "reply_quality",
                reverse=word == "confusing",
            )
            for n, word in enumerate(reply_texts, start=1)
        ],
    }
    scenario = {"brief": "Chat with the assistant.", "post_task": ["idial", "synthetic-post"]}
    return StudyBundle.model_validate(
        {
            "study": {
                "id": "synthetic",
                "title": "A synthetic study",
                "texts": {"welcome": "Hi", "consent": "Agree?", "declined": "Bye"},
                "systems": [
                    {"type": "demo", "id": f"system-{chr(97 + i)}"} for i in range(systems)
                ],
                "scenarios": ["find-gift", "book-table"],
                "design": {"type": "balanced", "systems": design},
            },
            "scenarios": {
                "find-gift": {
                    **scenario,
                    "id": "find-gift",
                    "title": "A gift",
                    "expected_duration": 300,
                    "max_exchanges": 20,
                    "exchange": ["synthetic-exchange"],
                },
                "book-table": {
                    **scenario,
                    "id": "book-table",
                    "title": "A table",
                    "max_exchanges": 20,
                },
            },
            "questionnaires": {
                "idial": idial,
                "synthetic-post": post,
                "synthetic-exchange": exchange,
            },
        }
    )


def create_study_database(db: Path | str) -> None:
    """An empty study database with the bot's schema (a file the bot could open)."""

    async def create() -> None:
        store = await open_store(db)
        await store.close()

    run_blocking(create)


def write_synthetic_study(
    db: Path | str,
    *,
    sessions: int,
    responses_per_session: int,
    seed: int,
    systems: int = 2,
    design: Literal["between", "within"] = "between",
    tasks_per_participant: int = 2,
) -> SyntheticStudy:
    """Write a study with exactly ``sessions`` sessions and ``responses_per_session`` answer
    rows per session (post-task items first, then ratings of replies, turn by turn)."""
    if not 1 <= systems <= len(_EFFECTS):
        raise StudyDataError(f"systems must be between 1 and {len(_EFFECTS)}")
    bundle = synthetic_bundle(systems, design)
    rows = _Rows(bundle, np.random.default_rng(seed), responses_per_session, design, systems)
    for index in range(sessions):
        rows.session(index // tasks_per_participant, index % tasks_per_participant)
    rows.outsiders(max(1, sessions // 50))
    run_blocking(lambda: rows.load(db))
    return SyntheticStudy(
        participants=len(rows.participants),
        sessions=len(rows.sessions),
        exchanges=len(rows.exchanges),
        responses=len(rows.responses),
        events=len(rows.events),
        bundle=bundle,
    )


class _Rows:
    """Rows of every table, made one session at a time."""

    def __init__(
        self, bundle: StudyBundle, rng: np.random.Generator, per_session: int, design: str, k: int
    ) -> None:
        self.bundle, self.rng, self.per_session, self.design, self.k = (
            bundle,
            rng,
            per_session,
            design,
            k,
        )
        self.systems = [s.id for s in bundle.study.systems]
        self.post = [
            (q_id, item)
            for q_id in ("idial", "synthetic-post")
            for item in bundle.questionnaire(q_id).items
        ]
        self.rated = bundle.questionnaire("synthetic-exchange").items
        self.participants: list[tuple[Any, ...]] = []
        self.sessions: list[tuple[Any, ...]] = []
        self.exchanges: list[tuple[Any, ...]] = []
        self.responses: list[tuple[Any, ...]] = []
        self.events: list[tuple[Any, ...]] = []
        self.trait: dict[int, tuple[float, str]] = {}

    def _participant(self, p: int) -> tuple[float, str]:
        if p not in self.trait:
            habit = self.rng.choice(
                ["ok", "straight", "inattentive", "fast"], p=[0.9, 0.03, 0.04, 0.03]
            )
            self.trait[p] = (float(self.rng.normal(0, 0.6)), str(habit))
            at = _BASE_TIME + p * 900
            self.participants.append((f"p{p:06d}", "synthetic", "accepted", at, at))
        return self.trait[p]

    def outsiders(self, n: int) -> None:
        """Participants who declined consent or were screened out: no sessions."""
        for i in range(n):
            pid, at = f"x{i:06d}", _BASE_TIME + i * 60
            consent = Consent.DECLINED if i % 2 else Consent.ACCEPTED
            self.participants.append((pid, "synthetic", consent.value, at, at))
            if consent is Consent.ACCEPTED:
                self.events.append((at, pid, None, "not_eligible", "{}"))

    def session(self, p: int, task: int) -> None:
        trait, habit = self._participant(p)
        pid, rng = f"p{p:06d}", self.rng
        system_index = (p + task) % self.k if self.design == "within" else p % self.k
        system, effect = self.systems[system_index], _EFFECTS[system_index]
        scenario = ("find-gift", "book-table")[task % 2]
        sid = f"{pid}-t{task}"
        start = _BASE_TIME + p * 900 + task * 400
        need_turns = math.ceil(max(0, self.per_session - len(self.post)) / len(self.rated))
        turns = max(int(rng.integers(3, 11)), need_turns)
        success = bool(rng.random() < _SUCCESS[system_index])
        reason = "success" if success else str(rng.choice(["exchange_limit", "participant_done"]))
        abandoned = bool(rng.random() < 0.05)
        end = start + turns * 25.0 + float(rng.normal(0, 20))
        state = "abandoned" if abandoned else "ended"
        self.sessions.append(
            (sid, pid, "synthetic", scenario, system, task, "balanced", f"{p}:{task}", state,
             start, end, reason, int(success), None)
        )  # fmt: skip
        failures = rng.random(turns) < 0.02
        sources = rng.choice(3, size=turns, p=[0.95, 0.03, 0.02])
        for turn in range(1, turns + 1):
            at, failed = start + turn * 25.0, bool(failures[turn - 1])
            reply = None if failed else f"reply {turn}"
            error = "timeout" if failed else None
            source = None if failed else _SOURCES[sources[turn - 1]]
            self.exchanges.append(
                (sid, turn, f"message {turn}", at, reply, at + 1.5, 1500.0, error, source)
            )
        if abandoned:
            self.events.append((end + 3600, pid, sid, "abandoned", "{}"))
        elif task == 0:
            self.events.append((end + 60, pid, None, "study_completed", "{}"))
        # Drawn for the whole session at once: one numpy call instead of one per answer.
        draws = iter(
            zip(
                rng.normal(0, 0.7, self.per_session).tolist(),
                rng.uniform(2.5, 9.0, self.per_session).tolist(),
                rng.random(self.per_session).tolist(),
                strict=True,
            )
        )
        n_post = min(self.per_session, len(self.post))
        for i, (q_id, item) in enumerate(self.post[:n_post]):
            shown = end + 6.0 * i
            lost = abandoned and i > len(self.post) // 2
            answer = (pid, sid, sid, q_id, item, trait + effect, habit, shown, None, next(draws))
            self._answer(*answer, lost=lost)
        left = self.per_session - n_post
        for turn in range(1, turns + 1):
            scope = f"{sid}#turn{turn}"
            shown = start + turn * 25.0 + 2.0
            quality = trait + effect - 0.08 * turn * (system_index % 2)
            for item in self.rated[: min(left, len(self.rated))]:
                q_id = "synthetic-exchange"
                self._answer(pid, sid, scope, q_id, item, quality, habit, shown, turn, next(draws))
            left -= min(left, len(self.rated))

    def _answer(
        self,
        pid: str,
        sid: str,
        scope: str,
        q_id: str,
        item: Any,
        quality: float,
        habit: str,
        shown: float,
        turn: int | None,
        draw: tuple[float, float, float],
        lost: bool = False,
    ) -> None:
        noise, took, coin = draw
        took = 0.3 if habit == "fast" else took
        value: int | None = None
        text = label = None
        status = "missing" if lost else "answered"
        ok = None
        if lost:
            pass
        elif isinstance(item, ScaleItem):
            middle, spread = (item.min + item.max) / 2, (item.max - item.min) / 3
            value = round(middle + spread * (quality + noise))
            value = min(item.max, max(item.min, value))
            if item.reverse:
                value = item.min + item.max - value
            if habit == "straight":
                value = item.max
            if item.attention is not None:
                value = item.attention if habit != "inattentive" else item.min
                ok = int(value == item.attention)
            label = item.labels[value]
        elif coin < 0.3:
            text = ("Nice.", "Too slow.", "It did not understand me.", "Great")[int(coin * 13) % 4]
        else:
            status = "skipped"
        moment = Moment.POST_TASK if turn is None else Moment.EXCHANGE
        self.responses.append(
            (pid, sid, scope, q_id, item.id, value, label, text, status, shown, shown + took,
             turn, None, ok, moment.value)
        )  # fmt: skip

    async def load(self, db: Path | str) -> None:
        """Everything in one transaction; durability does not matter for made-up data."""
        store = await open_store(db, lambda: _BASE_TIME, synchronous="OFF")
        try:
            await store.bulk_load(
                BulkRows(
                    participants=self.participants,
                    sessions=self.sessions,
                    exchanges=self.exchanges,
                    responses=self.responses,
                    events=self.events,
                )
            )
            await store.record_definition("synthetic", definition_json(self.bundle))
        finally:
            await store.close()
