"""Shared fixtures: a Bot API emulator on loopback and the real bot running against it."""

from __future__ import annotations

import asyncio
import gc
import socket
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator, Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
from pydantic import ValidationError

from bot.core.media import Speaker, Transcriber
from bot.pilot.emulator import BotApiEmulator, Participant
from bot.runtime.app import BotConfig, run_bot
from bot.store import open_store
from bot.systems.base import System
from bot.telegram.webhook import Webhook
from scenarios.loading import load_study
from scenarios.models import StudyBundle
from scenarios.systems import DemoSystem
from tests.logging_kept import logging_kept
from tests.postgres_server import PostgresServer, PostgresUnavailable
from tests.store_reads import StoredStudy

if TYPE_CHECKING:
    from tests.e2e_support import OzlabProcesses

TOKEN = "123456789:AAE-test-token-for-ozlab-0123456789ab"
SECRET = "test-secret-that-is-long-enough"


def pytest_configure(config: pytest.Config) -> None:
    """No garbage collection while the test modules and the libraries are imported: what
    imports make stays, and each pass walked it again (half a second of every process's
    collection). It starts again with the tests."""
    gc.disable()


@pytest.hookimpl(tryfirst=True)
def pytest_runtestloop(session: pytest.Session) -> None:
    """Before the tests (in each worker, and in the process that hands them out): what
    collection made (the libraries and test modules: some 350,000 objects a
    process) is left out of the garbage collector's passes, and a pass waits for 20,000 new
    objects, not 700: the statistics tests make millions, and each worker spent 4 s of its
    run collecting garbage, 3 s of it walking the libraries again (1.3 s now)."""
    gc.collect()
    gc.freeze()
    gc.set_threshold(20_000, 20, 20)
    gc.enable()


@pytest.hookimpl(trylast=True)
def pytest_unconfigure(config: pytest.Config) -> None:
    """What the tests left is frozen too: the interpreter's exit runs one more full
    collection, which walked all of it (0.9 s of a process's end on a busy machine, 0.3 s
    with it frozen)."""
    gc.freeze()


@pytest.fixture(autouse=True)
def logging_as_it_was() -> Iterator[None]:
    """Each test leaves logging as it found it (see :mod:`tests.logging_kept`)."""
    with logging_kept():
        yield


@pytest.fixture(scope="session")
def hmd() -> StudyBundle:
    return load_study("hmd")


class PostgresForTests(PostgresServer):
    """The throw-away server, failing the test in one line when there is none to start."""

    def start(self) -> None:
        try:
            super().start()
        except PostgresUnavailable as error:
            pytest.fail(str(error), pytrace=False)


@pytest.fixture(scope="session")
def postgres() -> Iterator[PostgresServer]:
    """A throw-away PostgreSQL server, started on first use: other tests pay nothing for it."""
    # No fsync: no test stops the server or the machine, only the bot (whose commits the
    # server keeps either way); the benchmarks start theirs with fsync on, as deployed.
    server = PostgresForTests(fsync=False)
    try:
        yield server
    finally:
        server.stop()


MADE_STUDY = "made"
"""The study each database of ``postgres_study`` keeps."""


@pytest.fixture(scope="session")
def migrated_database(postgres: PostgresServer) -> str:
    """A database of the tests' server (one a worker, made on first use) keeping the study
    ``MADE_STUDY`` as ``open_store`` makes it, closed: the template of ``postgres_study``."""
    url = postgres.fresh_database()

    async def made() -> None:
        await (await open_store(f"{url}?study={MADE_STUDY}")).close()

    with ThreadPoolExecutor(1) as thread:  # a loop of its own, whatever runs in this one
        thread.submit(asyncio.run, made()).result()
    return url


@pytest.fixture
def postgres_study(postgres: PostgresServer, migrated_database: str) -> Iterator[str]:
    """The URL of a study made as the bot makes one, alone on a database of its own (dropped
    once the test has closed it). A copy of ``migrated_database`` takes a quarter of the
    migrations' time, and no test's study slows the next (one shared database's catalogs grew
    with every study made in it); the migrations are tested from scratch where they are the
    point (tests/test_postgres_store.py)."""
    url = postgres.fresh_database(migrated_database)
    yield f"{url}?study={MADE_STUDY}"
    postgres.drop_database(url)


def free_port() -> int:
    """A TCP port nothing listens on now, on loopback (for a bot's webhook)."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@pytest.fixture
def receiving() -> str:
    """How the bot gets its updates: "polling", or "webhook" where a test parametrizes
    ``receiving`` over both."""
    return "polling"


@pytest.fixture
async def emulator() -> AsyncIterator[BotApiEmulator]:
    async with BotApiEmulator(TOKEN) as emu:
        yield emu


@dataclass
class RunningBot(StoredStudy):
    """The real bot, in this process, on a real study database (read back through the store)."""

    db: Path | str
    task: asyncio.Task[None]
    stop_event: asyncio.Event

    async def stop(self) -> None:
        self.stop_event.set()
        await asyncio.wait_for(self.task, 15)


StartBot = Callable[..., Awaitable[RunningBot]]


@pytest.fixture
def stored_in() -> str:
    """Where a started bot keeps its study: "sqlite", or "postgresql" (a fresh database on
    the tests' server) where a test parametrizes ``stored_in``."""
    return "sqlite"


@pytest.fixture
async def start_bot(
    emulator: BotApiEmulator,
    tmp_path: Path,
    hmd: StudyBundle,
    receiving: str,
    stored_in: str,
    request: pytest.FixtureRequest,
) -> AsyncIterator[StartBot]:
    running: list[RunningBot] = []
    port = free_port()  # the same for every start: Telegram keeps the URL it was given

    async def start(
        bundle: StudyBundle | None = None,
        *,
        systems: Mapping[str, System] | None = None,
        db: Path | None = None,
        clock: Callable[[], float] = time.time,
        transcriber: Transcriber | None = None,
        speaker: Speaker | None = None,
        **config: Any,
    ) -> RunningBot:
        # No pacing unless a test asks for it: the emulator keeps no flood limits by default.
        settings: dict[str, Any] = {"poll_timeout": 1, "tick_interval": 0.05, "pacing": None}
        if receiving == "webhook":
            url = f"http://127.0.0.1:{port}/ozlab/{(bundle or hmd).study.id}"
            settings["webhook"] = Webhook(url, "127.0.0.1", port, "webhook-secret_0123")
        settings |= config
        path: Path | str = db or tmp_path / "study.sqlite"
        if db is None and stored_in == "postgresql":
            path = request.getfixturevalue("postgres").fresh_database()
        bot_config = BotConfig(
            db=path, token=TOKEN, secret=SECRET, bot_api_url=emulator.server_url, **settings
        )
        stop, ready = asyncio.Event(), asyncio.Event()
        task = asyncio.create_task(
            run_bot(
                bundle or hmd,
                bot_config,
                stop=stop,
                ready=ready,
                systems=systems,
                clock=clock,
                transcriber=transcriber,
                speaker=speaker,
            )
        )
        waiting = asyncio.create_task(ready.wait())
        await asyncio.wait({task, waiting}, timeout=15, return_when=asyncio.FIRST_COMPLETED)
        if task.done():
            waiting.cancel()
            task.result()
        bot = RunningBot(path, task, stop)
        running.append(bot)
        return bot

    yield start
    for bot in running:
        if not bot.task.done():
            await bot.stop()


@pytest.fixture
async def ozlab(
    emulator: BotApiEmulator, tmp_path: Path, receiving: str
) -> AsyncIterator[OzlabProcesses]:
    """``ozlab run`` processes against the emulator, reaped at the end of the test."""
    from tests.e2e_support import OzlabProcesses  # subprocess machinery: only when asked

    processes = OzlabProcesses(emulator, tmp_path, webhook=receiving == "webhook")
    try:
        yield processes
    finally:
        await processes.close()


async def consent(p: Participant) -> None:
    """/start and "I agree": the participant stands at the task brief."""
    await p.send_text("/start")
    await p.wait_for_text("Privacy agreement")
    await p.tap(text="I agree")
    await p.wait_for_text("Your task")


async def say(p: Participant, text: str) -> str:
    """Send a message and return the text of the bot's next message."""
    before = len(p.messages)
    await p.send_text(text)
    await p.wait_for(lambda q: len(q.messages) > before)
    return p.messages[before].text


def _variants() -> str:
    """pydantic's words for a wrong demo variant, whichever variants the demo has today."""
    try:
        DemoSystem.model_validate({"type": "demo", "id": "a", "variant": "v9"})
    except ValidationError as error:
        return error.errors()[0]["msg"]
    raise AssertionError("v9 became a variant")


VARIANTS = _variants()
