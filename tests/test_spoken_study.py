"""The shipped spoken study (``hmd-spoken``) as a researcher tries it: ``ozlab demo``, whose
simulated participants speak their lines with espeak-ng and send them as voice notes, heard
by PocketSphinx and answered in voice notes; and ``ozlab chat``, where ``/voice PATH`` sends
a sound file as a voice note. Nothing leaves the machine."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from bot.core.errors import SystemSetupError
from tests.command_line import environment
from tests.speech_support import spoken_wav
from tests.store_reads import pick, tables
from tests.terminal_support import Terminal

pytestmark = pytest.mark.slow


def demo(db: Path, *, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "bot.cli", "demo", "--study", "hmd-spoken", "-n", "2",
         "--db", str(db)],
        capture_output=True,
        text=True,
        timeout=300,
        env=env or environment(),
    )  # fmt: skip


def test_the_spoken_study_plays_end_to_end_in_simulation(tmp_path: Path) -> None:
    db = tmp_path / "demo.sqlite"
    done = demo(db)
    assert done.returncode == 0, done.stderr
    assert "Study 'hmd-spoken': 2 simulated participants" in done.stdout
    stored = tables(db)
    sessions = pick(stored["sessions"], "scenario_id", "state")
    assert sessions == [("hmd-gift-spoken", "ended")] * 2
    assert {r["item_id"] for r in stored["responses"]} >= {"hmd.usefulness"}
    voices = [m for m in stored["media"] if m["kind"] == "voice"]
    assert len(voices) >= 4  # most of their lines were spoken
    assert {(m["engine"], m["model"]) for m in voices} == {("pocketsphinx", "en-us")}
    heard = [m["transcript"] for m in voices if m["transcript"]]
    assert len(heard) >= len(voices) - 1 and all(m["kept"] == 0 for m in voices)
    spoken = [e for e in stored["events"] if e["kind"] == "reply_spoken"]
    assert len(spoken) >= len(voices)  # every reply spoken, also to a typed line
    said = [e["user_text"] for e in stored["exchanges"]]
    assert set(heard) <= set(said)  # the system got the words heard


def test_the_spoken_study_without_espeak_ng_stops_in_one_line(tmp_path: Path) -> None:
    db = tmp_path / "demo.sqlite"
    done = demo(db, env={**environment(), "PATH": str(tmp_path)})
    assert done.returncode == SystemSetupError.exit_code, done.stderr
    [line] = done.stderr.splitlines()
    assert "espeak-ng is not installed" in line and "apt install espeak-ng" in line


def test_a_researcher_sends_a_sound_file_as_a_voice_note_in_a_chat(tmp_path: Path) -> None:
    said = "i want to go home"
    (tmp_path / "said.wav").write_bytes(spoken_wav(said))
    (tmp_path / "notes.txt").write_text("not a sound", encoding="utf-8")
    db = tmp_path / "chat.sqlite"
    argv = [sys.executable, "-m", "bot.cli", "chat", "hmd-spoken", "--db", str(db)]
    with Terminal(argv, cwd=tmp_path, env=environment()) as chat:
        chat.expect(r"/voice PATH sends a sound file")
        chat.expect(r"\[1\] I agree")
        chat.type("1")
        chat.expect(r"^bot #\d+: Your task")
        chat.type("/voice")
        chat.expect(r"^ozlab: /voice needs a sound file's path")
        chat.type("/voice missing.ogg")
        chat.expect(r"^ozlab: cannot read missing\.ogg: No such file")
        chat.type("/voice notes.txt")
        chat.expect(r"^ozlab: notes\.txt is not a sound file ozlab reads")
        chat.type("/voice said.wav")
        chat.expect(r"^you \(voice note, [12] s\): said\.wav$")
        heard = chat.expect(r"^bot #\d+: I heard: (.+)$").group(1)
        chat.expect(r"\[1\] Not what I said")
        chat.expect(r"^bot #\d+: \[voice\] \S")  # the reply, spoken, its text beside
        chat.type("/quit")
        assert chat.wait() == 0
    [note] = tables(db)["media"]
    assert (note["kind"], note["engine"], note["transcript"]) == ("voice", "pocketsphinx", heard)
    assert [e["user_text"] for e in tables(db)["exchanges"]] == [heard]
