"""The composition root: the one place that wires Telegram, the store, the systems and the
clock around the engine. Everything else receives its dependencies."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import time
from collections.abc import Callable, Coroutine, Mapping
from dataclasses import dataclass
from typing import Any

from telegram.error import InvalidToken
from telegram.ext import Application, ApplicationBuilder, ContextTypes, TypeHandler

from bot.core.errors import StoreUnreachable, TelegramSetupError
from bot.core.media import Speaker, Transcriber
from bot.core.privacy import Privacy
from bot.engine.delivery import Delivery
from bot.runtime.annotators import AnnotationRunner
from bot.runtime.dispatch import Dispatcher
from bot.runtime.heartbeat import Heartbeat
from bot.runtime.media import MediaIntake
from bot.runtime.participants import StudyRunner
from bot.speech.engines import study_engines
from bot.store import StudyStore, open_store
from bot.store.claims import WriterClaim, claim
from bot.store.definition import definition_json
from bot.store.opening import Database, locate
from bot.systems.base import System
from bot.systems.registry import build_systems, close_systems
from bot.systems.tools import scenario_tools
from bot.telegram.files import TelegramFiles
from bot.telegram.flood import TELEGRAM_LIMITS, FloodLimits, FloodPacer
from bot.telegram.menu import publish_commands
from bot.telegram.ordering import ChatOrderedProcessor
from bot.telegram.outage import Outage, pause, reach
from bot.telegram.outbox import FLOOD_WAIT_LIMIT, TelegramOutbox
from bot.telegram.poller import DurablePoller
from bot.telegram.request import AiohttpRequest
from bot.telegram.webhook import Webhook, WebhookReceiver
from scenarios.models import StudyBundle

log = logging.getLogger(__name__)

TELEGRAM_API_URL = "https://api.telegram.org"
TOKEN_ENV = "TELEGRAM_BOT_TOKEN"
DATABASE_OUTAGE = (
    "no update is taken meanwhile (Telegram keeps them), nothing acknowledged is lost, and the"
    " bot goes on from what the database keeps"
)


@dataclass(frozen=True)
class BotConfig:
    db: Database
    token: str
    secret: str
    bot_api_url: str = TELEGRAM_API_URL
    tick_interval: float = 1.0
    command_interval: float = 0.2
    heartbeat_interval: float = 60.0
    """Seconds between two "ozlab alive" lines in the log (``bot.runtime.heartbeat``)."""
    poll_timeout: int = 20
    max_concurrent_updates: int = 256
    pacing: FloodLimits | None = TELEGRAM_LIMITS
    """Telegram's flood limits kept before each message; None only where no Telegram is
    behind the Bot API (the demo, the tests and the benchmarks run on the emulator)."""
    flood_wait_limit: float = FLOOD_WAIT_LIMIT
    """Seconds of Telegram's "retry after" one message may wait out before it is given up
    (and lost); none by default: delayed, never lost."""
    webhook: Webhook | None = None
    """Telegram posts updates to this webhook instead of being polled (``--webhook``)."""
    foreign_chats: bool = False
    """Chat ids sealed under another secret are left alone rather than refused: only for
    the emulator's users of ``ozlab chat``, on a database a demo, a pilot or the study
    sealed with its own secret (``bot.core.privacy.Privacy``)."""


async def _unless_stopped(work: Coroutine[Any, Any, None], stop: asyncio.Event) -> bool:
    """True once ``work`` is done; False (and ``work`` cancelled) when ``stop`` came first."""
    task = asyncio.ensure_future(work)
    stopped = asyncio.ensure_future(stop.wait())
    try:
        await asyncio.wait({task, stopped}, return_when=asyncio.FIRST_COMPLETED)
    finally:
        for waiting in (task, stopped):
            if not waiting.done():
                waiting.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await waiting
    if task.done() and not task.cancelled():
        task.result()  # its error, if it failed for good (a token refused)
        return True
    return False


def api_base_url(url: str) -> str:
    """Accept ``http://host:port`` as well as python-telegram-bot's ``.../bot`` form."""
    url = url.rstrip("/")
    return url if url.endswith("/bot") else f"{url}/bot"


def api_file_url(url: str) -> str:
    """Where files are downloaded: ``http://host:port/file/bot`` beside the API's
    ``http://host:port/bot``."""
    base = api_base_url(url)
    return f"{base.removesuffix('/bot')}/file/bot"


async def run_bot(
    bundle: StudyBundle,
    config: BotConfig,
    *,
    stop: asyncio.Event,
    ready: asyncio.Event | None = None,
    systems: Mapping[str, System] | None = None,
    store: StudyStore | None = None,
    clock: Callable[[], float] = time.time,
    timer: Callable[[], float] = time.perf_counter,
    writer: WriterClaim | None = None,
    transcriber: Transcriber | None = None,
    speaker: Speaker | None = None,
) -> None:
    """Run the study until ``stop`` is set; safe to start again on the same database.

    One database, one writer (``bot.store.lock``): the bot takes the writer's lock on
    ``config.db`` before anything else and refuses at once when another process has it;
    ``writer`` is that lock when the caller holds it already (a demo holds it from before
    it replaces an earlier simulation's file), and is not let go here.

    The composition root: ``store``, ``systems`` and ``clock`` are the real ones unless
    given (a store given is closed here too, as the bot owns it while it runs); ``timer``
    measures system latency (a simulation gives its simulated clock for both);
    ``transcriber`` turns participants' voice notes into words and ``speaker`` speaks the
    systems' replies: unless given, the engines the study's ``speech`` names, built when a
    task needs them (``bot.speech.engines``; one that cannot be built, e.g. no espeak-ng,
    stops the start) and closed with the bot. Whatever
    cannot start fails before anything is opened, or closes what was: a supervisor sees
    the process exit, never hang.

    The process outlives its database: a server out of reach as the bot starts is waited
    for, and one lost while it runs (a restart) ends that serving (no update is taken, none
    consumed) and everything is opened again, the writer's lock first, as a restart of the
    bot would; a lost network is the same weather (``bot.telegram.outage``)."""
    try:
        built_engines = _engines(bundle, transcriber, speaker)  # the bot's to close
    except BaseException:
        if store is not None:  # given, hence the bot's to close
            await store.close()
        raise
    transcriber, speaker = transcriber or built_engines[0], speaker or built_engines[1]
    privacy = Privacy(config.secret, foreign_chats=config.foreign_chats)
    study = locate(config.db).study_or(bundle.study.id)  # on a server, the study's schema
    if systems is None:
        systems = build_systems(bundle.study.systems, env=os.environ, tools=scenario_tools(bundle))
    built = dict(systems)
    outage = Outage(what="the study database", meanwhile=DATABASE_OUTAGE)
    async with contextlib.AsyncExitStack() as opened:
        opened.push_async_callback(close_systems, built)
        for engine in built_engines:
            if engine is not None:
                opened.push_async_callback(engine.close)
        claiming = writer is None
        while True:
            try:
                connected = await _connected(config.db, study, clock, outage, stop, claiming, store)
            except BaseException:
                if store is not None:  # given, hence the bot's to close
                    await store.close()
                raise
            if connected is None:  # stopped while the server was out of reach
                if store is not None:
                    await store.close()
                return
            claimed, store = connected
            async with contextlib.AsyncExitStack() as session:
                if claimed is not None:
                    session.callback(claimed.release)  # the last thing let go, after the store
                session.push_async_callback(store.close)
                try:
                    if await store.record_definition(bundle.study.id, definition_json(bundle)):
                        log.info("study %r: definition stored with its data", bundle.study.id)
                    held = claimed or writer
                    await _serve(
                        bundle,
                        config,
                        (store, held),
                        privacy,
                        (built, transcriber, speaker),
                        (clock, timer),
                        stop,
                        ready,
                    )
                    return
                except StoreUnreachable as error:
                    outage.failed(error)  # told as it is noticed, then once a minute
            # The server restarted (or is down): everything is opened again, the writer's
            # lock first, and the bot goes on from what the store says, as after a restart.
            store, claiming = None, True


def _engines(
    bundle: StudyBundle, transcriber: Transcriber | None, speaker: Speaker | None
) -> tuple[Transcriber | None, Speaker | None]:
    """The speech engines the study's tasks need and the caller did not give, built from
    its ``speech`` (none for a study of text alone)."""
    tasks = [scenario.media for scenario in bundle.scenarios.values()]
    return study_engines(
        bundle.study.speech,
        transcribes=transcriber is None and any(task.transcribes for task in tasks),
        speaks=speaker is None and any(task.speaks for task in tasks),
        env=os.environ,
    )


async def _connected(
    db: Database,
    study: str,
    clock: Callable[[], float],
    outage: Outage,
    stop: asyncio.Event,
    claiming: bool,
    store: StudyStore | None,
) -> tuple[WriterClaim | None, StudyStore] | None:
    """The writer's lock (when ``claiming``) and the store (unless given), tried again with
    longer pauses for as long as the database server cannot be reached (starting up, shut
    down, restarting); None when ``stop`` came first. Another writer holding the study, or
    any other reason the database cannot be used, ends the bot."""
    while True:
        claimed: WriterClaim | None = None
        try:
            if claiming:
                claimed = await asyncio.to_thread(claim, db, "ozlab run", study)
            if store is None:
                store = await open_store(db, clock, study=study)
        except StoreUnreachable as error:
            if claimed is not None:
                claimed.release()
            outage.failed(error)
        except BaseException:
            if claimed is not None:
                claimed.release()
            raise
        else:
            outage.over()
            return claimed, store
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(stop.wait(), pause(outage.failures))
            return None


LOCK_CHECKED_EVERY = 5.0
"""Seconds between two looks at the writer's lock (a server's goes with its connection)."""


async def _until_lost(store: StudyStore, claimed: WriterClaim | None) -> str:
    """Once the store has lost its database, or the writer's lock its connection (a server
    that dropped that session alone), which: either way the bot opens both again."""
    lost = asyncio.ensure_future(store.lost())
    try:
        while not lost.done():
            await asyncio.wait({lost}, timeout=LOCK_CHECKED_EVERY)
            if lost.done() or claimed is None:
                continue
            if not await asyncio.to_thread(claimed.held):
                return "the writer's lock on the study was lost with its connection"
    finally:
        lost.cancel()
    return "the connection to the database was lost"


async def _serve(
    bundle: StudyBundle,
    config: BotConfig,
    writing: tuple[StudyStore, WriterClaim | None],
    privacy: Privacy,
    answering: tuple[Mapping[str, System], Transcriber | None, Speaker | None],
    clocks: tuple[Callable[[], float], Callable[[], float]],
    stop: asyncio.Event,
    ready: asyncio.Event | None,
) -> None:
    systems, transcriber, speaker = answering
    clock, timer = clocks
    store, claimed = writing
    requests = (
        AiohttpRequest(connection_pool_size=config.max_concurrent_updates),
        AiohttpRequest(connection_pool_size=2),
    )
    application: Application[Any, Any, Any, Any, Any, Any] = (
        ApplicationBuilder()
        .token(config.token)
        .base_url(api_base_url(config.bot_api_url))
        .base_file_url(api_file_url(config.bot_api_url))
        .request(requests[0])
        .get_updates_request(requests[1])
        .updater(None)
        .concurrent_updates(ChatOrderedProcessor(config.max_concurrent_updates))
        .build()
    )
    outbox = TelegramOutbox(
        application.bot,
        pacer=FloodPacer(config.pacing) if config.pacing is not None else None,
        flood_wait_limit=config.flood_wait_limit,
    )
    runner = StudyRunner(
        bundle,
        store,
        privacy,
        systems,
        outbox,
        media=MediaIntake(TelegramFiles(application.bot), transcriber, timer=timer),
        speaker=speaker,
        clock=clock,
        timeouts={spec.id: spec.timeout for spec in bundle.study.systems},
        timer=timer,
    )
    # Annotators rate stored conversations: chats of their own, never participants.
    annotators = AnnotationRunner(bundle, store, privacy, outbox, clock)
    dispatcher = Dispatcher(runner, annotators)

    async def on_delivery(delivery: Delivery, _: ContextTypes.DEFAULT_TYPE) -> None:
        with contextlib.suppress(StoreUnreachable):  # the store's ``lost`` ends this serving
            await dispatcher.handle(delivery)

    application.add_handler(TypeHandler(Delivery, on_delivery))
    deliver = application.update_queue.put_nowait
    heartbeat = Heartbeat(bundle.study.id, store, clock)
    outage = Outage()  # one for start-up and polling: one warning a minute, whoever tries
    # Polled or posted to, updates go through the same inbox to the same dispatcher.
    poller: DurablePoller | WebhookReceiver = (
        DurablePoller(
            application.bot,
            store,
            privacy,
            heartbeat.counting(deliver),
            poll_timeout=config.poll_timeout,
            outage=outage,
        )
        if config.webhook is None
        else WebhookReceiver(
            application.bot,
            store,
            privacy,
            heartbeat.counting(deliver),
            config.webhook,
            outage=outage,
        )
    )

    async def tick(_: ContextTypes.DEFAULT_TYPE) -> None:
        now = clock()
        for delivery in runner.due(now):
            deliver(delivery)
        annotators.on_clock(now)  # silent annotators' targets go to others

    async def commands(_: ContextTypes.DEFAULT_TYPE) -> None:
        with contextlib.suppress(StoreUnreachable):
            for delivery in await runner.poll_commands():
                deliver(delivery)

    async def beat(_: ContextTypes.DEFAULT_TYPE) -> None:
        await heartbeat.beat()

    polling: asyncio.Task[None] | None = None
    try:
        # getMe until Telegram answers (the network may be down as the bot starts); a stop
        # meanwhile ends the bot before anything began.
        if not await _unless_stopped(reach(application.bot.initialize, outage), stop):
            return
        async with application:
            for delivery in await runner.load():
                deliver(delivery)
            await runner.load_gates()
            await publish_commands(application.bot, bundle)
            await application.start()
            try:
                assert application.job_queue is not None
                jobs = application.job_queue
                interval = config.heartbeat_interval
                repeating = [
                    jobs.run_repeating(tick, interval=config.tick_interval, first=0),
                    # The console and the bot meet in the database: commands are polled.
                    jobs.run_repeating(commands, interval=config.command_interval, first=0),
                    jobs.run_repeating(beat, interval=interval, first=interval),
                ]

                def running() -> None:
                    """Updates can come in: polled, or Telegram knows where to post."""
                    log.info("study %r is running", bundle.study.id)
                    if ready is not None:
                        ready.set()

                polling = asyncio.create_task(poller.run(running), name="ozlab-poller")
                stopped = asyncio.create_task(stop.wait())
                lost = asyncio.create_task(_until_lost(store, claimed))
                try:
                    await asyncio.wait(
                        {polling, stopped, lost}, return_when=asyncio.FIRST_COMPLETED
                    )
                finally:
                    stopped.cancel()
                    lost.cancel()
                    # None starts while the bot stops: APScheduler's shutdown would cancel
                    # it half-way and log a clean stop as an error (found by the fuzz test).
                    for job in repeating:
                        job.schedule_removal()
                if polling.done():
                    polling.result()  # a fatal polling error (a wrong token) ends the bot
                polling.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await polling
                if lost.done() and not lost.cancelled():
                    raise StoreUnreachable(lost.result())
                await application.update_queue.join()
                await annotators.settled()  # writes to annotators under way
                await poller.confirm()
            finally:
                # Also when cancelled: stop PTB's own tasks before the store closes under them.
                if polling is not None and not polling.done():
                    polling.cancel()
                if application.running:
                    await application.stop()
    except InvalidToken:
        raise TelegramSetupError(
            f"Telegram did not accept the bot token, or {config.bot_api_url} is not a Bot API"
            f" server: check {TOKEN_ENV} and --bot-api-url"
        ) from None
    finally:
        for request in requests:  # PTB skips this when start-up failed half-way
            await request.shutdown()
