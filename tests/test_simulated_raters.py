"""Simulated people a pilot can trust: annotators of a rating job who agree as people do
(a truth per target, an accuracy planted per annotator), who bring in the adjudicator where
two disagree, and participants who answer a ranking, options and a matrix asked beside the
chat."""

from __future__ import annotations

import asyncio
import random
from pathlib import Path
from typing import Any

import pytest

from bot.core.annotation import AnnotationTarget, AnnotationTask
from bot.core.vocabulary import AnnotationLevel, AnnotationRound
from bot.pilot.demo import play_study
from bot.pilot.simulation.answering import Question
from bot.pilot.simulation.rating import Rater
from bot.store import StudyStore
from scenarios.loading import load_study
from tests.store_reads import reading, tables


def _task(number: int) -> AnnotationTask:
    target = AnnotationTarget("hri-cues", f"s{number}#1", AnnotationLevel.EXCHANGE, number)
    return AnnotationTask(target, AnnotationRound.FIRST, (), {}, 1, 1, number, 200)


def test_simulated_annotators_share_a_truth_and_each_errs_at_their_planted_rate() -> None:
    bundle = load_study("hri-cues")
    job = bundle.jobs["hri-cues"]
    scale = bundle.questionnaires["hri-cues"].items[0]
    question = Question(scale.text, scale, bundle.questionnaires["hri-cues"])
    raters = [Rater(bundle, job, 5, random.Random(i)) for i in range(2)]
    tasks = [_task(n) for n in range(400)]
    given = [[r.choose(t, question, 5) for t in tasks] for r in raters]
    same = Rater(bundle, job, 5, random.Random(0))
    again = [same.choose(t, question, 5) for t in tasks]
    assert again == given[0]  # the same seed rates alike

    flawless = Rater(bundle, job, 5, random.Random(9))
    flawless.accuracy = 1.0
    truth = [flawless.choose(t, question, 5) for t in tasks]
    for rater, theirs in zip(raters, given, strict=True):
        right = sum(a == b for a, b in zip(theirs, truth, strict=True)) / len(tasks)
        assert abs(right - rater.accuracy) < 0.07  # the planted accuracy, within sampling error
    agreed = sum(a == b for a, b in zip(*given, strict=True)) / len(tasks)
    expected = raters[0].accuracy * raters[1].accuracy
    assert 1 / 5 < expected - 0.1 < agreed < expected + 0.15 < 1  # neither chance nor all
    errors = [abs(a - b) for a, b in zip(*given, strict=True) if a != b]
    assert sum(e == 1 for e in errors) / len(errors) > 0.5  # mostly a neighbouring point
    assert set(given[0]) == set(range(5))  # the whole scale is used


def _ratings(db: Path, job: str = "xrec") -> tuple[list[Any], list[Any]]:
    async def read(store: StudyStore) -> tuple[list[Any], list[Any]]:
        state = await store.annotation_state(job)
        assert state is not None
        return list(state.assignments), await store.annotation_ratings()

    return reading(db, read)


@pytest.mark.slow  # a study and its annotators played on the emulator
def test_simulated_annotators_of_xrec_bring_in_the_third_exactly_where_they_disagree(
    tmp_path: Path,
) -> None:
    db = tmp_path / "xrec.sqlite"
    asyncio.run(play_study(load_study("xrec"), db, participants=1, seed=3, annotators=3))
    assignments, ratings = _ratings(db)
    first = {r.annotator for r in ratings if r.round == "first"}
    assert len(first) == 2
    values: dict[tuple[str, str], set[str]] = {}
    for r in ratings:
        if r.round == "first":
            values.setdefault((r.target, r.item_id), set()).add(r.value)
    disputed = {target for (target, _), v in values.items() if len(v) > 1}
    assert disputed and any(len(v) == 1 for v in values.values())  # items agreed, some not
    adjudicated = {a.target for a in assignments if a.round is AnnotationRound.ADJUDICATION}
    assert adjudicated == disputed
    [third] = {r.annotator for r in ratings if r.round == "adjudication"}
    assert third not in first
    assert {r.target for r in ratings if r.annotator == third} == disputed
    assert all(a.done_at is not None for a in assignments)  # every target rated to the end
    yes_no = {r.value for r in ratings if r.item_id == "xrec-exchange.q1_recommendation_rate"}
    assert yes_no == {"0", "1"}


STUDY = """\
id: grid
title: Replies ranked and rated beside the chat
texts:
  welcome: Welcome.
  consent: We keep your answers under a code.
  declined: Thank you anyway.
systems:
  - {type: demo, id: shop, variant: v1}
scenarios: [games]
design: {type: random, seed: 1}
"""

SCENARIO = """\
id: games
title: Find a game
brief: Find an adventure game for Linux.
max_exchanges: 3
exchange: [reply-view]
simulation:
  say: ["adventure games for linux", "something cheaper", "thanks"]
"""

QUESTIONNAIRE = """\
id: reply-view
title: This reply
items:
  - type: ranking
    id: reply-view.order
    text: Put what matters most in this reply first.
    options:
      - {value: price, label: The price}
      - {value: genre, label: The genre}
      - {value: platform, label: The platform}
  - type: multi_choice
    id: reply-view.flaws
    text: What was wrong with this reply?
    options:
      - {value: slow, label: Slow}
      - {value: vague, label: Vague}
      - {value: wrong, label: Wrong}
  - type: matrix
    id: reply-view.grid
    text: How much do you agree?
    labels: {1: Disagree, 2: Neutral, 3: Agree}
    max: 3
    statements:
      - {id: reply-view.clear, text: The reply was clear}
      - {id: reply-view.useful, text: The reply was useful}
      - {id: reply-view.short, text: The reply was short enough}
"""


@pytest.mark.slow  # a study played on the emulator
def test_a_ranking_options_and_a_matrix_asked_beside_the_chat_are_answered_whole(
    tmp_path: Path,
) -> None:
    (tmp_path / "scenarios").mkdir()
    (tmp_path / "questionnaires").mkdir()
    (tmp_path / "scenarios" / "games.yaml").write_text(SCENARIO)
    (tmp_path / "questionnaires" / "reply-view.yaml").write_text(QUESTIONNAIRE)
    (tmp_path / "study.yaml").write_text(STUDY)
    db = tmp_path / "grid.sqlite"
    played = asyncio.run(
        play_study(load_study(tmp_path / "study.yaml"), db, participants=4, annotators=0)
    )
    assert all(p.finished for p in played)
    found = tables(db)
    answers: dict[tuple[str, int], dict[str, Any]] = {}
    for r in found["responses"]:
        value = r["text"] if r["value"] is None else r["value"]
        answers.setdefault((r["session_id"], r["turn"]), {})[r["item_id"]] = value
    given = {turn: got for turn, got in answers.items() if any(v is not None for v in got.values())}
    assert len(given) >= 4  # most replies are rated
    statements = {"reply-view.clear", "reply-view.useful", "reply-view.short"}
    for got in given.values():
        assert set(got) == {"reply-view.order", "reply-view.flaws", *statements}
        assert all(v is not None for v in got.values())  # nothing left out
        assert set(str(got["reply-view.flaws"]).split(",")) <= {"slow", "vague", "wrong"}
        assert sorted(str(got["reply-view.order"]).split(",")) == ["genre", "platform", "price"]
        assert {got[s] for s in statements} <= {1, 2, 3}


JOB = """\
id: view
title: Rate the replies
sessions: {}
rate:
  exchange: [reply-rating]
annotators: 2
brief:
  guidelines: Rate each reply.
"""

RATING = """\
id: reply-rating
title: This reply
items:
  - type: multi_choice
    id: reply-rating.flaws
    text: What was wrong with this reply?
    options:
      - {value: slow, label: Slow}
      - {value: vague, label: Vague}
      - {value: wrong, label: Wrong}
  - type: scale
    id: reply-rating.clear
    text: The reply was clear.
    labels: {1: Unclear, 2: Somewhat, 3: Clear}
    max: 3
"""


@pytest.mark.slow  # a study and its annotators played on the emulator
def test_simulated_annotators_tick_options_and_rate_every_exchange(tmp_path: Path) -> None:
    for folder in ("scenarios", "questionnaires", "jobs"):
        (tmp_path / folder).mkdir()
    (tmp_path / "scenarios" / "games.yaml").write_text(
        SCENARIO.replace("exchange: [reply-view]\n", "")
    )
    (tmp_path / "questionnaires" / "reply-rating.yaml").write_text(RATING)
    (tmp_path / "jobs" / "view.yaml").write_text(JOB)
    (tmp_path / "study.yaml").write_text(f"{STUDY}annotation_jobs: [view]\n")
    db = tmp_path / "view.sqlite"
    asyncio.run(play_study(load_study(tmp_path / "study.yaml"), db, participants=1, annotators=2))
    _, ratings = _ratings(db, "view")
    targets = {r.target for r in ratings}
    assert targets and len({r.annotator for r in ratings}) == 2
    for annotator in {r.annotator for r in ratings}:
        theirs = [r for r in ratings if r.annotator == annotator]
        assert {(r.target, r.item_id) for r in theirs} == {
            (t, item) for t in targets for item in ("reply-rating.flaws", "reply-rating.clear")
        }
    for r in ratings:
        allowed = {"slow", "vague", "wrong"} if r.item_id.endswith("flaws") else {"1", "2", "3"}
        assert r.value and set(r.value.split(",")) <= allowed
