"""What the report found that the page shows beside the live figures: annotators' agreement
so far (each job's reliability, pairwise raters' agreement with the majority), the ACUTE
onboarding results, and the data-quality flags. Read from the JSON report the worker made
(``ozlab report --format json``: its keys are documented in ``analytics.report.
render_json``), never computed here: analytics stays in the worker's process."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

from pydantic import BaseModel, ConfigDict


class _Read(BaseModel):
    """A part of the JSON report: the keys the page shows, the others ignored."""

    model_config = ConfigDict(extra="ignore", frozen=True)


class Agreement(_Read):
    """A job's agreement between annotators on an item, in the statistic that fits it."""

    job: str
    item: str
    level: str
    statistic: str
    value: float | None
    ci_low: float | None
    ci_high: float | None
    n_targets: int
    n_annotators: int
    system: str | None = None
    reported: bool = False


class RaterAgreement(_Read):
    """A pairwise rater's decisive votes that agree with the other raters' majority."""

    question: str
    rater: str
    rater_kind: str
    votes: int
    scored: int
    agreement: float | None


class Onboarding(_Read):
    """An annotator's onboarding pairs (ACUTE-Eval's known answers) and whether they passed."""

    rater: str
    pairs: int
    correct: int
    rate: float | None
    passed: bool


class _Pairwise(_Read):
    raters: list[RaterAgreement] = []
    onboarding: list[Onboarding] = []
    methods: dict[str, str] = {}


class Flag(_Read):
    participant_id: str
    flag: str


class Flagged(_Read):
    participant_id: str
    flags: str
    details: str
    simulated: bool = False


class _Quality(_Read):
    flags: list[Flag] = []
    participants: list[Flagged] = []
    rules: dict[str, str] = {}


class _Report(_Read):
    generated_at: str
    reliability: list[Agreement] = []
    pairwise: _Pairwise | None = None
    quality: _Quality = _Quality()


class Findings(_Read):
    """The report's findings the page shows, as of the data the report was made from."""

    generated_at: str
    agreement: list[Agreement]  # per job and item, all systems pooled
    raters: list[RaterAgreement]
    onboarding: list[Onboarding]
    agreement_method: str | None  # how a pairwise rater's agreement is counted
    onboarding_method: str | None
    flags: list[tuple[str, int]]  # each flag and the participants it flags
    flagged: list[Flagged]
    rules: dict[str, str]


def read_findings(path: Path) -> Findings:
    """The findings of the JSON report at ``path``."""
    report = _Report.model_validate_json(path.read_bytes())
    pairwise = report.pairwise or _Pairwise()
    quality = report.quality
    flagging = Counter(flag for flag, _ in {(f.flag, f.participant_id) for f in quality.flags})
    return Findings(
        generated_at=report.generated_at,
        agreement=[a for a in report.reliability if a.reported and a.system is None],
        raters=pairwise.raters,
        onboarding=pairwise.onboarding,
        agreement_method=pairwise.methods.get("agreement"),
        onboarding_method=pairwise.methods.get("onboarding"),
        flags=sorted(flagging.items()),
        flagged=quality.participants,
        rules=quality.rules,
    )
