"""A small study written through the store as the bot writes it, with every kind of item
the report must state and compare correctly: 7-point agreement items (one reverse-worded,
one nobody varies), a 0–4 frequency item, a two-item construct, a yes/no item, a choice
item and two free-text questions; exchanges that fail with errors and timeouts, replies a
wizard wrote or edited, a system that went down twice, and tasks judged by success_if.

The yes/no answers are Fisher's (1962) twins of criminals, the example of R's
``fisher.test`` (its matrix transposed, which changes neither p nor the odds ratio):
"alpha" 2 yes / 10 no, "beta" 15 yes / 3 no; R gives p-value = 0.0005367 and the
conditional MLE odds ratio 0.04693661.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from bot.core.vocabulary import AnswerStatus, Consent, EndReason, EventKind, Moment, ReplySource
from bot.core.vocabulary import SessionState as State
from bot.engine import effects as fx
from bot.store.definition import definition_json
from bot.store.model import StepCommit
from bot.store.sqlite import open_store
from scenarios.models import StudyBundle

AGREE = {
    1: "Strongly disagree", 2: "Disagree", 3: "Somewhat disagree", 4: "Neither agree nor disagree",
    5: "Somewhat agree", 6: "Agree", 7: "Strongly agree",
}  # fmt: skip
OFTEN = {0: "Never", 1: "Rarely", 2: "Sometimes", 3: "Often", 4: "Always"}
PEOPLE = {"alpha": 12, "beta": 18, "gamma": 10}
YES = {"alpha": 2, "beta": 15, "gamma": 5}
BEST = {"alpha": (6, 4, 2), "beta": (3, 9, 6), "gamma": (4, 3, 3)}  # speed, accuracy, tone
COMMENTS = {
    "alpha": [(0, "comment", "Quick and clear."), (3, "missing", "A way to undo an order.")],
    "beta": [(1, "comment", "It kept failing."), (2, "comment", "Slow at times."),
             (5, "missing", "Prices in euros.")],
    "gamma": [(0, "comment", "Fine.")],
}  # fmt: skip
OPTIONS = {"speed": "Its speed", "accuracy": "Its accuracy", "tone": "Its tone"}
HTTP_503 = "SystemFailure: http://beta.example/chat answered HTTP 503 Service Unavailable"
TIMEOUT = "no reply within 10 s"


def _scale(item_id: str, text: str, construct: str | None, labels: dict, **extra) -> dict:
    low, high = min(labels), max(labels)
    return {"type": "scale", "id": item_id, "text": text, "min": low, "max": high,
            "labels": labels, "construct": construct, **extra}  # fmt: skip


def report_bundle(systems: tuple[str, ...] = ("alpha", "beta")) -> StudyBundle:
    items = [
        _scale("post.ease1", "The assistant was easy to talk to.", "ease", AGREE),
        _scale("post.ease2", "I had to repeat myself a lot.", "ease", AGREE, reverse=True),
        _scale("post.ease3", "The assistant understood my order.", "ease", AGREE),
        _scale("post.steady", "The assistant answered in English.", "ease", AGREE),
        _scale("post.freq", "How often did the assistant misunderstand you?", None, OFTEN),
        _scale("post.trust1", "I trust the order is right.", "trust", AGREE),
        _scale("post.trust2", "I would pay with this assistant.", "trust", AGREE),
        {"type": "yes_no", "id": "post.again", "text": "Would you use it again?"},
        {"type": "choice", "id": "post.best", "text": "What was best about it?",
         "options": [{"value": v, "label": label} for v, label in OPTIONS.items()]},
        {"type": "text", "id": "post.comment", "text": "Anything else you want to tell us?",
         "required": False},
        {"type": "text", "id": "post.missing", "text": "What was missing?", "required": False},
    ]  # fmt: skip
    return StudyBundle.model_validate(
        {
            "study": {
                "id": "report-study",
                "title": "Ordering pizza",
                "texts": {"welcome": "Hi", "consent": "Agree?", "declined": "Bye"},
                "systems": [{"type": "demo", "id": s} for s in systems],
                "scenarios": ["order"],
                "design": {"type": "random", "seed": 7},
            },
            "scenarios": {
                "order": {
                    "id": "order",
                    "title": "Order a pizza",
                    "brief": "Order a margherita.",
                    "expected_duration": 600,
                    "post_task": ["post"],
                }
            },
            "questionnaires": {"post": {"id": "post", "title": "After", "items": items}},
        }
    )


class _Clock:
    def __init__(self) -> None:
        self.now = 1_760_000_000.0

    def __call__(self) -> float:
        return self.now


async def write_report_study(db: Path, systems: tuple[str, ...] = ("alpha", "beta")) -> None:
    """Write the study into ``db`` (a new file) through the store's ``commit_step``."""
    bundle = report_bundle(systems)
    clock = _Clock()
    rng = np.random.default_rng(15)
    store = await open_store(db, clock)

    async def step(participant: str, *records: fx.Record, after: float = 5.0) -> None:
        clock.now += after
        await store.commit_step(
            StepCommit(bundle.study.id, participant, "{}", None, "sealed", records)
        )

    try:
        await store.record_definition(bundle.study.id, definition_json(bundle))
        for s, system in enumerate(systems):
            best = [c for c, k in zip(("speed", "accuracy", "tone"), BEST[system], strict=True)
                    for _ in range(k)]  # fmt: skip
            for i in range(PEOPLE[system]):
                pid = f"{system[0]}{i:02d}"
                session = f"{pid}-order"
                await step(pid, fx.RecordConsent(Consent.ACCEPTED))
                await step(pid, fx.OpenSession(session, "order", system, 0, "random", f"7:{pid}"))
                await _dialogue(step, pid, session, system, i)
                success = i % 4 != 3
                correct = None if i % 6 == 5 else (success and i % 5 != 1)
                reason = EndReason.SUCCESS if success else EndReason.PARTICIPANT_DONE
                await step(
                    pid,
                    fx.CloseSession(session, reason, success, correct),
                    fx.SetSessionState(session, State.QUESTIONNAIRE),
                    after=240.0 + 60 * s + 7 * i,
                )
                quality = 1.2 - 1.1 * s + rng.normal(0, 0.8)
                values = {
                    "post.ease1": quality,
                    "post.ease2": -quality,  # reverse-worded: answered low when it went well
                    "post.ease3": quality + rng.normal(0, 0.7),
                    "post.trust1": quality + rng.normal(0, 0.9),
                    "post.trust2": quality + rng.normal(0, 0.9),
                }
                answers: list[fx.Record] = [
                    _answer(session, item, int(np.clip(round(4 + 1.3 * v), 1, 7)), AGREE)
                    for item, v in values.items()
                ]
                answers.append(_answer(session, "post.steady", 4, AGREE))
                often = int(np.clip(round(1.5 + s + rng.normal(0, 0.8)), 0, 4))
                answers.append(_answer(session, "post.freq", often, OFTEN))
                yes = i < YES[system]
                answers.append(_answer(session, "post.again", int(yes), {1: "Yes", 0: "No"}))
                answers.append(_coded(session, "post.best", best[i], OPTIONS[best[i]]))
                for who, item, text in COMMENTS[system]:
                    if who == i:
                        answers.append(_coded(session, f"post.{item}", text, None))
                await step(pid, *answers, fx.SetSessionState(session, State.ENDED), after=30.0)
        await _outages(step, systems)
    finally:
        await store.close()


async def _dialogue(step, pid: str, session: str, system: str, i: int) -> None:
    """Three turns; beta fails now and then (HTTP 503, timeouts), a wizard helps alpha."""
    for turn in (1, 2, 3):
        await step(pid, fx.RecordUserTurn(session, turn, f"message {turn}"), after=20.0)
        latency = 400.0 + 150 * turn + 37 * i + (900 if system == "beta" else 0)
        reply = fx.RecordSystemTurn(session, turn, f"reply {turn}", latency)
        if system == "beta" and turn == 2 and i % 3 == 0:
            reply = fx.RecordSystemTurn(session, turn, None, 10_000.0, TIMEOUT)
        elif system == "beta" and turn == 3 and i % 4 == 1:
            reply = fx.RecordSystemTurn(session, turn, None, 300.0, HTTP_503)
        elif system == "alpha" and turn == 2 and i in (2, 7):
            reply = fx.RecordSystemTurn(session, turn, "A wizard's reply", latency,
                                        source=ReplySource.WIZARD, wizard="ada")  # fmt: skip
        elif system == "alpha" and turn == 3 and i == 4:
            reply = fx.RecordSystemTurn(session, turn, "Edited reply", latency,
                                        source=ReplySource.EDITED, wizard="ada")  # fmt: skip
        await step(pid, reply, after=latency / 1000)


async def _outages(step, systems: tuple[str, ...]) -> None:
    """beta went down for two minutes, and again at the end without coming back."""
    if "beta" not in systems:
        return
    down = {"system": "beta", "failures": 3}
    await step("b00", fx.RecordEvent(EventKind.SYSTEM_UNAVAILABLE, "b00-order", down))
    await step("b00", fx.RecordEvent(EventKind.SYSTEM_AVAILABLE, "b00-order",
                                     {"system": "beta", "failures": 0}), after=120.0)  # fmt: skip
    await step("b01", fx.RecordEvent(EventKind.SYSTEM_UNAVAILABLE, "b01-order", down), after=60.0)


def _answer(session: str, item: str, value: int, labels: dict) -> fx.RecordResponse:
    return fx.RecordResponse(
        session, "post", item, value, labels[value], None, AnswerStatus.ANSWERED, 0.0,
        Moment.POST_TASK,
    )  # fmt: skip


def _coded(session: str, item: str, text: str, label: str | None) -> fx.RecordResponse:
    """A choice answer stored by its code (as the engine does), or a typed answer."""
    return fx.RecordResponse(
        session, "post", item, None, label, text, AnswerStatus.ANSWERED, 0.0, Moment.POST_TASK
    )
