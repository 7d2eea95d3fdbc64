"""Speech to text on this machine: a 10-second voice note through PocketSphinx, and what it
costs everyone else talking to the bot meanwhile.

Usage::

    .venv/bin/python bench/speech.py [--rounds 5] [--json out.json]
    .venv/bin/python bench/speech.py --bot [--participants 8] [--speakers 1] [--rounds 6]

1. **The voice note**: espeak-ng (``en-us``, 140 words a minute) speaks known sentences,
   cut to exactly ``--seconds`` (10) and encoded as OGG/Opus, as Telegram sends a voice note.
2. **Cold start**: the recogniser's worker process started and its model loaded
   (``PocketSphinx.start``), once.
3. **Time to transcript**: ``--rounds`` transcriptions of the note through
   ``PocketSphinx.transcribe`` (decode, resample to 16 kHz, recognise, in the worker):
   median, min, max wall time, and the worker's CPU time for each (what the wall time would
   be on a free core). The goal: under 3 s on 2 cores.
4. **The event loop meanwhile**: a closed loop of synthetic text exchanges on the bot's event
   loop (each one parses a Telegram update, pseudonymises the chat, builds and encodes the
   reply, yields to the loop) counts how many it completes a second, with a 10 ms timer
   beside it whose lag is recorded, in three modes over the same window (a transcription's
   length), alternating, ``--rounds`` times each:

   - ``alone``: no transcription (the usual rate);
   - ``process``: the note transcribed by ``PocketSphinx`` (its worker process, at
     ``--niceness``, 10 as ozlab runs it), as ozlab does;
   - ``thread``: the same work (``bot.speech.sphinx._recognise``) in a thread of the bot's
     process, for comparison: PocketSphinx keeps the global lock while it decodes.

   The goal: with the transcription in its process, at least 90 % of the usual rate.

5. **Through the real bot** (``--bot``, instead of 2-4): the bot as ``bench/exchanges.py``
   runs it (``bench/ozlab_bot.py``: ``run_bot`` on the Bot API emulator, a SQLite study, the
   demo shop or ``--system instant``), on the shipped ``hmd-spoken`` study (PocketSphinx, as
   ``ozlab run`` builds it) with the replies sent as text, so that speaking them (espeak-ng)
   is not in the figures. ``--participants`` text participants (8) and ``--speakers`` voice
   participants (1) consent; then:

   - the first voice note (the recogniser's process starts and loads its model), and
     ``--rounds`` voice notes one after another with nobody typing: their time to the
     transcript;
   - ``--rounds`` rounds of two conditions, their order alternating (alone, voice; voice,
     alone; ...): the text participants in closed loops (send, wait for the reply, send)
     for ``--window`` seconds (8) after ``--settle`` (1); in ``voice``, the voice
     participants send the voice note in closed loops meanwhile (from before the window
     opens to after it closes). Exchanges per second in each window, the bot process's
     share of a core, the cores the whole machine kept busy, the load average.

   The summary: the medians of each condition's rate, their ratio (and each round's ratio)
   against 0.9; from each voice note's delivery to the bot, the seconds to "I heard: …"
   (its transcript, shown) and to the system's reply, and the engine's own time from the
   study's ``media`` table, against 3 s. Every wait is bounded (``--turn-timeout``).

The machine's load average is printed before and after: on a shared machine the figures
move with what others run.
"""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import json
import multiprocessing
import os
import secrets
import shutil
import statistics
import sys
import tempfile
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

BENCH = Path(__file__).resolve().parent
if str(BENCH) not in sys.path:  # ``exchanges`` lives beside this file
    sys.path.insert(0, str(BENCH))

import exchanges  # noqa: E402

from bot.pilot.emulator import BotApiEmulator, Participant  # noqa: E402
from bot.speech import audio  # noqa: E402
from bot.speech.espeak import Espeak  # noqa: E402
from bot.speech.sphinx import NICENESS, PocketSphinx, _recognise  # noqa: E402
from bot.store import Access, open_store  # noqa: E402
from bot.store.blocking import run_blocking  # noqa: E402
from scenarios.loading import load_study  # noqa: E402

STUDY = "hmd-spoken"
"""The ``--bot`` mode's study: the shipped spoken HMD task (PocketSphinx), replies as text."""

SENTENCES = (
    "please book a table for two people tonight",
    "i would like to change my flight to tuesday morning",
    "what time does the museum open on sunday",
    "can you recommend a good restaurant near the station",
    "i need a taxi to the airport",
    "what is the weather like in london",
)
UPDATE = json.dumps(
    {
        "update_id": 1,
        "message": {
            "message_id": 7,
            "date": 1_764_400_000,
            "chat": {"id": 600_000_001, "type": "private"},
            "from": {"id": 600_000_001, "is_bot": False, "first_name": "P"},
            "text": "I would like a cheaper one with free cancellation, please " * 4,
        },
    }
)


async def voice_note(seconds: float) -> bytes:
    speaker = Espeak(voice="en-us", words_per_minute=140)
    spoken = await speaker.speak(" ".join(SENTENCES * 2))
    pcm = audio.decode(spoken.audio, rate=audio.VOICE_NOTE_RATE)
    wanted = int(seconds * pcm.rate) * 2
    if len(pcm.samples) < wanted:
        raise SystemExit(f"espeak-ng spoke only {pcm.seconds:.1f} s, fewer than {seconds} s")
    return audio.encode_voice_note(audio.Pcm(pcm.samples[:wanted], pcm.rate))


def cpu_seconds(pid: int) -> float:
    """The CPU time (user and system) a process has used so far."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def exchange() -> int:
    """One text exchange's work on the bot's loop, without the network and the database."""
    update = json.loads(UPDATE)
    message = update["message"]
    chat = hashlib.sha256(b"secret" + str(message["chat"]["id"]).encode()).hexdigest()[:12]
    reply = {"chat": chat, "text": message["text"][::-1], "reply_to": message["message_id"]}
    return len(json.dumps(reply))


async def text_traffic(stop: asyncio.Event) -> tuple[int, list[float]]:
    """Exchanges completed until ``stop``, and the 10 ms timer's lags meanwhile."""
    loop = asyncio.get_running_loop()
    lags: list[float] = []
    count = 0

    async def timer() -> None:
        while not stop.is_set():
            before = loop.time()
            await asyncio.sleep(0.01)
            lags.append(loop.time() - before - 0.01)

    ticking = asyncio.create_task(timer())
    while not stop.is_set():
        exchange()
        count += 1
        await asyncio.sleep(0)
    await ticking
    return count, lags


async def one_window(mode: str, note: bytes, sphinx: PocketSphinx, window: float) -> dict[str, Any]:
    stop = asyncio.Event()
    traffic = asyncio.create_task(text_traffic(stop))
    started = time.perf_counter()
    if mode == "process":
        await sphinx.transcribe(note)
    elif mode == "thread":
        await asyncio.to_thread(_recognise, note)
    else:
        await asyncio.sleep(window)
    elapsed = time.perf_counter() - started
    stop.set()
    count, lags = await traffic
    lags.sort()
    return {
        "mode": mode,
        "seconds": elapsed,
        "exchanges_per_second": count / elapsed,
        "timer_lag_p50_ms": 1000 * lags[len(lags) // 2] if lags else None,
        "timer_lag_max_ms": 1000 * lags[-1] if lags else None,
    }


async def main(arguments: argparse.Namespace) -> dict[str, Any]:
    document: dict[str, Any] = {"cpus": os.cpu_count(), "load_average_before": os.getloadavg()}
    print(f"{os.cpu_count()} CPUs, load average {os.getloadavg()}", file=sys.stderr)
    note = await voice_note(arguments.seconds)
    document["note"] = {"seconds": audio.duration(note), "bytes": len(note)}
    others = set(multiprocessing.active_children())
    sphinx = PocketSphinx(niceness=arguments.niceness)
    try:
        started = time.perf_counter()
        await sphinx.start()
        document["cold_start_seconds"] = time.perf_counter() - started
        (worker,) = set(multiprocessing.active_children()) - others
        _recognise(note)  # the thread mode's model, loaded here, outside the measures
        times, cpu = [], []
        for _ in range(arguments.rounds):
            before = cpu_seconds(worker.pid or 0)
            transcript = await sphinx.transcribe(note)
            cpu.append(cpu_seconds(worker.pid or 0) - before)
            times.append(transcript.seconds)
        document["time_to_transcript"] = {
            "median": statistics.median(times),
            "min": min(times),
            "max": max(times),
            "all": times,
            "worker_cpu_median": statistics.median(cpu),
            "transcript": transcript.text,
        }
        print(f"time to transcript: {document['time_to_transcript']}", file=sys.stderr)
        window = statistics.median(times)
        windows = []
        for _ in range(arguments.rounds):
            for mode in ("alone", "process", "thread"):
                windows.append(await one_window(mode, note, sphinx, window))
                print(json.dumps(windows[-1]), file=sys.stderr)
    finally:
        await sphinx.close()
    document["windows"] = windows
    summary = {}
    for mode in ("alone", "process", "thread"):
        mine = [w for w in windows if w["mode"] == mode]
        summary[mode] = {
            "exchanges_per_second": statistics.median(w["exchanges_per_second"] for w in mine),
            "timer_lag_max_ms": max(w["timer_lag_max_ms"] for w in mine),
        }
    usual = summary["alone"]["exchanges_per_second"]
    for mode in ("process", "thread"):
        summary[mode]["share_of_usual_rate"] = summary[mode]["exchanges_per_second"] / usual
    document["summary"] = summary
    document["load_average_after"] = os.getloadavg()
    return document


# --- through the real bot (``--bot``) ---------------------------------------------------------


@dataclass
class BotWindow:
    """One condition's window: the text participants' exchanges, and the voice notes."""

    condition: str
    seconds: float = 0.0
    texts: int = 0
    voice_notes: list[dict[str, float]] = field(default_factory=list)
    bot_cpu_share: float | None = None
    machine_busy_cores: float = 0.0
    load_average: tuple[float, float, float] = (0.0, 0.0, 0.0)
    errors: list[str] = field(default_factory=list)

    @property
    def exchanges_per_second(self) -> float:
        return self.texts / self.seconds if self.seconds > 0 else 0.0


async def _type(p: Participant, stop: asyncio.Event, patience: float) -> list[float]:
    """A text participant's closed loop until ``stop``: the moments its replies arrived."""
    replied: list[float] = []
    index = p.user_id % len(exchanges.MESSAGES)
    while not stop.is_set():
        before = len(p.messages)
        await p.send_text(exchanges.MESSAGES[index % len(exchanges.MESSAGES)])
        await p.wait_for(lambda q, n=before: len(q.messages) > n, patience)
        replied.append(p.messages[before].sent_at)
        index += 1
    return replied


async def _speak(
    p: Participant,
    emulator: BotApiEmulator,
    note: bytes,
    heard: str,
    stop: asyncio.Event,
    patience: float,
) -> list[dict[str, float]]:
    """A voice participant's closed loop until ``stop`` (at least one note): from each voice
    note's delivery to the bot, seconds to "I heard: …" (its transcript) and to the reply."""
    times: list[dict[str, float]] = []
    seconds = round(audio.duration(note))

    def answered(q: Participant, n: int) -> bool:
        return any(not m.text.startswith(heard) for m in q.messages[n:])

    while True:
        before = len(p.messages)
        update_id = await p.send_voice(note, duration=seconds)
        await p.wait_for(lambda q, n=before: answered(q, n), patience)
        delivered = emulator.delivery_times[update_id]
        new = p.messages[before:]
        shown = next((m.sent_at for m in new if m.text.startswith(heard)), None)
        reply = next(m.sent_at for m in new if not m.text.startswith(heard))
        times.append(
            {
                "delivered": delivered,
                "to_transcript_shown": (shown - delivered) if shown is not None else -1.0,
                "to_reply": reply - delivered,
            }
        )
        if stop.is_set():
            return times


async def _bot_window(
    condition: str,
    texters: list[Participant],
    speakers: list[Participant],
    context: tuple[BotApiEmulator, int, bytes, str],
    arguments: argparse.Namespace,
) -> BotWindow:
    """Text participants in closed loops for ``--window`` seconds after ``--settle``; in the
    ``voice`` condition, the voice participants send voice notes meanwhile (from before the
    window opens to after it closes: the recogniser is busy throughout)."""
    emulator, bot_pid, note, heard = context
    result = BotWindow(condition, load_average=os.getloadavg())
    stop = asyncio.Event()
    typing = [asyncio.ensure_future(_type(p, stop, arguments.turn_timeout)) for p in texters]
    speaking = [
        asyncio.ensure_future(_speak(p, emulator, note, heard, stop, arguments.turn_timeout))
        for p in (speakers if condition == "voice" else [])
    ]
    await asyncio.sleep(arguments.settle)
    opened = time.monotonic()
    cpu_before, busy_before = exchanges.process_cpu(bot_pid), exchanges.machine_busy()
    await asyncio.sleep(arguments.window)
    closed = time.monotonic()
    cpu_after, busy_after = exchanges.process_cpu(bot_pid), exchanges.machine_busy()
    stop.set()
    result.errors += await exchanges._bounded([*typing, *speaking], 2 * arguments.turn_timeout)
    result.seconds = closed - opened
    for typed in typing:
        if not typed.cancelled() and typed.exception() is None:
            result.texts += sum(opened < t <= closed for t in typed.result())
    for spoke in speaking:
        if not spoke.cancelled() and spoke.exception() is None:
            result.voice_notes += spoke.result()
    if cpu_before is not None and cpu_after is not None:
        result.bot_cpu_share = (cpu_after - cpu_before) / result.seconds
    result.machine_busy_cores = (busy_after - busy_before) / result.seconds
    return result


async def _consented(emulator: BotApiEmulator, count: int, patience: float) -> list[Participant]:
    """``count`` new participants, each in the dialogue (consented, task brief read)."""
    first = exchanges.FIRST_USER_ID + len(emulator.participants)
    people = [emulator.participant(first + i, first_name=f"P{i}") for i in range(count)]
    failed = await exchanges._bounded([exchanges.consent(p, patience) for p in people], 120)
    if failed:
        raise SystemExit(f"the participants could not consent: {failed[0]}")
    return people


def _media_rows(db: Path) -> list[dict[str, Any]]:
    """The study's ``media`` table, read through the store."""
    tables: dict[str, list[dict[str, Any]]] = {}

    async def read() -> None:
        store = await open_store(db, access=Access.READ)
        try:
            await store.read_snapshot(lambda name, table: tables.update({name: table.to_pylist()}))
        finally:
            await store.close()

    run_blocking(read)
    return tables.get("media", [])


def _bot_command(arguments: argparse.Namespace, url: str, secret: str, db: Path) -> list[str]:
    return [
        sys.executable,
        str(exchanges.BENCH / "ozlab_bot.py"),
        f"--url={url}",
        f"--token={exchanges.TOKEN}",
        f"--secret={secret}",  # one form: a token_urlsafe secret may start with "-"
        f"--db={db}",
        f"--system={arguments.system}",
        f"--study={STUDY}",
        "--text-replies",
        "--max-exchanges=1000000",
    ]


async def bot_main(arguments: argparse.Namespace, tmp: Path) -> dict[str, Any]:
    """The real bot on the emulator: text participants' rate alone and beside voice notes,
    alternating, and each voice note's time to its transcript."""
    document: dict[str, Any] = {
        "mode": "bot",
        "cpus": os.cpu_count(),
        "load_average_before": os.getloadavg(),
        "text_participants": arguments.participants,
        "voice_participants": arguments.speakers,
        "system": arguments.system,
    }
    print(f"{os.cpu_count()} CPUs, load average {os.getloadavg()}", file=sys.stderr)
    note = await voice_note(arguments.seconds)
    document["note"] = {"seconds": audio.duration(note), "bytes": len(note)}
    heard = load_study(STUDY).study.texts.heard.split("{transcript}")[0]
    secret = secrets.token_urlsafe(32)
    db = tmp / "study.sqlite"
    windows: list[BotWindow] = []
    async with BotApiEmulator(exchanges.TOKEN) as emulator:
        with (tmp / "bot.log").open("wb") as log:
            process = await asyncio.create_subprocess_exec(
                *_bot_command(arguments, emulator.server_url, secret, db),
                cwd=exchanges.ROOT,
                stdout=asyncio.subprocess.PIPE,
                stderr=log,
                env={**os.environ, "PYTHONPATH": str(exchanges.ROOT)},
            )
        try:
            await exchanges._await_ready(process, 60)
            speakers = await _consented(emulator, arguments.speakers, arguments.turn_timeout)
            context = (emulator, process.pid, note, heard)
            # The first voice note starts the recogniser's process and loads its model.
            done = asyncio.Event()
            done.set()
            first = await _speak(speakers[0], emulator, note, heard, done, 60)
            document["first_note_seconds_to_transcript_shown"] = first[0]["to_transcript_shown"]
            quiet = [  # then voice notes one after another, nobody typing
                (await _speak(speakers[0], emulator, note, heard, done, arguments.turn_timeout))[0]
                for _ in range(arguments.rounds)
            ]
            document["quiet_seconds_to_transcript_shown"] = sorted(
                n["to_transcript_shown"] for n in quiet
            )
            for number in range(arguments.rounds):
                order = ("alone", "voice") if number % 2 == 0 else ("voice", "alone")
                for condition in order:
                    # Fresh text participants every window: a session's turns cost more as
                    # it grows, which would favour whichever condition comes first.
                    texters = await _consented(
                        emulator, arguments.participants, arguments.turn_timeout
                    )
                    window = await _bot_window(condition, texters, speakers, context, arguments)
                    windows.append(window)
                    print(
                        f"round {number + 1} {condition:<5} "
                        f"{window.exchanges_per_second:6.1f} exchanges/s, "
                        f"{len(window.voice_notes)} voice notes, "
                        f"load average {window.load_average[0]:.2f}"
                        + "".join(f"\n  ! {error}" for error in window.errors),
                        file=sys.stderr,
                        flush=True,
                    )
        finally:
            await exchanges._stop_process(process)
            if process.stdout is not None:
                await process.stdout.read()
    document["windows"] = [asdict(w) for w in windows]
    document["summary"] = _bot_summary(windows, _media_rows(db), arguments.rounds)
    document["load_average_after"] = os.getloadavg()
    return document


def _bot_summary(
    windows: list[BotWindow], media: list[dict[str, Any]], quiet: int
) -> dict[str, Any]:
    """Medians over the rounds: the rates, their ratio (per round and of the medians), and
    the voice notes' times; the engine's own time from the ``media`` table (the first voice
    note, the ``quiet`` ones sent with nobody typing, the ones beside text)."""
    alone = [w.exchanges_per_second for w in windows if w.condition == "alone"]
    voice = [w.exchanges_per_second for w in windows if w.condition == "voice"]
    ratios = [b / a for a, b in zip(alone, voice, strict=True) if a > 0]
    notes = [n for w in windows for n in w.voice_notes]
    shown = sorted(n["to_transcript_shown"] for n in notes if n["to_transcript_shown"] >= 0)
    replies = sorted(n["to_reply"] for n in notes)
    rows = sorted(media, key=lambda m: m["media_id"])  # the cold note, the quiet ones, the rest

    def engine(chosen: list[dict[str, Any]]) -> list[float]:
        return sorted(m["transcribe_ms"] / 1000 for m in chosen if m["transcribe_ms"] is not None)

    fetch = sorted(m["fetch_ms"] / 1000 for m in rows[1:])

    def spread(values: list[float]) -> dict[str, float] | None:
        if not values:
            return None
        return {
            "median": statistics.median(values),
            "p90": exchanges.percentile(values, 90),
            "max": values[-1],
            "count": len(values),
        }

    usual, beside = statistics.median(alone), statistics.median(voice)
    return {
        "alone_exchanges_per_second": usual,
        "voice_exchanges_per_second": beside,
        "ratio_of_medians": beside / usual if usual > 0 else None,
        "ratio_per_round_median": statistics.median(ratios) if ratios else None,
        "ratios_per_round": ratios,
        "target_ratio": 0.9,
        "seconds_to_transcript_shown": spread(shown),
        "seconds_to_reply": spread(replies),
        "engine_seconds_media_table": {
            "first_note": engine(rows[:1]),
            "nobody_typing": spread(engine(rows[1 : 1 + quiet])),
            "beside_text": spread(engine(rows[1 + quiet :])),
        },
        "fetch_seconds_media_table": spread(fetch),
        "target_seconds": 3.0,
        "windows_with_errors": sum(bool(w.errors) for w in windows),
    }


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--seconds", type=float, default=10.0)
    parser.add_argument("--niceness", type=int, default=NICENESS)
    parser.add_argument("--json", type=Path)
    parser.add_argument("--bot", action="store_true", help="through the real bot (see above)")
    parser.add_argument("--participants", type=int, default=8, help="--bot: text participants")
    parser.add_argument("--speakers", type=int, default=1, help="--bot: voice participants")
    parser.add_argument("--system", choices=("demo", "instant"), default="demo")
    parser.add_argument("--window", type=float, default=8.0, help="--bot: seconds measured")
    parser.add_argument("--settle", type=float, default=1.0, help="--bot: seconds before it")
    parser.add_argument("--turn-timeout", type=float, default=30.0, help="--bot: per reply")
    args = parser.parse_args()
    if args.bot:
        if min(args.rounds, args.participants, args.speakers) < 1 or args.window <= 0:
            raise SystemExit("--rounds, --participants, --speakers and --window must be positive")
        folder = Path(tempfile.mkdtemp(prefix="ozlab-bench-speech-"))
        try:
            result = asyncio.run(bot_main(args, folder))
        finally:
            shutil.rmtree(folder, ignore_errors=True)
    else:
        result = asyncio.run(main(args))
    text = json.dumps(result, indent=2)
    print(text)
    if args.json:
        args.json.write_text(text + "\n")
