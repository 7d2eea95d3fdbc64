"""A model judge as the last source of task success: against a local OpenAI-compatible
server it reads each conversation of a language model without tools against the
scenario's success criterion; the report's completion says "a model judge" decided and its
rate is the planted verdicts'; an unparseable verdict is counted and never a success; a
rerun asks nothing twice; a system whose participants answered is theirs, not the judge's."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

from analytics.data.loading import load_study_data
from analytics.report.numbers import build_report
from analytics.report.present import document
from analytics.report.render_md import render_markdown
from analytics.statistics.success_sources import decide
from bot.annotation.judging import JudgeRun, Limits
from bot.annotation.success_judging import run_success_judge
from bot.cli import main
from bot.core.participants import ParticipantStatus
from bot.core.vocabulary import Consent, EndReason, SessionState, Stage
from bot.engine import effects as fx
from bot.engine.annotating.success import SUCCESS_ITEM, SUCCESS_JOB
from bot.store.definition import definition_json
from bot.store.interface import StudyStore
from bot.store.model import JudgementRecord, StepCommit
from bot.store.sqlite import open_store
from bot.systems.http_json import JsonClient
from scenarios.jobs import Judge
from scenarios.models import Scenario, Study, StudyBundle, Texts
from scenarios.yaml_lines import StudyError
from tests.fake_servers import FakeOpenAI

CRITERION = "The assistant names a game the participant can buy for Mac."
SYSTEMS = (
    {"type": "openai", "id": "talker", "url": "http://127.0.0.1:9", "model": "m"},
    {"type": "openai", "id": "asked", "url": "http://127.0.0.1:9", "model": "m"},
    {"type": "demo", "id": "shop"},
)
# (session, system, turns): the judge below says yes after 2 or 4 turns, no after 1, and
# never a verdict after 3 (every conversation differs: the same one would be asked once)
SESSIONS = [
    ("p1-1", "talker", 2),
    ("p2-1", "talker", 1),
    ("p3-1", "talker", 4),
    ("p4-1", "talker", 3),
    ("p5-1", "shop", 2),  # a system that reports success itself: never asked
]


def bundle(url: str = "http://127.0.0.1:9") -> StudyBundle:
    judge = Judge(id="success-judge", url=url, model="judge-m", seed=5)
    study = Study(
        id="s",
        title="S",
        texts=Texts(welcome="Hi", consent="Agree", declined="Bye"),
        systems=SYSTEMS,
        scenarios=("ask",),
        success_item="after.done",
        success_judge=judge,
    )
    scenario = Scenario(
        id="ask", title="Ask", brief="Find a game for Mac.", success_criterion=CRITERION
    )
    return StudyBundle(study=study, scenarios={"ask": scenario}, questionnaires={})


def planted(body: dict[str, Any]) -> str:
    user = body["messages"][1]["content"]
    turns = user.count("hello ")
    if turns == 3:
        return "Probably, yes." if len(body["messages"]) == 2 else "I think so"
    return "yes" if turns in (2, 4) else " No\n"


async def store_conversations(store: StudyStore) -> None:
    """Each of ``SESSIONS`` ended by its participant, as the bot commits it."""
    for sid, system, turns in SESSIONS:
        records: list[fx.Record] = [
            fx.RecordConsent(Consent.ACCEPTED),
            fx.OpenSession(sid, "ask", system, 0, "random", "1"),
        ]
        for turn in range(1, turns + 1):
            records += [
                fx.RecordUserTurn(sid, turn, f"hello {turn}"),
                fx.RecordSystemTurn(sid, turn, f"Try Moss Hollow, reply {turn}", 3.0),
            ]
        records += [
            fx.CloseSession(sid, EndReason.PARTICIPANT_DONE, False),
            fx.SetSessionState(sid, SessionState.ENDED),
        ]
        status = ParticipantStatus(Stage.FINISHED, 1.0)
        person = sid.rsplit("-", 1)[0]
        await store.commit_step(StepCommit("s", person, "{}", status, None, records))


@pytest.fixture
async def judged(tmp_path: Path) -> AsyncIterator[tuple[StudyStore, FakeOpenAI, Path]]:
    db = tmp_path / "s.sqlite"
    async with FakeOpenAI(reply=planted) as server:
        store = await open_store(db, lambda: 100.0)
        await store.record_definition("s", definition_json(bundle(server.url)))
        await store_conversations(store)
        yield store, server, db
        await store.close()


async def judge_once(store: StudyStore, server: FakeOpenAI, limit: int | None = None) -> JudgeRun:
    found = bundle(server.url)
    assert found.study.success_judge is not None
    client = JsonClient()
    try:
        return await run_success_judge(
            store,
            found,
            found.study.success_judge,
            client,
            {},
            limits=Limits(concurrency=2, per_second=1000),
            limit=limit,
            clock=lambda: 300.0,
        )
    finally:
        await client.close()


async def test_a_model_judge_decides_a_model_without_tools(
    judged: tuple[StudyStore, FakeOpenAI, Path],
) -> None:
    store, server, db = judged
    first = await judge_once(store, server, limit=2)
    assert first.targets == 2
    rest = await judge_once(store, server)
    assert (rest.skipped, rest.targets) == (first.rated, 4 - first.targets)
    # four conversations asked once each, the one without a verdict once more
    assert len(server.requests) == 5
    assert (first.unparseable + rest.unparseable, first.retried + rest.retried) == (1, 1)
    asked = server.requests[0].json
    assert asked["model"] == "judge-m" and asked["seed"] == 5
    assert f"Success criterion: {CRITERION}" in asked["messages"][1]["content"]
    assert "Answer with one of: yes, no" in asked["messages"][1]["content"]
    # a rerun asks nothing: the unparseable one again, from the kept calls
    again = await judge_once(store, server)
    assert (again.skipped, again.calls, again.cached, len(server.requests)) == (3, 0, 2, 5)
    made = {j.target: j for j in await store.judgements()}
    assert set(made) == {"p1-1", "p2-1", "p3-1", "p4-1"}
    assert {(j.job, j.item_id, j.model, j.host, j.seed, j.at) for j in made.values()} == {
        (SUCCESS_JOB, SUCCESS_ITEM, "judge-m", "127.0.0.1", 5, 300.0)
    }
    assert made["p4-1"].outcome == "unparseable" and made["p4-1"].retried

    report = build_report(load_study_data(db))
    rows = {r["system_id"]: r for r in report.completion.by_system.to_dict("records")}
    talker = rows["talker"]
    assert (talker["success_n"], talker["successes"]) == (3, 2)  # p4-1: not measured
    assert talker["success_rate"] == pytest.approx(2 / 3)
    sources = {r["system_id"]: r for r in report.completion.sources.to_dict("records")}
    assert (sources["talker"]["decided_by"], sources["talker"]["sessions_decided"]) == (
        "a model judge",
        3,
    )
    assert sources["shop"]["source"] == "system"
    text = render_markdown(document(report))
    assert "| talker | a model judge | 3 |" in text
    [judge] = report.completion.success_judge.to_dict("records")
    assert (judge["judged"], judge["successes"], judge["failures"], judge["unparseable"]) == (
        4,
        2,
        1,
        1,
    )
    assert judge["calls"] == 5 and judge["first_at"] == "1970-01-01T00:05:00+00:00"
    assert "The model judge success-judge (judge-m at 127.0.0.1, prompt " in text
    assert "2 done, 1 not done, 1 unparseable and 0 failed calls" in text


def frames() -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame]:
    rows = [("a1", "asked"), ("a2", "asked"), ("t1", "talker"), ("t2", "talker")]
    sessions = pd.DataFrame(
        {
            "session_id": [r[0] for r in rows],
            "system_id": [r[1] for r in rows],
            "scenario_id": "ask",
            "success": 0,
            "correct": float("nan"),
        }
    )
    events = pd.DataFrame(columns=["session_id", "kind", "data"])
    responses = pd.DataFrame([("a1", "after.done", 0)], columns=["session_id", "item_id", "value"])
    return sessions, events, responses


def verdict(
    session: str, said: str, outcome: str = "rated", judge: str = "success-judge"
) -> JudgementRecord:
    return JudgementRecord(
        SUCCESS_JOB, judge, session, "session", SUCCESS_ITEM, "judge-m", "h", "p", 0.0, None,
        outcome, said, False, None, 1.0, session,
    )  # fmt: skip


def test_the_participant_s_answer_comes_before_the_judge_and_no_verdict_is_no_success() -> None:
    sessions, events, responses = frames()
    judgements = [
        verdict("a1", "yes"),
        verdict("a2", "yes"),
        verdict("t1", "yes", outcome="unparseable"),  # said yes only in a sentence
        verdict("t2", "no"),
        verdict("t2", "yes", judge="another-judge"),  # not the study's success judge
    ]
    decided, sources = decide(sessions, events, responses, {"s": bundle()}, judgements)
    by_system = sources.set_index("system_id")
    assert by_system.loc["asked", "decided_by"] == "the participant's answer"
    assert by_system.loc["talker", "decided_by"] == "a model judge"
    assert by_system.loc["talker", "sessions_decided"] == 1
    success = dict(zip(decided["session_id"], decided["success"], strict=True))
    assert success["a1"] == 0.0 and pd.isna(success["a2"])  # the participant's, not the judge's
    assert pd.isna(success["t1"]) and success["t2"] == 0.0
    measured = dict(zip(decided["session_id"], decided["success_measured"], strict=True))
    assert not measured["t1"] and measured["t2"]
    # without a success judge in the study, its verdicts decide nothing
    plain = bundle().study.model_copy(update={"success_judge": None})
    _, sources = decide(
        sessions, events, responses, {"s": bundle().model_copy(update={"study": plain})}, judgements
    )
    assert sources.set_index("system_id").loc["talker", "decided_by"] == "not measured"


def test_a_criterion_must_say_something_and_belongs_to_a_dialogue(tmp_path: Path) -> None:
    from scenarios.loading import load_study

    study = tmp_path / "study.yaml"
    study.write_text(
        "id: s\ntitle: S\ntexts: {welcome: Hi, consent: Agree, declined: Bye}\n"
        "systems: [{type: demo, id: shop}]\nscenarios: [ask]\n"
    )
    (tmp_path / "scenarios").mkdir()
    task = tmp_path / "scenarios" / "ask.yaml"
    task.write_text("id: ask\ntitle: Ask\nbrief: Do it.\nsuccess_criterion: '  '\n")
    with pytest.raises(StudyError) as blank:
        load_study(study)
    assert "ask.yaml:4" in str(blank.value) and "the criterion is blank" in str(blank.value)
    task.write_text(
        "id: ask\ntitle: Ask\nbrief: Rate them.\nkind: rating\nstimuli: rows.csv\n"
        "rate_with: [q]\nsuccess_criterion: All rated.\n"
    )
    with pytest.raises(StudyError) as rating:
        load_study(study)
    assert "ask.yaml:7" in str(rating.value) and "only a dialogue task" in str(rating.value)


def test_check_warns_of_a_success_judge_with_nothing_to_judge(tmp_path: Path) -> None:
    from scenarios.loading import checked_study

    study = tmp_path / "study.yaml"
    study.write_text(
        "id: s\ntitle: S\ntexts: {welcome: Hi, consent: Agree, declined: Bye}\n"
        "systems: [{type: openai, id: m, url: 'http://127.0.0.1:9', model: m}]\n"
        "scenarios: [ask]\n"
        "success_judge: {id: j, url: 'http://127.0.0.1:9', model: judge-m}\n"
    )
    (tmp_path / "scenarios").mkdir()
    task = tmp_path / "scenarios" / "ask.yaml"
    task.write_text("id: ask\ntitle: Ask\nbrief: Do it.\n")
    _, warnings = checked_study(study)
    [warning] = warnings
    assert (warning.line, warning.field) == (6, "success_judge")
    assert "no scenario of the study states a success_criterion" in warning.message
    task.write_text("id: ask\ntitle: Ask\nbrief: Do it.\nsuccess_criterion: It is done.\n")
    bundle, warnings = checked_study(study)
    assert warnings == [] and bundle.scenario("ask").success_criterion == "It is done."


async def test_the_command_judges_and_a_study_without_a_judge_is_one_line(
    judged: tuple[StudyStore, FakeOpenAI, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    store, _, db = judged
    args = ["judge", "run", "--db", str(db), "--success", "--limit", "1", "--rate", "1000"]
    assert await asyncio.to_thread(main, args) == 0
    out = capsys.readouterr().out
    assert "1 conversations judged (0 judged before)" in out
    assert len([j for j in await store.judgements() if j.job == SUCCESS_JOB]) == 1
    plain = bundle().study.model_copy(update={"success_judge": None})
    await store.record_definition(
        "s", definition_json(bundle().model_copy(update={"study": plain}))
    )
    assert await asyncio.to_thread(main, args) == 3
    err = capsys.readouterr().err
    assert (
        err.strip()
        == "ozlab: study 's' names no success_judge: add success_judge to the study file"
    )
