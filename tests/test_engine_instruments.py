"""Every kind of item and every moment an instrument is asked, fed to the pure engine."""

from __future__ import annotations

from dataclasses import replace

from bot.core.conversation import SystemReply
from bot.engine import effects as fx
from bot.engine import events as ev
from bot.engine.common import CONSENT_YES
from bot.engine.flow import Step, step
from bot.engine.journey import Journey, Stage
from questionnaires.models import Questionnaire
from scenarios.models import Scenario, Stimulus, Study, StudyBundle, Texts

TEXTS = Texts(welcome="Hello", consent="Agree?", declined="Bye")


def instrument(qid: str, *items: dict, **extra: object) -> Questionnaire:
    return Questionnaire.model_validate({"id": qid, "title": qid.upper(), "items": items, **extra})


KINDS = instrument(
    "kinds",
    {"type": "yes_no", "id": "k.yes", "text": "Any?"},
    {
        "type": "choice",
        "id": "k.pick",
        "text": "Which?",
        "when": {"item": "k.yes", "equals": 1},
        "options": [{"value": "red", "label": "Red"}, {"value": "blue", "label": "Blue"}],
    },
    {
        "type": "multi_choice",
        "id": "k.many",
        "text": "Wrong?",
        "options": [
            {"value": "off_topic", "label": "Off-topic"},
            {"value": "repetitive", "label": "Repetitive"},
            {"value": "ungrammatical", "label": "Ungrammatical"},
        ],
    },
    {"type": "thumbs", "id": "k.thumb", "text": "Good?"},
    {
        "type": "scale",
        "id": "k.check",
        "text": "Choose Disagree",
        "min": 1,
        "max": 3,
        "labels": {1: "Disagree", 2: "Neutral", 3: "Agree"},
        "attention": 1,
    },
)
RATE = instrument(
    "rate",
    {
        "type": "scale",
        "id": "r.ok",
        "text": "Rate it",
        "min": 1,
        "max": 3,
        "labels": {1: "Bad", 2: "Fine", 3: "Good"},
    },
)
SCREEN = instrument(
    "screen",
    {"type": "yes_no", "id": "s.native", "text": "Native speaker?"},
    eligible_if=[{"item": "s.native", "equals": 1}],
)


def bundle(**changes: object) -> StudyBundle:
    chat = Scenario(id="chat", title="Chat", brief="Talk.", post_task=("kinds",))
    rating = Scenario(
        id="rating",
        kind="rating",
        title="Rate",
        brief="Rate these.",
        stimuli="rows.csv",
        stimulus_template="MR: {mr}\nText: {ref}",
        rate_with=("rate",),
    )
    study = Study(
        id="s",
        title="S",
        texts=TEXTS,
        systems=({"type": "demo", "id": "sys"},),
        scenarios=("chat", "rating"),
    )
    made = StudyBundle(
        study=study,
        scenarios={"chat": chat, "rating": rating},
        questionnaires={"kinds": KINDS, "rate": RATE, "screen": SCREEN},
        stimuli={
            "rating": (
                Stimulus(id="r1", fields={"mr": "a", "ref": "A"}),
                Stimulus(id="r2", fields={"mr": "b", "ref": "B"}),
            )
        },
    )
    study_changes = {k: v for k, v in changes.items() if k in Study.model_fields}
    scenario_changes = {k: v for k, v in changes.items() if k in Scenario.model_fields}
    if study_changes:
        made = made.model_copy(update={"study": study.model_copy(update=study_changes)})
    if scenario_changes:
        scenarios = {**made.scenarios, "chat": chat.model_copy(update=scenario_changes)}
        made = made.model_copy(update={"scenarios": scenarios})
    return made


def of(result: Step, kind: type) -> list:
    return [e for e in result.effects if isinstance(e, kind)]


def drive(b: StudyBundle, journey: Journey | None, *events: ev.Event) -> tuple[Journey, list]:
    effects: list = []
    for event in events:
        result = step(b, "p1", journey, event, 1.0)
        journey = result.journey
        effects += result.effects
        for effect in result.effects:  # the driver's answer to a remembered message
            if isinstance(effect, fx.Send) and effect.remember:
                result = step(b, "p1", journey, ev.MessageSent(50), 1.0)
                journey = result.journey
    assert journey is not None
    return journey, effects


def of_type(effects: list, kind: type) -> list:
    return [e for e in effects if isinstance(e, kind)]


def started(b: StudyBundle, tasks=(("chat", "sys"),)) -> Journey:
    """Consented, and assigned ``tasks`` (the study's design plays them all, in order)."""
    study = b.study.model_copy(update={"scenarios": tuple(s for s, _ in tasks)})
    journey, _ = drive(
        b.model_copy(update={"study": study}), None, ev.StartCommand(), ev.ButtonTapped(CONSENT_YES)
    )
    assert [(t.scenario_id, t.system_id) for t in journey.tasks] == list(tasks)
    return journey


def tap(journey: Journey, index: int, action: str = "a", channel: str = "") -> ev.ButtonTapped:
    survey = journey.exchange_survey if channel else journey.survey
    suffix = "" if action in ("d", "s", "h") else f":{index}"
    return ev.ButtonTapped(f"{channel}{action}:{survey.asked}{suffix}")


def responses(effects: list) -> list[tuple]:
    return [
        (r.item_id, r.value, r.text, r.label, r.status)
        for r in effects
        if isinstance(r, fx.RecordResponse)
    ]


def test_every_item_kind_with_skip_logic_and_an_attention_check() -> None:
    b = bundle()
    journey, _ = drive(b, started(b), ev.DoneCommand())
    buttons = of(step(b, "p1", started(b), ev.DoneCommand(), 1.0), fx.Send)[-1].buttons
    assert [label for row in buttons for label, _ in row] == ["Yes", "No"]  # one row
    journey, effects = drive(b, journey, tap(journey, 1))  # "No": the choice item is skipped
    item = journey.survey
    assert (
        item is not None
        and b.questionnaire("kinds").items[item.order[item.position]].id == "k.many"
    )
    journey, toggles = drive(  # toggling keeps the item (and its showing number)
        b, journey, tap(journey, 0, "m"), tap(journey, 2, "m"), tap(journey, 0, "m")
    )
    redraw = [e for e in toggles if isinstance(e, fx.Edit)][-1]
    assert [label for row in redraw.buttons for label, _ in row][:3] == [
        "☐ Off-topic",
        "☐ Repetitive",
        "☑ Ungrammatical",
    ]
    for action, index in (("d", 0), ("a", 0), ("a", 2)):
        journey, more = drive(b, journey, tap(journey, index, action))
        effects += more
    assert responses(effects) == [
        ("k.yes", 0, None, "No", "answered"),
        ("k.pick", None, None, None, "not_asked"),
        ("k.many", None, "ungrammatical", "Ungrammatical", "answered"),
        ("k.thumb", 1, None, "👍", "answered"),
        ("k.check", 3, None, "Agree", "answered"),
    ]
    check = [r for r in effects if isinstance(r, fx.RecordResponse)][-1]
    assert check.attention_ok is False
    assert journey.stage is Stage.FINISHED


def test_a_required_multiple_choice_needs_one_option() -> None:
    many = KINDS.items[2].model_copy(update={"required": True})
    strict = KINDS.model_copy(update={"items": (many,)})
    b = bundle()
    b = b.model_copy(update={"questionnaires": {**b.questionnaires, "kinds": strict}})
    journey, _ = drive(b, started(b), ev.DoneCommand())
    result = step(b, "p1", journey, tap(journey, 0, "d"), 2.0)
    assert of(result, fx.Toast) == [fx.Toast("Please choose at least one option.")]
    assert not of(result, fx.RecordResponse)


def test_randomized_order_is_seeded_keeps_conditions_and_is_stored() -> None:
    shuffled = KINDS.model_copy(update={"randomize": True})
    b = bundle()
    b = b.model_copy(update={"questionnaires": {**b.questionnaires, "kinds": shuffled}})
    orders = set()
    for seed in range(12):
        journey = replace(started(b), seed=str(seed))
        result = step(b, "p1", journey, ev.DoneCommand(), 1.0)
        [order_event] = [e for e in of(result, fx.RecordEvent) if e.kind == "questionnaire_order"]
        order = order_event.data["order"]
        assert order.index("k.pick") == order.index("k.yes") + 1  # the condition stays behind
        again = step(b, "p1", journey, ev.DoneCommand(), 1.0)
        assert of(again, fx.RecordEvent) == of(result, fx.RecordEvent)  # reproducible
        orders.add(tuple(order))
    assert len(orders) > 3


def test_screening_releases_the_ineligible_and_assigns_the_others() -> None:
    b = bundle(screening=("screen",))
    journey, _ = drive(b, None, ev.StartCommand(), ev.ButtonTapped(CONSENT_YES))
    assert journey.stage is Stage.QUESTIONNAIRE and journey.survey.moment == "screening"
    out, effects = drive(b, journey, tap(journey, 1))
    assert out.stage is Stage.INELIGIBLE
    assert (
        "looking for other participants" in [e for e in effects if isinstance(e, fx.Send)][-1].text
    )
    assert responses(effects) == [("s.native", 0, None, "No", "answered")]
    assert not any(isinstance(e, fx.OpenSession) for e in effects)
    later = step(b, "p1", out, ev.TextReceived("hi"), 2.0)
    assert "looking for other participants" in of(later, fx.Send)[0].text
    ok, effects = drive(b, journey, tap(journey, 0))
    assert ok.stage is Stage.DIALOGUE and ok.tasks and of_type(effects, fx.OpenSession)


def test_exchange_ratings_never_block_the_chat_and_missing_ones_are_recorded() -> None:
    b = bundle(exchange=("rate",))
    journey = started(b)
    journey, _ = drive(b, journey, ev.TextReceived("hi"))
    journey, effects = drive(b, journey, ev.SystemReplied(SystemReply(("hello",)), 1.0))
    rating = [e for e in effects if isinstance(e, fx.Send)][-1]
    assert rating.remember and rating.buttons[0][0][1].startswith("xa:")
    journey, effects = drive(b, journey, ev.TextReceived("next"))  # not blocked
    assert any(isinstance(e, fx.CallSystem) for e in effects)
    journey, effects = drive(b, journey, ev.SystemReplied(SystemReply(("again",)), 1.0))
    missing = [r for r in effects if isinstance(r, fx.RecordResponse)]
    assert [(r.item_id, r.turn, r.status, r.scope) for r in missing] == [
        ("r.ok", 1, "missing", "p1-1#turn1")
    ]
    journey, effects = drive(b, journey, tap(journey, 2, channel="x"))
    [given] = [r for r in effects if isinstance(r, fx.RecordResponse)]
    assert (given.value, given.turn, given.scope) == (3, 2, "p1-1#turn2")
    assert journey.exchange_survey is None and journey.stage is Stage.DIALOGUE
    stale = step(b, "p1", journey, ev.ButtonTapped(rating.buttons[0][0][1]), 2.0)
    assert of(stale, fx.Toast) == [fx.Toast("Your answer was already recorded.")]


def test_a_rating_task_asks_about_every_row_then_ends_completed() -> None:
    b = bundle()
    journey = started(b, tasks=(("rating", "sys"),))
    assert journey.stage is Stage.QUESTIONNAIRE and journey.survey.stimulus_id == "r1"
    effects: list = []
    for value in (2, 0):
        journey, more = drive(b, journey, tap(journey, value))
        effects += more
    rows = [(r.stimulus_id, r.value, r.scope) for r in effects if isinstance(r, fx.RecordResponse)]
    assert rows == [("r1", 3, "p1-1#r1"), ("r2", 1, "p1-1#r2")]
    shown = [e.text for e in effects if isinstance(e, fx.Send)]
    assert "(2/2)\n\nMR: b\nText: B" in shown
    assert [e for e in effects if isinstance(e, fx.CloseSession)] == [
        fx.CloseSession("p1-1", "completed", True)
    ]
    assert journey.stage is Stage.FINISHED


def test_several_tasks_then_a_post_study_questionnaire() -> None:
    b = bundle(post_study=("rate",))
    b = b.model_copy(
        update={
            "scenarios": {
                **b.scenarios,
                "chat": b.scenarios["chat"].model_copy(update={"post_task": ()}),
            }
        }
    )
    journey = started(b, tasks=(("chat", "sys"), ("rating", "sys")))
    journey, effects = drive(b, journey, ev.DoneCommand())
    assert journey.task_index == 1 and journey.survey.moment == "rating"
    for _ in range(2):
        journey, _ = drive(b, journey, tap(journey, 0))
    assert journey.survey.moment == "post_study" and journey.survey.session_id is None
    journey, effects = drive(b, journey, tap(journey, 1))
    assert [(r.scope, r.session_id) for r in effects if isinstance(r, fx.RecordResponse)] == [
        ("study", None)
    ]
    assert journey.stage is Stage.FINISHED


def _openings(result: Step) -> list[str]:
    """Each message's last paragraph (the agreement's question comes after the note on
    withdrawing, right above its buttons)."""
    return [s.text.split("\n\n")[-1] for s in of(result, fx.Send)]


def test_the_participants_language_picks_the_texts() -> None:
    b = bundle(translations={"it": {"welcome": "Ciao", "consent": "Accetti?"}})
    result = step(b, "p1", None, ev.StartCommand(language="it-IT"), 1.0)
    assert _openings(result) == ["Ciao", "Accetti?"]
    english = step(b, "p1", None, ev.StartCommand(language="de"), 1.0)
    assert _openings(english) == ["Hello", "Agree?"]
    assert Journey.from_json(result.journey.to_json()) == result.journey
