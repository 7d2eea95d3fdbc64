"""A paid study rehearsed without a token: ``ozlab demo`` gives its simulated participants
Prolific ids (most with the link, some late, some twice, some never finishing) and
``ozlab export payments`` lists each of them once, as the study's own database would."""

from __future__ import annotations

import asyncio
import csv
import io
import re
import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from bot.core.privacy import SECRET_ENV, Privacy
from bot.pilot.simulation.platform import Arrival, PlatformVisit, platform_visit
from tests.command_line import environment
from tests.e2e_support import database_bytes
from tests.fake_prolific import TOKEN, FakeProlific, FakeSubmission
from tests.fake_servers import serving
from tests.paid_study import recruiting_study
from tests.prolific_commands import killed_when_hanging
from tests.prolific_commands import prolific as prolific_command

pytestmark = pytest.mark.slow

SECRET = "paid-study-rehearsal-0123456789"
PARTICIPANTS = 10


def ozlab(*args: str | Path) -> subprocess.CompletedProcess[str]:
    env = {**environment(), SECRET_ENV: SECRET}
    return subprocess.run(
        [sys.executable, "-m", "bot.cli", *map(str, args)],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )


@pytest.fixture(scope="module")
def demo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("paid")
    db = folder / "demo.sqlite"
    study = recruiting_study(folder)
    done = ozlab("demo", "-n", PARTICIPANTS, "--annotators", "0", "--db", db, "--study", study)
    assert done.returncode == 0, done.stderr
    return db


def test_a_demo_of_a_paid_study_lists_every_simulated_platform_participant(demo: Path) -> None:
    done = ozlab("export", "payments", "--db", demo)
    assert done.returncode == 0, done.stderr
    rows = list(csv.DictReader(io.StringIO(done.stdout)))
    visits = [platform_visit(1, i) for i in range(PARTICIPANTS)]
    listed = {row["platform_id"]: row["status"] for row in rows}
    assert len(rows) == PARTICIPANTS  # the late ones and the twice ones once each
    expected = {
        v.platform_id: "started" if v.arrival is Arrival.LEAVES else "completed" for v in visits
    }
    assert listed == expected
    assert {v.arrival for v in visits} == set(Arrival)
    assert all(re.fullmatch(r"[0-9a-f]{24}", v.platform_id) for v in visits)
    blob = database_bytes(demo)
    assert not any(v.platform_id.encode() in blob for v in visits)


STUDY_ID = "6543210fedcba9876543210f"


def prolific(*args: str | Path, url: str, token: str = TOKEN) -> subprocess.CompletedProcess[str]:
    """``ozlab prolific ARGS`` against the local Prolific, as a researcher's shell runs it."""
    return prolific_command(*args, url=url, secret=SECRET, token=token)


def platform_of(demo_visits: list[PlatformVisit]) -> FakeProlific:
    """The platform's side of the demo: everyone who finished in ozlab submitted, but one;
    the one who left submitted too, with the study's code from someone else; and two
    strangers to ozlab, one who returned and one who timed out."""
    fake = FakeProlific(STUDY_ID)
    for n, visit in enumerate(demo_visits):
        if n == 2:
            continue  # finished in ozlab, never submitted on Prolific
        fake.submissions.append(
            FakeSubmission(f"sub{n:02d}aaaaaaaaaaaaaaaaaaaa", visit.platform_id)
        )
    fake.submissions.append(
        FakeSubmission("subreturnedbbbbbbbbbbbbbb", "f" * 24, "RETURNED", completed_at=None)
    )
    fake.submissions.append(
        FakeSubmission("subtimedoutcccccccccccccc", "e" * 24, "TIMED-OUT", completed_at=None)
    )
    return fake


def told_nothing_private(
    done: subprocess.CompletedProcess[str], visits: list[PlatformVisit]
) -> None:
    said = done.stdout + done.stderr
    assert TOKEN not in said and "Traceback" not in said
    assert not any(v.platform_id in said for v in visits)


async def test_status_and_approval_against_the_local_prolific(demo: Path) -> None:
    visits = [platform_visit(1, i) for i in range(PARTICIPANTS)]
    fake = platform_of(visits)
    leaving = {v.platform_id for v in visits if v.arrival is Arrival.LEAVES}
    finished = [n for n, v in enumerate(visits) if v.arrival is not Arrival.LEAVES and n != 2]
    async with serving(fake.app()) as url:
        fake.fault("submissions", "429", "500")  # waited out, tried again
        status = await asyncio.to_thread(
            prolific, "status", "--db", demo, "--study-id", STUDY_ID, url=url
        )
        assert status.returncode == 0, status.stderr
        told_nothing_private(status, visits)
        counts = {
            line[7:]: int(line[:5])
            for line in status.stdout.splitlines()[-6:]
            if line[:5].strip().isdigit()
        }
        assert counts == {
            "completed in both": len(finished),
            "submitted on Prolific, not finished in ozlab (suggested: reject)": len(leaving),
            "finished in ozlab, not submitted on Prolific": 1,
            "returned": 1,
            "timed out": 1,
        }
        by_both_clocks = r"^sub00a+ +AWAITING REVIEW +completed +\d+\.\d +12\.0  completed in both$"
        assert re.search(by_both_clocks, status.stdout, re.MULTILINE), status.stdout
        pages = [q for m, q in fake.requests if q.startswith("/api/v1/submissions/")]
        assert len(pages) == 2 + 3  # the 429 and the 500, then three pages of four

        dry = await asyncio.to_thread(
            prolific, "approve", "--db", demo, "--study-id", STUDY_ID, url=url
        )
        assert dry.returncode == 0, dry.stderr
        total = len(finished) * 1.5
        assert dry.stdout.startswith(
            f"would approve {len(finished)} submissions, {len(finished)} x 1.50 = {total:.2f}"
        )
        assert fake.approvals == []

        fake.fault("approve-after", "hang")  # approved, but the answer comes too late
        lost = await asyncio.to_thread(
            prolific,
            "approve",
            "--db",
            demo,
            "--study-id",
            STUDY_ID,
            "--yes",
            "--timeout",
            "1",
            url=url,
        )
        assert lost.returncode == 11
        assert (
            lost.stderr.strip()
            == f"ozlab: Prolific did not answer in time ({url}) to approve {len(finished)}"
            " submissions"
        )
        again = await asyncio.to_thread(
            prolific, "approve", "--db", demo, "--study-id", STUDY_ID, "--yes", url=url
        )
        assert again.returncode == 0, again.stderr
        assert again.stdout.startswith("nothing to approve")  # the platform says it was done
        assert [sorted(ids) for ids in fake.approvals] == [
            sorted(f"sub{n:02d}aaaaaaaaaaaaaaaaaaaa" for n in finished)
        ]
        for v in visits:
            expected = "AWAITING REVIEW" if v.platform_id in leaving else "APPROVED"
            if visits.index(v) != 2:
                assert fake.status_of(v.platform_id) == expected

        refused = await asyncio.to_thread(
            prolific, "status", "--db", demo, "--study-id", STUDY_ID, url=url, token="wrong-token"
        )
        assert refused.returncode == 11
        assert (
            refused.stderr.strip()
            == "ozlab: Prolific refused the token to list the study's submissions"
        )
        for done in (dry, lost, again, refused):
            told_nothing_private(done, visits)


def bonus_file(folder: Path, visits: list[PlatformVisit]) -> tuple[Path, dict[str, int]]:
    """A bonus for everyone who finished and submitted: 0.50, 0.75, 1.00, … (in cents)."""
    wanted = {
        v.platform_id: 50 + 25 * n
        for n, v in enumerate(visits)
        if v.arrival is not Arrival.LEAVES and n != 2
    }
    rows = "".join(f"{pid},{cents // 100}.{cents % 100:02d}\n" for pid, cents in wanted.items())
    path = folder / "bonuses.csv"
    path.write_text(f"platform_id,amount\n{rows}", encoding="utf-8")
    return path, wanted


def fresh_copy(demo: Path, folder: Path) -> Path:
    folder.mkdir()
    copy = folder / demo.name
    shutil.copy2(demo, copy)
    return copy


async def ozlab_killed_when_hanging(fake: FakeProlific, *args: str | Path, url: str) -> None:
    """``ozlab prolific ARGS`` killed (SIGKILL) once the platform holds its request."""
    await killed_when_hanging(fake, *args, url=url, secret=SECRET)


async def test_a_bonus_is_set_up_shown_and_paid_once(demo: Path, tmp_path: Path) -> None:
    visits = [platform_visit(1, i) for i in range(PARTICIPANTS)]
    db = fresh_copy(demo, tmp_path / "once")
    csv_path, wanted = bonus_file(tmp_path, visits)
    fake = platform_of(visits)
    args = ("bonus", "--db", db, "--study-id", STUDY_ID, "--csv", csv_path)
    async with serving(fake.app()) as url:
        shown = await asyncio.to_thread(prolific, *args, url=url)
        assert shown.returncode == 0, shown.stderr
        amount = sum(wanted.values())
        fees = round(amount / 3)
        assert shown.stdout.startswith(
            f"set up, not paid: bulk bonus bulk{1:020d}: {len(wanted)} participants,"
            f" {amount / 100:.2f} + fees {fees / 100:.2f} = {(amount + fees) / 100:.2f}"
        )
        assert fake.pays == []
        paid = await asyncio.to_thread(prolific, *args, "--yes", url=url)
        assert paid.returncode == 0, paid.stderr
        assert paid.stdout.startswith(f"paid: bulk bonus bulk{1:020d}")  # the one set up
        again = await asyncio.to_thread(prolific, *args, "--yes", url=url)
        assert again.stdout.startswith(f"nothing to pay: the {len(wanted)} bonuses are paid")
        for done in (shown, paid, again):
            told_nothing_private(done, visits)
    assert fake.pays == [f"bulk{1:020d}"]
    for s in fake.submissions:
        wanted_cents = wanted.get(s.participant_id)
        assert s.bonus_payments == ([float(wanted_cents)] if wanted_cents else [])


@pytest.mark.parametrize(
    "step", ["set-up-hang-before", "set-up-hang-after", "pay-hang-before", "pay-hang-after"]
)
async def test_a_kill_at_any_step_of_the_money_path_pays_everyone_exactly_once(
    demo: Path, tmp_path: Path, step: str
) -> None:
    """Killed while the platform holds the request, before or after applying it; the next
    run asks the platform what happened before it sends anything again."""
    visits = [platform_visit(1, i) for i in range(PARTICIPANTS)]
    db = fresh_copy(demo, tmp_path / "killed")
    csv_path, wanted = bonus_file(tmp_path, visits)
    fake = platform_of(visits)
    args = ("bonus", "--db", db, "--study-id", STUDY_ID, "--csv", csv_path, "--yes")
    async with serving(fake.app()) as url:
        fake.fault(step, "once")
        await ozlab_killed_when_hanging(fake, *args, "--settled-after", "0", url=url)
        if step == "pay-hang-before":  # sent, no answer, nothing shown: too early to tell
            early = await asyncio.to_thread(prolific, *args, url=url)
            assert early.returncode == 11
            assert "Prolific does not show it paid yet" in early.stderr
            assert fake.pays == []
        after = await asyncio.to_thread(prolific, *args, "--settled-after", "0", url=url)
        assert after.returncode == 0, after.stderr
        again = await asyncio.to_thread(prolific, *args, "--settled-after", "0", url=url)
        assert again.stdout.startswith("nothing to pay"), again.stdout + again.stderr
        for done in (after, again):
            told_nothing_private(done, visits)
    assert len(fake.pays) == 1  # one payment request applied, whatever the kill
    for pid, cents in wanted.items():
        assert fake.bonuses_of(pid) == [float(cents)]
    others = [s for s in fake.submissions if s.participant_id not in wanted]
    assert all(s.bonus_payments == [] for s in others)


async def test_a_payment_answered_too_late_is_found_paid_and_not_sent_again(
    demo: Path, tmp_path: Path
) -> None:
    visits = [platform_visit(1, i) for i in range(PARTICIPANTS)]
    db = fresh_copy(demo, tmp_path / "late")
    csv_path, wanted = bonus_file(tmp_path, visits)
    fake = platform_of(visits)
    args = ("bonus", "--db", db, "--study-id", STUDY_ID, "--csv", csv_path, "--yes")
    async with serving(fake.app()) as url:
        fake.fault("pay-hang-after", "once")
        late = await asyncio.to_thread(prolific, *args, "--timeout", "1", url=url)
        assert late.returncode == 11
        assert (
            late.stderr.strip()
            == f"ozlab: Prolific did not answer in time ({url}) to pay the bonuses"
        )
        again = await asyncio.to_thread(prolific, *args, url=url)
        assert again.stdout.startswith("nothing to pay"), again.stdout + again.stderr
    assert fake.pays == [f"bulk{1:020d}"]
    assert all(fake.bonuses_of(pid) == [float(c)] for pid, c in wanted.items())


async def test_the_payments_export_holds_the_submission_its_approval_and_the_bonuses(
    demo: Path, tmp_path: Path
) -> None:
    visits = [platform_visit(1, i) for i in range(PARTICIPANTS)]
    db = fresh_copy(demo, tmp_path / "records")
    csv_path, wanted = bonus_file(tmp_path, visits)
    fake = platform_of(visits)
    async with serving(fake.app()) as url:
        approved = await asyncio.to_thread(
            prolific, "approve", "--db", db, "--study-id", STUDY_ID, "--yes", url=url
        )
        assert approved.returncode == 0, approved.stderr
        args = ("bonus", "--db", db, "--study-id", STUDY_ID, "--csv", csv_path, "--yes")
        paid = await asyncio.to_thread(prolific, *args, url=url)
        assert paid.returncode == 0, paid.stderr
    done = ozlab("export", "payments", "--db", db)
    assert done.returncode == 0, done.stderr
    rows = {row["platform_id"]: row for row in csv.DictReader(io.StringIO(done.stdout))}
    submissions = {s.participant_id: s.id for s in fake.submissions}
    for n, v in enumerate(visits):
        row = rows[v.platform_id]
        if n == 2:  # never submitted: nothing from the platform
            assert (row["submission_id"], row["platform_status"], row["bonus"]) == ("", "", "")
            continue
        assert row["submission_id"] == submissions[v.platform_id]
        if v.arrival is Arrival.LEAVES:  # the shared code: neither approved nor paid
            assert (row["platform_status"], row["approved_at"]) == ("AWAITING REVIEW", "")
            assert row["bonus"] == row["bonus_bulk_ids"] == ""
            continue
        assert row["platform_status"] == "APPROVED" and row["approved_at"]
        cents = wanted[v.platform_id]
        assert row["bonus"] == f"{cents / 100:.2f}"
        assert row["bonus_bulk_ids"] == f"bulk{1:020d}" and row["bonus_paid_at"]


async def test_rejection_only_with_reject_and_only_the_shared_code_and_failed_checks(
    demo: Path, tmp_path: Path
) -> None:
    visits = [platform_visit(1, i) for i in range(PARTICIPANTS)]
    db = fresh_copy(demo, tmp_path / "rejecting")
    careless = visits[0].platform_id  # finished, but failed the attention checks
    privacy = Privacy(SECRET)
    with sqlite3.connect(db) as conn:
        [participant] = [
            p
            for p, key in conn.execute("SELECT participant_id, platform_key FROM payments")
            if privacy.unseal(key) == careless
        ]
        conn.execute(
            "UPDATE responses SET attention_ok = 0 WHERE participant_id = ?", (participant,)
        )
    fake = platform_of(visits)
    leaving = [v.platform_id for v in visits if v.arrival is Arrival.LEAVES]
    args = ("approve", "--db", db, "--study-id", STUDY_ID)
    async with serving(fake.app()) as url:
        status = await asyncio.to_thread(
            prolific, "status", "--db", db, "--study-id", STUDY_ID, url=url
        )
        assert "    1  failed two attention checks or more (suggested: reject)" in status.stdout
        dry = await asyncio.to_thread(prolific, *args, "--reject", url=url)
        assert f"; reject: {len(leaving) + 1} submitted without finishing" in dry.stdout
        assert fake.rejections == []
        kept = await asyncio.to_thread(prolific, *args, "--yes", url=url)  # no --reject
        assert kept.returncode == 0, kept.stderr
        assert fake.rejections == [] and fake.status_of(careless) == "AWAITING REVIEW"
        rejected = await asyncio.to_thread(prolific, *args, "--yes", "--reject", url=url)
        assert rejected.returncode == 0, rejected.stderr
        for done in (status, dry, kept, rejected):
            told_nothing_private(done, visits)
    by_participant = {s.id: s.participant_id for s in fake.submissions}
    assert sorted((by_participant[i], c) for i, c in fake.rejections) == sorted(
        [(careless, "FAILED_CHECK"), *((pid, "NO_DATA") for pid in leaving)]
    )
    assert fake.status_of(careless) == "REJECTED"


async def test_a_database_that_is_not_there_is_refused_and_not_made(tmp_path: Path) -> None:
    fake = FakeProlific(STUDY_ID)
    missing = tmp_path / "typo.sqlite"
    async with serving(fake.app()) as url:
        done = await asyncio.to_thread(
            prolific, "status", "--db", missing, "--study-id", STUDY_ID, url=url
        )
    assert done.returncode == 5, done.stdout + done.stderr
    assert done.stderr.count("\n") == 1 and not missing.exists()


async def test_bonuses_by_the_study_file_s_rule_per_task_and_per_success(
    demo: Path, tmp_path: Path
) -> None:
    visits = [platform_visit(1, i) for i in range(PARTICIPANTS)]
    db = fresh_copy(demo, tmp_path / "rule")
    rule = "  bonus:\n    per_completed_task: 0.20\n    per_success: 0.35\n"
    study = recruiting_study(tmp_path, extra=rule)
    privacy = Privacy(SECRET)
    expected: dict[str, int] = {}
    with sqlite3.connect(db) as conn:
        conn.execute(  # one participant's task was not done: ended, not a success
            "UPDATE sessions SET success = 0, correct = 0 WHERE id = (SELECT MIN(id) FROM"
            " sessions WHERE state = 'ended')"
        )
        for key, ended, succeeded in conn.execute(
            "SELECT p.platform_key, SUM(s.state = 'ended'),"
            " SUM(COALESCE(s.correct, s.success, 0) = 1)"
            " FROM payments p JOIN sessions s ON s.participant_id = p.participant_id"
            " GROUP BY p.id"
        ):
            if 20 * ended + 35 * succeeded:
                expected[privacy.unseal(key)] = 20 * ended + 35 * succeeded
    assert sorted(set(expected.values())) == [20, 55]  # one task each; one not a success
    fake = platform_of(visits)
    async with serving(fake.app()) as url:
        args = ("bonus", "--db", db, "--study-id", STUDY_ID, "--from-study", study, "--yes")
        refused = await asyncio.to_thread(prolific, *args, url=url)
        # the one who finished without submitting on Prolific cannot be paid a bonus there
        assert refused.returncode == 3
        assert "1 rows name a participant without a submission" in refused.stderr
        fake.submissions.append(FakeSubmission("sub02late", visits[2].platform_id))
        paid = await asyncio.to_thread(prolific, *args, url=url)
        assert paid.returncode == 0, paid.stderr
        told_nothing_private(paid, visits)
    for pid, cents in expected.items():
        assert fake.bonuses_of(pid) == [float(cents)]
