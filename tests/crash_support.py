"""The crash run behind ``tests/test_crash_e2e.py`` and ``bench/crash.py``: participants go
through whole ``hmd`` sessions while ``ozlab run`` (a real process, as a researcher starts it)
is killed with SIGKILL at random moments and started again on the same database.

Each participant is scripted, so that everything they should find stored is known: ``/start``,
"I agree", a few messages to the shop (chosen so that none ends the task and no two answers are
the same, whichever shop the design gives them), "Finish task", a tap on each of the four
ratings, and a typed comment. The shop is a pure function of the history, so its answer to
each message is known too: an answer that differs means the history was lost in a restart.

The kills (:func:`kill_plan`): within 60 ms of a participant writing or tapping (so that the
bot is mid-step: fetching, committing, sending, asking the shop), at a random moment while the
process is up, or while a freshly started process imports, migrates and replays what the last
one left. Sessions join the run one after another between kills.

What a run counts (:class:`CrashReport`):

- *lost*: a message or an answer the participant gave that is not in the exchanges or the
  responses; *duplicated rows*: one stored more than once (an exchange turn, an answer);
- *unanswered*: a text or command (``/start`` included) that no bot message followed; the
  same pairing as the fuzz (``tests/fuzz_support.py``): each is matched to a distinct bot
  message sent after it, a re-sent copy being no answer;
- *duplicate messages*: messages a participant got twice, the same text and buttons (no two
  messages of a scripted session are alike): the at-least-once re-sends the design allows
  after a kill between sending a committed step's messages and recording that they went out.
  Each is timed: a copy whose original had gone out over a second before the kill would mean
  a delivered mark lost, not just late, and is a problem;
- *taps left unanswered*: button taps whose ``answerCallbackQuery`` never came (the process
  died between committing the tap and answering it; the app's spinner stops by itself, and
  the participant sees the tap's effect);
- *stale replies*: a shop answer other than the one the history calls for.
"""

from __future__ import annotations

import asyncio
import random
import re
import time
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import psycopg

from bot.core.conversation import Conversation, Turn
from bot.core.errors import StoreError
from bot.core.privacy import Privacy
from bot.engine.common import CONSENT_YES, FINISH
from bot.pilot.emulator import BotApiEmulator, BotMessage, Participant
from bot.pilot.emulator.waiting import Waiters
from bot.systems.demo import DemoShop, Variant
from scenarios.loading import load_study
from scenarios.models import StudyBundle
from scenarios.systems import DemoSystem
from tests.e2e_support import SECRET_32, OzlabProcess, OzlabProcesses
from tests.fuzz_support import integrity, left_unhandled, shortfall
from tests.postgres_server import PostgresServer
from tests.store_reads import read_tables

TOKEN = "5550009876:AAH-crash-token-for-ozlab-0123456789ab"
_MESSAGES = (
    "hello",
    "adventure games for linux",
    "which of them are cheap?",
    "Is the first one on Alex's wishlist?",
    "tell me about the second one",
    "what about windows games?",
    "do you have puzzle games?",
    "thanks",
)
_VARIANTS: tuple[Variant, ...] = ("v0", "v1")
_TURN = 45.0  # one answer may wait for a restart or two
_LATE = 1.0  # the store's writer marks a step delivered within milliseconds


@dataclass(frozen=True)
class CrashSettings:
    sessions: int = 6
    kills: int = 3
    seed: int = 1
    window: tuple[float, float] = (0.05, 0.8)
    """How long a process lives before its kill (seconds, uniform): the random moment."""
    during_start_up: float = 0.2
    """The share of kills that hit a process still starting (see :func:`kill_plan`)."""
    mid_work: float = 0.6
    """Of the other kills, the share that come within 60 ms of a participant writing or
    tapping; the rest come at a moment of ``window`` after the process polls."""
    webhook: bool = False
    """The bot gets its updates by webhook (``ozlab run --webhook``), not by polling."""


@dataclass
class CrashReport:
    seed: int
    sessions: int = 0
    sessions_completed: int = 0
    kills: int = 0
    start_up_kills: int = 0
    kills_mid_wait: int = 0
    lost: list[str] = field(default_factory=list)
    duplicated_rows: list[str] = field(default_factory=list)
    unanswered: list[str] = field(default_factory=list)
    unanswered_messages: int = 0
    duplicate_messages: int = 0
    duplicate_ages: list[float] = field(default_factory=list)
    taps_unanswered: int = 0
    taps: int = 0
    stale_replies: list[str] = field(default_factory=list)
    failures: list[str] = field(default_factory=list)
    internal_errors: int = 0
    logged_exceptions: list[str] = field(default_factory=list)
    integrity: str = ""
    left_unhandled: int = 0
    exit_code: int | None = None
    seconds: float = 0.0

    @property
    def duplicate_window_ms(self) -> float:
        return max(self.duplicate_ages, default=0.0) * 1000

    def problems(self) -> list[str]:
        checks = [
            ("sessions that failed", self.failures),
            ("lost", self.lost),
            ("duplicated rows", self.duplicated_rows),
            ("unanswered", self.unanswered),
            ("stale replies", self.stale_replies),
            ("exceptions logged", self.logged_exceptions),
        ]
        found = [f"{what} ({len(items)}): {items[:3]}" for what, items in checks if items]
        if self.sessions_completed != self.sessions:
            found.append(f"sessions completed: {self.sessions_completed} of {self.sessions}")
        late = [a for a in self.duplicate_ages if a > _LATE]
        if late:
            found.append(
                f"{len(late)} messages re-sent though they had gone out more than {_LATE:g} s"
                " before the kill (their delivered mark was lost, not just late)"
            )
        if self.internal_errors:
            found.append(f"internal_error events: {self.internal_errors}")
        if self.integrity != "ok":
            found.append(f"integrity_check: {self.integrity}")
        if self.left_unhandled:
            found.append(f"updates left unhandled in the inbox: {self.left_unhandled}")
        if self.exit_code != 0:
            found.append(f"the last process exited {self.exit_code} on SIGTERM")
        return found

    def summary(self) -> str:
        return "\n".join(
            [
                f"seed                          {self.seed}",
                f"sessions completed            {self.sessions_completed} of {self.sessions}",
                f"kills                         {self.kills}"
                f" ({self.start_up_kills} while starting; {self.kills_mid_wait} participants"
                " waiting for an answer when one came)",
                f"lost messages                 {len(self.lost)}",
                f"duplicated rows               {len(self.duplicated_rows)}",
                f"unanswered messages           {self.unanswered_messages}",
                f"duplicate messages seen       {self.duplicate_messages}"
                " (re-sent after a kill: at least once; the first copies had gone out at most"
                f" {self.duplicate_window_ms:.0f} ms before the kill)",
                f"taps left unanswered          {self.taps_unanswered} of {self.taps}"
                " (died between commit and answer)",
                f"stale replies                 {len(self.stale_replies)}",
                f"internal errors               {self.internal_errors}",
                f"exceptions logged             {len(self.logged_exceptions)}",
                f"integrity                     {self.integrity}",
                f"seconds                       {self.seconds:.1f}",
            ]
        )


# --- one scripted participant -----------------------------------------------------------------


def _data(message: BotMessage) -> list[str]:
    return [data for row in message.keyboard for _, data in row if data]


def _offering(p: Participant, data: str) -> BotMessage | None:
    """The newest message with a button carrying ``data``."""
    return next((m for m in reversed(p.messages) if data in _data(m)), None)


def _item(p: Participant) -> BotMessage | None:
    """The newest questionnaire item (answer or skip buttons) on screen."""
    return next(
        (m for m in reversed(p.messages) if any(d[:2] in ("a:", "s:") for d in _data(m))), None
    )


def _asked(message: BotMessage | None) -> str | None:
    """The showing an item's buttons belong to (changes with each item, edited in place)."""
    if message is None:
        return None
    return next((d.split(":")[1] for d in _data(message) if d[:2] in ("a:", "s:")), None)


def _in_order(messages: Sequence[BotMessage], texts: Sequence[str]) -> bool:
    """``texts`` appear among ``messages`` in this order (re-sent copies may lie between)."""
    remaining = iter(m.text for m in messages)
    return all(any(text == seen for seen in remaining) for text in texts)


def conversation(rng: random.Random) -> list[str]:
    """2–4 messages no shop ends the task on and no shop answers twice alike, whatever the
    design assigns: any message of a session that arrives twice is then a re-send."""
    while True:
        chosen = rng.sample(_MESSAGES, rng.randint(2, 4))
        if all(_distinct(DemoShop(variant), chosen) for variant in _VARIANTS):
            return chosen


def _distinct(shop: DemoShop, messages: Sequence[str]) -> bool:
    history: list[Turn] = []
    texts: list[str] = []
    for text in messages:
        reply = shop.reply(Conversation("s", "hmd-gift", "", tuple(history), text))
        if reply.events:
            return False
        texts += reply.texts
        history.append(Turn(text, "\n\n".join(reply.texts)))
    return len(texts) == len(set(texts))


@dataclass
class Script:
    """One participant's whole session, and everything they gave, to look for in the store."""

    p: Participant
    bundle: StudyBundle
    db: Path | str
    rng: random.Random
    messages: list[str]
    answerable: list[int] = field(default_factory=list)
    replies: list[str] = field(default_factory=list)
    """What the shop said to each message, as the participant received it."""
    ratings: list[int] = field(default_factory=list)
    comment: str = ""
    queries: list[str] = field(default_factory=list)
    done: bool = False
    waiting: bool = False
    """Between sending something and seeing the bot's answer to it (a kill now interrupts)."""

    watchers: Waiters = field(default_factory=Waiters)
    """Woken whenever this participant starts or stops waiting (the kills watch them)."""
    server: ServerWeather | None = None
    """The database server's restarts, when the run restarts it (reads wait it out)."""

    async def _until(self, predicate: Callable[[Participant], bool]) -> None:
        self.waiting = True
        self.watchers.wake()
        try:
            await self.p.wait_for(predicate, _TURN)
        finally:
            self.waiting = False
            self.watchers.wake()

    async def _say(self, text: str) -> int:
        update_id = await self.p.send_text(text)
        self.answerable.append(update_id)
        return update_id

    async def _tap(self, data: str, message: BotMessage) -> None:
        await self.p.send_callback(data, message_id=message.message_id)
        assert self.p.last_query_id is not None
        self.queries.append(self.p.last_query_id)

    async def play(self) -> None:
        p = self.p
        await self._say("/start")
        await self._until(lambda q: _offering(q, CONSENT_YES) is not None)
        consent = _offering(p, CONSENT_YES)
        assert consent is not None
        await self._tap(CONSENT_YES, consent)
        await self._until(lambda q: _offering(q, FINISH) is not None)
        shop = DemoShop(await self._variant())
        history: list[Turn] = []
        for text in self.messages:
            reply = shop.reply(Conversation("s", "hmd-gift", "", tuple(history), text))
            before = len(p.messages)
            await self._say(text)
            await self._until(_replied(reply.texts, before))
            history.append(Turn(text, "\n\n".join(reply.texts)))
            self.replies.append(history[-1].system)
        brief = _offering(p, FINISH)
        assert brief is not None, "the task ended before Finish task"
        await self._tap(FINISH, brief)
        await self._questionnaire()
        self.done = True

    async def _variant(self) -> Variant:
        """The shop the design gave this participant, as the store has it."""
        me = Privacy(SECRET_32).pseudonym(self.p.user_id)
        while True:
            restarts = await self.server.reachable() if self.server is not None else 0
            try:
                sessions = (await read_tables(self.db))["sessions"]
                break
            except (StoreError, psycopg.Error):  # the server went down under the read
                if self.server is None or self.server.restarts == restarts:
                    raise
        [system] = [s["system_id"] for s in sessions if s["participant_id"] == me]
        [spec] = [s for s in self.bundle.study.systems if s.id == system]
        assert isinstance(spec, DemoSystem) and spec.variant != "chat"
        return spec.variant

    async def _questionnaire(self) -> None:
        p, thanks = self.p, self.bundle.study.texts.thanks
        await self._until(lambda q: _item(q) is not None)
        while True:
            item = _item(p)
            assert item is not None
            asked = _asked(item)
            answers = [d for d in _data(item) if d.startswith("a:")]
            if answers:
                data = self.rng.choice(answers)
                self.ratings.append(int(data.rsplit(":", 1)[1]) + 1)  # hmd: button n is n
                await self._tap(data, item)
                await self._until(_moved_on(asked, thanks))
            else:
                self.comment = f"comment {self.rng.getrandbits(32):08x}: it was fine"
                await self._say(self.comment)
                await self._until(lambda q: _thanked(q, thanks))
            if _thanked(p, thanks):
                return


def _thanked(p: Participant, thanks: str) -> bool:
    return any(thanks in m.text for m in p.messages)


def _replied(texts: Sequence[str], before: int) -> Callable[[Participant], bool]:
    """Until the shop's answer (``texts``) came after the first ``before`` messages."""
    return lambda p: _in_order(p.messages[before:], texts)


def _moved_on(asked: str | None, thanks: str) -> Callable[[Participant], bool]:
    """Until the item on screen is another than the one ``asked``, or the thanks came."""
    return lambda p: _asked(_item(p)) != asked or _thanked(p, thanks)


# --- the run ------------------------------------------------------------------------------------


@dataclass
class _Kills:
    """Kills so far, and a way to wait for the n-th (sessions join the run between kills)."""

    done: int = 0
    changed: asyncio.Event = field(default_factory=asyncio.Event)

    def one_more(self) -> None:
        self.done += 1
        self.changed.set()
        self.changed = asyncio.Event()

    async def reached(self, count: int) -> None:
        while self.done < count:
            await self.changed.wait()


async def run_crash(settings: CrashSettings, workdir: Path, db: str | None = None) -> CrashReport:
    """The whole run, then every check; raises only when the run itself could not happen."""
    started = time.perf_counter()
    rng = random.Random(settings.seed)
    report = CrashReport(settings.seed, sessions=settings.sessions)
    bundle = load_study("hmd")
    async with BotApiEmulator(TOKEN, call_log_size=10**7) as emulator:
        ozlab = OzlabProcesses(emulator, workdir, db, webhook=settings.webhook)
        try:
            scripts = [
                Script(
                    emulator.participant(7_000_000 + i, first_name=f"Crash{i}"),
                    bundle,
                    ozlab.db,
                    random.Random(rng.getrandbits(32)),
                    conversation(rng),
                )
                for i in range(settings.sessions)
            ]
            bot = await ozlab.start()  # ready before anyone writes: the first kill has work
            kills = _Kills()

            async def session(index: int, script: Script) -> None:
                # Sessions join one after another between the kills.
                await kills.reached(index * settings.kills // max(settings.sessions, 1))
                await script.play()

            playing = [
                asyncio.create_task(session(i, s), name=f"session-{i}")
                for i, s in enumerate(scripts)
            ]
            watchers = Waiters()
            kill_times: list[float] = []
            for script in scripts:
                script.watchers = watchers

            def busy() -> bool:
                """Someone waits for the bot, or nobody can until the next kill."""
                running = [t for t in playing if not t.done()]
                return any(s.waiting for s in scripts) or all(
                    kills.done < i * settings.kills // settings.sessions
                    for i, t in enumerate(playing)
                    if t in running
                )

            plan = kill_plan(rng, settings)
            for index, kind in enumerate(plan):
                if kind == "start-up":
                    # Killed while starting: importing, migrating, or replaying what the last
                    # one left (it polls after about 0.7 s here).
                    await asyncio.sleep(rng.uniform(0.1, 1.2))  # the random moment
                elif kind == "mid-work":
                    # In the middle of the bot's work: someone has just written or tapped.
                    await watchers.until(busy, _TURN, lambda: "nobody came to the bot")
                    await asyncio.sleep(rng.uniform(0, 0.06))  # the random moment
                else:
                    await asyncio.sleep(rng.uniform(*settings.window))  # the random moment
                report.kills_mid_wait += sum(1 for s in scripts if s.waiting)
                kill_times.append(time.monotonic())
                bot.kill_now()
                await bot.finish()
                kills.one_more()
                following = plan[index + 1] if index + 1 < len(plan) else None
                bot = await ozlab.start(wait_ready=following != "start-up")
            report.start_up_kills = plan.count("start-up")
            report.kills = kills.done
            await _ended(report, scripts, playing, bot)
        finally:
            await ozlab.close()
        _tally_messages(report, scripts, emulator, kill_times)
        for process in ozlab.started:
            report.logged_exceptions += logged_exceptions(process.stderr)
    await _tally_rows(report, scripts, ozlab.db)
    report.seconds = time.perf_counter() - started
    return report


async def _ended(
    report: CrashReport,
    scripts: Sequence[Script],
    playing: Sequence[asyncio.Task[None]],
    bot: OzlabProcess,
) -> None:
    """Every session played to its end (or failed), then the bot stopped as a person would."""
    results = await asyncio.gather(*playing, return_exceptions=True)
    report.failures = [
        f"session {i}: {r!r}; {s.p.describe()}"
        for i, (s, r) in enumerate(zip(scripts, results, strict=True))
        if isinstance(r, BaseException)
    ]
    report.exit_code = await bot.terminate()


def _tally_messages(
    report: CrashReport,
    scripts: Sequence[Script],
    emulator: BotApiEmulator,
    interruptions: Sequence[float],
) -> None:
    """What the participants got: messages twice, messages unanswered, taps unanswered."""
    calls = [c for c in emulator.calls if c.method == "sendMessage" and c.status == 200]
    report.duplicate_messages = duplicate_messages(calls)
    report.duplicate_ages = duplicate_ages(calls, interruptions)
    for script in scripts:
        if missing := unanswered(script, emulator.created_times, calls):
            report.unanswered_messages += missing
            report.unanswered.append(f"chat {script.p.chat_id}: {script.p.describe()}")
        answers = Counter(a.query_id for a in script.p.callback_answers)
        report.taps += len(script.queries)
        report.taps_unanswered += sum(1 for q in script.queries if not answers[q])


def logged_exceptions(stderr: str) -> list[str]:
    """The log's records of a traceback, a failed update or an error."""
    return [
        record
        for record in log_records(stderr)
        if re.search(r"Traceback|handling an update of .* failed| ERROR | CRITICAL ", record)
    ]


async def _tally_rows(report: CrashReport, scripts: Sequence[Script], db: Path | str) -> None:
    """What the store kept of them."""
    tables = await read_tables(db)
    check_rows(report, scripts, tables)
    report.sessions_completed = sum(1 for s in scripts if s.done and _complete(s, tables))
    report.internal_errors = sum(1 for e in tables["events"] if e["kind"] == "internal_error")
    report.integrity = integrity(db)
    report.left_unhandled = await left_unhandled(db)


# --- the database server restarted under the bot -------------------------------------------


@dataclass(frozen=True)
class RestartSettings:
    sessions: int = 4
    restarts: tuple[str, ...] = ("fast", "long", "fast")
    """Each restart in turn: "fast" (``pg_ctl restart``: the server stops and starts at once)
    or "long" (stopped; started again once the bot has said it lost the database and has
    tried again for ``outage`` seconds)."""
    outage: float = 5.0
    seed: int = 1


NOTICED = "the study database cannot be reached"
"""The bot's warning as an outage of its database begins."""
BACK = "the study database reached again"
"""The bot's line as it ends."""
_OUTAGE_LINE = re.compile(
    r"the study database (still )?cannot be reached|the study database reached again"
)


@dataclass
class ServerWeather:
    """Whether the database server is up, and how many times it has gone down so far."""

    restarts: int = 0
    up: asyncio.Event = field(default_factory=asyncio.Event)

    async def reachable(self) -> int:
        """Once the server is up: the restarts so far."""
        await self.up.wait()
        return self.restarts


@dataclass
class RestartReport(CrashReport):
    restarts: int = 0
    processes: int = 0
    """``ozlab run`` processes started: 1 when the bot lived through every restart."""
    outage_lines: list[str] = field(default_factory=list)
    """The bot's log lines about its database's outages."""


async def run_restarts(
    settings: RestartSettings, workdir: Path, server: PostgresServer
) -> RestartReport:
    """Participants through whole sessions while the study's PostgreSQL server is restarted
    under one ``ozlab run``, each restart within 60 ms of a participant writing or tapping;
    then the crash run's checks."""
    started = time.perf_counter()
    rng = random.Random(settings.seed)
    report = RestartReport(settings.seed, sessions=settings.sessions)
    bundle = load_study("hmd")
    weather = ServerWeather()
    weather.up.set()
    async with BotApiEmulator(TOKEN, call_log_size=10**7) as emulator:
        ozlab = OzlabProcesses(emulator, workdir, server.fresh_database())
        try:
            watchers = Waiters()
            scripts = [
                Script(
                    emulator.participant(7_100_000 + i, first_name=f"Restart{i}"),
                    bundle,
                    ozlab.db,
                    random.Random(rng.getrandbits(32)),
                    conversation(rng),
                    watchers=watchers,
                    server=weather,
                )
                for i in range(settings.sessions)
            ]
            bot = await ozlab.start()
            count = len(settings.restarts)
            restarted = _Kills()

            async def session(index: int, script: Script) -> None:
                await restarted.reached(index * count // max(settings.sessions, 1))
                await script.play()

            playing = [asyncio.create_task(session(i, s)) for i, s in enumerate(scripts)]
            times: list[float] = []
            for kind in settings.restarts:
                await watchers.until(
                    lambda: any(s.waiting for s in scripts), _TURN, lambda: "nobody wrote"
                )
                await asyncio.sleep(rng.uniform(0, 0.06))  # the random moment
                report.kills_mid_wait += sum(1 for s in scripts if s.waiting)
                times.append(time.monotonic())
                told = bot.stderr.count(NOTICED)
                weather.up.clear()
                weather.restarts += 1
                await asyncio.to_thread(server.halt)
                if kind == "long":
                    await bot._waiters.until(
                        lambda told=told: bot.stderr.count(NOTICED) > told,
                        _TURN,
                        lambda: f"the bot did not notice:\n{bot.stderr[-3000:]}",
                    )
                    await asyncio.sleep(settings.outage)  # the outage lasts: tries fail
                await asyncio.to_thread(server.resume)
                weather.up.set()
                restarted.one_more()
                await bot._waiters.until(  # back at work before the next restart
                    lambda: bot.stderr.count(BACK) == restarted.done,
                    _TURN,
                    lambda: f"the bot did not reconnect:\n{bot.stderr[-3000:]}",
                )
            await _ended(report, scripts, playing, bot)
        finally:
            await ozlab.close()
        _tally_messages(report, scripts, emulator, times)
        report.restarts = restarted.done
        report.processes = len(ozlab.started)
        report.logged_exceptions = logged_exceptions(bot.stderr)
        report.outage_lines = [r for r in log_records(bot.stderr) if _OUTAGE_LINE.search(r)]
    await _tally_rows(report, scripts, ozlab.db)
    report.seconds = time.perf_counter() - started
    return report


def duplicate_messages(calls: Sequence[Any]) -> int:
    """Messages a chat got again: the same text and buttons as one it already had."""
    seen = Counter(_key(call) for call in calls)
    return sum(n - 1 for n in seen.values())


def log_records(stderr: str) -> list[str]:
    """The log as records: a line that starts with a date, and the traceback lines after it."""
    records: list[str] = []
    for line in stderr.splitlines():
        if re.match(r"\d{4}-\d\d-\d\d ", line) or not records:
            records.append(line)
        else:
            records[-1] += "\n" + line
    return records


def kill_plan(rng: random.Random, settings: CrashSettings) -> list[str]:
    """The kind of each kill, in a random order: "start-up" (the process was started again
    without waiting for it), "mid-work" (within 60 ms of someone writing) or "any" (a moment
    of ``window`` after the process polls); from three kills on, at least one of each."""
    kills = settings.kills
    start_up = max(1, round(kills * settings.during_start_up)) if kills >= 3 else 0
    mid_work = max(1, round((kills - start_up) * settings.mid_work)) if kills >= 2 else kills
    plan = ["start-up"] * start_up + ["mid-work"] * mid_work
    plan += ["any"] * (kills - len(plan))
    rng.shuffle(plan)
    if plan and plan[0] == "start-up":  # the first process starts before anyone writes
        plan.append(plan.pop(0))
    return plan


def _key(call: Any) -> tuple[str, str, str]:
    params = call.params
    return str(params.get("chat_id")), params.get("text", ""), repr(params.get("reply_markup"))


def duplicate_ages(calls: Sequence[Any], kills: Sequence[float]) -> list[float]:
    """For each re-sent message, how long its first copy had been out when the next kill
    came: the window in which a kill re-sends (the delivered mark is not awaited). A kill
    within 50 ms before the first copy counts (the request was on its way as it died)."""
    first: dict[tuple[str, str, str], float] = {}
    ages = []
    for call in calls:
        key = _key(call)
        if key not in first:
            first[key] = call.arrived_at
            continue
        after = [k for k in kills if first[key] - 0.05 <= k <= call.arrived_at]
        ages.append(max(0.0, after[0] - first[key]) if after else float("inf"))
    return ages


def unanswered(script: Script, created: dict[int, float], calls: Sequence[Any]) -> int:
    """Texts and commands that cannot each be paired with a distinct later bot message; a
    re-sent copy is no answer (only the first of identical messages counts)."""
    firsts: dict[tuple[str, str, str], float] = {}
    for call in calls:
        firsts.setdefault(_key(call), call.arrived_at)
    chat = str(script.p.chat_id)
    sent = [at for key, at in firsts.items() if key[0] == chat]
    return shortfall([created[u] for u in script.answerable], sent)


def _mine(script: Script, tables: dict[str, list[dict[str, Any]]]) -> tuple[list[Any], list[Any]]:
    me = Privacy(SECRET_32).pseudonym(script.p.user_id)
    sessions = {s["session_id"] for s in tables["sessions"] if s["participant_id"] == me}
    exchanges = [e for e in tables["exchanges"] if e["session_id"] in sessions]
    responses = [r for r in tables["responses"] if r["participant_id"] == me]
    return exchanges, responses


def check_rows(
    report: CrashReport, scripts: Sequence[Script], tables: dict[str, list[dict[str, Any]]]
) -> None:
    """Each message and answer given is stored once, with the reply the participant got."""
    for script in scripts:
        chat = script.p.chat_id
        exchanges, responses = _mine(script, tables)
        turns = Counter((e["session_id"], e["turn"]) for e in exchanges)
        report.duplicated_rows += [
            f"chat {chat}: turn {t}" for t, n in turns.items() for _ in range(n - 1)
        ]
        items = Counter(r["item_id"] for r in responses)
        report.duplicated_rows += [
            f"chat {chat}: {i}" for i, n in items.items() for _ in range(n - 1)
        ]
        stored = [e["user_text"] for e in sorted(exchanges, key=lambda e: e["turn"])]
        sent = script.messages[: len(script.replies)]  # what the participant got answers to
        report.lost += [f"chat {chat}: {t!r}" for t in (Counter(sent) - Counter(stored))]
        ordered = sorted(exchanges, key=lambda e: e["turn"])
        for exchange, reply in zip(ordered, script.replies, strict=False):
            if exchange["system_text"] != reply:
                report.stale_replies.append(f"chat {chat} turn {exchange['turn']}")
        ratings = [r["value"] for r in responses if r["value"] is not None]
        report.lost += [
            f"chat {chat}: rating {v}" for v in (Counter(script.ratings) - Counter(ratings))
        ]
        if script.comment and script.comment not in [r["text"] for r in responses]:
            report.lost.append(f"chat {chat}: comment")


def _complete(script: Script, tables: dict[str, list[dict[str, Any]]]) -> bool:
    exchanges, responses = _mine(script, tables)
    return len(exchanges) == len(script.messages) and len(responses) == len(script.ratings) + 1
