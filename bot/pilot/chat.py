"""``ozlab chat STUDY``: the researcher plays the participant in the terminal.

The real bot runs on a study database with the local Bot API emulator in place of Telegram
(``bot.pilot.emulated``): no token, nothing but loopback. The researcher is one emulated user;
what the bot sends is printed and what they type is sent or tapped (``bot.pilot.chat_screen``
says how). The database is an ordinary study database in WAL mode, so a second terminal
can watch and step in with ``ozlab wizard --db`` while the chat runs.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import re
import secrets
import signal
import sys
import tempfile
import threading
from collections.abc import Callable
from pathlib import Path
from typing import TextIO, assert_never

from bot.annotation.invitations import invite_annotators
from bot.core.errors import StudyDataError
from bot.core.privacy import SECRET_ENV
from bot.core.visible_text import visible
from bot.pilot import chat_screen as screen
from bot.pilot.emulated import emulated_study
from bot.pilot.emulator import Participant
from bot.speech import audio
from bot.speech.base import UnreadableAudio
from bot.store import open_store
from bot.store.claims import WriterClaim, claim
from bot.store.opening import Database, locate
from scenarios.models import StudyBundle

PILOT_SECRET = "ozlab chat: emulated participants, no Telegram ids"
"""The pseudonym key when ``OZLAB_SECRET`` is not set: the emulated users are nobody, and a
fixed key lets a later ``ozlab chat --db`` on the same file resume what an earlier one left."""

_WAKE_EVERY = 3600.0  # a wait on the chat with nothing new just starts again


def scratch_database() -> Path:
    """A new database in a folder of its own, kept afterwards (for the wizard, the report)."""
    return Path(tempfile.mkdtemp(prefix="ozlab-chat-")) / "chat.sqlite"


def chat_log(db: Database) -> Path:
    """Where the bot's log lines go during a chat: beside a SQLite file (``chat.log`` for
    ``chat.sqlite``), in a folder of its own for a server's study. Never the terminal, which
    shows only the participant's conversation."""
    location = locate(db)
    if location.server is None:
        return Path(location.path).resolve().with_suffix(".log")
    return Path(tempfile.mkdtemp(prefix="ozlab-chat-")) / "chat.log"


def chat_secret() -> str:
    secret = os.environ.get(SECRET_ENV, "")
    return secret if len(secret) >= 16 else PILOT_SECRET


def run_chat(
    bundle: StudyBundle,
    db: Database,
    language: str,
    log: Path,
    out: TextIO = sys.stdout,
    *,
    annotate: str | None = None,
    start: str = "/start",
) -> int:
    """Chat until /quit, end of input (Ctrl-D) or Ctrl-C; 0 however it ends. ``log``: where
    the bot's log lines went (named once, at the start); ``annotate``: be an annotator of
    this job instead of a participant (``bot.pilot.chat_annotating``); ``start``: the first
    participant's ``/start`` (:func:`start_command`)."""

    def write(line: str) -> None:
        out.write(line + "\n")
        out.flush()

    async def main() -> None:
        loop = asyncio.get_running_loop()
        stop = asyncio.Event()
        for signum in (signal.SIGINT, signal.SIGTERM):
            loop.add_signal_handler(signum, stop.set)
        lines: asyncio.Queue[str | None] = asyncio.Queue()

        def put(line: str | None) -> None:
            loop.call_soon_threadsafe(lines.put_nowait, line)

        _read_lines(sys.stdin, put)
        await chat(
            bundle,
            db,
            language=language,
            lines=lines,
            write=write,
            stop=stop,
            writer=writer,
            annotate=annotate,
            start=start,
        )

    # Refused at once, before a word is printed, when a bot (or another chat) writes to it.
    study = locate(db).study_or(bundle.study.id)
    with claim(db, "ozlab chat", study) as writer:
        write(f"Study {bundle.study.id!r} on {locate(db).shown}")
        write(f"(watch and step in from another terminal: ozlab wizard --db {db})")
        write(f"(the bot's log: {log})")
        asyncio.run(main())
    if annotate is None:
        write(f"Goodbye. The database stays at {locate(db).shown}")
    return 0


def _read_lines(stream: TextIO, put: Callable[[str | None], None]) -> None:
    """Lines typed, from a thread of their own (``None`` at the end of input); a daemon, so
    that a chat ended by /quit or Ctrl-C does not wait for the next line."""

    def read() -> None:
        for line in stream:
            put(line)
        put(None)

    threading.Thread(target=read, name="ozlab-chat-input", daemon=True).start()


async def chat(
    bundle: StudyBundle,
    db: Database,
    *,
    language: str,
    lines: asyncio.Queue[str | None],
    write: Callable[[str], None],
    stop: asyncio.Event,
    writer: WriterClaim | None = None,
    annotate: str | None = None,
    start: str = "/start",
) -> None:
    """One emulated participant after another (``/restart``) until the chat ends, or with
    ``annotate``, one new annotator of that job after another, each let in by the code of
    their own that ``ozlab invite`` would give them; ``writer``: the writer's lock on ``db``
    when the caller holds it already; ``start``: the first participant's ``/start``, with the
    deep link's payload when one is rehearsed (the next ones start bare)."""
    # The chat's users are the emulator's: whoever a demo, a pilot or the study sealed
    # under its own secret is nobody the chat can reach, and is left alone.
    async with emulated_study(
        bundle, db, secret=chat_secret(), writer=writer, foreign_chats=True
    ) as emulator:
        write(screen.HELP if annotate is None else screen.annotator_help(annotate))
        who = "participant" if annotate is None else "annotator"
        while True:
            user_id = 900_000_000 + secrets.randbelow(90_000_000)
            p = emulator.participant(user_id, first_name="Pilot", language_code=language)
            if annotate is not None:  # the annotator's link: the bot's deep link with a code
                start += " " + await _new_annotator(bundle, db, annotate)
            view = _Screen(p, screen.refusals(bundle.texts_for(language)))
            action = await _converse(view, start, lines, write, stop)
            if isinstance(action, screen.Quit):
                return
            write(f"--- /restart: you are a new {who} ---")
            start = "/start"


_PAYLOAD = re.compile(r"[A-Za-z0-9_-]{1,64}")


def start_command(payload: str | None) -> str:
    """``/start`` with a deep link's payload as Telegram sends it (up to 64 characters of
    ``A-Za-z0-9_-``, as a link can carry), or a one-line refusal."""
    if payload is None:
        return "/start"
    if not _PAYLOAD.fullmatch(payload):
        raise StudyDataError(
            f"--start {visible(payload)!r}: a deep link's payload is 1 to 64 letters, digits,"
            " _ or - (e.g. pid_TEST1)"
        )
    return f"/start {payload}"


async def _new_annotator(bundle: StudyBundle, db: Database, job: str) -> str:
    """The code of one new annotator of ``job``, its work assigned, as ``ozlab invite
    --annotators 1`` makes it (the bot running on ``db`` reads it when the code comes)."""
    store = await open_store(db, study=locate(db).study_or(bundle.study.id))
    try:
        invited = await invite_annotators(store, bundle.study.id, job, 1)
    finally:
        await store.close()
    [(_, code)] = invited.annotators
    return code


class _Screen:
    """What the terminal has shown of one participant's chat."""

    def __init__(self, p: Participant, refusal: Callable[[str], bool]) -> None:
        self.p = p
        self.refusal = refusal
        self.shown: list[screen.Seen] = []
        self.toasts = 0

    def now(self) -> list[screen.Seen]:
        return [
            screen.Seen(
                m.message_id,
                m.text if m.media is None else f"[{m.media.kind}] {m.text}".rstrip(),
                tuple(tuple(row) for row in m.keyboard),
                m.deleted,
                self.refusal(m.text),
            )
            for m in self.p.messages
        ]

    def changed(self) -> bool:
        return self.toasts < len(self.p.toasts) or self.now() != self.shown

    def show(self, write: Callable[[str], None]) -> None:
        now = self.now()
        for line in screen.news({m.message_id: m for m in self.shown}, now):
            write(line)
        self.shown = now
        for toast in self.p.toasts[self.toasts :]:
            write(screen.notice(toast))
        self.toasts = len(self.p.toasts)


async def _converse(
    view: _Screen,
    start: str,
    lines: asyncio.Queue[str | None],
    write: Callable[[str], None],
    stop: asyncio.Event,
) -> screen.Restart | screen.Quit:
    p = view.p

    async def follow() -> None:
        while True:
            with contextlib.suppress(TimeoutError):
                await p.wait_for(lambda _: view.changed(), timeout=_WAKE_EVERY)
                view.show(write)

    following = asyncio.create_task(follow())
    try:
        write(f"you: {visible(start)}")
        await p.send_text(start)
        while True:
            line = await _next_line(lines, stop)
            if line is None:
                return screen.Quit()
            view.show(write)  # what was shown is what a number refers to
            match screen.understand(line, view.shown):
                case screen.Say(text):
                    await p.send_text(text)
                case screen.Tap(message_id, data, label):
                    write(f"you tap: {visible(label)}")
                    await p.send_callback(data, message_id=message_id)
                case screen.Voice(path):
                    await _send_voice(p, path, write)
                case screen.Restart() | screen.Quit() as ending:
                    return ending
                case screen.Nothing():
                    pass
                case unknown:
                    assert_never(unknown)
    finally:
        following.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await following


def _voice_note(path: str) -> tuple[bytes, float]:
    """The sound file at ``path`` as a phone records a voice note (OGG/Opus), and its length
    in seconds; OSError or UnreadableAudio when it cannot be."""
    return audio.as_voice_note(Path(path).expanduser().read_bytes())


async def _send_voice(p: Participant, path: str, write: Callable[[str], None]) -> None:
    """The sound file at ``path`` as a voice note; a file that cannot be read is said in
    one line, and the chat goes on."""
    if not path:
        write("ozlab: /voice needs a sound file's path, e.g. /voice ~/hello.ogg")
        return
    try:
        note, seconds = await asyncio.to_thread(_voice_note, path)
    except OSError as error:
        write(f"ozlab: cannot read {visible(path)}: {visible(error.strerror or str(error))}")
        return
    except UnreadableAudio as error:
        write(f"ozlab: {visible(path)} is not a sound file ozlab reads: {visible(str(error))}")
        return
    write(f"you (voice note, {seconds:.0f} s): {visible(path)}")
    await p.send_voice(note, duration=max(1, round(seconds)))


async def _next_line(lines: asyncio.Queue[str | None], stop: asyncio.Event) -> str | None:
    """The next typed line, or None when input ended or the chat was stopped."""
    getting = asyncio.create_task(lines.get())
    stopping = asyncio.create_task(stop.wait())
    done, _ = await asyncio.wait({getting, stopping}, return_when=asyncio.FIRST_COMPLETED)
    for task in (getting, stopping):
        task.cancel()
    return getting.result() if getting in done else None
