"""The ``ranking`` item: loading told at its file and line, its words in another language,
the taps the engine accepts (an option to the next place, the last one back, Done once
every option has its place), and what is stored."""

from __future__ import annotations

import random
from collections import Counter
from pathlib import Path

import pytest

from bot.engine import effects as fx
from bot.engine import events as ev
from bot.engine.callbacks import Channel, SurveyTap, TapAction, decode, encode
from bot.engine.journey import Journey
from bot.pilot.simulation.answering import Question, ScriptedAnswers
from bot.pilot.simulation.llm import named_order
from questionnaires.models import Questionnaire, RankingItem
from scenarios.loading import StudyError, load_questionnaire, load_study
from scenarios.models import StudyBundle
from scenarios.simulation import Answers, Simulation
from tests.test_engine import in_dialogue, make_bundle, of, run
from tests.test_loading import line_of, write

ORDER = """\
id: order
title: What matters
items:
  - type: ranking
    id: order.matters
    text: What matters most in a recommendation?
    options:
      - {value: price, label: The price}
      - {value: fit, label: How well it fits me}
      - {value: speed, label: A quick answer}
"""


def ranking_bundle() -> StudyBundle:
    instrument = Questionnaire.model_validate(
        {
            "id": "q",
            "title": "Rating",
            "items": [
                {
                    "type": "ranking",
                    "id": "q.order",
                    "text": "Put these in order",
                    "options": [
                        {"value": "price", "label": "Price"},
                        {"value": "fit", "label": "Fit"},
                        {"value": "speed", "label": "Speed"},
                    ],
                },
                {"type": "yes_no", "id": "q.again", "text": "Again?"},
            ],
        }
    )
    return make_bundle().model_copy(update={"questionnaires": {"q": instrument}})


RANKED = ranking_bundle()


def at_ranking() -> Journey:
    done = run(RANKED, in_dialogue(RANKED), ev.DoneCommand()).journey
    return run(RANKED, done, ev.MessageSent(99)).journey


def tap(journey: Journey, action: TapAction, index: int | None = None) -> ev.ButtonTapped:
    return ev.ButtonTapped(encode(SurveyTap(Channel.FRONT, action, journey.asked, index)), 99)


def buttons(effect: fx.Send | fx.Edit) -> list[str]:
    return [label for row in effect.buttons for label, _ in row]


def test_a_ranking_loads_with_its_options() -> None:
    options = [{"value": 1, "label": "A"}, {"value": "b", "label": "B"}]
    item = RankingItem.model_validate(
        {"type": "ranking", "id": "r", "text": "?", "options": options}
    )
    assert item.choices() == [(1, "A"), ("b", "B")]
    assert item.ranks("b,1") == {"b": 1, 1: 2}
    assert item.ranks("b") == {} and item.ranks(None) == {} and item.ranks("b,b") == {}


@pytest.mark.parametrize(
    ("extra", "field", "message", "at"),
    [
        (
            "      - {value: 'a,b', label: Both}\n",
            "items[0].options[3].value",
            "option value 'a,b' has a comma: the order is stored as values separated by commas",
            "{value: 'a,b'",
        ),
        (
            "".join(f"      - {{value: o{i}, label: O{i}}}\n" for i in range(8)),
            "items[0].options",
            "a ranking has at most 10 options, not 11: put more in order by other means (a choice"
            " of the few that matter)",
            "options:",
        ),
    ],
)
def test_a_ranking_that_cannot_be_asked_is_told_at_its_line(
    tmp_path: Path, extra: str, field: str, message: str, at: str
) -> None:
    text = ORDER + extra
    with pytest.raises(StudyError) as caught:
        load_questionnaire(write(tmp_path, "order.yaml", text))
    [problem] = caught.value.problems
    assert (problem.field, problem.message) == (field, message)
    assert problem.line == line_of(text, at)


def test_a_condition_cannot_look_at_a_ranking(tmp_path: Path) -> None:
    text = ORDER + (
        "  - type: yes_no\n    id: order.why\n    text: Why?\n"
        "    when: {item: order.matters, equals: price}\n"
    )
    with pytest.raises(StudyError) as caught:
        load_questionnaire(write(tmp_path, "order.yaml", text))
    [problem] = caught.value.problems
    assert problem.field == "items[1].when.item"
    assert problem.message == "'order.matters' is a ranking: a condition needs one answer"


def test_a_rankings_options_in_another_language_and_what_is_still_untranslated(
    tmp_path: Path,
) -> None:
    text = ORDER + (
        "translations:\n  it:\n    title: Cosa conta\n    items:\n      order.matters:\n"
        "        text: Cosa conta di più?\n        options: {price: Il prezzo, fit: Se fa per me}\n"
    )
    instrument = load_questionnaire(write(tmp_path, "order.yaml", text))
    [item] = instrument.in_language("it").items
    assert isinstance(item, RankingItem)
    assert [o.label for o in item.options] == ["Il prezzo", "Se fa per me", "A quick answer"]
    assert instrument.missing_in("it") == ["order.matters options"]


def test_the_taps_of_a_ranking_are_typed_button_data() -> None:
    for action, index in ((TapAction.RANK, 2), (TapAction.UNDO, None), (TapAction.DONE, None)):
        tapped = SurveyTap(Channel.FRONT, action, 7, index)
        assert decode(encode(tapped)) == tapped
    assert encode(SurveyTap(Channel.FRONT, TapAction.RANK, 7, 2)) == "r:7:2"
    assert decode("r:7") is None and decode("u:7:1") is None


def test_each_tap_moves_an_option_into_the_order_shown_in_the_same_message() -> None:
    journey = at_ranking()
    first = run(RANKED, journey, tap(journey, TapAction.RANK, 1), 5.0)
    [edit] = of(first.effects, fx.Edit)
    assert edit.message_id == 99
    assert "Your order:\n1. Fit" in edit.text
    assert buttons(edit) == ["Price", "Speed", "↩ Undo"]  # no Done before all are placed
    assert of(first.effects, fx.Toast) == [fx.Toast("1. Fit")]
    assert not of(first.effects, fx.RecordResponse)
    journey = first.journey
    second = run(RANKED, journey, tap(journey, TapAction.RANK, 2), 6.0)
    journey = second.journey
    third = run(RANKED, journey, tap(journey, TapAction.RANK, 0), 7.0)
    [edit] = of(third.effects, fx.Edit)
    assert "1. Fit\n2. Speed\n3. Price" in edit.text
    assert buttons(edit) == ["↩ Undo", "Done"]
    assert Journey.from_json(third.journey.to_json()) == third.journey  # survives a restart
    journey = third.journey
    done = run(RANKED, journey, tap(journey, TapAction.DONE), 8.0)
    [stored] = of(done.effects, fx.RecordResponse)
    assert (stored.item_id, stored.value, stored.text, stored.label) == (
        "q.order",
        None,
        "fit,speed,price",
        "Fit; Speed; Price",
    )
    [edit] = of(done.effects, fx.Edit)
    assert "Again?" in edit.text  # the next item, in the same message


def test_undo_takes_back_the_last_option_placed() -> None:
    journey = at_ranking()
    for index in (2, 0):
        journey = run(RANKED, journey, tap(journey, TapAction.RANK, index)).journey
    undone = run(RANKED, journey, tap(journey, TapAction.UNDO))
    [edit] = of(undone.effects, fx.Edit)
    assert "1. Speed" in edit.text and "2. Price" not in edit.text
    assert buttons(edit) == ["Price", "Fit", "↩ Undo"]
    journey = run(RANKED, undone.journey, tap(undone.journey, TapAction.UNDO)).journey
    assert journey.survey is not None and journey.survey.selected == ()
    [edit] = of(run(RANKED, journey, tap(journey, TapAction.RANK, 1)).effects, fx.Edit)
    assert "1. Fit" in edit.text


def test_old_forged_and_repeated_taps_are_answered_politely_and_change_nothing() -> None:
    journey = at_ranking()
    placed = run(RANKED, journey, tap(journey, TapAction.RANK, 1)).journey
    polite = fx.Toast("Your answer was already recorded.")
    for data in (
        tap(placed, TapAction.RANK, 1),  # already placed
        tap(placed, TapAction.RANK, 3),  # no such option
        tap(placed, TapAction.DONE),  # not every option placed yet
    ):
        again = run(RANKED, placed, data, 9.0)
        assert of(again.effects, fx.Toast) == [polite]
        assert again.journey.survey == placed.survey
        assert not of(again.effects, fx.RecordResponse) and not of(again.effects, fx.Edit)
    old = ev.ButtonTapped(f"r:{placed.asked - 1}:0", 99)
    stale = run(RANKED, placed, old, 9.0)
    assert stale.journey.survey == placed.survey and not of(stale.effects, fx.RecordResponse)
    assert of(stale.effects, fx.Toast)


def test_a_typed_message_during_a_ranking_gets_the_reminder() -> None:
    journey = at_ranking()
    typed = run(RANKED, journey, ev.TextReceived("1"))
    assert [s.text for s in of(typed.effects, fx.Send)] == [
        "Please tap the options in order, from first to last, then Done."
    ]
    assert not of(typed.effects, fx.RecordResponse)


def test_an_annotation_job_asks_no_ranking(tmp_path: Path) -> None:
    """An annotator's answers are ratings to compare; an order is not one."""
    (tmp_path / "questionnaires").mkdir()
    (tmp_path / "questionnaires" / "order.yaml").write_text(ORDER)
    (tmp_path / "jobs").mkdir()
    job = "id: rate\ntitle: Rate\nrate:\n  session: [order]\nannotators: 1\n"
    job += "brief: {guidelines: Read it.}\n"
    (tmp_path / "jobs" / "rate.yaml").write_text(job)
    study = tmp_path / "study.yaml"
    study.write_text(
        "id: mini\ntitle: Mini\ntexts: {welcome: Hi, consent: Agree, declined: Bye}\n"
        "systems:\n  - {type: demo, id: shop-v1, variant: v1}\nscenarios: [xrec-recommend]\n"
        "annotation_jobs: [rate]\n"
    )
    with pytest.raises(StudyError) as caught:
        load_study(study)
    [problem] = [str(p) for p in caught.value.problems]
    assert problem.startswith(f"{tmp_path / 'jobs' / 'rate.yaml'}:4: rate.session[0]: ")
    assert "item 'order.matters' of 'order' is a ranking: annotators are asked" in problem


def test_simulated_participants_rank_by_each_systems_weights() -> None:
    """Plackett–Luce: a system whose weights favour the price puts it first most often; a
    system without a setting gives every order alike."""
    [item] = RANKED.questionnaires["q"].items[:1]
    settings = Answers.model_validate({"profiles": {"a": {"q.order": {"price": 8, "fit": 1}}}})
    plan = Simulation(answers=settings)
    rng = random.Random(11)
    question = Question(item.text, item, None)

    def firsts(system: str) -> Counter[int]:
        orders = [ScriptedAnswers(rng).rank(question, plan, system) for _ in range(600)]
        assert all(sorted(order) == [0, 1, 2] for order in orders)
        assert system != "a" or all(order[-1] == 2 for order in orders)  # unnamed: last
        return Counter(order[0] for order in orders)

    assert firsts("a")[0] > 480  # 8 / 9 of them
    assert all(170 < n < 230 for n in firsts("b").values())


SETTINGS = """\
id: dinner
title: Dinner
brief: Find a place to eat.
post_task: [order]
simulation:
  answers:
    profiles:
      bistro-a:
        order.matters: 2.5
      bistro-b:
        order.matters: {price: 3, taste: 1}
"""


def test_check_tells_a_ranking_setting_that_cannot_be_used_at_its_line(tmp_path: Path) -> None:
    (tmp_path / "scenarios").mkdir()
    (tmp_path / "questionnaires").mkdir()
    (tmp_path / "scenarios" / "dinner.yaml").write_text(SETTINGS)
    (tmp_path / "questionnaires" / "order.yaml").write_text(ORDER)
    (tmp_path / "study.yaml").write_text(
        "id: food\ntitle: Food\ntexts: {welcome: Hi, consent: Do you agree, declined: Bye}\n"
        "systems:\n  - {type: demo, id: bistro-a}\n  - {type: demo, id: bistro-b}\n"
        "scenarios: [dinner]\n"
    )
    with pytest.raises(StudyError) as caught:
        load_study(tmp_path / "study.yaml")
    told = [(p.file.name, p.line, p.field, p.message) for p in caught.value.problems]
    assert told == [
        ("dinner.yaml", 9, "simulation.answers.profiles.bistro-a.order.matters",
         "item 'order.matters' is a ranking: give its options weights (the heaviest tends to"
         " come first), as {price: 3, fit: 1}, not 2.5"),
        ("dinner.yaml", 11, "simulation.answers.profiles.bistro-b.order.matters",
         "item 'order.matters' has no option 'taste' (its options: price, fit, speed)"),
    ]  # fmt: skip


def test_a_language_models_order_is_read_by_number_each_option_once() -> None:
    assert named_order("2, 3, 1", 3) == [1, 2, 0]
    assert named_order("3 first, then 3 again, 9 and 1", 3) == [2, 0]
