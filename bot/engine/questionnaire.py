"""The questionnaire in front of the participant, one item at a time in one message edited
in place: the mechanics every phase that asks questions shares (screening, after a task,
after the study, each row of a rating task). What follows the last item is the phase's own
business: it passes ``after``, called with the journey and whether the screening failed.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace

from bot.core.vocabulary import AnswerStatus, Hint, Moment, SessionState
from bot.engine import asking, preference
from bot.engine import effects as fx
from bot.engine import events as ev
from bot.engine.asking import Asked, Survey
from bot.engine.callbacks import Channel, SurveyTap, TapAction, encode
from bot.engine.common import Doing, Result, silence, stale_tap, texts_of
from bot.engine.hints import asked_now, hinted
from bot.engine.journey import Journey, Stage
from questionnaires.models import MatrixItem, MultiChoiceItem, RankingItem, TextItem
from scenarios.models import StudyBundle, Texts

After = Callable[[Journey, bool], Result]
"""What follows the last item: ``after(journey, ineligible)``."""

_SESSION_STATE = {
    Moment.POST_TASK: SessionState.QUESTIONNAIRE,
    Moment.RATING: SessionState.DIALOGUE,
}
_WITH_INTRO = (Moment.SCREENING, Moment.POST_TASK, Moment.POST_STUDY)
"""Moments whose questionnaires are introduced (a rating task's rows and the ratings beside
a chat come too often for it)."""


def begin(
    bundle: StudyBundle,
    journey: Journey,
    moment: Moment,
    questionnaires: tuple[str, ...],
    session_id: str | None,
    now: float,
    after: After,
    *,
    stimulus_id: str | None = None,
) -> Result:
    started = asking.start(
        bundle,
        moment=moment,
        questionnaires=questionnaires,
        session_id=session_id,
        seed=f"{journey.seed or journey.participant}:{session_id or moment.value}",
        asked=journey.asked + 1,
        now=now,
        stimulus_id=stimulus_id,
        language=journey.language,
    )
    effects: list[Doing] = list(started.records)
    if started.survey is None:
        new, more = after(replace(journey, survey=None), started.ineligible)
        return new, effects + more
    journey = replace(
        journey, stage=Stage.QUESTIONNAIRE, survey=started.survey, asked=started.survey.asked
    )
    if session_id is not None and moment in _SESSION_STATE:
        effects.append(fx.SetSessionState(session_id, _SESSION_STATE[moment]))
    if frame := introduction(bundle, journey, started.survey):
        effects.append(fx.Send(frame))
    effects.append(show(bundle, journey, in_place=False))
    return journey, effects


def introduction(bundle: StudyBundle, journey: Journey, survey: Survey) -> str:
    """What is said before a questionnaire's first item: for the first questionnaire of a
    moment, the study's words for the moment (after a task: the conversation just had; after
    the study: the last task is over), then the instrument's own ``intro``."""
    if survey.moment not in _WITH_INTRO:
        return ""
    texts = texts_of(bundle, journey)
    moment = {
        Moment.POST_TASK: texts.questionnaire_intro,
        Moment.POST_STUDY: texts.post_study_intro,
    }
    first = survey.questionnaire_index == 0
    parts = [
        moment.get(survey.moment, "") if first else "",
        asking.questionnaire(bundle, survey).intro,
    ]
    return "\n\n".join(part for part in parts if part)


def show(bundle: StudyBundle, journey: Journey, *, in_place: bool) -> fx.Send | fx.Edit:
    survey = journey.survey
    assert survey is not None
    text, buttons = asking.render(bundle, survey, texts_of(bundle, journey))
    if in_place and survey.message_id is not None:
        return fx.Edit(survey.message_id, text, buttons)
    return fx.Send(text, buttons, remember=True)


@dataclass(frozen=True)
class TapOutcome:
    """A tap on a questionnaire button: the survey as it stands, what to do, and (when an
    answer was recorded) where the survey went next."""

    survey: Survey
    effects: list[Doing]
    asked: Asked | None = None


def apply_tap(
    bundle: StudyBundle, journey: Journey, survey: Survey, tap: SurveyTap, now: float
) -> TapOutcome:
    return tap_with(bundle, texts_of(bundle, journey), survey, tap, now)


def tap_with(
    bundle: StudyBundle, texts: Texts, survey: Survey, tap: SurveyTap, now: float
) -> TapOutcome:
    """A tap on the survey's current item, in the given words (an annotator has no journey)."""
    if encode(tap) not in asking.offered(bundle, survey, texts, tap.channel):
        # Only what the message offered: a forged or outdated tap changes nothing.
        return TapOutcome(survey, [fx.Toast(texts.already_recorded)])
    item = asking.current_item(bundle, survey)
    options = asking.choices(item)
    if tap.action is TapAction.HELP:
        return TapOutcome(survey, [fx.Toast(), fx.Send(item.help_text() or "")])
    if tap.action is TapAction.SKIP and not item.required:
        skipped = asking.answer(bundle, survey, now, status=AnswerStatus.SKIPPED)
        return TapOutcome(survey, [fx.Toast()], skipped)
    if isinstance(item, RankingItem) and tap.action in _RANKING:
        return _rank(bundle, texts, survey, tap, now)
    if isinstance(item, MatrixItem) and tap.index is not None:
        return _statement(bundle, texts, survey, tap, tap.index, now)
    if isinstance(item, MatrixItem) and tap.action is TapAction.UNDO:
        back = replace(survey, selected=survey.selected[:-1])
        return TapOutcome(back, [fx.Toast(), *_redrawn(bundle, texts, back, tap.channel)])
    if isinstance(item, MultiChoiceItem) and tap.action is TapAction.TOGGLE:
        if tap.index is None or not 0 <= tap.index < len(options):
            return TapOutcome(survey, [fx.Toast(texts.already_recorded)])
        chosen = set(survey.selected) ^ {tap.index}
        toggled = replace(survey, selected=tuple(sorted(chosen)))
        text, buttons = asking.render(bundle, toggled, texts, tap.channel)
        redraw: list[Doing] = (
            [fx.Edit(survey.message_id, text, buttons)] if survey.message_id else []
        )
        return TapOutcome(toggled, [fx.Toast(), *redraw])
    if isinstance(item, MultiChoiceItem) and tap.action is TapAction.DONE:
        if item.required and not survey.selected:
            return TapOutcome(survey, [fx.Toast(texts.pick_at_least_one)])
        values = [options[i][0] for i in survey.selected]
        labels = "; ".join(options[i][1] for i in survey.selected)
        codes = ",".join(str(v) for v in values)
        asked = asking.answer(bundle, survey, now, text=codes or None, label=labels or None)
        return TapOutcome(survey, [fx.Toast()], asked)
    if tap.action is TapAction.ANSWER and tap.index is not None and 0 <= tap.index < len(options):
        value, label = options[tap.index]
        asked = asking.answer(bundle, survey, now, value=value, label=label)
        return TapOutcome(survey, [fx.Toast(label)], asked)
    return TapOutcome(survey, [fx.Toast(texts.already_recorded)])


_RANKING = (TapAction.RANK, TapAction.UNDO, TapAction.DONE)


def _rank(
    bundle: StudyBundle, texts: Texts, survey: Survey, tap: SurveyTap, now: float
) -> TapOutcome:
    """A ranking's tap (one the message offered): an option to the next place, the last
    one back, or the order confirmed once every option has its place."""
    options = asking.choices(asking.current_item(bundle, survey))
    if tap.action is TapAction.DONE:
        values = [str(options[i][0]) for i in survey.selected]
        labels = "; ".join(options[i][1] for i in survey.selected)
        asked = asking.answer(bundle, survey, now, text=",".join(values), label=labels)
        return TapOutcome(survey, [fx.Toast()], asked)
    if tap.action is TapAction.RANK and tap.index is not None:
        placed = replace(survey, selected=(*survey.selected, tap.index))
        toast = fx.Toast(f"{len(placed.selected)}. {options[tap.index][1]}")
    else:
        placed = replace(survey, selected=survey.selected[:-1])
        toast = fx.Toast()
    return TapOutcome(placed, [toast, *_redrawn(bundle, texts, placed, tap.channel)])


def _redrawn(bundle: StudyBundle, texts: Texts, survey: Survey, channel: Channel) -> list[Doing]:
    """The survey's message edited to show the item as it now stands."""
    if survey.message_id is None:
        return []
    text, buttons = asking.render(bundle, survey, texts, channel)
    return [fx.Edit(survey.message_id, text, buttons)]


def _statement(
    bundle: StudyBundle, texts: Texts, survey: Survey, tap: SurveyTap, index: int, now: float
) -> TapOutcome:
    """A matrix's current statement answered with the point at ``index``: the message
    shows the next statement, or, after the last, every statement is recorded."""
    item = asking.current_item(bundle, survey)
    assert isinstance(item, MatrixItem)
    label = asking.choices(item)[index][1]
    answered = replace(survey, selected=(*survey.selected, index))
    if len(answered.selected) == len(item.statements):
        return TapOutcome(
            answered, [fx.Toast(label)], asking.answer_statements(bundle, answered, now)
        )
    return TapOutcome(answered, [fx.Toast(label), *_redrawn(bundle, texts, answered, tap.channel)])


def _continue(
    bundle: StudyBundle,
    journey: Journey,
    asked: Asked,
    now: float,
    after: After,
    *,
    in_place: bool,
) -> Result:
    survey = journey.survey
    assert survey is not None
    effects: list[Doing] = list(asked.records)
    effects += preference.votes(bundle, journey, survey, asked.records)
    if not in_place and survey.message_id is not None:  # answered by typing: buttons done
        effects.append(fx.RemoveButtons(survey.message_id))
    if asked.survey is None:
        if in_place and survey.message_id is not None:
            # The last question stays on screen, without buttons that could be tapped again.
            title = asking.questionnaire(bundle, survey).title
            effects.append(fx.Edit(survey.message_id, f"{title} ✓"))
        new, more = after(replace(journey, survey=None), asked.ineligible)
        return new, effects + more
    following = replace(asked.survey, asked=journey.asked + 1)
    frame = ""
    if following.questionnaire_index != survey.questionnaire_index:
        # The next questionnaire: its introduction and first item in new messages, below.
        frame = introduction(bundle, journey, following)
        if frame and in_place and survey.message_id is not None:
            title = asking.questionnaire(bundle, survey).title
            effects.append(fx.Edit(survey.message_id, f"{title} ✓"))
            in_place = False
    if not in_place:
        following = replace(following, message_id=None)
    journey = replace(journey, survey=following, asked=following.asked)
    said: list[Doing] = [fx.Send(frame)] if frame else []
    return journey, [*effects, *said, show(bundle, journey, in_place=in_place)]


def _typed_statement(
    bundle: StudyBundle, journey: Journey, item: MatrixItem, text: str, now: float, after: After
) -> Result:
    """A typed number answers a matrix's current statement, as it answers a scale item;
    the matrix comes again below the typed message (its old buttons gone) until its last
    statement is answered."""
    survey = journey.survey
    assert survey is not None
    index = asking.typed_choice(item, text)
    if index is None:
        texts = texts_of(bundle, journey)
        hint = texts.tap_a_button.format(low=item.min, high=item.max)
        where = asked_now(bundle, journey)
        return journey, [*hinted(Hint.TAP_A_BUTTON, hint, journey.session_id, **where, text=text)]
    answered = replace(survey, selected=(*survey.selected, index))
    if len(answered.selected) == len(item.statements):
        asked = asking.answer_statements(bundle, answered, now)
        return _continue(
            bundle, replace(journey, survey=answered), asked, now, after, in_place=False
        )
    again = replace(journey, survey=replace(answered, message_id=None))
    gone: list[Doing] = [fx.RemoveButtons(survey.message_id)] if survey.message_id else []
    return again, [*gone, show(bundle, again, in_place=False)]


def on_event(
    bundle: StudyBundle, journey: Journey, event: ev.Event, now: float, after: After
) -> Result:
    texts = texts_of(bundle, journey)
    survey = journey.survey
    assert survey is not None
    item = asking.current_item(bundle, survey)
    session, where = journey.session_id, asked_now(bundle, journey)
    match event:
        case ev.ButtonTapped():
            tap = event.tap
            if (
                not isinstance(tap, SurveyTap)
                or tap.channel is not Channel.FRONT
                or tap.asked != survey.asked
            ):
                return stale_tap(bundle, journey)
            outcome = apply_tap(bundle, journey, survey, tap, now)
            journey = replace(journey, survey=outcome.survey)
            if outcome.asked is None:
                return journey, outcome.effects
            new, more = _continue(bundle, journey, outcome.asked, now, after, in_place=True)
            return new, outcome.effects + more
        case ev.TextReceived(text=text):
            if isinstance(item, TextItem):
                if len(text) > item.max_length:
                    too_long = texts.text_too_long.format(limit=item.max_length)
                    return journey, [
                        *hinted(Hint.TEXT_TOO_LONG, too_long, session, **where, length=len(text))
                    ]
                asked = asking.answer(bundle, survey, now, text=text)
                return _continue(bundle, journey, asked, now, after, in_place=False)
            if isinstance(item, MultiChoiceItem):
                return journey, [
                    *hinted(Hint.PICK_OPTIONS, texts.pick_options, session, **where, text=text)
                ]
            if isinstance(item, RankingItem):
                return journey, [
                    *hinted(Hint.RANK_OPTIONS, texts.rank_options, session, **where, text=text)
                ]
            if isinstance(item, MatrixItem):
                return _typed_statement(bundle, journey, item, text, now, after)
            typed = asking.typed_answer(item, text)
            if typed is None:
                low, high = asking.typed_range(item)
                hint = texts.tap_a_button.format(low=low, high=high)
                return journey, [*hinted(Hint.TAP_A_BUTTON, hint, session, **where, text=text)]
            value, label = typed
            asked = asking.answer(bundle, survey, now, value=value, label=label)
            return _continue(bundle, journey, asked, now, after, in_place=False)
        case ev.MessageSent(message_id=message_id, resent=resent):
            known = replace(survey, message_id=message_id, resent=resent)
            return replace(journey, survey=known), []
        case ev.StartCommand():  # the item again, below: only the new message takes taps
            again = replace(journey, survey=replace(survey, message_id=None))
            left: list[Doing] = []
            if survey.message_id is not None:
                left.append(fx.RemoveButtons(survey.message_id))
            return again, [*left, fx.Send(texts.resumed), show(bundle, again, in_place=False)]
        case ev.DoneCommand():
            pending = texts.question_pending
            return journey, [*hinted(Hint.QUESTION_PENDING, pending, session, **where)]
        case ev.UnsupportedReceived(kind=kind):
            return journey, [*hinted(Hint.TEXT_ONLY, texts.text_only, session, **where, sent=kind)]
        case ev.MessageEdited():
            return journey, [*hinted(Hint.EDIT_IGNORED, texts.edit_ignored, session, **where)]
        case ev.Tick():
            return silence(bundle, journey, now)
    return journey, []
