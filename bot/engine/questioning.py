"""The questionnaire in front of the participant: screening, after a task, after the study,
and each row of a rating task. One item at a time, in one message edited in place."""

from __future__ import annotations

from dataclasses import dataclass, replace

from bot.engine import asking, dialogue
from bot.engine import effects as fx
from bot.engine import events as ev
from bot.engine.asking import Asked, Survey, Tap
from bot.engine.common import Result, scenario_of, silence, stale_tap, texts_of
from bot.engine.journey import Journey, Stage
from questionnaires.models import MultiChoiceItem, TextItem
from scenarios.models import StudyBundle

_SESSION_STATE = {"post_task": "questionnaire", "stimulus": "dialogue"}


def begin(
    bundle: StudyBundle,
    journey: Journey,
    purpose: str,
    questionnaires: tuple[str, ...],
    session_id: str | None,
    now: float,
    *,
    stimulus_id: str | None = None,
) -> Result:
    started = asking.start(
        bundle,
        purpose=purpose,
        questionnaires=questionnaires,
        session_id=session_id,
        seed=f"{journey.seed or journey.participant}:{session_id or purpose}",
        asked=journey.asked + 1,
        now=now,
        stimulus_id=stimulus_id,
    )
    effects: list[fx.Effect] = list(started.records)
    if started.survey is None:
        new, more = _after(bundle, journey, purpose, session_id, started.ineligible, now)
        return new, effects + more
    journey = replace(
        journey, stage=Stage.QUESTIONNAIRE, survey=started.survey, asked=started.survey.asked
    )
    if session_id is not None and purpose in _SESSION_STATE:
        effects.append(fx.SetSessionState(session_id, _SESSION_STATE[purpose]))
    if purpose in ("post_task", "post_study"):
        effects.append(fx.Send(texts_of(bundle, journey).questionnaire_intro))
    effects.append(_show(bundle, journey, in_place=False))
    return journey, effects


def rate_stimulus(bundle: StudyBundle, journey: Journey, index: int, now: float) -> Result:
    """Rating tasks: show row ``index`` and ask its questionnaires; after the last row the
    task ends as completed."""
    scenario = scenario_of(bundle, journey)
    rows = bundle.stimuli.get(scenario.id, ())
    if index >= len(rows):
        return dialogue.end_scenario(bundle, journey, "completed", True, now)
    row = rows[index]
    template = scenario.stimulus_template or "\n".join(f"{k}: {{{k}}}" for k in row.fields)
    shown = template.format_map(row.fields)
    journey = replace(journey, stimulus_index=index)
    new, effects = begin(
        bundle,
        journey,
        "stimulus",
        scenario.rate_with,
        journey.session_id,
        now,
        stimulus_id=row.id,
    )
    counter = f"({index + 1}/{len(rows)})\n\n"
    return new, [fx.Send(counter + shown), *effects]


def _show(bundle: StudyBundle, journey: Journey, *, in_place: bool) -> fx.Send | fx.Edit:
    survey = journey.survey
    assert survey is not None
    text, buttons = asking.render(bundle, survey, texts_of(bundle, journey))
    if in_place and survey.message_id is not None:
        return fx.Edit(survey.message_id, text, buttons)
    return fx.Send(text, buttons, remember=True)


def _after(
    bundle: StudyBundle,
    journey: Journey,
    purpose: str,
    session_id: str | None,
    ineligible: bool,
    now: float,
) -> Result:
    """What follows a finished survey, by the moment it was asked at."""
    journey = replace(journey, survey=None)
    texts = texts_of(bundle, journey)
    if purpose == "screening":
        if ineligible:
            journey = replace(journey, stage=Stage.INELIGIBLE)
            return journey, [fx.RecordEvent("not_eligible"), fx.Send(texts.not_eligible)]
        return replace(journey, stage=Stage.ASSIGNING), [fx.AssignTasks()]
    if purpose == "stimulus":
        return rate_stimulus(bundle, journey, journey.stimulus_index + 1, now)
    effects: list[fx.Effect] = []
    if purpose == "post_task" and session_id is not None:
        effects.append(fx.SetSessionState(session_id, "ended"))
        if journey.task_index + 1 < len(journey.tasks):
            new, more = dialogue.start_task(bundle, journey, journey.task_index + 1, now)
            return new, effects + more
        if bundle.study.post_study:
            new, more = begin(bundle, journey, "post_study", bundle.study.post_study, None, now)
            return new, effects + more
    journey = replace(journey, stage=Stage.FINISHED)
    return journey, [*effects, fx.RecordEvent("study_completed"), fx.Send(texts.thanks)]


@dataclass(frozen=True)
class TapOutcome:
    """A tap on a questionnaire button: the survey as it stands, what to do, and (when an
    answer was recorded) where the survey went next."""

    survey: Survey
    effects: list[fx.Effect]
    asked: Asked | None = None


def apply_tap(
    bundle: StudyBundle, journey: Journey, survey: Survey, tap: Tap, now: float
) -> TapOutcome:
    texts = texts_of(bundle, journey)
    item = asking.current_item(bundle, survey)
    options = asking.choices(item)
    if tap.action == "h":
        return TapOutcome(survey, [fx.Toast(), fx.Send(item.help_text() or "")])
    if tap.action == "s" and not item.required:
        return TapOutcome(
            survey, [fx.Toast()], asking.answer(bundle, survey, now, status="skipped")
        )
    if isinstance(item, MultiChoiceItem) and tap.action == "m" and tap.index is not None:
        if not 0 <= tap.index < len(options):
            return TapOutcome(survey, [fx.Toast(texts.already_recorded)])
        chosen = set(survey.selected) ^ {tap.index}
        toggled = replace(survey, selected=tuple(sorted(chosen)))
        text, buttons = asking.render(bundle, toggled, texts, tap.channel)
        redraw = [fx.Edit(survey.message_id, text, buttons)] if survey.message_id else []
        return TapOutcome(toggled, [fx.Toast(), *redraw])
    if isinstance(item, MultiChoiceItem) and tap.action == "d":
        if item.required and not survey.selected:
            return TapOutcome(survey, [fx.Toast(texts.pick_at_least_one)])
        values = [options[i][0] for i in survey.selected]
        labels = "; ".join(options[i][1] for i in survey.selected)
        codes = ",".join(str(v) for v in values)
        asked = asking.answer(bundle, survey, now, text=codes or None, label=labels or None)
        return TapOutcome(survey, [fx.Toast()], asked)
    if tap.action == "a" and tap.index is not None and 0 <= tap.index < len(options):
        value, label = options[tap.index]
        asked = asking.answer(bundle, survey, now, value=value, label=label)
        return TapOutcome(survey, [fx.Toast(label)], asked)
    return TapOutcome(survey, [fx.Toast(texts.already_recorded)])


def _continue(
    bundle: StudyBundle, journey: Journey, asked: Asked, now: float, *, in_place: bool
) -> Result:
    survey = journey.survey
    assert survey is not None
    effects: list[fx.Effect] = list(asked.records)
    if asked.survey is None:
        if in_place and survey.message_id is not None:
            # The last question stays on screen, without buttons that could be tapped again.
            title = asking.questionnaire(bundle, survey).title
            effects.append(fx.Edit(survey.message_id, f"{title} ✓"))
        new, more = _after(
            bundle, journey, survey.purpose, survey.session_id, asked.ineligible, now
        )
        return new, effects + more
    following = replace(asked.survey, asked=journey.asked + 1)
    if not in_place:
        following = replace(following, message_id=None)
    journey = replace(journey, survey=following, asked=following.asked)
    return journey, [*effects, _show(bundle, journey, in_place=in_place)]


def on_questionnaire(bundle: StudyBundle, journey: Journey, event: ev.Event, now: float) -> Result:
    texts = texts_of(bundle, journey)
    survey = journey.survey
    assert survey is not None
    item = asking.current_item(bundle, survey)
    match event:
        case ev.ButtonTapped(data=data):
            tap = asking.parse_tap(data)
            if tap is None or tap.channel != "" or tap.asked != survey.asked:
                return stale_tap(bundle, journey)
            outcome = apply_tap(bundle, journey, survey, tap, now)
            journey = replace(journey, survey=outcome.survey)
            if outcome.asked is None:
                return journey, outcome.effects
            new, more = _continue(bundle, journey, outcome.asked, now, in_place=True)
            return new, outcome.effects + more
        case ev.TextReceived(text=text):
            if isinstance(item, TextItem):
                if len(text) > item.max_length:
                    return journey, [fx.Send(texts.text_too_long.format(limit=item.max_length))]
                asked = asking.answer(bundle, survey, now, text=text)
                return _continue(bundle, journey, asked, now, in_place=False)
            if isinstance(item, MultiChoiceItem):
                return journey, [fx.Send(texts.pick_options)]
            index = asking.typed_choice(item, text)
            options = asking.choices(item)
            if index is None:
                numbers = [v for v, _ in options] if hasattr(item, "labels") else [1, len(options)]
                hint = texts.tap_a_button.format(low=numbers[0], high=numbers[-1])
                return journey, [fx.Send(hint)]
            value, label = options[index]
            asked = asking.answer(bundle, survey, now, value=value, label=label)
            return _continue(bundle, journey, asked, now, in_place=False)
        case ev.MessageSent(message_id=message_id):
            return replace(journey, survey=replace(survey, message_id=message_id)), []
        case ev.StartCommand():
            again = replace(journey, survey=replace(survey, message_id=None))
            return again, [fx.Send(texts.resumed), _show(bundle, again, in_place=False)]
        case ev.DoneCommand():
            return journey, [fx.Send(texts.question_pending)]
        case ev.UnsupportedReceived():
            return journey, [fx.Send(texts.text_only)]
        case ev.MessageEdited():
            return journey, [fx.Send(texts.edit_ignored)]
        case ev.Tick():
            return silence(bundle, journey, now)
    return journey, []
