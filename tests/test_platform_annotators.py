"""Annotators recruited on a platform, the pure parts: the job file's ``recruitment`` and
its link, an annotator's share laid over the assignment, the code for how a part ended, and
how a submission of an annotator whose onboarding failed stands."""

from __future__ import annotations

import asyncio
from dataclasses import replace
from decimal import Decimal
from pathlib import Path

import pytest

from bot.core.annotation import (
    AnnotationAssignment,
    AnnotationJobRecord,
    AnnotationState,
    AnnotationTarget,
    Annotator,
)
from bot.core.vocabulary import (
    AnnotationLevel,
    AnnotationRound,
    AnnotatorClaim,
    Origin,
    PaymentStatus,
)
from bot.engine import effects as fx
from bot.engine.annotating.assignment import item_kinds, plan, rules_of
from bot.engine.annotating.flow import step
from bot.engine.annotating.model import Annotating, Claimed, TargetLoaded
from bot.engine.annotating.shares import open_to_work, share_done, within_shares
from bot.engine.events import WithdrawCommand
from bot.engine.recruitment import job_platform_id
from bot.recruitment.prolific import Submission
from bot.recruitment.reconciling import Ours, Standing, match, to_approve, to_reject
from scenarios.jobs import JobRecruitment, job_link_payload
from scenarios.loading import load_study
from tests.test_annotation_jobs import GOOD_JOB, problems, study_with

RECRUITMENT = """\
recruitment:
  study_id: 65aa00bb11cc22dd33ee44ff
  completion_code: ANN5DONE
  onboarding_failed_code: PRACTICE7
  targets_per_annotator: 3
  bonus: {per_rated_target: 0.10}
"""
PID = "5f1a2b3c4d5e6f7a8b9c0d1e"


@pytest.mark.parametrize(
    ("payload", "found"),
    [
        (f"ann-hri-cues_pid_{PID}", ("hri-cues", PID)),
        (f"ann-my_job_pid_{PID}", ("my_job", PID)),
        ("ann-ABCDEFGHJK", None),  # an invitation code
        (f"pid_{PID}", None),  # a participant's link
        ("ann-_pid_x", None),
        (None, None),
    ],
)
def test_the_job_s_link_payload(payload: str | None, found: tuple[str, str] | None) -> None:
    assert job_platform_id(payload) == found


def test_a_job_file_says_it_recruits_and_its_link_fits_telegram(tmp_path: Path) -> None:
    bundle = load_study(study_with(tmp_path, GOOD_JOB + RECRUITMENT))
    recruitment = bundle.jobs["rate"].recruitment
    assert recruitment is not None
    assert (recruitment.completion_code, recruitment.targets_per_annotator) == ("ANN5DONE", 3)
    assert recruitment.bonus is not None and recruitment.bonus.per_rated_target == Decimal("0.1")
    assert len(job_link_payload("rate", PID)) <= 64


@pytest.mark.parametrize(
    ("change", "words"),
    [
        (("id: rate", "id: rate.v2"), "give it an id of at most 31 letters"),
        (("completion_code: ANN5DONE", "completion_code: ''"), "at least 1 character"),
        (("targets_per_annotator: 3", "targets_per_annotator: 0"), "greater than or equal to 1"),
        (("per_rated_target: 0.10", "per_rated_target: 0.001"), "decimal places"),
        (("study_id: 65aa00bb11cc22dd33ee44ff", "study_id: 'a b'"), "should match pattern"),
    ],
)
def test_a_broken_recruitment_is_told(tmp_path: Path, change: tuple[str, str], words: str) -> None:
    name = "rate.v2.yaml" if change[1] == "id: rate.v2" else "rate.yaml"
    job = (GOOD_JOB + RECRUITMENT).replace(*change)
    found = problems(study_with(tmp_path, job, ref=name.removesuffix(".yaml"), name=name))
    assert any(words in p for p in found), found


def _state(annotators: int, targets: int, done: dict[str, int]) -> AnnotationState:
    """One conversation of ``targets`` exchanges, annotators A-0…, ``done`` targets finished
    by each (given in order)."""
    record = AnnotationJobRecord("j", "s", "{}", False, None)
    made = tuple(
        AnnotationTarget("j", f"s1#{t}", AnnotationLevel.EXCHANGE, t, "s1", t, "sys", "task")
        for t in range(targets)
    )
    people = tuple(Annotator(f"A-{n}", "j", Origin.TELEGRAM) for n in range(annotators))
    given: list[AnnotationAssignment] = []
    position = 0
    for who, count in done.items():
        for _ in range(count):
            target = made[position]
            given.append(
                AnnotationAssignment(
                    target.target, target.level, who, AnnotationRound.FIRST, 1.0, 2.0
                )
            )
            position += 1
    return AnnotationState(record, made, people, tuple(given), (), 1)


def _planned(state: AnnotationState, share: int) -> list[tuple[str, str]]:
    rules = replace(rules_of(load_study("hri-cues").jobs["hri-cues"]), annotators=1)
    decided = plan(open_to_work(state, share, rules, 10.0), rules, item_kinds(()), 10.0)
    kept, _ = within_shares(decided, state, share)
    return [(who, target) for target, _, who, _ in kept.assign]


def test_nobody_is_given_more_than_their_share_and_the_rest_waits_for_others() -> None:
    """The planner keeps a conversation with one annotator; the share cuts it, and what was
    cut goes to the others (or waits for a newcomer)."""
    state = _state(annotators=1, targets=8, done={})
    assert [who for who, _ in _planned(state, 3)] == ["A-0"] * 3
    held = _state(annotators=2, targets=8, done={"A-0": 3})
    given = _planned(held, 3)
    assert {who for who, _ in given} == {"A-1"} and len(given) == 3


def test_a_share_is_done_when_as_many_targets_are_rated() -> None:
    state = _state(annotators=2, targets=8, done={"A-0": 3, "A-1": 1})
    assert share_done(state, "A-0", 3)
    assert not share_done(state, "A-1", 3)
    assert share_done(state, "A-1", None)  # no share: all they were given, and none open


def test_the_code_for_how_an_annotator_s_part_ended() -> None:
    bundle = load_study("hri-cues")
    recruitment = JobRecruitment(
        study_id="65aa00bb11cc22dd33ee44ff",
        completion_code="ANN5DONE",
        onboarding_failed_code="PRACTICE7",
    )
    job = bundle.jobs["hri-cues"].model_copy(update={"recruitment": recruitment})
    bundle = bundle.model_copy(update={"jobs": {"hri-cues": job}})
    state = Annotating("A-1", "hri-cues", None, None)

    def said(event: TargetLoaded | Claimed | WithdrawCommand) -> list[str]:
        _, effects = step(bundle, state, event, 10.0)
        return [e.text for e in effects if isinstance(e, fx.Send)]

    done = said(TargetLoaded(None, ended=PaymentStatus.COMPLETED))
    assert "rated your share" in done[0]
    assert "Your code for Prolific is ANN5DONE" in done[1]
    assert "cc=ANN5DONE" in done[1]
    failed = said(TargetLoaded(None, unqualified=True, ended=PaymentStatus.SCREENED_OUT))
    assert "practice check" in failed[0] and "PRACTICE7" in failed[1]
    assert len(said(TargetLoaded(None))) == 1  # still at work, or not from the platform
    refused = said(Claimed(AnnotatorClaim.TAKEN, job="hri-cues"))
    assert refused == [
        "Your Prolific ID already annotates this job from another Telegram account, so it"
        " cannot be used here. Please go on from that account, or write to the researcher"
        " through Prolific."
    ]
    other = said(Claimed(AnnotatorClaim.OTHER_ID, job="hri-cues"))
    assert other[0].startswith("You are already taking part with another Prolific ID")
    kept = "If you withdraw, we keep only your Prolific ID and the time you spent"
    joined = said(Claimed(AnnotatorClaim.JOINED, "A-1", "hri-cues"))
    assert joined[0].startswith("Welcome! You are annotator A-1") and kept in joined[0]
    assert kept in said(WithdrawCommand())[0]


def test_an_annotator_whose_onboarding_failed_is_neither_approved_nor_rejected() -> None:
    """As for participants who left early: the onboarding's code entered is left for review
    on the platform; a dropped annotator who submitted anyway is asked to return, never
    rejected."""
    submissions = [
        Submission(f"sub{n}", pid, "AWAITING REVIEW", None, None, code)
        for n, (pid, code) in enumerate(
            (("p-done", "DONE7"), ("p-failed", "PRACTICE7"), ("p-dropped", "DONE7"))
        )
    ]
    ours = [
        Ours("p-done", PaymentStatus.COMPLETED, 12.0, code="DONE7"),
        Ours("p-failed", PaymentStatus.SCREENED_OUT, 3.0, code="PRACTICE7"),
        Ours("p-dropped", PaymentStatus.TIMED_OUT, 5.0),
    ]
    rows = match(submissions, ours, frozenset({"DONE7"}))
    assert [r.standing for r in rows] == [
        Standing.COMPLETED,
        Standing.ENDED_WITH_CODE,
        Standing.TO_RETURN,  # dropped out, yet submitted: never given the code
    ]
    assert [s.id for s in to_approve(rows)] == ["sub0"]
    assert to_reject(rows) == []


async def _stored_job(db: Path) -> None:
    """A database holding hri-cues as a job recruiting on Prolific (as the bot stores it
    when its first annotator comes)."""
    from bot.annotation.jobs import job_record
    from bot.store.sqlite import open_store

    bundle = load_study("hri-cues")
    recruitment = JobRecruitment(study_id="65aa00bb11cc22dd33ee44ff", completion_code="ANN5DONE")
    job = bundle.jobs["hri-cues"].model_copy(update={"recruitment": recruitment})
    store = await open_store(db)
    try:
        await store.save_annotation_job(job_record(bundle, job))
    finally:
        await store.close()


@pytest.mark.parametrize(
    ("args", "told"),
    [
        (("status", "--job", "xrec"), "no annotation job 'xrec' recruiting on a platform"),
        (
            ("status", "--job", "hri-cues", "--study-id", "6543210fedcba9876543210f"),
            "recruits in the Prolific study 65aa00bb11cc22dd33ee44ff, not",
        ),
        (("approve",), "give --study-id (the study's id on Prolific) or --job JOB"),
        (
            ("bonus", "--study-id", "6543210fedcba9876543210f", "--by-rule"),
            "--by-rule pays an annotation job's annotators: give --job",
        ),
        (("bonus", "--job", "hri-cues", "--by-rule"), "has no recruitment.bonus rule"),
        (("bonus", "--job", "hri-cues", "--from-study", "hmd"), "pays by its own rule"),
    ],
)
async def test_a_platform_command_that_does_not_fit_a_job_says_so_in_one_line(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    args: tuple[str, ...],
    told: str,
) -> None:
    from tests.command_line import ozlab_here

    db = tmp_path / "study.sqlite"
    await _stored_job(db)
    monkeypatch.setenv("PROLIFIC_TOKEN", "a-token")
    monkeypatch.setenv("OZLAB_SECRET", "a-secret-long-enough-for-ozlab")
    unreachable = "http://127.0.0.1:9"  # asked nothing: refused before any request
    done = await asyncio.to_thread(
        ozlab_here, "prolific", *args, "--db", db, "--api-url", unreachable
    )
    assert done.returncode == 3, done.stderr
    assert done.stderr.count("\n") == 1 and told in done.stderr


def test_one_person_as_participant_and_annotator_gets_each_study_s_bonuses_on_its_row() -> None:
    from bot.core.privacy import Privacy
    from bot.recruitment.payments import COLUMNS, payment_rows
    from bot.store.model import MoneyStep, PaymentRecord

    privacy = Privacy("a-secret-long-enough-for-ozlab")
    key = privacy.seal(PID)
    records = [
        PaymentRecord("s", "prolific", key, PaymentStatus.COMPLETED, 0.0, 600.0),
        PaymentRecord("s", "prolific", key, PaymentStatus.COMPLETED, 0.0, 300.0, job="rate"),
    ]

    def paid(n: int, study: str, cents: int) -> MoneyStep:
        request = privacy.seal(f'{{"{PID}": {cents}}}')
        return MoneyStep(n, study, "bonus_pay", request, f"bulk{n}", 1.0, "applied", "{}", 2.0)

    steps = [paid(1, "participants-study", 50), paid(2, "job-study", 30)]
    rows = payment_rows(records, privacy, steps, {"rate": "job-study"})
    bonus, job = COLUMNS.index("bonus"), COLUMNS.index("job")
    assert [(row[bonus], row[job]) for row in rows] == [("0.50", ""), ("0.30", "rate")]


async def test_what_a_share_cuts_goes_to_the_next_annotator_in_the_same_planning(
    tmp_path: Path,
) -> None:
    """The planner keeps a conversation with its first annotator; their share cuts it, and
    the same ``assign`` plans again, so that the rest goes to the second one at once."""
    from bot.annotation.jobs import assign, prepare_job
    from bot.store.sqlite import open_store
    from tests.annotation_support import store_conversations

    bundle = load_study("hri-cues")
    recruitment = JobRecruitment(
        study_id="65aa00bb11cc22dd33ee44ff", completion_code="ANN5DONE", targets_per_annotator=2
    )
    job = bundle.jobs["hri-cues"].model_copy(update={"annotators": 1, "recruitment": recruitment})
    bundle = bundle.model_copy(update={"jobs": {job.id: job}})
    store = await open_store(tmp_path / "study.sqlite")
    try:
        await store_conversations(store, "hri-cues", "hri-cues-chat", [("p-1", "companion", 3)])
        assert await prepare_job(store, bundle, job) == 4  # three exchanges, one conversation
        assert await store.add_annotators(job.id, [("A-1", "ann-1"), ("A-2", "ann-2")])
        decided = await assign(store, bundle, job, 10.0)
        state = await store.annotation_state(job.id)
    finally:
        await store.close()
    assert state is not None
    held: dict[str, int] = {}
    for a in state.assignments:
        held[a.annotator] = held.get(a.annotator, 0) + 1
    assert held == {"A-1": 2, "A-2": 2}
    assert len(decided.assign) == 4  # both rounds, as applied
