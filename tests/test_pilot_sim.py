"""Simulated participants that fit any study, ``ozlab demo --seed`` determinism, the quality
flags on simulated sessions, and ``ozlab pilot`` with a language model on a local server
(the pilot report finds the drop-off the server plants)."""

from __future__ import annotations

import asyncio
import contextlib
import io
import json
from pathlib import Path
from typing import Any

import pytest

from analytics.data.loading import load_study_data
from analytics.report.pilot import pilot_findings
from analytics.statistics.quality import quality_flags
from bot.cli import analytics_main
from bot.pilot.demo import clear_demo_database, play_study
from bot.pilot.pilot_run import pilot_study, simulator_spec
from scenarios.loading import load_study
from tests.fake_servers import FakeOpenAI, Mode
from tests.store_reads import tables

pytestmark = pytest.mark.slow

FOREIGN = ("game", "wishlist", "alex", "linux", "adventure", "hiking", "guitar")

STUDY = """\
id: food
title: Two restaurant recommenders
texts:
  welcome: Welcome to our restaurant study.
  consent: We keep your answers under a code.
  declined: Thank you anyway.
systems:
  - {type: openai, id: bistro-a, url: "URL", model: fake}
  - {type: openai, id: bistro-b, url: "URL", model: fake}
scenarios: [dinner]
design: {type: balanced, seed: 3}
"""

SCENARIO = """\
id: dinner
title: Dinner in town
brief: Find a vegetarian restaurant near the station for four people on Friday.
max_exchanges: 4
post_task: [food-rating]
simulation:
  say: ["Hi, I need a vegetarian place near the station", "for four people on friday"]
  replies:
    - when: [Here are]
      say: ["Book {item} please", "Does number {n} have outdoor seating?"]
  typo_rate: 0.5
  answers:
    profiles:
      bistro-a: {default: 4.5}
      bistro-b: {default: 1.5}
    spread: 0.3
  comments: ["The pasta place sounded lovely."]
  comment_rate: 1.0
"""

QUESTIONNAIRE = """\
id: food-rating
title: About the recommender
items:
  - type: scale
    id: food-rating.helpful
    text: The recommender was helpful.
    labels: {1: Not at all, 2: Hardly, 3: Somewhat, 4: Mostly, 5: Very}
  - type: text
    id: food-rating.comment
    text: Anything else to tell us?
    required: false
"""


def _write_study(folder: Path, url: str) -> Path:
    (folder / "scenarios").mkdir()
    (folder / "questionnaires").mkdir()
    (folder / "scenarios" / "dinner.yaml").write_text(SCENARIO)
    (folder / "questionnaires" / "food-rating.yaml").write_text(QUESTIONNAIRE)
    study = folder / "study.yaml"
    study.write_text(STUDY.replace("URL", url))
    return study


def _restaurants(body: dict[str, Any]) -> str:
    return "Here are two:\n1. Verde Station, vegetarian\n2. Olive Tree, vegetarian"


def test_a_study_of_its_own_is_played_in_its_own_words(tmp_path: Path) -> None:
    db = tmp_path / "food.sqlite"

    async def play() -> None:
        async with FakeOpenAI(_restaurants) as server:
            bundle = load_study(_write_study(tmp_path, server.url))
            await play_study(bundle, db, participants=4, seed=2)

    asyncio.run(play())
    found = tables(db)
    said = " ".join(str(r["user_text"]) for r in found["exchanges"])
    assert "vegetarian" in said and ("Verde Station" in said or "Olive Tree" in said)
    everything = json.dumps(found, default=str).lower()
    assert not [word for word in FOREIGN if word in everything]
    comments = [r["text"] for r in found["responses"] if r["item_id"] == "food-rating.comment"]
    assert comments and set(comments) == {"The pasta place sounded lovely."}
    # The profile per system shows in the answers: bistro-a rated high, bistro-b low.
    system = {s["session_id"]: s["system_id"] for s in found["sessions"]}
    rated = {
        (system[r["session_id"]], r["value"])
        for r in found["responses"]
        if r["item_id"] == "food-rating.helpful"
    }
    assert {v for s, v in rated if s == "bistro-a"} <= {4, 5}
    assert {v for s, v in rated if s == "bistro-b"} <= {1, 2}
    assert {s for s, _ in rated} == {"bistro-a", "bistro-b"}  # balanced: both systems


def test_the_same_seed_writes_the_same_database_and_nothing_is_too_fast(tmp_path: Path) -> None:
    bundle = load_study("hmd")
    dbs = [tmp_path / "one.sqlite", tmp_path / "two.sqlite", tmp_path / "other.sqlite"]
    for db, seed in zip(dbs, (7, 7, 8), strict=True):
        asyncio.run(play_study(bundle, db, participants=4, seed=seed))
    first, second, other = (tables(db) for db in dbs)
    assert first == second
    assert first["exchanges"] != other["exchanges"]
    assert all(p["simulated"] == 1 for p in first["participants"])
    assert {s["system_id"] for s in first["sessions"]} == {"shop-v0", "shop-v1"}
    flags = quality_flags(load_study_data(dbs[0]))
    assert "too_fast" not in set(flags["flag"])


def _participant(body: dict[str, Any]) -> str:
    """A language model playing participants: it chats, then leaves at the management item."""
    messages = body["messages"]
    prompt, last = messages[0]["content"], messages[-1]["content"]
    if "questionnaire" in prompt:
        if "Management:" in last:
            return "LEAVE"
        return "I choose 4" if "Options" in last else "It was fine."
    if len(messages) > 4:
        return "DONE"
    return "Can you find me an adventure game that runs on Linux?"


def test_a_pilot_with_a_language_model_shows_where_people_drop_off(tmp_path: Path) -> None:
    db = tmp_path / "pilot.sqlite"
    clear_demo_database(db)

    async def pilot() -> None:
        async with FakeOpenAI(_participant) as server:
            spec = simulator_spec(server.url, "fake", None)
            played = await pilot_study(
                load_study("hmd"), db, participants=3, seed=1, simulator=spec, env={}
            )
            assert [p.finished for p in played] == [False, False, False]
            assert len(server.requests) > 6

    asyncio.run(pilot())
    found = pilot_findings(load_study_data(db))
    assert found.simulated == 3 and found.completed == 0
    assert set(found.drop_offs["where"]) == {"hmd / hmd.management"}
    assert all(t.startswith("Management:") for t in found.drop_offs["text"])
    out = io.StringIO()
    import contextlib

    with contextlib.redirect_stdout(out):
        assert analytics_main(["report", "--db", str(db), "--pilot", "--format", "json"]) == 0
    report = json.loads(out.getvalue())
    assert [d["where"] for d in report["pilot"]["drop_offs"]] == ["hmd / hmd.management"] * 3
    markdown = io.StringIO()
    with contextlib.redirect_stdout(markdown):
        assert analytics_main(["report", "--db", str(db), "--pilot", "--format", "md"]) == 0
    assert "Drop-offs" in markdown.getvalue() and "hmd.management" in markdown.getvalue()


PLANTED = """\
id: dinner
title: Dinner in town
brief: Find a vegetarian restaurant near the station for four people on Friday.
max_exchanges: 3
post_task: [food-rating]
simulation:
  say: ["Hi, I need a vegetarian place near the station", "for four people on friday"]
  answers:
    profiles:
      bistro-a: {default: 4.3, yes_no: 0.9}
      bistro-b: {default: 2.2, yes_no: 0.2, food-rating.overall: {1: 1, 2: 2, 3: 1}}
    spread: 0.8
"""

PLANTED_QUESTIONNAIRE = """\
id: food-rating
title: About the recommender
items:
  - {type: scale, id: food-rating.helpful, construct: quality, text: The recommender was helpful.,
     labels: {1: Not at all, 2: Hardly, 3: Somewhat, 4: Mostly, 5: Very}}
  - {type: scale, id: food-rating.clear, construct: quality, text: Its suggestions were clear.,
     labels: {1: Not at all, 2: Hardly, 3: Somewhat, 4: Mostly, 5: Very}}
  - {type: scale, id: food-rating.confusing, construct: quality, reverse: true,
     text: It confused me., labels: {1: Not at all, 2: Hardly, 3: Somewhat, 4: Mostly, 5: Very}}
  - {type: scale, id: food-rating.overall, construct: quality, text: Overall it was good.,
     labels: {1: Not at all, 2: Hardly, 3: Somewhat, 4: Mostly, 5: Very}}
  - {type: yes_no, id: food-rating.booked, text: Did you find a place to book}
"""


def test_a_pilot_reports_the_difference_planted_between_two_systems(tmp_path: Path) -> None:
    """Two systems on two local servers, one slow; the simulated participants rate them as
    their scenario's profiles say: the report finds the difference, a sensible Cronbach's α
    (the reverse item scored back), each server's own latency, and yes/no answers as set."""
    folder = tmp_path / "food"
    folder.mkdir()
    _write_study(folder, "URL")
    (folder / "scenarios" / "dinner.yaml").write_text(PLANTED)
    (folder / "questionnaires" / "food-rating.yaml").write_text(PLANTED_QUESTIONNAIRE)
    db = tmp_path / "pilot.sqlite"
    clear_demo_database(db)

    async def pilot() -> None:
        async with FakeOpenAI(_restaurants) as slow, FakeOpenAI(_restaurants) as quick:
            slow.behave(Mode.SLOW, delay=0.4)
            text = STUDY.replace('"URL"', f'"{slow.url}"', 1).replace('"URL"', f'"{quick.url}"')
            (folder / "study.yaml").write_text(text)
            bundle = load_study(folder / "study.yaml")
            await pilot_study(bundle, db, participants=16, seed=5, simulator=None, env={})

    asyncio.run(pilot())
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert analytics_main(["report", "--db", str(db), "--format", "json"]) == 0
    report = json.loads(out.getvalue())
    latency = {r["system_id"]: r for r in report["system_reliability"]["by_system"]}
    assert latency["bistro-a"]["latency_p50_ms"] >= 400  # the server's own 0.4 s
    assert latency["bistro-b"]["latency_p50_ms"] < 300  # not a simulated pacing
    items = {(r["system_id"], r["item_id"]): r for r in report["questionnaires"]["items"]}
    assert items[("bistro-a", "food-rating.booked")]["mean"] > 0.7
    assert items[("bistro-b", "food-rating.booked")]["mean"] < 0.4
    tests = {r["measure"]: r for r in report["comparisons"]["table"]}
    quality, booked = tests["quality"], tests["food-rating.booked"]  # the construct, yes/no
    assert quality["measure_kind"] == "construct" and quality["p"] < 0.01, quality
    assert quality["effect"] > 0.5 and booked["p"] < 0.05, (quality, booked)
    means = {
        r["system_id"]: r["mean"]
        for r in report["questionnaires"]["constructs"]
        if r["construct"] == "quality"
    }
    assert means["bistro-a"] > means["bistro-b"] + 1, means
    alphas = {r["system_id"]: r["alpha"] for r in report["questionnaires"]["reliability"]}
    assert all(0.6 < alpha < 0.97 for alpha in alphas.values()), alphas
