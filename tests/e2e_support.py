"""Helpers for the restart, ordering and privacy end-to-end tests.

- :class:`GatedEmulator` parks one Bot API call until the test lets it go, so a bot can be
  killed at an exact point of its work (after its commit, before Telegram hears from it).
- :class:`OzlabProcesses` runs ``ozlab run`` as a researcher does, in a subprocess, and
  always kills and reaps what it started.
- :class:`Shopper` chats with the demo shop knowing every answer in advance: the shop is a
  pure function of the history, so a right answer after a restart proves the history survived.
"""
# ruff: noqa: ASYNC109 - the waiting helpers take ``timeout=`` like the emulator's

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import sys
from dataclasses import dataclass, field
from pathlib import Path

from aiohttp import web

from bot.core.conversation import Conversation, SystemReply, Turn
from bot.pilot.emulator import BotApiEmulator, Participant
from bot.pilot.emulator.waiting import Waiters
from bot.systems.demo import DemoShop
from scenarios.models import StudyBundle
from tests.conftest import free_port
from tests.store_reads import StoredStudy

PROJECT_ROOT = Path(__file__).resolve().parents[1]
SECRET_32 = "ozlab-e2e-secret-0123456789abcde"  # 32 characters, like a real one


# --- parking one Bot API call ---------------------------------------------------------------


class Hold:
    """One Bot API call parked on its way to or back from "Telegram"."""

    def __init__(self, method: str, *, reaches_telegram: bool, passing: int = 0) -> None:
        self.method = method
        self.reaches_telegram = reaches_telegram
        self.passing = passing  # calls let through before the one parked
        self.reached = asyncio.Event()
        self.released = asyncio.Event()

    async def wait_reached(self, timeout: float = 10.0) -> None:
        await asyncio.wait_for(self.reached.wait(), timeout)


class GatedEmulator(BotApiEmulator):
    """The Bot API emulator, able to park the next call of a method (see :meth:`hold`)."""

    def __init__(self, token: str) -> None:
        super().__init__(token)
        self._holds: list[Hold] = []

    def hold(self, method: str, *, reaches_telegram: bool = False, passing: int = 0) -> Hold:
        """Park the next ``method`` call (after ``passing`` more) until released (the test
        kills the bot meanwhile).

        By default the call is then dropped unprocessed: the bot died before its request
        reached Telegram. With ``reaches_telegram`` it is carried out first (the participant
        sees it) and only the answer is parked: the bot died before hearing back.
        """
        hold = Hold(method, reaches_telegram=reaches_telegram, passing=passing)
        self._holds.append(hold)
        return hold

    async def _handle(self, request: web.Request) -> web.Response:
        method = request.match_info.get("method", "").lower()
        hold = next(
            (h for h in self._holds if h.method.lower() == method and not h.reached.is_set()),
            None,
        )
        if hold is not None and hold.passing:
            hold.passing -= 1
            hold = None
        if hold is None:
            return await super()._handle(request)
        response = await super()._handle(request) if hold.reaches_telegram else None
        hold.reached.set()
        await hold.released.wait()
        return response or web.Response(status=502)

    async def stop(self) -> None:
        for hold in self._holds:
            hold.released.set()
        await super().stop()


# --- ozlab run in a subprocess ----------------------------------------------------------------


@dataclass
class OzlabProcess:
    """One ``ozlab run`` process and everything it wrote to stderr."""

    process: asyncio.subprocess.Process
    chunks: list[str] = field(default_factory=list)
    reader: asyncio.Task[None] | None = None
    _waiters: Waiters = field(default_factory=Waiters)

    @property
    def pid(self) -> int:
        return self.process.pid

    @property
    def stderr(self) -> str:
        return "".join(self.chunks)

    async def _read(self) -> None:
        # Chunks, not lines: a DEBUG line can outgrow StreamReader's line limit, and a reader
        # that stops would leave the bot blocked on a full pipe.
        assert self.process.stderr is not None
        while chunk := await self.process.stderr.read(65536):
            self.chunks.append(chunk.decode(errors="replace"))
            self._waiters.wake()

    async def wait_for_log(self, substring: str, timeout: float = 10.0) -> None:
        """Wait until stderr contains ``substring`` (woken by each new chunk, never polling)."""
        await self._waiters.until(
            lambda: substring in self.stderr,
            timeout,
            lambda: f"no {substring!r} in the log within {timeout:g} s:\n{self.stderr[-2000:]}",
        )

    def kill_now(self) -> None:
        """SIGKILL at once, without yielding to the event loop (the emulator's, too)."""
        if self.process.returncode is None:
            os.kill(self.process.pid, signal.SIGKILL)

    async def kill(self) -> None:
        self.kill_now()
        await self.finish()

    async def terminate(self, timeout: float = 15.0) -> int:
        """SIGTERM, as Ctrl-C or a service manager would: the clean shutdown path."""
        if self.process.returncode is None:
            self.process.send_signal(signal.SIGTERM)
        try:
            return await asyncio.wait_for(self.finish(), timeout)
        except TimeoutError:
            await self.kill()
            raise

    async def finish(self) -> int:
        """Wait for the exit and for the last stderr line."""
        code = await self.process.wait()
        if self.reader is not None:
            await self.reader
        return code


class OzlabProcesses(StoredStudy):
    """Starts ``python -m bot.cli run`` against an emulator; :meth:`close` reaps them all.
    The database they share is read back through the store."""

    def __init__(
        self,
        emulator: BotApiEmulator,
        workdir: Path,
        db: str | None = None,
        *,
        webhook: bool = False,
    ) -> None:
        """``db``: the study's database (default a SQLite file in ``workdir``); ``webhook``:
        the bots get their updates by webhook (on one loopback port for every start, as
        behind a proxy), not by polling."""
        self.emulator = emulator
        self.workdir = workdir
        self.db: Path | str = db or workdir / "study.sqlite"
        self.started: list[OzlabProcess] = []
        self.webhook_port = free_port() if webhook else None
        self.extra_env: dict[str, str] = {}
        """Set for every process started from now on (over the usual variables)."""

    def receiving(self, study: str) -> list[str]:
        """The flags that make the bot receive as this run does (none: polling)."""
        if self.webhook_port is None:
            return []
        url = f"http://127.0.0.1:{self.webhook_port}/ozlab/{Path(study).stem}"
        return ["--webhook", url, "--listen", f"127.0.0.1:{self.webhook_port}"]

    def _ready(self, emulator: BotApiEmulator) -> int:
        """Grows as a bot becomes ready: its polls, or the webhooks it set."""
        if self.webhook_port is None:
            return emulator.requests["getUpdates"]
        return emulator.webhooks_set

    def env(self) -> dict[str, str]:
        env = {k: v for k, v in os.environ.items() if not k.startswith(("OZLAB_", "TELEGRAM_"))}
        env["TELEGRAM_BOT_TOKEN"] = self.emulator.token
        env["OZLAB_SECRET"] = SECRET_32
        env["PYTHONPATH"] = os.pathsep.join(
            [str(PROJECT_ROOT), *filter(None, [os.environ.get("PYTHONPATH")])]
        )
        return env | self.extra_env

    async def start(
        self,
        *extra: str,
        study: str = "hmd",
        api_url: str | None = None,
        wait_ready: bool = True,
        timeout: float = 20.0,
    ) -> OzlabProcess:
        """Start the bot; with ``wait_ready``, return once it polls the emulator (or has set
        its webhook)."""
        ready_before = self._ready(self.emulator)
        process = await asyncio.create_subprocess_exec(
            sys.executable,
            "-m",
            "bot.cli",
            "run",
            study,
            "--db",
            str(self.db),
            "--bot-api-url",
            api_url or self.emulator.server_url,
            "--no-pacing",  # the emulator keeps no flood limits: no reason to wait for them
            *self.receiving(study),
            *extra,
            stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.DEVNULL,
            stderr=asyncio.subprocess.PIPE,
            cwd=self.workdir,
            env=self.env(),
        )
        bot = OzlabProcess(process)
        bot.reader = asyncio.create_task(bot._read())
        self.started.append(bot)
        if wait_ready:
            polling = asyncio.create_task(
                self.emulator.wait_until(lambda e: self._ready(e) > ready_before, timeout=timeout)
            )
            exited = asyncio.create_task(process.wait())
            done, _ = await asyncio.wait({polling, exited}, return_when=asyncio.FIRST_COMPLETED)
            ready = polling in done and polling.exception() is None
            for task in (polling, exited):
                if not task.done():
                    task.cancel()
                    with contextlib.suppress(asyncio.CancelledError):
                        await task
            if not ready:
                await bot.kill()
                raise AssertionError(f"ozlab run did not start polling:\n{bot.stderr[-3000:]}")
        return bot

    async def close(self) -> None:
        for bot in self.started:
            with contextlib.suppress(ProcessLookupError):
                bot.kill_now()
            await bot.finish()


def database_bytes(db: Path) -> bytes:
    """The database file and its WAL and shared-memory files, as they are on disk now."""
    parts = [db, db.with_name(db.name + "-wal"), db.with_name(db.name + "-shm")]
    return b"".join(path.read_bytes() for path in parts if path.exists())


# --- a participant who knows what the demo shop will answer -----------------------------------


def only_system(bundle: StudyBundle, system_id: str) -> StudyBundle:
    """The study with one system, so that every participant gets it."""
    systems = tuple(s for s in bundle.study.systems if s.id == system_id)
    return bundle.model_copy(update={"study": bundle.study.model_copy(update={"systems": systems})})


@dataclass(frozen=True)
class Sent:
    text: str
    update_id: int
    before: int  # how many bot messages the chat had when it was sent


@dataclass
class Shopper:
    """A participant talking to the demo shop; :meth:`expect` is the shop's exact answer."""

    p: Participant
    shop: DemoShop
    start: int = 0
    """How many bot messages the chat had before the first message to the shop."""
    history: list[Turn] = field(default_factory=list)
    received: list[str] = field(default_factory=list)
    """Every message the shop's answers were made of, in order."""

    @classmethod
    def of(cls, p: Participant, bundle: StudyBundle, system_id: str) -> Shopper:
        [spec] = [s for s in bundle.study.systems if s.id == system_id]
        return cls(p, DemoShop(spec.variant), start=len(p.messages))

    def expect(self, text: str, *, history: bool = True) -> SystemReply:
        past = tuple(self.history) if history else ()
        return self.shop.reply(Conversation("s", "hmd-gift", "", past, text))

    async def send(self, text: str) -> Sent:
        before = len(self.p.messages)
        return Sent(text, await self.p.send_text(text), before)

    async def answer(self, sent: Sent, timeout: float = 10.0) -> SystemReply:
        """Wait for the shop's answer to ``sent``; it must be the next messages, word for word."""
        reply = self.expect(sent.text)
        await self.p.wait_for_message_count(sent.before + len(reply.texts), timeout)
        got = [m.text for m in self.p.messages[sent.before : sent.before + len(reply.texts)]]
        assert got == list(reply.texts), (sent.text, got)
        self.history.append(Turn(sent.text, "\n\n".join(reply.texts)))
        self.received.extend(reply.texts)
        return reply

    async def say(self, text: str) -> SystemReply:
        return await self.answer(await self.send(text))


async def settle(p: Participant) -> None:
    """Return once every earlier write of this participant's steps is durable.

    A button that means nothing is answered "already recorded" after a commit; the store's
    single writer commits in order, so the marks that earlier messages went out (written
    without waiting, after each send) are durable by then. A kill after this point cannot
    re-send an earlier message.
    """
    await p.send_callback("settle")
    await p.wait_for_toast("already recorded")
