"""What a study leaves behind names nobody and holds no credentials.

The database file (and its WAL) is searched byte by byte for the bot token, the secret and
the participant's Telegram id, names and username. Logs are checked where researchers get
them: from ``ozlab run`` itself, whose handler redacts the token and secret. The in-process
bot installs no such handler; its test shows that python-telegram-bot does log the token at
DEBUG, so that the CLI's filter, not luck, is what keeps it out.
"""

from __future__ import annotations

import asyncio
import io
import logging
from collections.abc import Iterator

import pytest

from bot.pilot.emulator import BotApiEmulator, Participant
from bot.runtime.logging import RedactSecrets
from tests.conftest import SECRET, TOKEN, StartBot, consent, say
from tests.e2e_support import SECRET_32, OzlabProcess, OzlabProcesses, database_bytes
from tests.storage_probe import sealed_payloads

pytestmark = pytest.mark.slow

USER_ID = 987_654_321
FIRST_NAME = "Zebulonia"
LAST_NAME = "Quaxworthy"
USERNAME = "zq_private_4711"
IDENTITY = (str(USER_ID), FIRST_NAME, LAST_NAME, USERNAME)
TYPED = "adventure games for linux"


def someone(emulator: BotApiEmulator) -> Participant:
    return emulator.participant(
        USER_ID, first_name=FIRST_NAME, last_name=LAST_NAME, username=USERNAME
    )


async def whole_study(p: Participant) -> None:
    """Consent, a message, the four ratings and a comment: every kind of row and update."""
    await consent(p)
    await say(p, TYPED)
    await p.tap(text="Finish task")
    await p.wait_for_text("1/5")
    for n, label in enumerate(("Agree", "Neutral", "Agree", "Disagree"), start=2):
        value = {"Disagree": 2, "Neutral": 3, "Agree": 4}[label]
        await p.tap(text=f"{value} · {label}")
        await p.wait_for_text(f"{n}/5")
    await p.send_text("Fine, thanks.")
    await p.wait_for_text("Thank you for taking part")


def assert_no_identity_or_credentials(blob: bytes) -> None:
    assert TYPED.encode() in blob  # the search sees plain text: what was typed is stored
    for needle in (TOKEN, TOKEN.split(":", 1)[1], SECRET_32, *IDENTITY):
        assert needle.encode() not in blob, needle


async def test_ozlab_run_verbose_logs_no_credentials_and_the_database_names_nobody(
    emulator: BotApiEmulator, ozlab: OzlabProcesses
) -> None:
    bot = await ozlab.start("-v")
    await whole_study(someone(emulator))
    assert_no_identity_or_credentials(database_bytes(ozlab.db))  # WAL included, while running

    await emulator.stop()  # error paths log too: the API server goes away
    await bot.wait_for_log("Telegram cannot be reached (")
    assert await bot.terminate() == 0

    log = bot.stderr
    assert " DEBUG " in log  # verbose indeed (python-telegram-bot's own records stay out)
    assert TOKEN not in log
    assert SECRET_32 not in log
    assert TOKEN.split(":", 1)[1] not in log  # not even the secret half of the token
    assert_no_identity_or_credentials(database_bytes(ozlab.db))  # after the checkpoint
    assert sealed_payloads(ozlab.db) == 0


@pytest.mark.parametrize(
    "verbosity",
    [
        pytest.param((), id="default"),
        pytest.param(("-v",), id="verbose"),
    ],
)
async def test_ozlab_run_logs_name_nobody(
    emulator: BotApiEmulator, ozlab: OzlabProcesses, verbosity: tuple[str, ...]
) -> None:
    """The consent text promises names are not kept; a log file is kept, too."""
    bot = await ozlab.start(*verbosity)
    p = someone(emulator)
    await consent(p)
    await say(p, TYPED)
    assert await bot.terminate() == 0
    for needle in IDENTITY:
        assert needle not in bot.stderr, needle


async def test_a_wrong_api_url_does_not_print_the_token(
    emulator: BotApiEmulator, ozlab: OzlabProcesses
) -> None:
    """A mistyped --bot-api-url answers 404, which PTB reports as an invalid token."""
    bot: OzlabProcess = await ozlab.start(
        api_url=f"{emulator.server_url}/not-the-api", wait_ready=False
    )
    code = await asyncio.wait_for(bot.finish(), 20)
    assert code != 0
    assert "did not accept the bot token" in bot.stderr  # it did fail for that reason
    assert "Unclosed" not in bot.stderr  # and cleaned up after itself
    assert TOKEN not in bot.stderr
    assert TOKEN.split(":", 1)[1] not in bot.stderr


class Lines(logging.Handler):
    """Formats each record when it is emitted (a later filter may rewrite the record)."""

    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.setFormatter(logging.Formatter("%(name)s %(levelname)s %(message)s"))
        self.lines: list[tuple[str, str]] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.lines.append((record.name, self.format(record)))


@pytest.fixture
def captured(caplog: pytest.LogCaptureFixture) -> Iterator[tuple[Lines, io.StringIO]]:
    """Every record at DEBUG, raw and as the CLI's redacting handler writes it."""
    caplog.set_level(logging.DEBUG)
    raw = Lines()
    written = io.StringIO()
    redacting = logging.StreamHandler(written)
    redacting.setFormatter(logging.Formatter("%(name)s %(levelname)s %(message)s"))
    redacting.addFilter(RedactSecrets([TOKEN, SECRET]))
    root = logging.getLogger()
    root.addHandler(raw)  # first: it must see each record before the filter rewrites it
    root.addHandler(redacting)
    try:
        yield raw, written
    finally:
        root.removeHandler(redacting)
        root.removeHandler(raw)


async def test_in_process_only_the_library_logs_the_token_and_the_filter_removes_it(
    emulator: BotApiEmulator, start_bot: StartBot, captured: tuple[Lines, io.StringIO]
) -> None:
    raw, written = captured
    bot = await start_bot()
    p = someone(emulator)
    await consent(p)
    await say(p, TYPED)
    await p.tap(text="Finish task")
    await p.wait_for_text("1/5")
    await bot.stop()

    leaking = {name for name, line in raw.lines if TOKEN in line}
    assert leaking == {"telegram.ext.ExtBot"}  # PTB's "Set Bot API URL", never ozlab's code
    assert not any(SECRET in line for _, line in raw.lines)
    assert len(raw.lines) > 50
    output = written.getvalue()
    assert output.count("\n") >= len(raw.lines)
    assert TOKEN not in output
    assert "<redacted>" in output
