"""What the store keeps of linguistic stress tests (IDIAL), as plain frozen records.

A test is one perturbation of one logged utterance; a replay is that test run against a
system in a fresh conversation, once unchanged and once perturbed; verdicts say whether the
system's behaviour was harmed, by whom they were given (the replay itself, a person, a
language model).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import StrEnum

from bot.core.stress import Perturbation


class Review(StrEnum):
    """Whether a test may be run: proposals wait for a person's word."""

    ACCEPTED = "accepted"
    PENDING = "pending"
    REJECTED = "rejected"


class Verdict(StrEnum):
    PASS = "pass"
    FAIL = "fail"
    UNSURE = "unsure"
    NOT_APPLICABLE = "not_applicable"


class Judge(StrEnum):
    AUTO = "auto"
    HUMAN = "human"
    LLM = "llm"


@dataclass(frozen=True)
class StressTest:
    """A stored test: its id, its perturbation, whether it may be run."""

    id: int
    perturbation: Perturbation
    review: Review


@dataclass(frozen=True)
class ReplyTaken:
    """What one replayed conversation got at the tested turn (or how the system failed)."""

    texts: tuple[str, ...] = ()
    events: Mapping[str, Mapping[str, object]] = field(default_factory=dict)
    error: str | None = None


@dataclass(frozen=True)
class Replay:
    """A test run against a system: the unchanged and the perturbed replay."""

    test_id: int
    system_id: str
    started_at: float
    finished_at: float
    baseline: ReplyTaken
    perturbed: ReplyTaken
    applicable: bool


@dataclass(frozen=True)
class Judgement:
    """One judge's verdict on a replay."""

    test_id: int
    system_id: str
    judge: Judge
    verdict: Verdict
    judged_by: str = ""
    reason: str = ""
    at: float = 0.0


@dataclass(frozen=True)
class StressResult:
    """A replayed test with everything the report and the judges need."""

    test: StressTest
    replay: Replay
    judgements: tuple[Judgement, ...] = ()

    def by(self, judge: Judge) -> Judgement | None:
        return next((j for j in self.judgements if j.judge is judge), None)

    @property
    def verdict(self) -> Verdict | None:
        """The verdict that counts: the replay's own, else a person's, else a model's."""
        for judge in (Judge.AUTO, Judge.HUMAN, Judge.LLM):
            found = self.by(judge)
            if found is not None:
                return found.verdict
        return None
