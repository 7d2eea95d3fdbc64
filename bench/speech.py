"""Speech to text on this machine: a 10-second voice note through PocketSphinx, and what it
costs everyone else talking to the bot meanwhile.

Usage::

    .venv/bin/python bench/speech.py [--rounds 5] [--json out.json]

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
import statistics
import sys
import time
from pathlib import Path
from typing import Any

from bot.speech import audio
from bot.speech.espeak import Espeak
from bot.speech.sphinx import NICENESS, PocketSphinx, _recognise

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


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--seconds", type=float, default=10.0)
    parser.add_argument("--niceness", type=int, default=NICENESS)
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    result = asyncio.run(main(args))
    text = json.dumps(result, indent=2)
    print(text)
    if args.json:
        args.json.write_text(text + "\n")
