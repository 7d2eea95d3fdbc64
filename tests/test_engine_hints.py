"""Every hint a participant can get instead of progress is recorded as a ``hinted`` event
with its kind, the question open (where there is one) and what they sent, as far as it may
be kept: the pilot report's "places a study confuses people" come from these events alone.
No Telegram, no database: the engine fed by hand."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from bot.core.vocabulary import EventKind, Hint
from bot.engine import effects as fx
from bot.engine import events as ev
from bot.engine.flow import step
from bot.engine.journey import Journey, Stage
from questionnaires.models import MultiChoiceItem, Questionnaire, RankingItem
from scenarios.models import StudyBundle
from tests.test_engine import BUNDLE, in_dialogue, make_bundle, questionnaire_journey, run


def _multi_choice_bundle() -> StudyBundle:
    bundle = make_bundle()
    ticks = MultiChoiceItem.model_validate(
        {
            "type": "multi_choice",
            "id": "q.liked",
            "text": "What did you like?",
            "options": [{"value": "speed", "label": "Speed"}, {"value": "tone", "label": "Tone"}],
        }
    )
    only = Questionnaire(id="q", title="Rating", items=(ticks,))
    return bundle.model_copy(update={"questionnaires": {"q": only}})


MULTI = _multi_choice_bundle()


def _ranking_bundle() -> StudyBundle:
    order = RankingItem.model_validate(
        {
            "type": "ranking",
            "id": "q.order",
            "text": "Put these in order",
            "options": [{"value": "speed", "label": "Speed"}, {"value": "tone", "label": "Tone"}],
        }
    )
    only = Questionnaire(id="q", title="Rating", items=(order,))
    return make_bundle().model_copy(update={"questionnaires": {"q": only}})


RANKED = _ranking_bundle()


def _at_consent() -> Journey:
    journey = run(BUNDLE, None, ev.StartCommand()).journey
    assert journey is not None and journey.stage is Stage.CONSENT
    return journey


def _at_comment() -> Journey:
    """In the questionnaire, at the free-text item (limit 20 characters)."""
    journey = questionnaire_journey()
    for _ in range(2):
        journey = run(BUNDLE, journey, ev.TextReceived("4")).journey
    assert journey is not None and journey.survey is not None
    return journey


def _at_ticks() -> Journey:
    done = run(MULTI, in_dialogue(MULTI), ev.DoneCommand()).journey
    return run(MULTI, done, ev.MessageSent(99)).journey


def _at_ranking() -> Journey:
    done = run(RANKED, in_dialogue(RANKED), ev.DoneCommand()).journey
    return run(RANKED, done, ev.MessageSent(99)).journey


AT_A = {"questionnaire": "q", "item": "q.a"}
Case = tuple[StudyBundle, Callable[[], Journey], ev.Event, dict[str, object], str | None]
CASES: dict[Hint, list[Case]] = {
    Hint.TAP_A_BUTTON: [
        (BUNDLE, questionnaire_journey, ev.TextReceived("great"), {**AT_A, "text": "great"}, "p1-1")
    ],
    Hint.PICK_OPTIONS: [
        (
            MULTI,
            _at_ticks,
            ev.TextReceived("speed"),
            {"questionnaire": "q", "item": "q.liked", "text": "speed"},
            "p1-1",
        )
    ],
    Hint.RANK_OPTIONS: [
        (
            RANKED,
            _at_ranking,
            ev.TextReceived("tone first"),
            {"questionnaire": "q", "item": "q.order", "text": "tone first"},
            "p1-1",
        )
    ],
    Hint.TEXT_TOO_LONG: [
        (
            BUNDLE,
            _at_comment,
            ev.TextReceived("x" * 25),
            {"questionnaire": "q", "item": "q.comment", "length": 25},  # not the text itself
            "p1-1",
        )
    ],
    Hint.QUESTION_PENDING: [(BUNDLE, questionnaire_journey, ev.DoneCommand(), AT_A, "p1-1")],
    Hint.TEXT_ONLY: [
        (BUNDLE, in_dialogue, ev.UnsupportedReceived("sticker"), {"sent": "sticker"}, "p1-1"),
        (
            BUNDLE,
            questionnaire_journey,
            ev.UnsupportedReceived("photo"),
            {**AT_A, "sent": "photo"},
            "p1-1",
        ),
    ],
    Hint.EDIT_IGNORED: [
        (BUNDLE, in_dialogue, ev.MessageEdited(), {}, "p1-1"),
        (BUNDLE, questionnaire_journey, ev.MessageEdited(), AT_A, "p1-1"),
    ],
    Hint.CONSENT_PENDING: [
        # Not agreed yet: nothing of what they wrote is kept.
        (BUNDLE, _at_consent, ev.TextReceived("who are you? I'm Anna"), {}, None),
        (BUNDLE, _at_consent, ev.UnsupportedReceived("photo"), {}, None),
    ],
    Hint.UNKNOWN_COMMAND: [
        (
            BUNDLE,
            questionnaire_journey,
            ev.UnknownCommand("/skip"),
            {**AT_A, "text": "/skip"},
            "p1-1",
        ),
        (BUNDLE, in_dialogue, ev.UnknownCommand("/menu"), {"text": "/menu"}, "p1-1"),
        (BUNDLE, _at_consent, ev.UnknownCommand("/anna_rossi"), {}, None),
    ],
}


def test_every_kind_of_hint_is_covered() -> None:
    assert set(CASES) == set(Hint)


@pytest.mark.parametrize(
    ("hint", "case"),
    [(hint, case) for hint, cases in CASES.items() for case in cases],
    ids=lambda value: value.value if isinstance(value, Hint) else "",
)
def test_a_hint_is_recorded_with_its_kind_place_and_what_was_sent(hint: Hint, case: Case) -> None:
    bundle, at, event, data, session = case
    journey = at()
    result = step(bundle, "p1", journey, event, 10.0)
    hinted = [e for e in result.effects if isinstance(e, fx.RecordEvent)]
    assert hinted == [fx.RecordEvent(EventKind.HINTED, session, {"hint": hint.value, **data})]
    sent = [e for e in result.effects if isinstance(e, fx.Send)]
    assert len(sent) == 1  # the hint itself, and no progress:
    assert not [e for e in result.effects if isinstance(e, fx.RecordResponse | fx.RecordUserTurn)]
    assert result.journey is not None and result.journey.stage is journey.stage
    assert result.journey.survey == journey.survey


def test_progress_records_no_hint() -> None:
    """A typed number answers a scale: progress, so no ``hinted`` event."""
    result = run(BUNDLE, questionnaire_journey(), ev.TextReceived("2"))
    assert not [e for e in result.effects if isinstance(e, fx.RecordEvent)]
