"""A scenario's tools: loaded beside the scenario, offered by the ``openai`` adapter to a
local OpenAI-compatible server that calls them, answered, recorded, and judged by
``success_if``."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from bot.check.study import check
from bot.core.conversation import Conversation, SystemReply, ToolCall
from bot.core.errors import SystemSetupError
from bot.core.vocabulary import EndReason, EventKind
from bot.desk.transcript import event_line
from bot.engine import effects as fx
from bot.engine import events as ev
from bot.engine.common import CONSENT_YES
from bot.engine.flow import step
from bot.engine.journey import Journey
from bot.pilot.emulator import BotApiEmulator
from bot.store.model import TranscriptEvent
from bot.systems.base import SystemFailure
from bot.systems.http_json import JsonClient
from bot.systems.openai import OpenAIChat
from bot.systems.registry import build_systems, close_systems
from bot.systems.tools import ScenarioTools, scenario_tools
from scenarios.loading import load_study
from scenarios.models import StudyBundle
from scenarios.systems import OpenAISystem
from scenarios.yaml_lines import StudyError
from tests.conftest import StartBot
from tests.fake_servers import FakeOpenAI, calling

STUDY = """\
id: shop-llm
title: A shop assistant with tools
texts: {welcome: Hello, consent: Do you agree, declined: Bye}
systems:
  - {type: openai, id: llm, url: "URL", model: tiny}
scenarios: [gift]
"""

SCENARIO = """\
id: gift
title: A gift for Alex
brief: Find an adventure game for Alex and add it to your wishlist.
success_if:
  add_to_wishlist.game: {not_in: [Moss Hollow, Skyward Caravan]}
tools:
  - name: search_games
    description: Games of a genre.
    parameters:
      type: object
      properties: {genre: {type: string}, platform: {type: string}}
      required: [genre]
    results: games.csv
  - name: add_to_wishlist
    description: Add a game to the participant's wishlist.
    parameters:
      type: object
      properties: {game: {type: string}}
      required: [game]
    function: shop_tools.py:add_to_wishlist
    ends_task: true
  - name: price
    parameters:
      type: object
      properties: {game: {type: string}}
    results: prices.yaml
"""

GAMES = """\
genre,platform,result
adventure,linux,"Lantern Road, Paper Kingdoms"
adventure,,"Lantern Road, Moss Hollow, Paper Kingdoms"
puzzle,,Moss Hollow
"""

PRICES = """\
rows:
  - when: {game: Lantern Road}
    result: {price: 12.5, currency: EUR}
  - result: unknown game
"""

TOOLS_PY = """\
def add_to_wishlist(game):
    if game == "boom":
        raise RuntimeError("the shop is closed")
    return {"added": game}
"""


def write_study(folder: Path, url: str = "http://127.0.0.1:9", **files: str) -> Path:
    (folder / "scenarios").mkdir(parents=True)
    contents = {
        "scenarios/gift.yaml": SCENARIO,
        "scenarios/games.csv": GAMES,
        "scenarios/prices.yaml": PRICES,
        "scenarios/shop_tools.py": TOOLS_PY,
    } | {name.replace("__", "/").replace("_dot_", "."): text for name, text in files.items()}
    for name, text in contents.items():
        (folder / name).write_text(text, encoding="utf-8")
    study = folder / "study.yaml"
    study.write_text(STUDY.replace("URL", url), encoding="utf-8")
    return study


def problems_of(folder: Path, **files: str) -> str:
    with pytest.raises(StudyError) as raised:
        load_study(write_study(folder, **files))
    return str(raised.value)


# --- loading -----------------------------------------------------------------------------


def test_tools_load_with_their_tables_and_function(tmp_path: Path) -> None:
    bundle = load_study(write_study(tmp_path))
    sources = bundle.tools["gift"]
    assert [row.when for row in sources["search_games"].rows] == [
        {"genre": "adventure", "platform": "linux"},
        {"genre": "adventure"},
        {"genre": "puzzle"},
    ]
    assert [row.line for row in sources["search_games"].rows] == [2, 3, 4]
    assert sources["price"].rows[0].result == {"price": 12.5, "currency": "EUR"}
    assert sources["add_to_wishlist"].function == "add_to_wishlist"
    assert sources["add_to_wishlist"].file == str((tmp_path / "scenarios/shop_tools.py").resolve())


def test_a_table_column_that_is_no_argument_is_told_at_its_line(tmp_path: Path) -> None:
    said = problems_of(tmp_path, scenarios__games_dot_csv="genre,year,result\nadventure,1999,x\n")
    assert f"{tmp_path / 'scenarios/games.csv'}:1: column 'year' is not an argument" in said


def test_a_table_without_result_column_is_refused(tmp_path: Path) -> None:
    said = problems_of(tmp_path, scenarios__games_dot_csv="genre\nadventure\n")
    assert "games.csv:1: no 'result' column" in said


def test_a_yaml_row_naming_no_argument_is_told_at_its_line(tmp_path: Path) -> None:
    said = problems_of(
        tmp_path,
        scenarios__prices_dot_yaml="rows:\n  - result: x\n  - when: {colour: red}\n    result: y\n",
    )
    assert "prices.yaml:3: rows[1].when.colour: 'colour' is not an argument of tool 'price'" in (
        said
    )


def test_a_missing_table_or_function_is_told_with_the_line_naming_it(tmp_path: Path) -> None:
    scenario = SCENARIO.replace("games.csv", "nowhere.csv").replace(
        "shop_tools.py:add_to_wishlist", "shop_tools.py:add_it"
    )
    said = problems_of(tmp_path, scenarios__gift_dot_yaml=scenario)
    assert "nowhere.csv: file not found (named by tools on line 13 of" in said
    assert "gift.yaml:20: tools[1].function: shop_tools.py defines no function 'add_it'" in said


def test_success_if_must_name_a_tool_and_its_argument(tmp_path: Path) -> None:
    scenario = SCENARIO.replace("add_to_wishlist.game:", "add_to_wishlist.title:")
    said = problems_of(tmp_path / "a", scenarios__gift_dot_yaml=scenario)
    assert "gift.yaml:5: success_if.add_to_wishlist.title: tool 'add_to_wishlist' has no" in said
    scenario = SCENARIO.replace("add_to_wishlist.game:", "wishlist.game:")
    said = problems_of(tmp_path / "b", scenarios__gift_dot_yaml=scenario)
    assert "'wishlist.game' names no tool of this scenario" in said


def test_a_tool_needs_exactly_one_source(tmp_path: Path) -> None:
    scenario = SCENARIO.replace("    results: prices.yaml\n", "")
    said = problems_of(tmp_path, scenarios__gift_dot_yaml=scenario)
    assert "gift.yaml:22: tools[2]: give exactly one of 'results' (a table) or 'function'" in said


# --- answering calls ---------------------------------------------------------------------


@pytest.fixture
def tools(tmp_path: Path) -> ScenarioTools:
    return scenario_tools(load_study(write_study(tmp_path)))["gift"]


async def test_calls_are_answered_from_the_table_first_row_matching(tools: ScenarioTools) -> None:
    call = await tools.call("search_games", '{"genre": "Adventure", "platform": "Linux"}')
    assert call == ToolCall(
        "search_games", {"genre": "Adventure", "platform": "Linux"}, "Lantern Road, Paper Kingdoms"
    )
    call = await tools.call("search_games", {"genre": "adventure", "platform": "mac"})
    assert call.result == "Lantern Road, Moss Hollow, Paper Kingdoms"
    assert (await tools.call("price", '{"game": "lantern road"}')).result == (
        '{"price": 12.5, "currency": "EUR"}'
    )
    assert (await tools.call("price", "{}")).result == "unknown game"


async def test_the_function_answers_and_a_failure_is_an_error(tools: ScenarioTools) -> None:
    call = await tools.call("add_to_wishlist", '{"game": "Lantern Road"}')
    assert call == ToolCall(
        "add_to_wishlist", {"game": "Lantern Road"}, '{"added": "Lantern Road"}', ends_task=True
    )
    failed = await tools.call("add_to_wishlist", '{"game": "boom"}')
    assert failed.result is None
    assert failed.error == "the tool failed: RuntimeError: the shop is closed"


@pytest.mark.parametrize(
    ("name", "arguments", "error"),
    [
        ("fly", "{}", "there is no tool 'fly' (tools: search_games, add_to_wishlist, price)"),
        ("search_games", '{"genre": ', "the arguments are not a JSON object"),
        ("search_games", "[1]", "the arguments are not a JSON object"),
        ("search_games", '{"platform": "linux"}', "missing required argument 'genre'"),
        ("search_games", '{"genre": 3}', "argument 'genre' must be of type string"),
        ("search_games", '{"genre": "racing"}', "no result for these arguments"),
    ],
)
async def test_a_bad_call_is_an_error_never_a_crash(
    tools: ScenarioTools, name: str, arguments: str, error: str
) -> None:
    call = await tools.call(name, arguments)
    assert call.error == error
    assert call.result is None


def test_a_function_that_cannot_be_imported_stops_the_start(tmp_path: Path) -> None:
    bundle = load_study(
        write_study(
            tmp_path,
            scenarios__shop_tools_dot_py=TOOLS_PY + "import nope\n"
            "def add_to_wishlist(game): pass\n",
        )
    )
    with pytest.raises(SystemSetupError, match=r"tool 'add_to_wishlist': importing .* failed"):
        scenario_tools(bundle)


def test_check_tells_a_function_that_does_not_import(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    check(write_study(tmp_path / "good"), env={})
    said = capsys.readouterr().out
    assert "tools for language models: search_games, add_to_wishlist (ends the task), price" in said
    broken = write_study(tmp_path / "bad", scenarios__shop_tools_dot_py="import nope\n" + TOOLS_PY)
    with pytest.raises(StudyError) as raised:
        check(broken, env={})
    told = str(raised.value)
    assert f"{(tmp_path / 'bad/scenarios/shop_tools.py').resolve()}: scenario 'gift'" in told
    assert "ModuleNotFoundError: No module named 'nope'" in told


# --- the openai adapter against a local server -------------------------------------------


@pytest.fixture
async def client() -> AsyncIterator[JsonClient]:
    client = JsonClient(backoff=0.01, max_backoff=0.02)
    yield client
    await client.close()


def spec(url: str, **fields: Any) -> OpenAISystem:
    settings = {"type": "openai", "id": "llm", "url": url, "model": "tiny", "timeout": 2}
    return OpenAISystem.model_validate(settings | fields)


def conversation(scenario: str = "gift") -> Conversation:
    return Conversation("s-1", scenario, "Find a game.", (), "A game for Alex please")


def shopper(body: dict[str, Any]) -> str | dict[str, Any]:
    """A model that searches, then adds the first game found, then says so."""
    said = [m for m in body["messages"] if m["role"] == "tool"]
    if not said:
        return calling(("search_games", {"genre": "adventure", "platform": "linux"}))
    if len(said) == 1:
        first = said[0]["content"].split(",")[0]
        return calling(("add_to_wishlist", {"game": first}), ("fly", "{}"))
    return "I added Lantern Road to your wishlist."


async def test_the_model_calls_tools_over_several_rounds(
    tmp_path: Path, client: JsonClient
) -> None:
    async with FakeOpenAI(reply=shopper) as server:
        tools = scenario_tools(load_study(write_study(tmp_path)))
        llm = OpenAIChat(spec(server.url), client, {}, tools)
        reply = await llm.respond(conversation())
    assert reply.texts == ("I added Lantern Road to your wishlist.",)
    assert [(c.tool, c.result, c.error) for c in reply.tool_calls] == [
        ("search_games", "Lantern Road, Paper Kingdoms", None),
        ("add_to_wishlist", '{"added": "Lantern Road"}', None),
        ("fly", None, "there is no tool 'fly' (tools: search_games, add_to_wishlist, price)"),
    ]
    first, _, last = (r.json for r in server.requests)
    assert [t["function"]["name"] for t in first["tools"]] == [
        "search_games",
        "add_to_wishlist",
        "price",
    ]
    assert first["tools"][0]["function"]["parameters"]["required"] == ["genre"]
    roles = [m["role"] for m in last["messages"]]
    assert roles == ["user", "assistant", "tool", "assistant", "tool", "tool"]
    assert last["messages"][-1] == {
        "role": "tool",
        "tool_call_id": "call_1",
        "content": json.dumps(
            {"error": "there is no tool 'fly' (tools: search_games, add_to_wishlist, price)"}
        ),
    }
    assert "tool_choice" not in last


async def test_rounds_are_bounded(tmp_path: Path, client: JsonClient) -> None:
    async with FakeOpenAI(reply=lambda body: calling(("price", "{}"))) as server:
        tools = scenario_tools(load_study(write_study(tmp_path)))
        llm = OpenAIChat(spec(server.url, max_tool_rounds=2), client, {}, tools)
        with pytest.raises(SystemFailure, match="still called tools after 2 rounds") as failed:
            await llm.respond(conversation())
        assert [(c.tool, c.result) for c in failed.value.tool_calls] == [
            ("price", "unknown game")
        ] * 2
        assert len(server.requests) == 3
        assert server.last.json["tool_choice"] == "none"


async def test_a_scenario_without_tools_offers_none(tmp_path: Path, client: JsonClient) -> None:
    async with FakeOpenAI(reply="Hello.") as server:
        bundle = load_study(write_study(tmp_path, server.url))
        systems = build_systems(
            bundle.study.systems, env={}, client=client, tools=scenario_tools(bundle)
        )
        try:
            reply = await systems["llm"].respond(conversation("another"))
        finally:
            await close_systems(systems)
        assert reply == SystemReply(texts=("Hello.",))
        assert "tools" not in server.last.json


# --- the engine: recorded, ended, judged -------------------------------------------------


def in_dialogue(bundle: StudyBundle) -> Journey:
    journey = step(bundle, "p1", None, ev.StartCommand(), 0.0).journey
    journey = step(bundle, "p1", journey, ev.ButtonTapped(CONSENT_YES), 0.0).journey
    assert journey is not None
    asked = step(bundle, "p1", journey, ev.TextReceived("a game please"), 1.0).journey
    assert asked is not None
    return asked


def replied(bundle: StudyBundle, *calls: ToolCall) -> tuple[fx.Effect, ...]:
    reply = SystemReply(("Done.",), tool_calls=calls)
    return step(bundle, "p1", in_dialogue(bundle), ev.SystemReplied(reply, 5.0), 2.0).effects


def test_each_call_is_recorded_and_an_ending_tool_ends_the_task_judged(tmp_path: Path) -> None:
    bundle = load_study(write_study(tmp_path))
    effects = replied(
        bundle,
        ToolCall("search_games", {"genre": "adventure"}, "Lantern Road"),
        ToolCall("add_to_wishlist", {"game": "Lantern Road"}, '{"added": 1}', ends_task=True),
    )
    events = [e for e in effects if isinstance(e, fx.RecordEvent)]
    called = [e.data for e in events if e.kind is EventKind.TOOL_CALLED]
    assert called == [
        {
            "turn": 1,
            "tool": "search_games",
            "arguments": {"genre": "adventure"},
            "result": "Lantern Road",
            "error": None,
        },
        {
            "turn": 1,
            "tool": "add_to_wishlist",
            "arguments": {"game": "Lantern Road"},
            "result": '{"added": 1}',
            "error": None,
        },
    ]
    [reported] = [e.data for e in events if e.kind is EventKind.TASK_REPORTED]
    assert reported == {
        "event": "tool_success",
        "data": {
            "search_games.genre": "adventure",
            "add_to_wishlist.game": "Lantern Road",
            "tool": "add_to_wishlist",
        },
    }
    [closed] = [e for e in effects if isinstance(e, fx.CloseSession)]
    assert (closed.reason, closed.success, closed.correct) == (EndReason.SUCCESS, True, True)


def test_a_wrong_game_is_done_but_not_correctly(tmp_path: Path) -> None:
    bundle = load_study(write_study(tmp_path))
    effects = replied(
        bundle, ToolCall("add_to_wishlist", {"game": "moss hollow"}, "ok", ends_task=True)
    )
    [closed] = [e for e in effects if isinstance(e, fx.CloseSession)]
    assert (closed.success, closed.correct) == (True, False)


def test_a_failed_ending_call_does_not_end_the_task(tmp_path: Path) -> None:
    bundle = load_study(write_study(tmp_path))
    failed = ToolCall("add_to_wishlist", {"game": "boom"}, error="the tool failed", ends_task=True)
    effects = replied(bundle, failed)
    assert not [e for e in effects if isinstance(e, fx.CloseSession)]
    assert [
        e.data["error"]
        for e in effects
        if isinstance(e, fx.RecordEvent) and e.kind is EventKind.TOOL_CALLED
    ] == ["the tool failed"]


def test_the_console_shows_each_call_and_what_the_model_was_told() -> None:
    data = {"turn": 2, "tool": "add_to_wishlist", "arguments": {"game": "Lantern Road"}}
    called = event_line(TranscriptEvent(1, 1, 5.0, EventKind.TOOL_CALLED, data | {"result": "ok"}))
    assert called is not None and called.turn == 2
    assert called.text == 'tool add_to_wishlist {"game": "Lantern Road"} → ok'
    failed = event_line(
        TranscriptEvent(2, 2, 6.0, EventKind.TOOL_CALLED, data | {"result": None, "error": "no"})
    )
    assert failed is not None and failed.text.endswith("→ error: no")


def test_calls_made_before_the_system_failed_are_recorded_all_the_same(tmp_path: Path) -> None:
    bundle = load_study(write_study(tmp_path))
    calls = (ToolCall("add_to_wishlist", {"game": "Lantern Road"}, "ok", ends_task=True),)
    failed = ev.SystemFailed("the model still called tools", 9.0, tool_calls=calls)
    effects = step(bundle, "p1", in_dialogue(bundle), failed, 2.0).effects
    recorded = [e.data for e in effects if isinstance(e, fx.RecordEvent)]
    assert [d["tool"] for d in recorded if "tool" in d] == ["add_to_wishlist"]
    assert not [e for e in effects if isinstance(e, fx.CloseSession)]
    [turn] = [e for e in effects if isinstance(e, fx.RecordSystemTurn)]
    assert turn.error == "the model still called tools"


@pytest.mark.slow
async def test_on_the_emulator_each_call_is_stored_even_in_a_failed_turn(
    tmp_path: Path, emulator: BotApiEmulator, start_bot: StartBot
) -> None:
    async with FakeOpenAI(
        reply=lambda body: calling(("price", '{"game": "Lantern Road"}'))
    ) as fake:
        bundle = load_study(write_study(tmp_path / "study", fake.url))
        llm = bundle.study.systems[0].model_copy(update={"max_tool_rounds": 1, "retries": 0})
        study = bundle.study.model_copy(update={"systems": (llm,)})
        bot = await start_bot(bundle.model_copy(update={"study": study}))
        p = emulator.participant(5150)
        await p.send_text("/start")
        await p.wait_for_text("Do you agree")
        await p.tap(text="I agree")
        await p.wait_for_text("Your task")
        await p.send_text("How much is Lantern Road?")
        await p.wait_for_text("Sorry")
    [stored] = [json.loads(e["data"]) if isinstance(e["data"], str) else e["data"]
                for e in bot.events("tool_called")]  # fmt: skip
    assert stored == {
        "turn": 1,
        "tool": "price",
        "arguments": {"game": "Lantern Road"},
        "result": '{"price": 12.5, "currency": "EUR"}',
        "error": None,
    }
    [exchange] = bot.transcript_exchanges()
    assert "still called tools after 1 rounds" in (exchange.error or "")
