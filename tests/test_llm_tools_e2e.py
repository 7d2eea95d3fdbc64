"""A language model with tools, end to end: the shipped ``hmd-llm`` study and the ``ozlab
new`` starter, played by simulated participants through the real bot against a local
OpenAI-compatible server (the demo shop playing a model that calls ``add_to_wishlist``),
and the report's success rate for the model coming from its tool calls."""

from __future__ import annotations

import json
import re
import sqlite3
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from analytics.data.loading import load_study_data
from analytics.report.numbers import build_report
from analytics.report.present import document
from analytics.report.render_md import render_markdown
from bot.core.conversation import Conversation
from bot.pilot.demo import play_study
from bot.systems.http_json import JsonClient
from bot.systems.openai import OpenAIChat
from bot.systems.served_model import model_app
from bot.systems.tools import scenario_tools
from scenarios.loading import load_study
from scenarios.models import StudyBundle
from scenarios.systems import OpenAISystem
from tests.command_line import environment, ozlab_here
from tests.e2e_support import PROJECT_ROOT
from tests.fake_servers import serving

pytestmark = pytest.mark.slow


def served_at(bundle: StudyBundle, url: str) -> StudyBundle:
    """The study with its openai systems pointed at ``url``."""
    systems = tuple(
        s.model_copy(update={"url": url}) if isinstance(s, OpenAISystem) else s
        for s in bundle.study.systems
    )
    study = bundle.study.model_copy(update={"systems": systems})
    return bundle.model_copy(update={"study": study})


def tool_outcomes(db: Path, system: str) -> tuple[int, int, int]:
    """(sessions of ``system``, those a tool call ended, tool calls recorded), read from the
    database itself."""
    with sqlite3.connect(db) as conn:
        sessions = [
            s for (s,) in conn.execute("SELECT id FROM sessions WHERE system_id = ?", (system,))
        ]
        events = conn.execute(
            "SELECT session_id, kind, data FROM events"
            " WHERE kind IN ('task_reported', 'tool_called')"
        ).fetchall()
    ended = {s for s, kind, data in events if kind == "task_reported" and
             json.loads(data)["event"] == "tool_success" and s in sessions}  # fmt: skip
    calls = [s for s, kind, _ in events if kind == "tool_called" and s in sessions]
    return len(sessions), len(ended), len(calls)


def completion_of(db: Path) -> tuple[dict[str, dict[str, Any]], dict[str, str], str]:
    report = build_report(load_study_data(db))
    rows = {r["system_id"]: r for r in report.completion.by_system.to_dict("records")}
    found = report.completion.sources
    sources = dict(zip(found["system_id"], found["decided_by"], strict=True))
    return rows, sources, render_markdown(document(report))


async def test_the_demo_model_calls_the_tool_and_then_answers(tmp_path: Path) -> None:
    bundle = load_study("hmd-llm")
    async with serving(model_app()) as url:
        spec = next(s for s in bundle.study.systems if isinstance(s, OpenAISystem))
        client = JsonClient()
        try:
            llm = OpenAIChat(
                spec.model_copy(update={"url": url}), client, {}, scenario_tools(bundle)
            )
            said = await llm.respond(
                Conversation("s", "hmd-gift-llm", "", (), "Please add Lantern Road to my wishlist")
            )
        finally:
            await client.close()
    assert [(c.tool, dict(c.arguments), c.result) for c in said.tool_calls] == [
        ("add_to_wishlist", {"game": "Lantern Road"}, "Added to the participant's wishlist.")
    ]
    assert "Lantern Road" in said.texts[0]


async def test_the_shipped_study_s_model_succeeds_by_its_tool_calls(tmp_path: Path) -> None:
    db = tmp_path / "hmd-llm.sqlite"
    async with serving(model_app()) as url:
        bundle = served_at(load_study("hmd-llm"), url)
        await play_study(bundle, db, participants=8, seed=3, paced_systems=False)
    sessions, ended, calls = tool_outcomes(db, "shop-llm")
    assert sessions == 4 and ended >= 1 and calls >= ended
    rows, sources, text = completion_of(db)
    llm = rows["shop-llm"]
    assert (llm["success_n"], llm["successes"]) == (sessions, ended)
    assert llm["success_rate"] == ended / sessions
    assert llm["correct_n"] == sessions  # success_if judged every one of its tasks
    assert sources == {"shop-llm": "tool calls", "shop-v1": "the system's own events"}
    assert re.search(r"\| shop-llm \| tool calls \| 4 \|", text)


def served_model() -> tuple[subprocess.Popen[str], str]:
    """``ozlab serve-demo --openai --port 0`` as a researcher starts it; the process and the
    address it printed."""
    process = subprocess.Popen(
        [sys.executable, "-m", "bot.cli", "serve-demo", "--openai", "--port", "0"],
        stdout=subprocess.PIPE,
        text=True,
        cwd=PROJECT_ROOT,
        env=environment(),
    )
    assert process.stdout is not None
    for line in process.stdout:  # its first line says where it listens
        found = re.search(r"answers as a model at (http://\S+)/v1/chat/completions", line)
        if found:
            return process, found.group(1)
    process.kill()
    process.wait()
    raise AssertionError("ozlab serve-demo --openai did not say where it listens")


def ozlab(*args: str | Path, cwd: Path, env: dict[str, str]) -> str:
    done = subprocess.run(
        [sys.executable, "-m", "bot.cli", *map(str, args)],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


def here(*args: str | Path) -> str:
    """``ozlab ARGS`` in this process (a check or a report: what it says, not a process)."""
    done = ozlab_here(*args)
    assert done.returncode == 0, done.stderr
    return done.stdout


def tool_judged(db: Path, system: str, ending: str, correct: set[str]) -> tuple[int, int, int]:
    """(ended tasks of ``system``, those a call of ``ending`` got a result in, those whose
    call named a game in ``correct``), read from the sessions' own tool events."""
    with sqlite3.connect(db) as conn:
        sessions = {
            s
            for (s,) in conn.execute(
                "SELECT id FROM sessions WHERE system_id = ? AND ended_at IS NOT NULL", (system,)
            )
        }
        calls = [
            (s, json.loads(data))
            for s, data in conn.execute(
                "SELECT session_id, data FROM events WHERE kind = ?", ("tool_called",)
            )
            if s in sessions
        ]
    ended = {s for s, call in calls if call["tool"] == ending and call["error"] is None}
    right = {
        s
        for s, call in calls
        if s in ended and call["tool"] == ending and call["arguments"].get("game") in correct
    }
    return len(sessions), len(ended), len(right)


def test_the_starter_s_model_succeeds_by_its_tool_calls_as_a_researcher_runs_it(
    tmp_path: Path,
) -> None:
    """``ozlab new``, the demo model served on a free port and named by ``OZLAB_MODEL_URL``,
    ``ozlab demo`` (the real bot on the emulator) and ``ozlab report``: the model's success
    rate is what its sessions' tool calls say."""
    env = environment()
    said = ozlab("new", "pilot", cwd=tmp_path, env=env)
    assert "'ozlab serve-demo --openai'" in said and "OZLAB_MODEL_URL" in said
    study = tmp_path / "pilot" / "study.yaml"
    assert here("check", study).startswith("OK: study 'pilot'")
    bundle = load_study(study)
    [model] = [s for s in bundle.study.systems if isinstance(s, OpenAISystem)]
    assert (model.id, model.url_env) == ("my-llm", "OZLAB_MODEL_URL")
    scenario = bundle.scenario("my-task")
    [ending] = [tool.name for tool in scenario.tools if tool.ends_task]
    correct = set(scenario.success_if[f"{ending}.game"].one_of or ())
    server, url = served_model()
    try:
        db = tmp_path / "pilot.sqlite"
        ozlab("demo", "--study", study, "-n", "9", "--db", db, cwd=tmp_path,
              env={**env, "OZLAB_MODEL_URL": url})  # fmt: skip
    finally:
        server.kill()
        server.wait()
        assert server.stdout is not None
        server.stdout.close()
    sessions, ended, right = tool_judged(db, "my-llm", ending, correct)
    assert sessions >= 1 and ended >= 1
    report = json.loads(here("report", "--db", db, "--format", "json"))
    [llm] = [r for r in report["completion"]["by_system"] if r["system_id"] == "my-llm"]
    assert (llm["success_n"], llm["successes"]) == (sessions, ended)
    assert llm["success_rate"] == pytest.approx(ended / sessions)
    assert (llm["correct_n"], llm["correct"]) == (sessions, right)
    [source] = [r for r in report["completion"]["sources"] if r["system_id"] == "my-llm"]
    assert (source["decided_by"], source["sessions_decided"]) == ("tool calls", sessions)
    text = here("report", "--db", db, "--format", "md")
    assert f"| my-llm | tool calls | {sessions} |" in text
    rate = f"{100 * ended / sessions:.0f}%"
    assert re.search(rf"\| my-llm \| {sessions} \| {ended} \| {rate} \(", text), text
