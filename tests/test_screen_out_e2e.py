"""Screened-out and declining Prolific participants through the real bot on the emulator, as
the study file says: the screen-out code where the study gives one, the platform's return
instruction where it does not; ``ozlab prolific status`` and ``approve`` then never suggest
or make a rejection for them (Prolific does not allow one for a screen-out), and ask those
who submitted instead of returning to return (``--ask-returns``)."""

from __future__ import annotations

import asyncio
import subprocess
from pathlib import Path

import pytest

from bot.pilot.emulator import BotApiEmulator
from questionnaires.models import Questionnaire
from scenarios.models import Recruitment, StudyBundle
from tests.conftest import SECRET, StartBot
from tests.fake_prolific import FakeProlific, FakeSubmission
from tests.fake_servers import serving
from tests.prolific_commands import prolific as prolific_command

pytestmark = pytest.mark.slow

STUDY_ID = "6543210fedcba9876543210f"
SCREENED, SCREENED_PAID, DECLINED = "5f1a2b3c4d5e6f7a8b9c0d1e", "7" * 24, "60aa11bb22cc33dd44ee55ff"
SCREEN = Questionnaire.model_validate(
    {
        "id": "screen",
        "title": "Before we start",
        "items": [{"type": "yes_no", "id": "screen.adult", "text": "Are you 18 or older?"}],
        "eligible_if": [{"item": "screen.adult", "equals": 1}],
    }
)


def screening(hmd: StudyBundle) -> StudyBundle:
    """HMD recruiting on Prolific with a screening question; a screen-out code, none for a
    decline."""
    recruitment = Recruitment(completion_code="C1A2B3C4", screened_out_code="SCREEN9")
    study = hmd.study.model_copy(update={"recruitment": recruitment, "screening": ("screen",)})
    questionnaires = {**hmd.questionnaires, "screen": SCREEN}
    return hmd.model_copy(update={"study": study, "questionnaires": questionnaires})


def prolific(*args: str | Path, url: str) -> subprocess.CompletedProcess[str]:
    return prolific_command(*args, url=url, secret=SECRET)


async def test_screened_out_and_declining_participants_are_never_rejected(
    emulator: BotApiEmulator, start_bot: StartBot, hmd: StudyBundle
) -> None:
    bundle = screening(hmd)
    bot = await start_bot(bundle)
    for chat, pid in ((701, SCREENED), (702, SCREENED_PAID)):
        young = emulator.participant(chat)
        await young.send_text(f"/start pid_{pid}")
        await young.wait_for_text("Privacy agreement")
        await young.tap(text="I agree")
        await young.wait_for_text("18 or older")
        await young.tap(text="No")
        code = await young.wait_for_text("SCREEN9")
        assert "https://app.prolific.com/submissions/complete?cc=SCREEN9" in code.text
    declining = emulator.participant(703)
    await declining.send_text(f"/start pid_{DECLINED}")
    await declining.wait_for_text("Privacy agreement")
    await declining.tap(text="I do not agree")
    told = await declining.wait_for_text("return your submission on Prolific")
    assert "cc=" not in told.text
    await bot.stop()

    fake = FakeProlific(STUDY_ID)
    fake.submissions += [
        # the screen-out code, set up on Prolific for review by hand
        FakeSubmission("sub01aaaaaaaaaaaaaaaaaaaa", SCREENED, entered_code="SCREEN9"),
        # the screen-out code with Prolific's fixed screen-out payment: screened out, paid
        FakeSubmission("sub02aaaaaaaaaaaaaaaaaaaa", SCREENED_PAID, "SCREENED OUT"),
        # declined, then submitted the study's code (passed on) instead of returning
        FakeSubmission("sub03aaaaaaaaaaaaaaaaaaaa", DECLINED, entered_code="C1A2B3C4"),
    ]
    fake.completion_codes.append(
        {
            "code": "SCREEN9",
            "code_type": "FIXED_SCREENOUT",
            "actions": [
                {"action": "FIXED_SCREEN_OUT_PAYMENT", "fixed_screen_out_reward": 50, "slots": 5}
            ],
        }
    )
    args = ("--db", bot.db, "--study-id", STUDY_ID)
    async with serving(fake.app()) as url:
        status = await asyncio.to_thread(prolific, "status", *args, url=url)
        assert status.returncode == 0, status.stderr
        standing = {line.split()[0]: line for line in status.stdout.splitlines()[1:4]}
        assert standing["sub01aaaaaaaaaaaaaaaaaaaa"].endswith(
            "ended in ozlab with the code for it (review on Prolific)"
        )
        assert standing["sub02aaaaaaaaaaaaaaaaaaaa"].endswith("screened out")
        assert standing["sub03aaaaaaaaaaaaaaaaaaaa"].endswith(
            "screened out, declined or timed out in ozlab (suggested: ask for a return)"
        )
        assert "suggested: reject" not in status.stdout
        assert status.stdout.splitlines()[-1] == (
            "hmd: screened_out_code SCREEN9: Prolific screens out and pays its fixed screen-out"
            " reward of 0.50 itself"
        )
        fake.completion_codes.pop()  # the code not set up on Prolific: said so
        missing = await asyncio.to_thread(prolific, "status", *args, url=url)
        assert missing.stdout.splitlines()[-1] == (
            "hmd: screened_out_code SCREEN9 is not a completion code of the Prolific study:"
            " add it there"
        )

        dry = await asyncio.to_thread(
            prolific, "approve", *args, "--reject", "--ask-returns", url=url
        )
        assert dry.returncode == 0, dry.stderr
        assert "ask 1 to return" in dry.stdout and fake.return_requests == []
        rejecting = await asyncio.to_thread(
            prolific, "approve", *args, "--yes", "--reject", url=url
        )
        assert rejecting.returncode == 0, rejecting.stderr
        assert fake.rejections == [] and fake.approvals == []
        asking = await asyncio.to_thread(
            prolific, "approve", *args, "--yes", "--ask-returns", url=url
        )
        assert asking.returncode == 0, asking.stderr
        assert fake.return_requests == [("sub03aaaaaaaaaaaaaaaaaaaa", ["Withdrew consent"])]
        again = await asyncio.to_thread(
            prolific, "approve", *args, "--yes", "--ask-returns", url=url
        )
        assert again.returncode == 0, again.stderr
        assert len(fake.return_requests) == 1  # asked once: Prolific shows it was asked
    for done in (status, dry, rejecting, asking, again):
        said = done.stdout + done.stderr
        assert not any(pid in said for pid in (SCREENED, SCREENED_PAID, DECLINED))
