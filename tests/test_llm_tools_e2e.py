"""A language model with tools, end to end: the shipped ``hmd-llm`` study and the ``ozlab
new`` starter, played by simulated participants through the real bot against a local
OpenAI-compatible server (the demo shop playing a model that calls ``add_to_wishlist``),
and the report's success rate for the model coming from its tool calls."""

from __future__ import annotations

import json
import re
import sqlite3
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
from scenarios.starter import write_starter
from scenarios.systems import OpenAISystem
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


async def test_the_starter_with_its_model_enabled_succeeds_by_tool_calls(tmp_path: Path) -> None:
    folder = tmp_path / "pilot"
    write_starter(folder)
    study = folder / "study.yaml"
    async with serving(model_app()) as url:
        text = study.read_text(encoding="utf-8")
        block = re.search(r"(?m)^  # - type: openai\n(  #   .*\n)+", text)
        assert block is not None
        enabled = re.sub(r"(?m)^  # (- |  )", r"  \1", block.group(0)).replace(
            "http://127.0.0.1:8081", url
        )
        text = text.replace(block.group(0), enabled).replace("    # api_key_env", "    #")
        study.write_text(text, encoding="utf-8")
        bundle = load_study(study)
        assert [s.id for s in bundle.study.systems] == ["shop-v1", "shop-v0", "my-llm"]
        db = tmp_path / "pilot.sqlite"
        await play_study(bundle, db, participants=9, seed=5, paced_systems=False)
    sessions, ended, _ = tool_outcomes(db, "my-llm")
    rows, sources, _ = completion_of(db)
    assert sources["my-llm"] == "tool calls"
    llm = rows["my-llm"]
    assert sessions >= 1 and ended >= 1
    assert (llm["success_n"], llm["successes"]) == (sessions, ended)
