"""Annotators recruited on Prolific, through the real bot on the emulator and the local
Prolific: the job's own link (``/start ann-JOB_pid_ID``) makes a new pseudonymous annotator,
binds the id whenever it comes (another id, or the same id from a second account, refused),
gives the completion code once the annotator's share is rated; ``ozlab prolific`` shows,
approves and pays a bonus per rated target through the money path (exactly once, whatever is
killed on the way); the payments export carries it all; an erasure leaves the record
unlinked."""

from __future__ import annotations

import asyncio
import csv
import io
import shutil
import sqlite3
import subprocess
from decimal import Decimal
from pathlib import Path

import pytest

from bot.core.privacy import SECRET_ENV, Privacy
from bot.pilot.emulator import BotApiEmulator, Participant
from bot.store.interface import StudyStore
from scenarios.jobs import JobRecruitment, RatedTargetBonus
from scenarios.loading import load_study
from scenarios.models import StudyBundle
from tests.annotating_support import by_exchange, current_item, first_point, play, rate_all, stored
from tests.command_line import ozlab_here
from tests.conftest import SECRET, StartBot
from tests.e2e_support import database_bytes
from tests.fake_prolific import TOKEN, FakeProlific, FakeSubmission
from tests.fake_servers import serving
from tests.prolific_commands import killed_when_hanging
from tests.prolific_commands import prolific as prolific_command
from tests.test_recruitment_e2e import logged_as_by_ozlab_run

pytestmark = pytest.mark.slow

JOB = "hri-cues"
JOB_STUDY = "65aa00bb11cc22dd33ee44ff"
CODE = "ANN5DONE"
SHARE = 3
EACH = 10  # cents per rated target
FIRST, SECOND, THIRD, OTHER = (f"{n:024x}" for n in (0xA1, 0xB2, 0xC3, 0xD4))
SHARE_DONE = "You have rated your share of this job"
CODE_TEXT = f"Your code for Prolific is {CODE}"


def recruiting(bundle: StudyBundle) -> StudyBundle:
    """HRI CUES with one annotator per target, recruited on Prolific, three targets each."""
    recruitment = JobRecruitment(
        study_id=JOB_STUDY,
        completion_code=CODE,
        targets_per_annotator=SHARE,
        bonus=RatedTargetBonus(per_rated_target=Decimal("0.10")),
    )
    job = bundle.jobs[JOB].model_copy(update={"annotators": 1, "recruitment": recruitment})
    return bundle.model_copy(update={"jobs": {**bundle.jobs, JOB: job}})


def link(platform_id: str) -> str:
    return f"/start ann-{JOB}_pid_{platform_id}"


def said(p: Participant, text: str) -> bool:
    return any(text in m.text for m in p.messages)


def said_since(p: Participant, first: int, text: str) -> bool:
    return any(text in m.text for m in p.messages[first:])


async def payment_rows(db: Path) -> list[tuple[object, ...]]:
    def read() -> list[tuple[object, ...]]:
        with sqlite3.connect(db) as conn:
            return conn.execute(
                "SELECT job, annotator, status, platform_key, platform_tag FROM payments"
                " ORDER BY id"
            ).fetchall()

    return await asyncio.to_thread(read)


async def rated(db: Path) -> dict[str, int]:
    async def read(store: StudyStore) -> dict[str, int]:
        state = await store.annotation_state(JOB)
        assert state is not None
        done: dict[str, int] = {}
        for a in state.assignments:
            if a.done_at is not None:
                done[a.annotator] = done.get(a.annotator, 0) + 1
        return done

    return await stored(db, read)


async def recruited(emulator: BotApiEmulator, start_bot: StartBot, db: Path) -> dict[str, str]:
    """Two conversations rated by annotators from Prolific: the first two rate their share,
    the third rates one target and leaves. Per platform id: the annotator."""
    bundle = recruiting(load_study("hri-cues"))
    bot = await start_bot(bundle, db=db)
    await play(emulator, bundle, participants=2)
    for n, pid in enumerate((FIRST, SECOND, THIRD)):
        p = emulator.participant(7300 + n, first_name=f"Ann{n}")
        await p.send_text(link(pid))
        await p.wait_for(lambda q: current_item(q) is not None, timeout=15)
        if pid != THIRD:
            await rate_all(p, by_exchange(n), until=CODE_TEXT)
            continue
        item = current_item(p)
        assert item is not None
        await p.tap(text=first_point(item), message_id=item.message_id)
        await p.wait_for(lambda q, shown=item: current_item(q) is not shown, timeout=15)
    await bot.stop()
    privacy = Privacy(SECRET)
    return {privacy.unseal(str(row[3])): str(row[1]) for row in await payment_rows(db)}


async def test_the_job_s_link_makes_annotators_binds_their_id_and_gives_the_code_for_a_share(
    emulator: BotApiEmulator,
    start_bot: StartBot,
    tmp_path: Path,
    caplog: pytest.LogCaptureFixture,
) -> None:
    logged_as_by_ozlab_run(caplog)
    bundle = recruiting(load_study("hri-cues"))
    db = tmp_path / "cues.sqlite"
    bot = await start_bot(bundle, db=db)
    await play(emulator, bundle, participants=2)

    ann = emulator.participant(7300, first_name="Ann")
    await ann.send_text(link(FIRST))
    await ann.wait_for(lambda q: current_item(q) is not None, timeout=15)
    assert said(ann, "Welcome! You are annotator A-")
    [row] = await payment_rows(db)
    job, annotator, status, key, tag = row
    assert (job, status) == (JOB, "started") and str(annotator).startswith("A-")
    assert Privacy(SECRET).unseal(str(key)) == FIRST and tag

    # Another id from the same chat: refused, the first one stays.
    await ann.send_text(link(OTHER))
    await ann.wait_for_text("You are already taking part with another Prolific ID", timeout=15)
    # The same id from another Telegram account: refused, nobody new.
    twin = emulator.participant(7301, first_name="Twin")
    await twin.send_text(link(FIRST))
    await twin.wait_for_text("already annotates this job from another Telegram account")
    assert await payment_rows(db) == [row]

    given = await rate_all(ann, by_exchange(0), until=CODE_TEXT)
    assert given > 0
    assert said(ann, SHARE_DONE)
    assert said(ann, f"https://app.prolific.com/submissions/complete?cc={CODE}")
    assert (await rated(db))[str(annotator)] == SHARE  # the share, and no more
    [(_, _, status, _, _)] = await payment_rows(db)
    assert status == "completed"
    # Writing again later, after a restart of the bot too: the code once more.
    for restart in (False, True):
        if restart:
            await bot.stop()
            bot = await start_bot(bundle, db=db)
        before = len(ann.messages)
        await ann.send_text("hello?")
        await ann.wait_for(lambda q, n=before: said_since(q, n, CODE_TEXT), timeout=15)

    # An annotator invited with a code, then coming through the link: bound then.
    async def invite_one(store: StudyStore) -> tuple[str, str]:
        from bot.annotation.invitations import invite_annotators

        invited = await invite_annotators(store, None, JOB, 1)
        return invited.annotators[0]

    pseudonym, code = await stored(db, invite_one)
    coded = emulator.participant(7302, first_name="Cody")
    await coded.send_text(f"/start {code}")
    await coded.wait_for(lambda q: current_item(q) is not None, timeout=15)
    assert len(await payment_rows(db)) == 1  # no platform id yet: nothing to pay
    await coded.send_text(link(SECOND))
    await coded.wait_for_text("Welcome back", timeout=15)
    rows = await payment_rows(db)
    assert [(r[0], r[1], r[2]) for r in rows[1:]] == [(JOB, pseudonym, "started")]
    assert Privacy(SECRET).unseal(str(rows[1][3])) == SECOND
    await rate_all(coded, by_exchange(1), until=CODE_TEXT)
    assert (await payment_rows(db))[1][2] == "completed"

    blob = database_bytes(db)
    assert not any(pid.encode() in blob for pid in (FIRST, SECOND, OTHER))
    assert not any(pid in caplog.text for pid in (FIRST, SECOND, OTHER))


def prolific(*args: str | Path, url: str) -> subprocess.CompletedProcess[str]:
    """``ozlab prolific ARGS`` against the local Prolific, with the bot's secret."""
    return prolific_command(*args, url=url, secret=SECRET)


def platform_of() -> FakeProlific:
    """The job's study on Prolific: the two who rated their share submitted with the code,
    the one who left returned the study."""
    fake = FakeProlific(JOB_STUDY)
    for n, pid in enumerate((FIRST, SECOND)):
        fake.submissions.append(FakeSubmission(f"sub{n}{'a' * 22}", pid, entered_code=CODE))
    fake.submissions.append(
        FakeSubmission(f"sub2{'a' * 22}", THIRD, "RETURNED", completed_at=None, entered_code=None)
    )
    return fake


async def test_status_approval_bonus_per_rated_target_export_and_erasure(
    emulator: BotApiEmulator, start_bot: StartBot, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    db = tmp_path / "cues.sqlite"
    people = await recruited(emulator, start_bot, db)
    assert set(people) == {FIRST, SECOND, THIRD}
    done = await rated(db)
    wanted = {pid: done.get(name, 0) * EACH for pid, name in people.items()}
    assert wanted[FIRST] == wanted[SECOND] == SHARE * EACH and wanted[THIRD] == EACH
    fake = platform_of()
    async with serving(fake.app()) as url:
        status = await asyncio.to_thread(prolific, "status", "--db", db, "--job", JOB, url=url)
        assert status.returncode == 0, status.stderr
        assert "    2  completed in both" in status.stdout
        assert "    1  returned" in status.stdout
        # The job's Prolific study id alone means the job's annotators too.
        same = await asyncio.to_thread(
            prolific, "status", "--db", db, "--study-id", JOB_STUDY, url=url
        )
        assert same.stdout == status.stdout
        # The study's own Prolific study: its participants only, never the job's annotators.
        study = "6543210fedcba9876543210f"
        async with serving(FakeProlific(study).app()) as studys_url:
            theirs = await asyncio.to_thread(
                prolific, "status", "--db", db, "--study-id", study, url=studys_url
            )
        assert theirs.returncode == 0, theirs.stderr
        assert theirs.stdout.splitlines()[1:] == [""]  # the header, and no row
        approved = await asyncio.to_thread(
            prolific, "approve", "--db", db, "--job", JOB, "--yes", url=url
        )
        assert approved.returncode == 0, approved.stderr
        assert approved.stdout.startswith("approved 2 submissions, 2 x 1.50 = 3.00")
        args = ("bonus", "--db", db, "--job", JOB, "--by-rule")
        shown = await asyncio.to_thread(prolific, *args, url=url)
        assert shown.returncode == 0, shown.stderr
        assert shown.stdout.startswith("set up, not paid: bulk bonus") and fake.pays == []
        paid = await asyncio.to_thread(prolific, *args, "--yes", url=url)
        assert paid.returncode == 0, paid.stderr
        again = await asyncio.to_thread(prolific, *args, "--yes", url=url)
        assert again.stdout.startswith("nothing to pay: the 3 bonuses are paid, 0.70 in all")
        for done_ in (status, approved, shown, paid, again):
            said_ = done_.stdout + done_.stderr
            assert not any(pid in said_ for pid in people) and TOKEN not in said_
    assert sorted(map(sorted, fake.approvals)) == [[f"sub0{'a' * 22}", f"sub1{'a' * 22}"]]
    assert len(fake.pays) == 1
    for pid, cents in wanted.items():
        assert fake.bonuses_of(pid) == [float(cents)]

    leaving = people[FIRST]
    monkeypatch.setenv(SECRET_ENV, SECRET)
    erased = await asyncio.to_thread(ozlab_here, "erase", "--db", db, leaving)
    assert erased.returncode == 0, erased.stderr
    exported = await asyncio.to_thread(ozlab_here, "export", "payments", "--db", db)
    assert exported.returncode == 0, exported.stderr
    rows = {r["platform_id"]: r for r in csv.DictReader(io.StringIO(exported.stdout))}
    assert set(rows) == {FIRST, SECOND, THIRD}
    assert {r["job"] for r in rows.values()} == {JOB}
    assert rows[FIRST]["status"] == "withdrawn"  # unlinked, paid all the same
    assert rows[SECOND]["status"] == "completed" and rows[THIRD]["status"] == "started"
    assert rows[FIRST]["platform_status"] == "APPROVED" and rows[FIRST]["approved_at"]
    assert rows[THIRD]["platform_status"] == "RETURNED"
    for pid, cents in wanted.items():
        assert rows[pid]["bonus"] == f"{cents / 100:.2f}"
    [(job, annotator)] = [(r[0], r[1]) for r in await payment_rows(db) if r[2] == "withdrawn"]
    assert (job, annotator) == (JOB, None)
    assert leaving.encode() not in database_bytes(db)


async def test_a_kill_at_any_step_of_an_annotation_job_s_money_path_pays_each_once(
    emulator: BotApiEmulator, start_bot: StartBot, tmp_path: Path
) -> None:
    """Killed while Prolific holds the request to set up or pay the job's bonuses, before or
    after applying it; the next run asks Prolific first, and each annotator is paid their
    rated targets once."""
    db = tmp_path / "cues.sqlite"
    people = await recruited(emulator, start_bot, db)
    done = await rated(db)
    wanted = {pid: done.get(name, 0) * EACH for pid, name in people.items()}
    steps = ("set-up-hang-before", "set-up-hang-after", "pay-hang-before", "pay-hang-after")
    for step in steps:
        copy = tmp_path / step / db.name
        copy.parent.mkdir()
        shutil.copy2(db, copy)
        fake = platform_of()
        args = ("bonus", "--db", copy, "--job", JOB, "--by-rule", "--yes")
        async with serving(fake.app()) as url:
            fake.fault(step, "once")
            await killed_when_hanging(fake, *args, "--settled-after", "0", url=url, secret=SECRET)
            after = await asyncio.to_thread(prolific, *args, "--settled-after", "0", url=url)
            assert after.returncode == 0, f"{step}: {after.stderr}"
            again = await asyncio.to_thread(prolific, *args, url=url)
            assert again.stdout.startswith("nothing to pay"), f"{step}: {again.stdout}"
        assert len(fake.pays) == 1, step
        for pid, cents in wanted.items():
            assert fake.bonuses_of(pid) == [float(cents)], step


BETTER = ("I found 2 adventure games for Linux", "Which game would you like to add?")
"""Lines only the better conversation of each of hmd-acute's onboarding pairs has."""
PRACTICE_FAILED = "no more pairs for you"


async def compare_against_the_known_answer(p: Participant) -> None:
    """Every pair shown answered with the worse speaker (a text item: a word typed), until
    the bot says there is nothing more."""
    while True:
        await p.wait_for(
            lambda q: current_item(q) is not None or said(q, PRACTICE_FAILED), timeout=30
        )
        message = current_item(p)
        if message is None:
            return
        count, before = len(p.messages), message.keyboard
        shown = [m.text for m in p.messages if "conversation 2 of 2" in m.text]
        better = 2 if shown and any(line in shown[-1] for line in BETTER) else 1
        if any(d and d[1:2] == "a" for row in message.keyboard for _, d in row):
            await p.tap(text=str(3 - better), message_id=message.message_id)
        else:
            await p.send_text("The first one.")
        await p.wait_for(
            lambda q, m=message, n=count, was=before: m.keyboard != was or len(q.messages) > n,
            timeout=30,
        )


async def test_an_annotator_below_the_onboarding_threshold_gets_the_job_s_code_for_it(
    emulator: BotApiEmulator, start_bot: StartBot, tmp_path: Path
) -> None:
    bundle = load_study("hmd")
    recruitment = JobRecruitment(
        study_id=JOB_STUDY, completion_code=CODE, onboarding_failed_code="PRACTICE7"
    )
    job = bundle.jobs["hmd-acute"].model_copy(update={"recruitment": recruitment})
    bundle = bundle.model_copy(update={"jobs": {**bundle.jobs, job.id: job}})
    db = tmp_path / "hmd.sqlite"
    await start_bot(bundle, db=db)
    await play(emulator, bundle, participants=4)
    p = emulator.participant(7400, first_name="Ann")
    await p.send_text(f"/start ann-hmd-acute_pid_{FIRST}")
    await p.wait_for_text("read pairs of conversations", timeout=20)
    await compare_against_the_known_answer(p)
    await p.wait_for_text("Your code for Prolific is PRACTICE7", timeout=15)
    assert not said(p, CODE)
    [(job_id, _, status, _, _)] = await payment_rows(db)
    assert (job_id, status) == ("hmd-acute", "screened_out")
