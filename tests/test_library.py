"""The shipped protocol library: every study loads, every scenario file validates, the rating
task's stimuli are all there, and the demo shop can complete every IDIAL task."""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import Callable
from importlib.resources import files
from pathlib import Path
from string import Formatter
from typing import Any, get_args

import pytest
import yaml

from bot.core.conversation import Conversation, SystemReply, Turn
from bot.pilot.emulator import BotApiEmulator
from bot.systems.demo import ALEX_WISHLIST, CATALOGUE, TASK_SUCCESS, DemoChat, DemoShop, Game
from scenarios.loading import load_scenario, load_study, shipped_studies
from scenarios.models import Scenario
from scenarios.systems import DemoSystem
from tests.conftest import StartBot, say
from tests.store_reads import pick

pytestmark = pytest.mark.slow  # whole commands, reports or renderings: make test, not make check

LIBRARY = Path(str(files("scenarios") / "library"))
SCENARIOS = LIBRARY / "scenarios"
STUDIES = LIBRARY / "studies"
JOBS = LIBRARY / "jobs"
QUESTIONNAIRES = Path(str(files("questionnaires") / "library"))

PROTOCOL_STUDIES = {"hmd", "idial", "hri-cues", "e2e-nlg", "xrec"}
IDIAL_TASKS = ("idial-budget", "idial-compare", "idial-wishlist", "idial-info")
SCENARIO_FILES = sorted(SCENARIOS.glob("*.yaml"))

# The protocol's scripted closing line (HRI CUES, footnote 2), word for word.
HRI_CUES_CLOSING = (
    "I would love to talk more another time, but for the sake of time, I need to say goodbye. "
    "Thank you for talking with me. Take care!"
)
# The three worked examples of the E2E protocol: (MR, utterance), word for word.
E2E_EXAMPLES = [
    (
        "name[The Eagle], area[city centre]",
        "The Eagle is a Chinese restaurant located in the city centre.",
    ),
    (
        "name[The Eagle], area[city centre], pricerange[cheap]",
        "The Eagle are located in the city centre. It is cheap.",
    ),
    ("name[The Eagle], area[city centre], near[Alimentum]", "The Eagle is located near Alimentum."),
]
E2E_ATTRIBUTES = {
    "name",
    "eattype",
    "food",
    "pricerange",
    "customer rating",
    "area",
    "familyfriendly",
    "near",
}
E2E_ROWS = 15


def _raw(path: Path) -> dict[str, Any]:
    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    assert isinstance(data, dict)
    return data


def _questionnaires_named(study: str) -> set[str]:
    """Every questionnaire id a shipped study and its scenarios name, read from the files."""
    data = _raw(STUDIES / f"{study}.yaml")
    names = set(data.get("screening", [])) | set(data.get("post_study", []))
    for scenario in data.get("scenarios", []):
        scenario_data = _raw(SCENARIOS / f"{scenario}.yaml")
        for key in ("post_task", "exchange", "rate_with"):
            names |= set(scenario_data.get(key, []))
    for job in data.get("annotation_jobs", []):
        rate = _raw(JOBS / f"{job}.yaml")["rate"]
        names |= {q for level in ("exchange", "session", "pair") for q in rate.get(level, [])}
    return names


def _lacks(study: str) -> str | None:
    """What a shipped study names that the repository does not ship, in words: a failure,
    never a reason to skip (a shipped study that cannot load is a broken release)."""
    missing = sorted(
        q for q in _questionnaires_named(study) if not (QUESTIONNAIRES / f"{q}.yaml").is_file()
    )
    if missing:
        return f"questionnaires not shipped: {', '.join(missing)}"
    variants = get_args(DemoSystem.model_fields["variant"].annotation)
    wanted = {
        s.get("variant")
        for s in _raw(STUDIES / f"{study}.yaml")["systems"]
        if s.get("type") == "demo"
    }
    if not wanted <= set(variants) | {None}:
        return f"DemoSystem does not accept variant(s) {sorted(wanted - set(variants))}"
    return None


def _loaded(study: str) -> Any:
    lacking = _lacks(study)
    assert lacking is None, f"{study}: {lacking}"
    return load_study(study)


# ----------------------------------------------------------------------------- loading


def test_every_protocol_has_a_shipped_study() -> None:
    assert set(shipped_studies()) >= PROTOCOL_STUDIES


@pytest.mark.parametrize("name", sorted(PROTOCOL_STUDIES))
def test_every_shipped_study_loads(name: str) -> None:
    bundle = _loaded(name)
    assert bundle.study.id == name
    assert set(bundle.scenarios) == set(bundle.study.scenarios)
    assert set(bundle.questionnaires) == _questionnaires_named(name)
    for scenario in bundle.scenarios.values():
        if scenario.kind == "rating":
            assert bundle.stimuli[scenario.id]


@pytest.mark.parametrize("path", SCENARIO_FILES, ids=[p.stem for p in SCENARIO_FILES])
def test_every_shipped_scenario_file_validates(path: Path) -> None:
    scenario = load_scenario(path)
    assert scenario.id == path.stem
    assert scenario.goal and scenario.success
    if scenario.kind == "rating":
        assert scenario.stimuli and (SCENARIOS / scenario.stimuli).is_file()
        assert scenario.stimulus_template and scenario.rate_with
        assert scenario.max_exchanges is None and scenario.opening_line is None
    else:
        assert scenario.max_exchanges or scenario.time_limit
        assert not scenario.stimuli and not scenario.rate_with


def test_every_shipped_scenario_is_played_by_a_shipped_study() -> None:
    used = {s for study in shipped_studies() for s in _raw(STUDIES / f"{study}.yaml")["scenarios"]}
    assert {path.stem for path in SCENARIO_FILES} <= used


@pytest.mark.parametrize("path", [*SCENARIO_FILES, *sorted(STUDIES.glob("*.yaml"))], ids=str)
def test_every_shipped_file_opens_with_its_source(path: Path) -> None:
    """House style: a researcher reads first where the file comes from."""
    assert path.read_text(encoding="utf-8").startswith("# ")


# ----------------------------------------------------------------------------- IDIAL


def _idial_tasks() -> dict[str, Scenario]:
    return {task: load_scenario(SCENARIOS / f"{task}.yaml") for task in IDIAL_TASKS}


def test_the_idial_study_draws_three_tasks_per_participant_and_asks_afterwards() -> None:
    bundle = _loaded("idial")
    study = bundle.study
    assert study.scenarios == IDIAL_TASKS
    assert study.design.type == "balanced"
    assert study.design.systems == "between"
    assert study.design.tasks_per_participant == 3 < len(study.scenarios)
    assert study.design.order == "random"
    assert study.post_study == ("idial",)
    assert [(s.type, getattr(s, "variant", None)) for s in study.systems] == [
        ("demo", "v1"),
        ("demo", "v0"),
    ]
    for scenario in bundle.scenarios.values():
        assert scenario.post_task == ()  # the questionnaire comes once, after all tasks


@pytest.mark.parametrize("task", IDIAL_TASKS)
def test_every_idial_task_states_its_goal_time_and_limit(task: str) -> None:
    scenario = _idial_tasks()[task]
    assert scenario.brief and scenario.goal and scenario.success
    assert scenario.expected_duration is not None and scenario.expected_duration <= 180
    assert scenario.max_exchanges == 10


def _budget(game: Game) -> bool:
    return "strategy" in game.genres and "mac" in game.platforms and game.price <= 20


def _cheaper(game: Game) -> bool:
    pair = [g for g in CATALOGUE if g.title in ("Lantern Road", "Harbor of Lost Letters")]
    return game is min(pair, key=lambda g: g.price)


def _alex_and_mac(game: Game) -> bool:
    return game.title in ALEX_WISHLIST and "mac" in game.platforms


# Per task: a scripted participant, and which added games complete it (None: nothing is
# added, the reply must say what the task asks to find out).
IDIAL_SCRIPTS: dict[str, tuple[list[str], Callable[[Game], bool] | None]] = {
    "idial-budget": (
        ["Hi! I am looking for a strategy game for Mac under €20", "Add Dungeon Ledger"],
        _budget,
    ),
    "idial-compare": (
        [
            "Can you compare Lantern Road and Harbor of Lost Letters?",
            "Please add Harbor of Lost Letters to my wishlist",
        ],
        _cheaper,
    ),
    "idial-wishlist": (
        ["What is on Alex's wishlist?", "Add Starfall Tactics to my wishlist", "yes"],
        _alex_and_mac,
    ),
    "idial-info": (["Does Glass Desert run on Xbox, and how much does it cost?"], None),
}


async def _play(
    system: DemoShop | DemoChat, scenario: str, messages: list[str]
) -> list[SystemReply]:
    """Messages to a system as the bot sends them, up to the reply that ends the task."""
    history: list[Turn] = []
    replies = []
    for message in messages:
        conversation = Conversation("s1", scenario, "brief", tuple(history), message)
        reply = await system.respond(conversation)
        replies.append(reply)
        if TASK_SUCCESS in reply.events:
            break
        history.append(Turn(message, "\n\n".join(reply.texts)))
    return replies


def _added(reply: SystemReply) -> Game:
    match = re.search(r"added (.+?) to your wishlist", " ".join(reply.texts))
    assert match, reply.texts
    (game,) = [g for g in CATALOGUE if g.title == match.group(1)]
    return game


@pytest.mark.parametrize("variant", ["v1", "v0"])
@pytest.mark.parametrize("task", IDIAL_TASKS)
async def test_the_demo_shop_completes_every_idial_task(task: str, variant: str) -> None:
    scenario = _idial_tasks()[task]
    messages, completes = IDIAL_SCRIPTS[task]
    replies = await _play(DemoShop(variant), task, messages)  # type: ignore[arg-type]
    if completes is None:  # a task about finding out, ended by the participant
        assert all(TASK_SUCCESS not in reply.events for reply in replies)
        text = " ".join(replies[-1].texts)
        assert "Glass Desert runs on Xbox" in text and "€29.99" in text
        assert "Glass Desert" in scenario.brief and "€29.99" in scenario.success  # type: ignore[operator]
        return
    assert TASK_SUCCESS in replies[-1].events
    assert completes(_added(replies[-1]))
    # The scenario's success names exactly the catalogue's right answers.
    right = [g.title for g in CATALOGUE if completes(g)]
    assert right and all(title in scenario.success for title in right)  # type: ignore[operator]
    if task == "idial-compare":
        assert "Lantern Road" in scenario.brief and "Harbor of Lost Letters" in scenario.brief


def test_the_hmd_gift_success_names_every_right_gift() -> None:
    success = load_scenario(SCENARIOS / "hmd-gift.yaml").success or ""
    for game in CATALOGUE:
        right = (
            "adventure" in game.genres
            and "linux" in game.platforms
            and game.title not in ALEX_WISHLIST
        )
        assert (game.title in success) == right, game.title


async def test_the_budget_task_separates_the_two_shops() -> None:
    """The success note of idial-budget: shop-v0 drops the platform and offers Iron Meadows."""
    message = ["I am looking for a strategy game for Mac under €20"]
    (v1,) = await _play(DemoShop("v1"), "idial-budget", message)
    (v0,) = await _play(DemoShop("v0"), "idial-budget", message)
    assert "Iron Meadows" not in " ".join(v1.texts)
    assert "Iron Meadows" in " ".join(v0.texts)
    assert "Iron Meadows" in _idial_tasks()["idial-budget"].success  # type: ignore[operator]


# ----------------------------------------------------------------------------- HRI CUES


def test_the_hri_cues_chat_follows_the_protocol_setup() -> None:
    scenario = load_scenario(SCENARIOS / "hri-cues-chat.yaml")
    assert scenario.time_limit == 7 * 60
    assert scenario.expected_duration == 7 * 60
    assert scenario.max_exchanges is None
    assert scenario.closing_line == HRI_CUES_CLOSING
    assert scenario.opening_line is not None and scenario.opening_line.endswith(
        "What is your name?"
    )
    assert scenario.post_task == ("hri-cues-self-report",)
    assert scenario.exchange == ()  # the HRI CUES ratings are the annotators', afterwards
    systems = _raw(STUDIES / "hri-cues.yaml")["systems"]
    assert systems == [{"type": "demo", "id": "companion", "variant": "chat"}]


async def test_the_chat_companion_answers_the_scripted_opening_line() -> None:
    scenario = load_scenario(SCENARIOS / "hri-cues-chat.yaml")
    assert "Robin" in (scenario.opening_line or "")
    replies = await _play(DemoChat(), scenario.id, ["I'm Anna", "I love gardening", "bye"])
    texts = [reply.texts[0] for reply in replies]
    assert texts[0].startswith("Nice to meet you, Anna!")
    assert texts[1].endswith("?")
    assert "Anna" in texts[2]


def test_the_hri_cues_study_loads() -> None:
    bundle = _loaded("hri-cues")
    assert bundle.study.systems[0].id == "companion"
    # the participants answer the self-report; the annotators' job brings the two others
    assert set(bundle.questionnaires) == {"hri-cues-self-report", "hri-cues", "hri-cues-overall"}
    job = bundle.jobs["hri-cues"]
    assert (job.rate.exchange, job.rate.session) == (("hri-cues",), ("hri-cues-overall",))
    assert (job.annotators, job.seen_once_in_order, job.adjudication) == (3, True, None)


async def test_the_hri_cues_study_is_played_with_the_chat_companion(
    emulator: BotApiEmulator, start_bot: StartBot
) -> None:
    """Through the bot and the emulator, with the 7 minutes shortened to 2 seconds and the
    clock ticks slowed down, so that only a participant message finds the time up."""
    bundle = _loaded("hri-cues")
    chat = bundle.scenario("hri-cues-chat").model_copy(update={"time_limit": 2.0})
    bot = await start_bot(
        bundle.model_copy(update={"scenarios": {"hri-cues-chat": chat}}), tick_interval=60
    )
    p = emulator.participant(601)
    await p.send_text("/start")
    await p.wait_for_text("sentiment analysis")
    await p.tap(text="I agree")
    await p.wait_for_text(chat.opening_line or "")
    assert (await say(p, "I'm Anna")).startswith("Nice to meet you, Anna!")
    assert (await say(p, "I love gardening")).endswith("?")
    await asyncio.sleep(2.1)
    assert await say(p, "My roses are blooming") == HRI_CUES_CLOSING
    for step, tap in enumerate(("4", "5", "4", "2"), 1):
        await p.wait_for_text(f"{step}/4")
        await p.tap(text=tap)
    await p.wait_for_text(bundle.study.texts.thanks)

    stored = bot.tables()
    [(system, reason)] = pick(stored["sessions"], "system_id", "end_reason")
    assert (system, reason) == ("companion", "time_limit")
    exchanges = pick(stored["exchanges"], "user_text")
    assert exchanges == [("I'm Anna",), ("I love gardening",)]  # the late one is not passed on
    kinds = [e["kind"] for e in stored["events"]]
    assert {"opening_line", "message_after_time_limit", "closing_line"} <= set(kinds)
    answers = pick(stored["responses"], "item_id", "value")
    assert answers == [
        ("hri-cues-self-report.satisfied", 4),
        ("hri-cues-self-report.fun", 5),
        ("hri-cues-self-report.interesting", 4),
        ("hri-cues-self-report.strange", 2),
    ]


# ----------------------------------------------------------------------------- E2E NLG


def _stimuli() -> list[dict[str, str]]:
    lines = (SCENARIOS / "e2e-nlg-rating.jsonl").read_text(encoding="utf-8").splitlines()
    return [json.loads(line) for line in lines if line.strip()]


def test_the_e2e_stimuli_hold_the_protocol_examples_and_our_pairs() -> None:
    rows = _stimuli()
    assert len(rows) == E2E_ROWS
    assert len({row["id"] for row in rows}) == E2E_ROWS
    pairs = [(row["mr"], row["utterance"]) for row in rows]
    for example in E2E_EXAMPLES:
        assert example in pairs
    ours = [row for row in rows if row["source"] == "written for ozlab"]
    assert len(ours) == E2E_ROWS - len(E2E_EXAMPLES) >= 12
    for row in rows:
        assert set(row) == {"id", "mr", "utterance", "source", "note"}
        assert all(isinstance(value, str) and value.strip() for value in row.values())
        slots = re.findall(r"([A-Za-z][A-Za-z ]*)\[([^\]]+)\]", row["mr"])
        assert ", ".join(f"{a}[{v}]" for a, v in slots) == row["mr"], row["mr"]
        assert slots[0][0] == "name"
        assert {a.lower() for a, _ in slots} <= E2E_ATTRIBUTES, row["mr"]


def test_the_e2e_scenario_shows_the_pair_and_rates_it() -> None:
    scenario = load_scenario(SCENARIOS / "e2e-nlg-rating.yaml")
    assert scenario.kind == "rating"
    assert scenario.stimuli == "e2e-nlg-rating.jsonl"
    assert scenario.rate_with == ("e2e-nlg",)
    template = scenario.stimulus_template or ""
    columns = {name for _, name, _, _ in Formatter().parse(template) if name}
    assert columns == {"mr", "utterance"}
    shown = template.format(**_stimuli()[0])
    assert _stimuli()[0]["mr"] in shown and _stimuli()[0]["utterance"] in shown


def test_the_e2e_study_screens_native_speakers_and_loads_every_row() -> None:
    bundle = _loaded("e2e-nlg")
    assert bundle.study.screening == ("e2e-nlg-screening",)
    stimuli = bundle.stimuli["e2e-nlg-rating"]
    assert [s.id for s in stimuli] == [row["id"] for row in _stimuli()]
    assert stimuli[2].fields["utterance"] == E2E_EXAMPLES[0][1]


# ----------------------------------------------------------------------------- XREC


def test_the_xrec_study_rates_every_reply() -> None:
    bundle = _loaded("xrec")
    scenario = bundle.scenario("xrec-recommend")
    assert scenario.exchange == ("xrec-exchange",)
    assert scenario.max_exchanges is not None
    assert {s.id for s in bundle.study.systems} == {"shop-v1", "shop-v0"}


@pytest.mark.parametrize("variant", ["v1", "v0"])
async def test_the_demo_shop_recommends_and_a_recommendation_can_be_accepted(variant: str) -> None:
    messages = [
        "Can you recommend a puzzle game for Mac?",
        "Tell me about Circuit Breakers",
        "Add it to my wishlist",
    ]
    replies = await _play(DemoShop(variant), "xrec-recommend", messages)  # type: ignore[arg-type]
    assert "Circuit Breakers" in " ".join(replies[0].texts)
    assert TASK_SUCCESS in replies[-1].events
    assert _added(replies[-1]).title == "Circuit Breakers"
