"""Ratings of single system replies, asked beside the chat without blocking it: the
participant may keep talking, and a rating not given is recorded as missing."""

from __future__ import annotations

from dataclasses import replace

from bot.core.vocabulary import Moment
from bot.engine import asking
from bot.engine import effects as fx
from bot.engine.callbacks import Channel, SurveyTap
from bot.engine.common import Doing, Result, scenario_of, stale_tap, texts_of
from bot.engine.journey import Journey
from bot.engine.questionnaire import apply_tap
from scenarios.models import StudyBundle


def drop(bundle: StudyBundle, journey: Journey) -> list[Doing]:
    """The previous reply's rating was not (fully) given: recorded as missing, never lost."""
    rating = journey.exchange_survey
    if rating is None:
        return []
    effects: list[Doing] = list(asking.abandon(bundle, rating))
    if rating.message_id is not None:
        title = asking.questionnaire(bundle, rating).title
        effects.append(fx.Edit(rating.message_id, f"{title} (turn {rating.turn}): –"))
    return effects


def ask(bundle: StudyBundle, journey: Journey, now: float) -> Result:
    """After a system reply: ask the scenario's exchange-level items about it."""
    effects = drop(bundle, journey)
    if journey.exchange_survey is not None:
        journey = journey.evolve(exchange_survey=None)
    scenario = scenario_of(bundle, journey)
    if not scenario.exchange:
        return journey, effects
    started = asking.start(
        bundle,
        moment=Moment.EXCHANGE,
        questionnaires=scenario.exchange,
        session_id=journey.session_id,
        seed=f"{journey.seed}:{journey.session_id}",
        asked=journey.asked + 1,
        now=now,
        turn=journey.turns,
        language=journey.language,
    )
    effects += started.records
    if started.survey is None:
        return journey, effects
    journey = journey.evolve(exchange_survey=started.survey, asked=started.survey.asked)
    texts = texts_of(bundle, journey)
    text, buttons = asking.render(bundle, started.survey, texts, Channel.EXCHANGE)
    return journey, [*effects, fx.Send(text, buttons, remember=True)]


def on_tap(bundle: StudyBundle, journey: Journey, tap: SurveyTap, now: float) -> Result:
    rating = journey.exchange_survey
    if tap.channel is not Channel.EXCHANGE or rating is None or tap.asked != rating.asked:
        return stale_tap(bundle, journey)
    outcome = apply_tap(bundle, journey, rating, tap, now)
    if outcome.asked is None:  # a toggle or the examples: the same item stays
        journey = replace(journey, exchange_survey=outcome.survey)
        return journey, outcome.effects
    effects = [*outcome.effects, *outcome.asked.records]
    following = outcome.asked.survey
    if following is None:
        title = asking.questionnaire(bundle, rating).title
        done: list[Doing] = []
        if rating.message_id:
            done.append(fx.Edit(rating.message_id, f"{title} (turn {rating.turn}) ✓"))
        return replace(journey, exchange_survey=None), [*effects, *done]
    following = replace(following, asked=journey.asked + 1, message_id=rating.message_id)
    journey = replace(journey, exchange_survey=following, asked=following.asked)
    texts = texts_of(bundle, journey)
    text, buttons = asking.render(bundle, following, texts, Channel.EXCHANGE)
    if following.message_id is not None:
        return journey, [*effects, fx.Edit(following.message_id, text, buttons)]
    return journey, [*effects, fx.Send(text, buttons, remember=True)]
