"""``ozlab chat``: the researcher plays the participant in a terminal (a pseudo-terminal
here), through the real bot on the local emulator, on a real database."""

from __future__ import annotations

import os
import re
import socket
import stat
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from bot.core.privacy import SECRET_ENV
from bot.store import lock as running
from bot.systems.demo import ALEX_WISHLIST
from scenarios.starter import write_starter
from tests.paid_study import recruiting_study
from tests.store_reads import pick, tables
from tests.terminal_support import Terminal

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parent.parent
ENV = {k: v for k, v in os.environ.items() if k != SECRET_ENV}
TITLE = re.compile(r"^    \d+\. (.+?), €", re.MULTILINE)


@pytest.fixture
def db(tmp_path: Path) -> Path:
    return tmp_path / "pilot.sqlite"


@pytest.fixture
def chat(db: Path) -> Iterator[Terminal]:
    with Terminal(
        [sys.executable, "-m", "bot.cli", "chat", "hmd", "--db", str(db)], cwd=ROOT, env=ENV
    ) as terminal:
        yield terminal


def command(*args: str, env: dict[str, str] = ENV) -> subprocess.CompletedProcess[str]:
    """An ``ozlab`` command in a process of its own, whatever its status."""
    return subprocess.run(
        [sys.executable, "-m", "bot.cli", *args],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )


def ozlab(*args: str) -> str:
    """An ``ozlab`` command in a process of its own; its output (it must succeed)."""
    done = command(*args)
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_a_researcher_plays_the_hmd_study_in_a_terminal(chat: Terminal, db: Path) -> None:
    chat.expect(r"ozlab wizard --db ")
    chat.expect(r"^bot #2: Privacy agreement")
    chat.expect(r"^    \[1\] I agree\n    \[2\] I do not agree$")
    chat.type("1")
    chat.expect(r"^you tap: I agree$")
    chat.expect(r"^bot #\d+: Your task")
    chat.expect(r"\[1\] Finish task")

    # The database is shared while the chat runs: a wizard in a second terminal reads it
    # and writes as the system; the chat's bot applies the command.
    sessions = ozlab("wizard", "sessions", "--db", str(db))
    [session] = [line.split()[0] for line in sessions.splitlines() if "hmd-gift" in line]
    ozlab("wizard", "say", session, "Hello from the wizard", "--db", str(db))
    chat.expect(r"^bot #\d+: Hello from the wizard$")

    chat.type("Hi! I need adventure games for Linux")
    listing = chat.expect(r"^bot #\d+: .*\n((?:    .*\n)+?)    Would you like to know more")
    titles = TITLE.findall(listing.group(1))
    assert titles, listing.group(0)
    chat.type("2")  # the newest message has no buttons: a number is a message, as on a phone
    chat.expect(r"^bot #\d+: ")
    gift = next(t for t in titles if t not in ALEX_WISHLIST)
    chat.type(f"add {gift} to my wishlist")
    item = chat.expect(r"^bot #(\d+): [^\n]*1/5")
    number = item.group(1)
    chat.expect(r"\[4\] 4 · Agree")
    chat.type("4")
    chat.expect(rf"^bot #{number} \(edited\): [^\n]*2/5")  # one message, edited in place
    chat.type("3 · Neutral")  # a label taps its button too
    chat.expect(rf"^bot #{number} \(edited\): [^\n]*3/5")
    chat.type("5")
    chat.expect(rf"^bot #{number} \(edited\): [^\n]*4/5")
    chat.type("4")
    chat.expect("Additional comments")
    chat.type("Quick and clear.")
    chat.expect("Thank you for taking part")

    chat.type("/restart")
    chat.expect("you are a new participant")
    chat.expect(r"^bot #2: Privacy agreement")
    chat.press(b"\x04")  # Ctrl-D: the end of input
    assert chat.wait() == 0
    assert "Goodbye" in chat.output and "Traceback" not in chat.output

    stored = tables(db)
    assert len(stored["participants"]) == 2
    [session] = stored["sessions"]
    assert (session["state"], session["end_reason"]) == ("ended", "success")
    said = [e["user_text"] for e in stored["exchanges"]]
    assert said == ["Hi! I need adventure games for Linux", "2", f"add {gift} to my wishlist"]
    assert pick(stored["responses"], "item_id", "value", "text") == [
        ("hmd.understanding", 4, None),
        ("hmd.management", 3, None),
        ("hmd.generation", 5, None),
        ("hmd.usefulness", 4, None),
        ("hmd.comment", None, "Quick and clear."),
    ]


def test_ctrl_c_ends_the_chat_cleanly(chat: Terminal) -> None:
    chat.expect(r"\[1\] I agree")
    chat.press(b"\x03")
    assert chat.wait() == 0
    assert "Goodbye" in chat.output and "Traceback" not in chat.output


def test_quit_ends_and_an_italian_participant_reads_italian(tmp_path: Path) -> None:
    argv = [
        sys.executable,
        "-m",
        "bot.cli",
        "chat",
        "idial",
        "--lang",
        "it",
        "--db",
        str(tmp_path / "it.sqlite"),
    ]
    with Terminal(argv, cwd=ROOT, env=ENV) as chat:
        chat.expect(r"Ciao, e grazie per aiutarci")
        chat.expect(r"Prima di iniziare")
        chat.type("/quit")
        assert chat.wait() == 0


def test_no_chat_on_a_database_a_bot_runs_on(db: Path) -> None:
    with running.claim(db, "ozlab run"):  # as ``ozlab run`` holds it
        done = command("chat", "hmd", "--db", str(db))
    assert done.returncode == 5
    assert done.stderr.strip() == (
        f"ozlab: {db} is taken by another writer (ozlab run, pid {os.getpid()}):"
        " one study database, one writer; stop it or choose another --db"
    )


def _closed_port() -> int:
    """A loopback port nothing listens on: a system there is refused at once."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def test_log_lines_go_to_the_log_not_to_the_participants_screen(tmp_path: Path) -> None:
    study = (ROOT / "scenarios/library/studies/hmd.yaml").read_text(encoding="utf-8")
    head, _, rest = study.partition("\nsystems:\n")
    _, _, tail = rest.partition("\n\n")
    url = f"http://127.0.0.1:{_closed_port()}/chat"
    broken = f"  - type: http\n    id: broken\n    url: {url}\n    timeout: 1\n    retries: 0\n"
    (tmp_path / "study.yaml").write_text(f"{head}\nsystems:\n{broken}\n{tail}", encoding="utf-8")
    db = tmp_path / "chat.sqlite"
    argv = [sys.executable, "-m", "bot.cli", "chat", str(tmp_path / "study.yaml"), "--db", str(db)]
    with Terminal(argv, cwd=ROOT, env=ENV) as chat:
        chat.expect(r"the bot's log: .*chat\.log")
        chat.expect(r"\[1\] I agree")
        chat.type("1")
        chat.expect(r"\[1\] Finish task")
        chat.type("Hello?")
        chat.expect(r"^bot #\d+: Sorry, the assistant could not answer")
        chat.type("/quit")
        assert chat.wait() == 0
    log = tmp_path / "chat.log"  # written before the apology was sent
    assert "WARNING bot.runtime.participants: system broken failed" in log.read_text("utf-8")
    assert "WARNING" not in chat.output and "failed" not in chat.output, chat.output
    assert stat.S_IMODE(log.stat().st_mode) == 0o600


def test_a_researcher_chats_on_a_demos_database(tmp_path: Path) -> None:
    """The demo sealed its simulated participants' chats under its own secret: the chat's
    new participant plays beside them, and they are left as they were."""
    db = tmp_path / "demo.sqlite"
    ozlab("demo", "-n", "2", "--annotators", "0", "--db", str(db), "--study", "hmd")
    before = tables(db)
    argv = [sys.executable, "-m", "bot.cli", "chat", "hmd", "--db", str(db)]
    with Terminal(argv, cwd=ROOT, env=ENV) as chat:
        chat.expect(r"\[1\] I agree")
        chat.type("1")
        chat.expect(r"\[1\] Finish task")
        chat.type("/quit")
        assert chat.wait() == 0
    assert "Traceback" not in chat.output and "another OZLAB_SECRET" not in chat.output
    after = tables(db)
    assert len(after["participants"]) == len(before["participants"]) + 1
    assert all(p in after["participants"] for p in before["participants"])


def test_chat_warns_when_the_starter_s_model_server_is_not_running(tmp_path: Path) -> None:
    """A third of the starter's participants meet its language model: without its server
    the researcher would type into refused connections, so chat says first how to start it
    (and goes on: what a participant sees when a system fails is worth trying too)."""
    write_starter(tmp_path / "pilot")
    done = subprocess.run(
        [sys.executable, "-m", "bot.cli", "chat", str(tmp_path / "pilot" / "study.yaml"),
         "--db", str(tmp_path / "chat.sqlite")],
        cwd=ROOT,
        env={**ENV, "OZLAB_MODEL_URL": f"http://127.0.0.1:{_closed_port()}"},
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=60,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    [warning] = [line for line in done.stdout.splitlines() if line.startswith("(warning: ")]
    assert warning.startswith("(warning: system my-llm (openai) does not answer at ")
    assert "ozlab serve-demo --openai" in warning and "OZLAB_MODEL_URL" in warning


RANKED_STUDY = """\
id: ranked
title: A ranking first
texts:
  welcome: Welcome.
  consent: Do you agree?
  declined: Thank you anyway.
systems:
  - {type: demo, id: shop, variant: v1}
scenarios: [hmd-gift]
screening: [matters]
"""
RANKING = """\
id: matters
title: What matters
items:
  - type: ranking
    id: matters.order
    text: What matters most in a recommendation?
    options:
      - {value: price, label: The price}
      - {value: fit, label: How well it fits me}
      - {value: speed, label: A quick answer}
"""


def test_after_a_refusal_a_number_still_taps_the_ranking_above(tmp_path: Path) -> None:
    """A typed sentence where options are to be put in order is refused; the ranking's
    buttons above are still the ones to tap, by their numbers as before."""
    (tmp_path / "questionnaires").mkdir()
    (tmp_path / "questionnaires" / "matters.yaml").write_text(RANKING)
    (tmp_path / "study.yaml").write_text(RANKED_STUDY)
    db = tmp_path / "chat.sqlite"
    argv = [sys.executable, "-m", "bot.cli", "chat", str(tmp_path / "study.yaml"), "--db", str(db)]
    with Terminal(argv, cwd=ROOT, env=ENV) as chat:
        chat.expect(r"\[1\] I agree")
        chat.type("1")
        chat.expect(r"\[2\] How well it fits me")
        chat.type("2")
        chat.expect(r"^you tap: How well it fits me$")
        chat.expect(r"^bot #\d+ \(edited\)")
        chat.type("the price comes next")
        chat.expect(r"^bot #\d+: Please tap the options in order")
        chat.type("1")
        chat.expect(r"^you tap: The price$")
        chat.type("/quit")
        assert chat.wait() == 0


def test_a_researcher_rehearses_a_prolific_arrival_with_the_deep_link(tmp_path: Path) -> None:
    """``--start`` sends the deep link's payload on the first ``/start``: the participant
    comes from Prolific, and the payments export lists them."""
    study, db = recruiting_study(tmp_path), tmp_path / "paid.sqlite"
    secret = {**ENV, SECRET_ENV: "rehearsal-secret-0123456789"}
    argv = [sys.executable, "-m", "bot.cli", "chat", str(study), "--db", str(db)]
    with Terminal([*argv, "--start", "pid_REHEARSE1"], cwd=ROOT, env=secret) as chat:
        chat.expect(r"you: /start pid_REHEARSE1")
        chat.expect(r"keep only your Prolific ID")
        chat.expect(r"\[1\] I agree")
        chat.type("1")
        chat.expect(r"\[1\] Finish task")
        chat.type("/quit")
        assert chat.wait() == 0
    payments = command("export", "payments", "--db", str(db), env=secret)
    assert payments.returncode == 0, payments.stderr
    [row] = payments.stdout.splitlines()[1:]
    assert row.startswith("hmd,prolific,REHEARSE1,started,")
    assert "REHEARSE1" not in (tmp_path / "paid.log").read_text("utf-8")


def test_a_payload_a_link_cannot_carry_is_refused_in_one_line(tmp_path: Path) -> None:
    done = command("chat", "hmd", "--start", "pid_a b")
    assert done.returncode == 3
    assert done.stderr.strip() == (
        "ozlab: --start 'pid_a b': a deep link's payload is 1 to 64 letters, digits, _ or -"
        " (e.g. pid_TEST1)"
    )
