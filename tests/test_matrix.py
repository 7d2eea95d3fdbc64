"""The ``matrix`` item: several statements on one scale, asked one after another in one
message edited in place; loading told at its file and line, its words in another language,
the taps and typed numbers the engine accepts, each statement stored as an item of its own,
and simulated participants' answers by statement."""

from __future__ import annotations

import random
from pathlib import Path
from statistics import fmean

import pytest
import yaml

from analytics.data.loading import stored_items
from bot.core.vocabulary import AnswerStatus
from bot.engine import asking
from bot.engine import effects as fx
from bot.engine import events as ev
from bot.engine.callbacks import Channel, SurveyTap, TapAction, encode
from bot.engine.journey import Journey
from bot.pilot.simulation.answering import Question, ScriptedAnswers
from questionnaires.models import (
    TELEGRAM_TEXT_LIMIT,
    MatrixItem,
    Questionnaire,
    ScaleItem,
    matrix_message_length,
)
from scenarios.loading import StudyError, load_questionnaire, load_study
from scenarios.models import StudyBundle
from scenarios.simulation import Answers, Simulation
from tests.test_engine import in_dialogue, make_bundle, of, run
from tests.test_loading import line_of, write

GRID = """\
id: ux
title: Your experience
items:
  - type: matrix
    id: ux.grid
    text: How much do you agree?
    construct: usability
    labels: {1: Disagree, 2: Neutral, 3: Agree}
    max: 3
    statements:
      - {id: ux.understood, text: The assistant understood me}
      - {id: ux.clear, text: Its answers were clear}
      - {id: ux.confusing, text: It confused me, reverse: true}
"""


def matrix_bundle(required: bool = True) -> StudyBundle:
    """The engine tests' study, its questionnaire the matrix and then a yes/no item."""
    grid = yaml.safe_load(GRID)["items"][0] | {"required": required}
    again = {"type": "yes_no", "id": "q.again", "text": "Again?"}
    instrument = Questionnaire.model_validate(
        {"id": "q", "title": "Rating", "items": [grid, again]}
    )
    return make_bundle().model_copy(update={"questionnaires": {"q": instrument}})


GRIDDED = matrix_bundle()


def at_matrix(bundle: StudyBundle = GRIDDED) -> Journey:
    done = run(bundle, in_dialogue(bundle), ev.DoneCommand()).journey
    return run(bundle, done, ev.MessageSent(99)).journey


def tap(journey: Journey, action: TapAction, index: int | None = None) -> ev.ButtonTapped:
    return ev.ButtonTapped(encode(SurveyTap(Channel.FRONT, action, journey.asked, index)), 99)


def buttons(effect: fx.Send | fx.Edit) -> list[str]:
    return [label for row in effect.buttons for label, _ in row]


def test_a_matrix_loads_and_its_statements_are_scale_items(tmp_path: Path) -> None:
    [item] = load_questionnaire(write(tmp_path, "ux.yaml", GRID)).items
    assert isinstance(item, MatrixItem)
    statements = item.statement_items()
    assert [s.id for s in statements] == ["ux.understood", "ux.clear", "ux.confusing"]
    assert all(isinstance(s, ScaleItem) and s.labels == item.labels for s in statements)
    assert [(s.construct_name, s.reverse) for s in statements] == [
        ("usability", False), ("usability", False), ("usability", True),
    ]  # fmt: skip


@pytest.mark.parametrize(
    ("change", "field", "message", "at"),
    [
        (
            ("{id: ux.clear,", "{id: ux.understood,"),
            "items[0].statements[1].id",
            "statement id 'ux.understood' is already used by statements[0]",
            "Its answers were clear",
        ),
        (
            ("{1: Disagree, 2: Neutral, 3: Agree}", "{1: Disagree, 2: Neutral}"),
            "items[0].labels",
            "labels must name every point from 1 to 3; missing [3]",
            "labels:",
        ),
    ],
)
def test_a_matrix_that_cannot_be_asked_is_told_at_its_line(
    tmp_path: Path, change: tuple[str, str], field: str, message: str, at: str
) -> None:
    text = GRID.replace(*change)
    with pytest.raises(StudyError) as caught:
        load_questionnaire(write(tmp_path, "ux.yaml", text))
    [problem] = caught.value.problems
    assert (problem.field, problem.message, problem.line) == (field, message, line_of(text, at))


def test_a_statement_id_may_not_be_an_items_and_no_condition_looks_at_a_matrix(
    tmp_path: Path,
) -> None:
    text = GRID + "  - {type: yes_no, id: ux.clear, text: Is it clear}\n"
    with pytest.raises(StudyError) as caught:
        load_questionnaire(write(tmp_path, "ux.yaml", text))
    [problem] = caught.value.problems
    assert problem.field == "items[0].statements[1].id"
    assert problem.message == "statement id 'ux.clear' is already used by items[1]"
    text = GRID + "  - {type: yes_no, id: ux.why, text: Why not, when: {item: ux.grid, equals: 1}}"
    with pytest.raises(StudyError) as caught:
        load_questionnaire(write(tmp_path, "ux.yaml", text + "\n"))
    [problem] = caught.value.problems
    assert problem.message == "'ux.grid' is a matrix: a condition needs one answer"


def test_a_matrixs_statements_and_labels_in_another_language(tmp_path: Path) -> None:
    text = GRID + (
        "translations:\n  it:\n    title: La tua esperienza\n    items:\n      ux.grid:\n"
        "        text: Quanto sei d'accordo?\n        labels: {1: In disaccordo}\n"
        "        statements: {ux.clear: Le risposte erano chiare}\n"
    )
    instrument = load_questionnaire(write(tmp_path, "ux.yaml", text))
    [item] = instrument.in_language("it").items
    assert isinstance(item, MatrixItem)
    assert [s.text for s in item.statements][1] == "Le risposte erano chiare"
    assert item.labels[1] == "In disaccordo"
    assert instrument.missing_in("it") == ["ux.grid labels", "ux.grid statements"]
    wrong = text.replace("{ux.clear: Le", "{ux.nothing: Le")
    with pytest.raises(StudyError) as caught:
        load_questionnaire(write(tmp_path, "ux.yaml", wrong))
    [problem] = caught.value.problems
    assert problem.message == "'ux.grid' has no statement 'ux.nothing'"


def test_each_statement_is_answered_in_the_same_message_and_stored_as_its_own_item() -> None:
    journey = at_matrix()
    first = run(GRIDDED, journey, tap(journey, TapAction.ANSWER, 2), 5.0)
    [edit] = of(first.effects, fx.Edit)
    assert edit.message_id == 99
    assert "✓ The assistant understood me — Agree\n▶ Its answers were clear" in edit.text
    assert "· It confused me" in edit.text
    assert buttons(edit) == ["1 · Disagree", "2 · Neutral", "3 · Agree", "↩ Undo"]
    assert not of(first.effects, fx.RecordResponse)  # recorded together, after the last
    journey = first.journey
    assert Journey.from_json(journey.to_json()) == journey  # a restart keeps the answers
    undone = run(GRIDDED, journey, tap(journey, TapAction.UNDO), 6.0)
    [edit] = of(undone.effects, fx.Edit)
    assert "▶ The assistant understood me" in edit.text and "↩ Undo" not in buttons(edit)
    journey = undone.journey
    for point in (1, 2, 0):
        step = run(GRIDDED, journey, tap(journey, TapAction.ANSWER, point), 7.0)
        journey = step.journey
    stored = of(step.effects, fx.RecordResponse)
    assert [(r.questionnaire_id, r.item_id, r.value, r.label, r.status) for r in stored] == [
        ("q", "ux.understood", 2, "Neutral", AnswerStatus.ANSWERED),
        ("q", "ux.clear", 3, "Agree", AnswerStatus.ANSWERED),
        ("q", "ux.confusing", 1, "Disagree", AnswerStatus.ANSWERED),
    ]
    [edit] = of(step.effects, fx.Edit)
    assert "Again?" in edit.text  # the next item, in the same message


def test_a_typed_number_answers_the_current_statement_and_other_text_is_refused() -> None:
    journey = at_matrix()
    refused = run(GRIDDED, journey, ev.TextReceived("7"))
    assert [s.text for s in of(refused.effects, fx.Send)] == [
        "Please tap one of the buttons above, or type a number from 1 to 3."
    ]
    typed = run(GRIDDED, journey, ev.TextReceived("3"))
    assert of(typed.effects, fx.RemoveButtons) == [fx.RemoveButtons(99)]
    [again] = of(typed.effects, fx.Send)
    assert "✓ The assistant understood me — Agree" in again.text and again.remember
    assert not of(typed.effects, fx.RecordResponse)


def test_old_and_forged_taps_change_nothing() -> None:
    journey = at_matrix()
    for data in (tap(journey, TapAction.ANSWER, 5), tap(journey, TapAction.UNDO)):
        again = run(GRIDDED, journey, data)
        assert of(again.effects, fx.Toast) == [fx.Toast("Your answer was already recorded.")]
        assert again.journey.survey == journey.survey


def test_a_skipped_matrix_skips_each_statement() -> None:
    bundle = matrix_bundle(required=False)
    journey = at_matrix(bundle)
    skipped = run(bundle, journey, tap(journey, TapAction.SKIP))
    stored = of(skipped.effects, fx.RecordResponse)
    assert [(r.item_id, r.status) for r in stored] == [
        ("ux.understood", AnswerStatus.SKIPPED),
        ("ux.clear", AnswerStatus.SKIPPED),
        ("ux.confusing", AnswerStatus.SKIPPED),
    ]


def test_the_codebook_has_a_row_per_statement_as_a_scale_item() -> None:
    [grid] = GRIDDED.questionnaires["q"].model_dump(by_alias=True)["items"][:1]
    rows = stored_items(grid)
    assert [(r["id"], r["type"], r["construct"], r["reverse"]) for r in rows] == [
        ("ux.understood", "scale", "usability", False),
        ("ux.clear", "scale", "usability", False),
        ("ux.confusing", "scale", "usability", True),
    ]
    assert rows[0]["text"] == "The assistant understood me (matrix ux.grid: How much do you agree?)"


def test_simulated_participants_answer_each_statement_by_its_own_setting() -> None:
    [grid] = GRIDDED.questionnaires["q"].items[:1]
    assert isinstance(grid, MatrixItem)
    understood, clear, _ = grid.statement_items()
    settings = Answers.model_validate({"profiles": {"a": {"ux.clear": 2.8, "scale": 1.2}}})
    plan = Simulation(answers=settings)
    rng = random.Random(3)

    def mean(statement: ScaleItem) -> float:
        values = [v for v, _ in statement.choices()]
        question = Question("", statement, None)
        return fmean(
            values[ScriptedAnswers(rng).choose(question, 3, plan, "a")] for _ in range(300)
        )

    assert mean(clear) > 2.5 and mean(understood) < 1.5


def test_annotation_jobs_refuse_a_matrix(tmp_path: Path) -> None:
    (tmp_path / "questionnaires").mkdir()
    (tmp_path / "questionnaires" / "ux.yaml").write_text(GRID)
    (tmp_path / "jobs").mkdir()
    job = "id: rate\ntitle: Rate\nrate:\n  session: [ux]\nannotators: 1\n"
    (tmp_path / "jobs" / "rate.yaml").write_text(job + "brief: {guidelines: Read it.}\n")
    study = tmp_path / "study.yaml"
    study.write_text(
        "id: mini\ntitle: Mini\ntexts: {welcome: Hi, consent: Agree, declined: Bye}\n"
        "systems:\n  - {type: demo, id: shop-v1, variant: v1}\nscenarios: [xrec-recommend]\n"
        "annotation_jobs: [rate]\n"
    )
    with pytest.raises(StudyError) as caught:
        load_study(study)
    [problem] = [str(p) for p in caught.value.problems]
    assert "item 'ux.grid' of 'ux' is a matrix: annotators are asked" in problem


def test_check_knows_statements_as_the_studys_items(tmp_path: Path) -> None:
    """A statement's id is an item id of the study (another questionnaire may not use it),
    and a simulation setting may name it (checked against the matrix's scale)."""
    (tmp_path / "scenarios").mkdir()
    (tmp_path / "questionnaires").mkdir()
    (tmp_path / "questionnaires" / "ux.yaml").write_text(GRID)
    other = "id: more\ntitle: More\nitems:\n  - {type: yes_no, id: ux.clear, text: Is it clear}\n"
    (tmp_path / "questionnaires" / "more.yaml").write_text(other)
    (tmp_path / "scenarios" / "dinner.yaml").write_text(
        "id: dinner\ntitle: Dinner\nbrief: Find a place to eat.\npost_task: [ux, more]\n"
        "simulation:\n  answers:\n    profiles:\n      bistro-a: {ux.understood: 9}\n"
    )
    (tmp_path / "study.yaml").write_text(
        "id: food\ntitle: Food\ntexts: {welcome: Hi, consent: Do you agree, declined: Bye}\n"
        "systems:\n  - {type: demo, id: bistro-a}\nscenarios: [dinner]\n"
    )
    with pytest.raises(StudyError) as caught:
        load_study(tmp_path / "study.yaml")
    told = sorted((p.file.name, p.line, p.message) for p in caught.value.problems)
    assert told == [
        ("dinner.yaml", 8, "a mean of 9 is off the scale of item 'ux.understood' (1 to 3)"),
        ("more.yaml", 4, f"item id 'ux.clear' is also used by questionnaire 'ux'"
         f" ({tmp_path / 'questionnaires' / 'ux.yaml'}:{line_of(GRID, 'ux.clear')}); answers are"
         " stored by item id, so"
         " every item of a study needs its own id"),
    ]  # fmt: skip


def test_an_abandoned_matrix_keeps_the_statements_answered_so_far() -> None:
    """A rating beside the chat that the next reply overtakes: what was answered stays."""
    journey = at_matrix()
    journey = run(GRIDDED, journey, tap(journey, TapAction.ANSWER, 2)).journey
    assert journey.survey is not None
    rows = asking.abandon(GRIDDED, journey.survey)
    assert [(r.item_id, r.value, r.status) for r in rows if isinstance(r, fx.RecordResponse)] == [
        ("ux.understood", 3, AnswerStatus.ANSWERED),
        ("ux.clear", None, AnswerStatus.MISSING),
        ("ux.confusing", None, AnswerStatus.MISSING),
        ("q.again", None, AnswerStatus.MISSING),
    ]


def _long_grid(size: int) -> str:
    """GRID with statements of ``size`` characters each."""
    text = GRID
    for words in ("The assistant understood me", "Its answers were clear", "It confused me"):
        text = text.replace(f"text: {words}", f"text: {(words + ' ') * (size // len(words))}")
    return text


def test_a_matrix_that_could_pass_telegrams_4096_characters_is_refused_at_its_line(
    tmp_path: Path,
) -> None:
    """Three statements of about 1,400 characters: the message with every statement and its
    answer could not be sent (Telegram refuses a text over 4,096 characters)."""
    text = _long_grid(1400)
    with pytest.raises(StudyError) as caught:
        load_questionnaire(write(tmp_path, "ux.yaml", text))
    [problem] = caught.value.problems
    assert (problem.field, problem.line) == ("items[0].statements", line_of(text, "statements:"))
    assert problem.message.startswith("this matrix's message could be ")
    assert problem.message.endswith(
        " characters long, over Telegram's 4,096: shorten its statements or split it in two"
    )
    fits = _long_grid(1200)  # fits in its own words, not in Italian's longer ones
    longer = "Le risposte erano chiare " * 70
    italian = (
        fits
        + "translations:\n  it:\n    items:\n      ux.grid:\n"
        + f"        statements: {{ux.clear: {longer}}}\n"
    )
    load_questionnaire(write(tmp_path, "ux.yaml", fits))
    with pytest.raises(StudyError) as caught:
        load_questionnaire(write(tmp_path, "ux.yaml", italian))
    [problem] = caught.value.problems
    assert problem.field == "items[0].statements" and " (in it) " in problem.message


def test_the_longest_message_of_a_matrix_is_within_its_bound() -> None:
    """Through the engine, statement after statement: every message the matrix is shown in
    is no longer than ``matrix_message_length`` says, which stays under Telegram's limit."""
    grid = yaml.safe_load(_long_grid(1200))["items"][0]
    grid["labels"] = {1: "I disagree with this entirely", 2: "Neither", 3: "I agree entirely"}
    instrument = Questionnaire.model_validate({"id": "q", "title": "Rating", "items": [grid]})
    [item] = instrument.items
    assert isinstance(item, MatrixItem)
    bound = matrix_message_length(instrument.title, item, len(instrument.items))
    assert bound <= TELEGRAM_TEXT_LIMIT
    bundle = make_bundle().model_copy(update={"questionnaires": {"q": instrument}})
    journey = at_matrix(bundle)
    lengths = []
    for point in (0, 0, 0):
        step = run(bundle, journey, tap(journey, TapAction.ANSWER, point), 7.0)
        lengths += [len(e.text.encode("utf-16-le")) // 2 for e in of(step.effects, fx.Edit)]
        journey = step.journey
    assert lengths and max(lengths) <= bound
