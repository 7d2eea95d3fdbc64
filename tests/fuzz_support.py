"""The fuzz run behind ``tests/test_fuzz_e2e.py`` and ``bench/fuzz.py``: the real bot (in this
process, logging as ``ozlab run`` does) on a real SQLite file, fed thousands of random and
malformed updates from many chats while simulated participants play the ``hmd`` study.

Everything random comes from one ``random.Random(seed)``: the same seed sends the same
sequence of actions from the same chats with the same content (see :class:`Fuzzer`); which
button a tap picks among those on screen depends on the bot's timing, as does the way the
updates interleave with the players' turns, which is the point of running them together.

What a run measures (:class:`FuzzReport`), and what "answered" means here:

- *unhandled exceptions*: log records that carry a traceback (the runner's ``log.exception``
  "handling an update of … failed", asyncio's "Task exception was never retrieved",
  python-telegram-bot's "No error handlers are registered"); *errors logged*: any record at
  ERROR or above, except "Chat not found" for the updates that forge a chat id Telegram does
  not know, counted apart; *internal errors*: ``internal_error`` rows in the events table.
- *unanswered*: every well-formed message (text, command, any other content, an edit) from
  a person (not a bot) in a private chat must be followed by a bot message in that chat. Each
  such update is paired with a distinct bot message sent after it was created (see
  :func:`shortfall`); the shortfall is the count. A bot message caused by a tap may stand in
  for one, so this is a lower bound, exact for chats without taps. Explained, so not counted:
  a redelivered duplicate (its first delivery is the one answered), a message its sender
  blocked the bot right after sending, malformed updates (the unreadable ones are counted as
  ``update_unreadable`` events), groups, channels, other bots, member updates. Button taps are
  answered with ``answerCallbackQuery``: every tap on a message of a private chat must be
  answered exactly once (*taps unanswered*). The bot must write nowhere but private chats.
- *players completed*: each reached the thanks, with as many exchanges and answers stored as
  they gave (their updates are redelivered too: one handled twice would store a row twice).
- *leaks*: the Telegram ids, first and last names, usernames and shared contacts of every
  chat found in the database file, its WAL and shared memory (while the bot runs and after
  it stopped), or in the log as the production handler wrote it.
"""
# ruff: noqa: ASYNC109 - the helpers take ``timeout=`` like the emulator's own

from __future__ import annotations

import asyncio
import bisect
import contextlib
import io
import logging
import random
import sqlite3
import string
import time
from collections import Counter
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bot.core.privacy import Privacy
from bot.pilot.emulator import BotApiEmulator, BotMessage, Participant
from bot.pilot.simulation.play import Played, StudyPlayer
from bot.runtime.app import BotConfig, run_bot
from bot.runtime.logging import setup_logging
from bot.store import Access, open_store
from bot.store.opening import locate
from bot.telegram import inbound
from scenarios.loading import load_study
from scenarios.models import StudyBundle
from tests.annotating_support import invite, play
from tests.e2e_support import database_bytes
from tests.store_reads import read_tables

TOKEN = "5550001234:AAF-fuzz-token-for-ozlab-0123456789abcd"
SECRET = "fuzz-secret-that-is-long-enough-0123"
BOT_USERNAME = "ozlab_test_bot"

# Telegram ids far from anything else a study stores (unix times start with 17…).
_ID_LOW, _ID_HIGH = 5_100_000_000, 5_999_999_999


# --- the bot, as `ozlab run` runs it, and its log ------------------------------------------


@dataclass(frozen=True)
class LogLine:
    logger: str
    level: int
    message: str
    traceback: str

    def __str__(self) -> str:
        head = f"{self.logger} {logging.getLevelName(self.level)} {self.message}"
        return f"{head}\n{self.traceback}" if self.traceback else head


@dataclass
class CapturedLog:
    """What the production handler wrote, and the records that matter."""

    stream: io.StringIO
    exceptions: list[LogLine] = field(default_factory=list)
    """Records that carry a traceback, at any level."""
    errors: list[LogLine] = field(default_factory=list)
    """Records at ERROR or above."""

    @property
    def text(self) -> str:
        return self.stream.getvalue()


class _Counting(logging.Handler):
    def __init__(self, captured: CapturedLog) -> None:
        super().__init__(logging.INFO)
        self.captured = captured

    def emit(self, record: logging.LogRecord) -> None:
        if record.exc_info and not record.exc_text:
            record.exc_text = logging.Formatter().formatException(record.exc_info)
        line = LogLine(record.name, record.levelno, record.getMessage(), record.exc_text or "")
        if line.traceback:
            self.captured.exceptions.append(line)
        if record.levelno >= logging.ERROR:
            self.captured.errors.append(line)


@contextlib.contextmanager
def production_logging(secrets: Sequence[str]) -> Iterator[CapturedLog]:
    """``setup_logging`` at INFO, as ``ozlab run`` calls it, writing to memory; every logger's
    level and the root's handlers are put back afterwards (the test suite goes on)."""
    root = logging.getLogger()
    handlers, level = root.handlers[:], root.level
    levels = {
        name: logger.level
        for name, logger in logging.Logger.manager.loggerDict.items()
        if isinstance(logger, logging.Logger)
    }
    setup_logging(logging.INFO, secrets)
    [handler] = root.handlers
    assert isinstance(handler, logging.StreamHandler)
    captured = CapturedLog(io.StringIO())
    handler.setStream(captured.stream)
    root.addHandler(_Counting(captured))
    try:
        yield captured
    finally:
        root.handlers[:] = handlers
        root.setLevel(level)
        for name, logger in logging.Logger.manager.loggerDict.items():
            if isinstance(logger, logging.Logger):
                logger.setLevel(levels.get(name, logging.NOTSET))


@contextlib.asynccontextmanager
async def running_bot(
    bundle: StudyBundle, emulator: BotApiEmulator, db: Path | str
) -> AsyncIterator[None]:
    """``run_bot`` with ``ozlab run``'s settings, except a short long poll (to stop quickly)
    and no pacing (the emulator keeps no flood limits, as ``ozlab run --no-pacing``)."""
    config = BotConfig(
        db=db,
        token=TOKEN,
        secret=SECRET,
        bot_api_url=emulator.server_url,
        poll_timeout=1,
        pacing=None,
    )
    stop, ready = asyncio.Event(), asyncio.Event()
    task = asyncio.create_task(run_bot(bundle, config, stop=stop, ready=ready))
    waiting = asyncio.create_task(ready.wait())
    await asyncio.wait({task, waiting}, timeout=20, return_when=asyncio.FIRST_COMPLETED)
    if not ready.is_set():
        waiting.cancel()
        if task.done():
            task.result()
        task.cancel()
        raise AssertionError("the bot did not start within 20 s")
    try:
        yield
    finally:
        stop.set()
        await asyncio.wait_for(task, 30)


# --- what people type ----------------------------------------------------------------------

_ALPHABETS = (
    string.ascii_letters + "  ",
    "абвгдежзийклмнопрстуфхцчшщэюя ",
    "مرحبا بالعالم كيف حالك ",  # right to left
    "שלום עולם מה נשמע ",
    "你好世界我们喜欢游戏 ",
    "😀🎮👍🏽🏳️‍🌈👩‍👩‍👧‍👦🇮🇹 ",  # outside the BMP, skin tones, ZWJ sequences, flags
    "\u200b\u200c\u200d\u2060\ufeff",  # zero width
    "\u202e\u202d\u202c\u200f\u200e\u2066\u2069",  # direction overrides
    "\x00\x01\x07\x08\x0b\x0c\x1b\x7f\t\r\n\u0085\u2028\u2029",  # control characters
    "Z̴̡͇a̷l̵g̶o̸ ͓̽",  # combining marks
    "0123456789",
    "*_[]()~`>#+-=|{}.!<>&\"'\\/%$@",  # Markdown, HTML and format string syntax
)
_SPECIALS = (
    "",
    " ",
    "\n\n",
    "\u200b",
    "4",
    "0",
    "-1",
    "10",
    "4.5",
    "٣",
    "99999999999",
    "NaN",
    "null",
    "I agree",
    "4 · Agree",
    "Skip",
    "Finish task",
    "adventure games for linux",
    "Is the first one on Alex's wishlist?",
    "add the second one to my wishlist",
    "'); DROP TABLE exchanges;--",
    "{limit} {low} {0} %s %(x)s",
    "<b>bold</b><script>x</script>",
    "*bold* _it_ [link](http://example.com) `code`",
    "\\",
    "c:y",
)
_COMMANDS = (
    "/start",
    "/start",
    f"/start@{BOT_USERNAME}",
    "/start some-code",
    f"/start@{BOT_USERNAME} code with spaces",
    "/start@other_bot",
    "/done",
    f"/done@{BOT_USERNAME}",
    "/DONE",
    "/done now please",
    "/help",
    "/settings",
    "/stop",
    "/x",
    f"/unknown@{BOT_USERNAME} argument",
    "/start " + "x" * 300,
    "/ﬀ",
    "/" + "a" * 40,
)
_FORGED_DATA = (
    "",
    "c:y",
    "c:n",
    "done",
    "a:1:0",
    "a:0:0",
    "a:1:99",
    "a:999999999999:1",
    "a:9999999999999:1",
    "xa:1:0",
    "xm:1:0",
    "m:1:0",
    "d:1",
    "s:1",
    "h:1",
    "s:2:3",
    "sb:1:0",
    "sb:0:-1",
    "a:-1:0",
    "a:١:٢",
    "a:1:2:3",
    ":",
    "::::",
    "a:",
    "x",
    "\x00",
    "👍" * 16,
    "a" * 64,
    "a" * 65,
    "a:1:" + "9" * 60,
    "{'json': true}",
)


def random_text(rng: random.Random) -> str:
    """A message as people and broken clients write them: short, long, empty, in any script."""
    roll = rng.random()
    if roll < 0.25:
        return rng.choice(_SPECIALS)
    if roll < 0.30:
        size = rng.choice((4095, 4096, 4097, 8193, 10_000))
        alphabet = rng.choice(_ALPHABETS[:6])
        return "".join(rng.choice(alphabet) for _ in range(size))
    parts = []
    for _ in range(rng.randint(1, 5)):
        alphabet = rng.choice(_ALPHABETS)
        limit = 8 if alphabet.isdigit() else 40  # no digit run as long as a Telegram id
        parts.append("".join(rng.choice(alphabet) for _ in range(rng.randint(1, limit))))
    return "".join(parts)


def _name(rng: random.Random, prefix: str) -> str:
    """A name no fuzz text can contain by chance (a letter outside every alphabet used)."""
    tail = "".join(rng.choice("bcdfghjkmnpqrstvwxz") for _ in range(9))
    return f"{prefix}ƛ{tail}"


def _username(rng: random.Random, suffix: str = "") -> str:
    return "fz" + "".join(rng.choice(string.ascii_lowercase) for _ in range(12)) + suffix


# --- the fuzz itself -----------------------------------------------------------------------

CONTENT_KINDS = inbound.CONTENT_KINDS
_FORGED_CHAT = "Chat not found"  # what Telegram answers a message to a chat it does not know


@dataclass
class FuzzChat:
    """One person in a private chat who sends whatever the generator picks."""

    p: Participant
    answerable: list[int] = field(default_factory=list)
    """Update ids that must be followed by a bot message in this chat."""
    queries: list[str] = field(default_factory=list)
    """Callback query ids that must be answered exactly once."""
    texts: list[int] = field(default_factory=list)
    """Message ids of texts this person sent (edited later)."""
    data_seen: set[str] = field(default_factory=set)
    """Every button data the bot ever showed here (tapped again once stale)."""
    blocked: bool = False


@dataclass
class FuzzReport:
    seed: int
    updates_sent: int = 0
    by_kind: Counter[str] = field(default_factory=Counter)
    unhandled_exceptions: list[str] = field(default_factory=list)
    errors_logged: list[str] = field(default_factory=list)
    errors_explained: int = 0
    emulator_errors: int = 0
    internal_errors: int = 0
    unreadable_updates: int = 0
    answerable: int = 0
    unanswered: list[str] = field(default_factory=list)
    """Chats with messages left unanswered, and how many."""
    unanswered_messages: int = 0
    taps_unanswered: list[str] = field(default_factory=list)
    written_elsewhere: list[str] = field(default_factory=list)
    players: int = 0
    players_completed: int = 0
    player_failures: list[str] = field(default_factory=list)
    integrity: str = ""
    left_unhandled: int = 0
    leaks: list[str] = field(default_factory=list)
    search_sees_text: bool = True
    """What players typed is found in the database bytes: the leak search can see text."""
    log_captured: bool = True
    """The production handler's output holds the bot's own INFO lines: the log search sees it."""
    seconds: float = 0.0

    def problems(self) -> list[str]:
        """Everything that should be zero or ok, with enough to start looking."""
        checks = [
            ("unhandled exceptions", self.unhandled_exceptions),
            ("errors logged", self.errors_logged),
            ("unanswered", self.unanswered),
            ("taps not answered exactly once", self.taps_unanswered),
            ("the bot wrote to a group, a channel or a bot", self.written_elsewhere),
            ("players who did not complete", self.player_failures),
            ("leaks", self.leaks),
        ]
        found = [f"{what} ({len(items)}): {items[:3]}" for what, items in checks if items]
        if self.emulator_errors:
            found.append(f"emulator internal errors: {self.emulator_errors}")
        if self.internal_errors:
            found.append(f"internal_error events: {self.internal_errors}")
        if self.players_completed != self.players:
            found.append(f"players completed: {self.players_completed} of {self.players}")
        if self.integrity != "ok":
            found.append(f"integrity_check: {self.integrity}")
        if not self.log_captured:
            found.append("the bot's INFO lines are not in the captured log")
        if not self.search_sees_text:
            found.append("the leak search does not see what players typed in the database")
        if self.left_unhandled:
            found.append(f"updates left unhandled in the inbox: {self.left_unhandled}")
        return found

    def summary(self) -> str:
        unanswered = self.unanswered_messages + len(self.taps_unanswered)
        return "\n".join(
            [
                f"seed                     {self.seed}",
                f"updates sent             {self.updates_sent}",
                f"unhandled exceptions     {len(self.unhandled_exceptions)}",
                f"internal errors          {self.internal_errors}",
                f"errors logged            {len(self.errors_logged)}"
                f" (+ {self.errors_explained} '{_FORGED_CHAT}' for forged chat ids)",
                f"unreadable updates       {self.unreadable_updates} (skipped by design)",
                f"unanswered messages      {unanswered}"
                f" (of {self.answerable} messages and {self.by_kind['tap']} taps)",
                f"participants completed   {self.players_completed} of {self.players}",
                f"integrity                {self.integrity}",
                f"leaks found              {len(self.leaks)}",
                f"seconds                  {self.seconds:.1f}",
                "updates by kind          "
                + ", ".join(f"{k} {n}" for k, n in sorted(self.by_kind.items())),
            ]
        )


Action = Callable[[FuzzChat], Awaitable[None]]


class Fuzzer:
    """Sends the updates; remembers what each private chat is owed.

    The seed fixes the sequence of (chat, action) pairs and each action's own generator; what
    an action picks among the buttons the bot has shown depends on the bot's timing, and
    draws only from that action's generator, so the sequence itself never drifts.
    """

    def __init__(self, emulator: BotApiEmulator, rng: random.Random, chats: int) -> None:
        self.emulator = emulator
        self.rng = rng
        self.r = random.Random(rng.getrandbits(64))  # the current action's generator
        self.kinds: Counter[str] = Counter()
        self.sent = 0
        self.forged_chats = 0
        self.needles: set[str] = set()
        self.typed: list[str] = []  # every text sent, to prove no needle is in one
        self.update_ids: list[int] = []
        self.players: list[Participant] = []  # their updates are redelivered too
        self.data_pool: set[str] = set()  # button data shown in any fuzz chat
        self.chats = [FuzzChat(self.person()) for _ in range(chats)]
        self.groups = [-rng.randint(100_000_000, 999_999_999) for _ in range(2)]
        self.groups += [-1_000_000_000_000 - self._new_id() for _ in range(2)]
        self.bots = [self._new_id() for _ in range(3)]
        self.strangers = [self._new_id() for _ in range(4)]
        channel_id, title, username = (
            -1_000_000_000_000 - self._new_id(),
            _name(rng, "Ch"),
            _username(rng),
        )
        self.channel = {"id": channel_id, "type": "channel", "title": title, "username": username}
        self.needles |= {str(g) for g in self.groups} | {str(channel_id), title, username}
        self._actions: list[tuple[float, Action]] = [
            (26, self.text),
            (8, self.command),
            (12, self.content),
            (5, self.edit),
            (18, self.tap_shown),
            (6, self.tap_forged),
            (3, self.tap_stale),
            (4, self.group),
            (2, self.channel_post),
            (2, self.member_update),
            (2, self.other_bot),
            (4, self.redeliver),
            (5, self.malformed),
            (1, self.block_for_a_while),
            (1, self.burst),
            (2, self.double_tap),
        ]

    # --- identities ---------------------------------------------------------------------

    def _new_id(self) -> int:
        while True:
            user_id = self.rng.randint(_ID_LOW, _ID_HIGH)
            if str(user_id) not in self.needles:
                self.needles.add(str(user_id))
                return user_id

    def person(self, prefix: str = "Fz") -> Participant:
        """A new user with a name, a last name and a username, all remembered as needles."""
        user_id = self._new_id()
        first, last, username = _name(self.rng, prefix), _name(self.rng, "Ln"), _username(self.rng)
        self.needles |= {first, last, username}
        return self.emulator.participant(
            user_id,
            first_name=first,
            last_name=last,
            username=username,
            language_code=self.rng.choice(("en", "it", "ar", None, "zz-ZZ")),
        )

    # --- the sequence --------------------------------------------------------------------

    def _next(self) -> None:
        """A fresh generator for the next action (one draw of the seed's sequence)."""
        self.r = random.Random(self.rng.getrandbits(64))

    async def step(self) -> None:
        """One random update from one random chat (or a group, a channel, another bot)."""
        chat = self.rng.choice(self.chats)
        weights, actions = zip(*self._actions, strict=True)
        action = self.rng.choices(actions, weights)[0]
        self._next()
        if chat.blocked and action not in (self.group, self.channel_post, self.other_bot):
            await self.unblock(chat)
            return
        await action(chat)

    async def tour(self) -> None:
        """Every chat opens with a well-formed message (so the bot has written there), then
        every kind of update is sent once, whatever the seed: a small run misses none."""
        for chat in self.chats:
            self._next()
            await self.opening(chat)
        for index, kind in enumerate(CONTENT_KINDS):
            self._next()
            await self.content(self.chats[index % len(self.chats)], kind)
        for index, name in enumerate(MALFORMED_KINDS):
            self._next()
            await self.malformed(self.chats[index % len(self.chats)], name)
        for index, (_, action) in enumerate(self._actions):
            self._next()
            await action(self.chats[index % len(self.chats)])

    # --- sending ---------------------------------------------------------------------------

    def _typed(self, text: str) -> str:
        self.typed.append(text)
        return text

    def _count(self, kind: str, update_id: int | None) -> None:
        self.kinds[kind] += 1
        self.sent += 1
        if update_id is not None:
            self.update_ids.append(update_id)

    def _raw(self, chat: FuzzChat, kind: str, payload: Any) -> int:
        update_id = self.emulator.inject_update(kind, payload)
        chat.p.update_ids.append(update_id)
        return update_id

    def _message(self, chat: FuzzChat, content: dict[str, Any]) -> dict[str, Any]:
        chat.p.known = True
        message_id = chat.p.next_message_id()
        message = {
            "message_id": message_id,
            "from": chat.p.user,
            "chat": chat.p.chat,
            "date": int(time.time()),
            **content,
        }
        chat.p.user_messages[message_id] = message
        return message

    async def claim(self, chat: FuzzChat, code: str) -> None:
        """The chat becomes an annotator's (``/start`` with their code): from then on the
        fuzz reaches the annotators' flow through it, taps on their items included."""
        self._next()
        text = self._typed(f"/start {code}")
        update_id = self._raw(
            chat, "message", self._message(chat, self.emulator.text_content(text))
        )
        chat.answerable.append(update_id)
        self._count("annotator", update_id)

    async def opening(self, chat: FuzzChat) -> None:
        if self.r.random() < 0.5:
            await self.command(chat)
        else:
            await self.text(chat)

    async def text(self, chat: FuzzChat) -> None:
        text = self._typed(random_text(self.r))
        content = self.emulator.text_content(text)
        if self.r.random() < 0.1 and chat.p.messages:  # a reply to one of the bot's
            content["reply_to_message"] = self.r.choice(chat.p.messages).to_api()
        if self.r.random() < 0.05:  # forwarded from someone who must not be stored
            hidden = _name(self.r, "Fw")
            self.needles.add(hidden)
            content["forward_origin"] = {
                "type": "hidden_user",
                "date": int(time.time()) - 100,
                "sender_user_name": hidden,
            }
        message = self._message(chat, content)
        update_id = self._raw(chat, "message", message)
        chat.texts.append(message["message_id"])
        chat.answerable.append(update_id)
        self._count("text", update_id)

    async def command(self, chat: FuzzChat, text: str | None = None) -> None:
        text = self._typed(text or self.r.choice(_COMMANDS))
        update_id = self._raw(
            chat, "message", self._message(chat, self.emulator.text_content(text))
        )
        chat.answerable.append(update_id)
        self._count("command", update_id)

    async def content(self, chat: FuzzChat, kind: str | None = None) -> None:
        kind = kind or self.r.choice(CONTENT_KINDS)
        update_id = self._raw(chat, "message", self._message(chat, self._content(chat, kind)))
        chat.answerable.append(update_id)
        self._count(f"content:{kind}", update_id)

    def _content(self, chat: FuzzChat, kind: str) -> dict[str, Any]:
        rng, uid = self.r, chat.p.user_id
        file = {"file_id": f"BQACAgIAAx{rng.getrandbits(40):x}", "file_unique_id": f"u{uid % 997}"}
        caption = {"caption": self._typed(random_text(rng))} if rng.random() < 0.5 else {}
        match kind:
            case "sticker":
                sticker = {"type": "regular", "width": 512, "height": 512, "is_animated": False}
                return {"sticker": file | sticker | {"is_video": False, "emoji": "👍"}}
            case "photo":
                return {"photo": [file | {"width": w, "height": w} for w in (90, 800)]} | caption
            case "voice":
                return {"voice": file | {"duration": rng.randint(0, 600)}} | caption
            case "video":
                return {"video": file | {"width": 640, "height": 480, "duration": 3}} | caption
            case "video_note":
                return {"video_note": file | {"length": 240, "duration": 5}}
            case "audio":
                return {"audio": file | {"duration": 200, "title": random_text(rng)[:60]}}
            case "document":
                return {"document": file | {"file_name": "a.pdf", "mime_type": "application/pdf"}}
            case "animation":
                gif = file | {"width": 1, "height": 1, "duration": 1}
                return {"animation": gif, "document": file} | caption
            case "location":
                return {
                    "location": {
                        "latitude": rng.uniform(-90, 90),
                        "longitude": rng.uniform(-180, 180),
                    }
                }
            case "contact":  # someone else's card: their number and name must not be stored
                phone = f"+39{rng.randint(3_000_000_000, 3_999_999_999)}"
                name, contact_id = _name(rng, "Ct"), rng.randint(_ID_LOW, _ID_HIGH)
                self.needles |= {phone, name, str(contact_id)}
                return {
                    "contact": {"phone_number": phone, "first_name": name, "user_id": contact_id}
                }
            case "poll":
                options = [{"text": random_text(rng)[:90] or "x", "voter_count": 0} for _ in "ab"]
                poll = {
                    "id": str(rng.getrandbits(50)),
                    "question": random_text(rng)[:200] or "?",
                    "options": options,
                    "total_voter_count": 0,
                    "is_closed": False,
                    "is_anonymous": True,
                    "type": "regular",
                    "allows_multiple_answers": False,
                }
                return {"poll": poll}
            case "dice":
                return {"dice": {"emoji": rng.choice("🎲🎯🏀⚽🎳🎰"), "value": rng.randint(1, 6)}}
        venue = {
            "location": {"latitude": 41.9, "longitude": 12.5},
            "title": random_text(rng)[:50] or "x",
            "address": random_text(rng)[:80] or "x",
        }
        return {"venue": venue, "location": venue["location"]}

    async def edit(self, chat: FuzzChat) -> None:
        if not chat.texts:
            await self.text(chat)
            return
        message_id = self.r.choice(chat.texts)
        text = self._typed(random_text(self.r) or "edited")
        update_id = await chat.p.edit_text(message_id, text)
        chat.answerable.append(update_id)
        self._count("edited", update_id)

    def _remember_buttons(self, chat: FuzzChat) -> None:
        for message in chat.p.messages:
            chat.data_seen.update(d for row in message.keyboard for _, d in row if d)
        self.data_pool |= chat.data_seen

    async def _tap(self, chat: FuzzChat, data: str, message: BotMessage | None = None) -> None:
        if not chat.p.messages:
            await self.opening(chat)
            return
        target = message or self.r.choice(chat.p.messages)
        update_id = await chat.p.send_callback(data, message_id=target.message_id)
        assert chat.p.last_query_id is not None
        chat.queries.append(chat.p.last_query_id)
        self._count("tap", update_id)

    async def tap_shown(self, chat: FuzzChat) -> None:
        """A button the bot shows now: how fuzz chats get past consent into the study."""
        self._remember_buttons(chat)
        shown = [m for m in chat.p.messages if m.keyboard and not m.deleted]
        if not shown:
            await self.tap_forged(chat)
            return
        message = shown[-1] if self.r.random() < 0.7 else self.r.choice(shown)
        data = [d for row in message.keyboard for _, d in row if d]
        await self._tap(chat, self.r.choice(data), message)

    async def double_tap(self, chat: FuzzChat) -> None:
        """The same button of the newest keyboard tapped two or three times in a row, as an
        impatient participant does: the first counts, the others are stale."""
        shown = [m for m in chat.p.messages if m.keyboard and not m.deleted]
        if not shown:
            await self.tap_forged(chat)
            return
        data = self.r.choice([d for row in shown[-1].keyboard for _, d in row if d])
        for _ in range(self.r.randint(2, 3)):
            await self._tap(chat, data, shown[-1])

    async def burst(self, chat: FuzzChat) -> None:
        """Many messages at once from one chat (a paste split by the app, a stuck key)."""
        for _ in range(self.r.randint(5, 25)):
            await self.text(chat)

    async def tap_forged(self, chat: FuzzChat) -> None:
        await self._tap(chat, self.r.choice(_FORGED_DATA))

    async def tap_stale(self, chat: FuzzChat) -> None:
        """A button this chat was shown once (or another chat was: data that is real, but not
        this participant's)."""
        self._remember_buttons(chat)
        pool = chat.data_seen if self.r.random() < 0.7 else self.data_pool
        if not pool:
            await self.tap_forged(chat)
            return
        await self._tap(chat, self.r.choice(sorted(pool)))

    async def group(self, chat: FuzzChat) -> None:
        group = self.r.choice(self.groups)
        sender = chat.p.user_id if self.r.random() < 0.5 else self.r.choice(self.strangers)
        text = self._typed(self.r.choice((*_COMMANDS, random_text(self.r), f"@{BOT_USERNAME} hi")))
        update_id = await self.emulator.group_message(
            group, sender, text, first_name=_name(self.r, "Gr"), username=_username(self.r)
        )
        self._count("group", update_id)

    async def channel_post(self, chat: FuzzChat) -> None:
        """A channel's post, as its own update type and as a "message" from a channel."""
        post = {
            "message_id": self.r.randint(1, 10**6),
            "sender_chat": self.channel,
            "chat": self.channel,
            "date": int(time.time()),
            "text": self._typed(random_text(self.r) or "post"),
        }
        kind = self.r.choice(("channel_post", "edited_channel_post", "message"))
        update_id = self.emulator.inject_update(kind, post)
        self._count(f"channel:{kind}", update_id)

    async def member_update(self, chat: FuzzChat) -> None:
        old, new = self.r.choice((("member", "kicked"), ("kicked", "member"), ("left", "member")))
        update_id = self.emulator.inject_update(
            "my_chat_member", self.emulator.membership_change(chat.p, old, new)
        )
        self._count("my_chat_member", update_id)

    async def other_bot(self, chat: FuzzChat) -> None:
        bot_id = self.r.choice(self.bots)
        text = self._typed(self.r.choice((*_COMMANDS, random_text(self.r))))
        update_id = await self.emulator.bot_message(bot_id, text, username=f"fz{bot_id}_bot")
        self._count("other_bot", update_id)

    async def redeliver(self, chat: FuzzChat) -> None:
        """Telegram hands an update out again, under the same id (answered once, if at all),
        the players' included: one handled twice would store their rows twice."""
        pool = self.update_ids + [u for p in self.players for u in p.update_ids]
        if not pool:
            await self.opening(chat)
            return
        update_id = self.r.choice(pool)
        self.emulator.redeliver(update_id)
        self._count("redelivered", None)

    async def malformed(self, chat: FuzzChat, name: str | None = None) -> None:
        """Updates no well-behaved Bot API server sends: fields missing or of the wrong type.
        Not owed an answer; one in a private chat the bot can read may get one."""
        name = name or self.r.choice(MALFORMED_KINDS)
        kind, payload = _malformed(name, chat.p, self.emulator.new_callback_query(chat.p))
        if name == "chat-id-huge":
            self.forged_chats += 1
        chat.p.known = True
        self._count(f"malformed:{name}", self._raw(chat, kind, payload))

    async def block_for_a_while(self, chat: FuzzChat) -> None:
        """A message, then the bot blocked before it could answer (so that message is
        explained); the next action on this chat unblocks it with a /start. Everything sent
        here before is handled first, so that only this message can go unanswered."""
        await self.barrier(chat, 60)
        text = self._typed(random_text(self.r))
        update_id = self._raw(chat, "message", self._message(chat, {"text": text}))
        chat.p.block()
        chat.blocked = True
        self._count("blocked", update_id)

    async def unblock(self, chat: FuzzChat) -> None:
        """Unblocking a bot in Telegram's apps sends /start."""
        chat.p.unblock()
        chat.blocked = False
        await self.command(chat, "/start")

    async def barrier(self, chat: FuzzChat, timeout: float) -> None:
        """Once this tap is answered, the bot has handled everything sent here before it
        (one chat's updates are handled one after another, in order)."""
        if chat.blocked:
            await self.unblock(chat)
        if chat.p.last_message is None:
            await chat.p.wait_for(lambda q: q.last_message is not None, timeout)
        update_id = await chat.p.send_callback("fuzz-barrier")
        assert chat.p.last_query_id is not None
        chat.queries.append(chat.p.last_query_id)
        self._count("barrier", update_id)
        await chat.p.wait_for_answer(timeout=timeout)


MALFORMED_KINDS = (
    "no-date",
    "no-chat",
    "no-from",
    "no-id",
    "no-content",
    "string",
    "null",
    "list",
    "chat-id-text",
    "chat-id-bool",
    "chat-id-huge",
    "chat-type",
    "from-string",
    "no-is-bot",
    "entity-past-end",
    "entities-string",
    "photo-string",
    "sticker-empty",
    "future-date",
    "negative-date",
    "huge-message-id",
    "unknown-field",
    "text-number",
    "text-list",
    "text-object",
    "text-null",
    "caption-number",
    "language-number",
    "edited-no-date",
    "edited-no-chat",
    "query-no-from",
    "query-no-message",
    "query-no-data",
    "query-id-number",
    "query-data-number",
    "query-data-list",
    "query-message-string",
)


def _malformed(name: str, p: Participant, query_id: str) -> tuple[str, Any]:
    """One malformed update of ``p``'s chat: (its kind, its payload)."""
    user, chat, text = p.user, p.chat, {"text": "hello"}
    base = {"message_id": p.next_message_id(), "from": user, "chat": chat, "date": int(time.time())}
    target = p.last_message.to_api() if p.last_message else None
    query = {"id": query_id, "from": user, "chat_instance": "1", "message": target, "data": "c:y"}

    def without(key: str) -> dict[str, Any]:
        return {k: v for k, v in base.items() if k != key} | text

    messages: dict[str, Any] = {
        "no-date": without("date"),
        "no-chat": without("chat"),
        "no-from": without("from"),
        "no-id": without("message_id"),
        "no-content": base,
        "string": "hello",
        "null": None,
        "list": [base | text],
        "chat-id-text": base | text | {"chat": {"id": "abc", "type": "private"}},
        "chat-id-bool": base | text | {"chat": chat | {"id": True}},
        "chat-id-huge": base | text | {"chat": chat | {"id": 2**70}},
        "chat-type": base | text | {"chat": chat | {"type": "secret"}},
        "from-string": base | text | {"from": "someone"},
        "no-is-bot": base | text | {"from": {"id": p.user_id}},
        "entity-past-end": base | {"text": "/s", "entities": _long_entity()},
        "entities-string": base | text | {"entities": "bold"},
        "photo-string": base | {"photo": "not a list"},
        "sticker-empty": base | {"sticker": {}},
        "future-date": base | text | {"date": 2**40},
        "negative-date": base | text | {"date": -5},
        "huge-message-id": base | text | {"message_id": 2**63},
        "unknown-field": base | text | {"future_field": {"x": [1]}},
        "text-number": base | {"text": 123},
        "text-list": base | {"text": ["a"]},
        "text-object": base | {"text": {"a": 1}},
        "text-null": base | {"text": None},
        "caption-number": base | {"photo": [], "caption": 5},
        "language-number": base | text | {"from": user | {"language_code": 7}},
    }
    if name in messages:
        return "message", messages[name]
    if name.startswith("edited-"):
        return "edited_message", without("date" if name == "edited-no-date" else "chat")
    queries: dict[str, Any] = {
        "query-no-from": {k: v for k, v in query.items() if k != "from"},
        "query-no-message": {k: v for k, v in query.items() if k != "message"},
        "query-no-data": {k: v for k, v in query.items() if k != "data"},
        "query-id-number": query | {"id": 5},
        "query-data-number": query | {"data": 5},
        "query-data-list": query | {"data": ["c:y"]},
        "query-message-string": query | {"message": "hello"},
    }
    return "callback_query", queries[name]


def _long_entity() -> list[dict[str, Any]]:
    return [{"type": "bot_command", "offset": 0, "length": 500}]


def shortfall(written: Sequence[float], sent: Sequence[float]) -> int:
    """How many of the messages written at ``written`` cannot each be paired with a distinct
    bot message sent after it (at ``sent``): by Hall's theorem, the largest excess, over the
    messages from any one on, of those messages over the bot messages sent after it."""
    times, answers = sorted(written), sorted(sent)
    missing = 0
    for index, at in enumerate(times):
        after = len(answers) - bisect.bisect_right(answers, at)
        missing = max(missing, len(times) - index - after)
    return missing


def unanswered(chat: FuzzChat, created: dict[int, float]) -> int:
    """How many answerable updates of ``chat`` went unanswered (see the module's docstring)."""
    written = [created[u] for u in chat.answerable]
    return shortfall(written, [m.sent_at for m in chat.p.messages])


@dataclass(frozen=True)
class FuzzSettings:
    updates: int = 600
    players: int = 6
    seed: int = 1
    chats: int = 0  # private fuzz chats; 0: one for every 40 updates, at least 8
    timeout: float = 120.0
    study: str = "hmd"  # any shipped study: the players play whatever it asks
    annotators: int = 0
    """Fuzz chats that claim an annotator's code of the study's first annotation job, after
    two simulated participants gave them conversations to rate."""

    @property
    def fuzz_chats(self) -> int:
        return self.chats or max(8, self.updates // 40)


async def _pressure(emulator: BotApiEmulator, limit: int, timeout: float) -> None:
    """Wait (on a condition) until the bot has taken most of what was sent: updates then
    arrive while the players are mid-session, not all before they start."""
    await emulator.wait_until(lambda e: e.pending_updates <= limit, timeout)


async def run_fuzz(
    settings: FuzzSettings,
    workdir: Path,
    db: str | None = None,
    stored: Callable[[], bytes] | None = None,
) -> FuzzReport:
    """The whole run: bot, players and fuzz together, then every check; never raises for
    what it measures (the caller decides), only when something could not run at all.
    ``db``: the study's database (default a SQLite file in ``workdir``); ``stored``: every
    byte it is kept in, searched for identities (default the file and its WAL)."""
    started = time.perf_counter()
    rng = random.Random(settings.seed)
    report = FuzzReport(settings.seed, players=settings.players)
    bundle = load_study(settings.study)
    study: Path | str = db or workdir / "fuzz.sqlite"
    stored_now = stored or (lambda: database_bytes(Path(study)))
    with production_logging([TOKEN, SECRET]) as log:
        async with BotApiEmulator(TOKEN, bot_username=BOT_USERNAME) as emulator:
            fuzz = Fuzzer(emulator, rng, settings.fuzz_chats)
            async with running_bot(bundle, emulator, study):
                if settings.annotators:
                    await _annotators(fuzz, bundle, emulator, study, settings.annotators)
                players = [
                    StudyPlayer(fuzz.person("Pl"), bundle, random.Random(rng.getrandbits(32)))
                    for _ in range(settings.players)
                ]
                fuzz.players = [player.p for player in players]
                playing: list[asyncio.Task[Played]] = []
                await fuzz.tour()
                while fuzz.sent < settings.updates or len(playing) < len(players):
                    # Players join one after another over the whole run, amid the fuzz.
                    due = len(players) * fuzz.sent // max(settings.updates, 1)
                    while len(playing) < min(due + 1, len(players)):
                        playing.append(asyncio.create_task(players[len(playing)].play()))
                    await fuzz.step()
                    if fuzz.sent % 10 == 0:
                        await _pressure(emulator, 20, settings.timeout)
                for chat in fuzz.chats:
                    await fuzz.barrier(chat, settings.timeout)
                played = await _finish(playing, settings.timeout)
                report.player_failures = [
                    f"player {i}: {r!r}" for i, r in enumerate(played) if not isinstance(r, Played)
                ]
                report.integrity = integrity(study)
                running_bytes = stored_now()
            report.emulator_errors = len(emulator.internal_errors)
            for chat in fuzz.chats:
                if missing := unanswered(chat, emulator.created_times):
                    report.unanswered_messages += missing
                    report.unanswered.append(
                        f"chat {chat.p.chat_id}: {missing} of {len(chat.answerable)}; "
                        + chat.p.describe()
                    )
                answers = Counter(a.query_id for a in chat.p.callback_answers)
                report.taps_unanswered += [
                    f"chat {chat.p.chat_id}: query {q} answered {answers[q]} times"
                    for q in chat.queries
                    if answers[q] != 1
                ]
            report.answerable = sum(len(c.answerable) for c in fuzz.chats)
            report.written_elsewhere = [
                f"chat {chat_id}: {emulator.chat(chat_id).describe()}"
                for chat_id in [*fuzz.groups, *fuzz.bots]
                if _has_chat(emulator, chat_id) and emulator.chat(chat_id).messages
            ]
    report.updates_sent = fuzz.sent
    report.by_kind = fuzz.kinds
    report.unhandled_exceptions = [str(e) for e in log.exceptions]
    # A message claiming a chat Telegram does not know is answered into the void: the one
    # error that is the fuzz's doing, not the bot's.
    forged = [e for e in log.errors if e.message.endswith(f"refused by Telegram: {_FORGED_CHAT}")]
    report.errors_explained = len(forged) if fuzz.forged_chats else 0
    report.errors_logged = [str(e) for e in log.errors if not fuzz.forged_chats or e not in forged]
    tables = await read_tables(study)
    kinds = Counter(row["kind"] for row in tables["events"])
    report.internal_errors = kinds["internal_error"]
    report.unreadable_updates = kinds["update_unreadable"]
    report.left_unhandled = await left_unhandled(study)
    report.players_completed = completed(bundle, players, played, tables)
    report.integrity = integrity(study) if report.integrity == "ok" else report.integrity
    typed = "\n".join(fuzz.typed)
    needles = sorted(n for n in fuzz.needles if n not in typed)
    assert len(needles) == len(fuzz.needles), "a fuzz text contains an identity by chance"
    report.leaks = leaks(needles, running_bytes, stored_now(), log.text)
    report.log_captured = f"study {bundle.study.id!r} is running" in log.text
    said = [m.get("text", "") for p in fuzz.players for m in p.user_messages.values()]
    words = [t for t in said if t.isascii() and len(t) >= 12 and not t.startswith("/")]
    report.search_sees_text = not words or any(w.encode() in running_bytes for w in words)
    report.seconds = time.perf_counter() - started
    return report


async def _annotators(
    fuzz: Fuzzer, bundle: StudyBundle, emulator: BotApiEmulator, db: Path | str, count: int
) -> None:
    """Conversations to rate (two participants play the study through), then ``count`` of
    the fuzz chats become annotators of the study's first job."""
    await play(emulator, bundle, participants=2)
    codes = await invite(db, next(iter(bundle.jobs)), count)
    for chat, (_, code) in zip(fuzz.chats, codes, strict=False):
        await fuzz.claim(chat, code)


def _has_chat(emulator: BotApiEmulator, chat_id: int) -> bool:
    try:
        emulator.chat(chat_id)
    except KeyError:
        return False
    return True


async def _finish(playing: list[asyncio.Task[Played]], timeout: float) -> list[Any]:
    if not playing:
        return []
    _, pending = await asyncio.wait(playing, timeout=timeout)
    for task in pending:
        task.cancel()
    results: list[Any] = []
    for task in playing:
        if task in pending:
            results.append(TimeoutError("still playing"))
        elif task.exception() is not None:
            results.append(task.exception())
        else:
            results.append(task.result())
    return results


def completed(
    bundle: StudyBundle,
    players: Sequence[StudyPlayer],
    played: Sequence[Played | BaseException],
    tables: dict[str, list[dict[str, Any]]],
) -> int:
    """Players who reached the thanks, with every message and answer they gave stored once
    (a redelivered update of theirs handled twice would store a row twice)."""
    privacy = Privacy(SECRET)
    done = 0
    for player, result in zip(players, played, strict=True):
        if not isinstance(result, Played) or not result.finished:
            continue
        if not any(bundle.study.texts.thanks in m.text for m in player.p.messages):
            continue
        me = privacy.pseudonym(player.p.user_id)
        sessions = {s["session_id"] for s in tables["sessions"] if s["participant_id"] == me}
        exchanges = [e for e in tables["exchanges"] if e["session_id"] in sessions]
        answers = [
            r
            for r in tables["responses"]
            if r["participant_id"] == me and r["status"] in ("answered", "skipped")
        ]  # (not those never asked, or left unanswered beside the chat)
        if len(exchanges) == result.exchanges and len(answers) == len(result.given):
            done += 1
    return done


def integrity(db: Path | str) -> str:
    """``PRAGMA integrity_check`` on a read-only connection (a storage check: SQL is right);
    on a server, amcheck's check of every index of the study against its table."""
    place = locate(db)
    if place.server is not None:
        return _server_integrity(place.server, place.study or "hmd")
    with contextlib.closing(sqlite3.connect(f"file:{db}?mode=ro", uri=True)) as conn:
        return "; ".join(row[0] for row in conn.execute("PRAGMA integrity_check"))


def _server_integrity(server: str, study: str) -> str:
    import psycopg

    with psycopg.connect(server, autocommit=True) as conn:
        conn.execute("CREATE EXTENSION IF NOT EXISTS amcheck")
        indexes = conn.execute(
            "SELECT c.oid FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid"
            " JOIN pg_namespace n ON n.oid = c.relnamespace JOIN pg_am a ON a.oid = c.relam"
            " WHERE n.nspname = %s AND a.amname = 'btree'",
            (study,),
        ).fetchall()
        try:
            for (index,) in indexes:
                conn.execute("SELECT bt_index_check(%s, true)", (index,))
        except psycopg.Error as error:
            return str(error).splitlines()[0]
    return "ok" if indexes else "no indexes"


async def left_unhandled(db: Path | str) -> int:
    """Updates stored in the inbox and never handled, as a restarting bot would find them."""
    store = await open_store(db, access=Access.READ)
    try:
        return len(await store.pending_updates())
    finally:
        await store.close()


def leaks(needles: Sequence[str], *blobs: bytes | str) -> list[str]:
    """Each needle found, and where (the n-th blob)."""
    found = []
    for index, blob in enumerate(blobs):
        data = blob.encode() if isinstance(blob, str) else blob
        found += [f"{needle!r} in #{index}" for needle in needles if needle.encode() in data]
    return found
