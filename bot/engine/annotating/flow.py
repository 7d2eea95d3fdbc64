"""The annotator's flow: ``step(bundle, state, event, now) -> (state, effects)``, pure.

One target at a time: the part of its conversation the chat does not show yet, then its
items one by one in one message edited in place (the questionnaires' own asking, help and
examples included). Every answer is recorded as it is given, so a restart, a pause or a
``/back`` loses nothing: the survey is rebuilt from the answers the store holds. Buttons
carry a showing number made from the target's position and the item's, so a tap on an old
target's buttons is told "that one is done" and changes nothing, even after a restart.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import Any

from bot.core.annotation import AnnotationTask
from bot.core.vocabulary import (
    AnnotationLevel,
    AnnotatorClaim,
    AnswerStatus,
    Moment,
    PaymentStatus,
)
from bot.engine import asking, recruitment
from bot.engine import effects as fx
from bot.engine import events as ev
from bot.engine.annotating import view
from bot.engine.annotating.acute import pair_questions, pair_votes
from bot.engine.annotating.information import information_for, information_text
from bot.engine.annotating.model import (
    ASKING,
    Annotating,
    AnnotatorEffect,
    AnnotatorEvent,
    Claimed,
    FinishTarget,
    RecordRating,
    RecordVotes,
    Reloaded,
    Reopened,
    ReopenLast,
    SetCommands,
    SetPaused,
    TargetGone,
    TargetLoaded,
    WithdrawAnnotator,
)
from bot.engine.asking import Asked, Survey
from bot.engine.callbacks import Channel, SurveyTap, WithdrawTap
from bot.engine.questionnaire import tap_with
from bot.engine.withdrawal import WITHDRAW_NO, WITHDRAW_YES
from questionnaires.models import Item, MultiChoiceItem, TextItem
from scenarios.jobs import AnnotationJob
from scenarios.models import StudyBundle, Texts

Result = tuple[Annotating | None, list[AnnotatorEffect]]

_PER_TARGET = 1000  # showing numbers: target position x 1000 + questionnaire x 100 + item
_PER_QUESTIONNAIRE = 100


def step(
    bundle: StudyBundle, state: Annotating | None, event: AnnotatorEvent | ev.Event, now: float
) -> Result:
    if isinstance(event, Claimed):
        return _claimed(bundle, state, event, now)
    if isinstance(event, Reloaded):
        job = bundle.jobs[event.job]
        survey = resume_survey(bundle, job, event.task, now, None) if event.task else None
        return Annotating(event.annotator, event.job, None, event.task, survey, event.paused), []
    if state is None:  # the runner always says who the annotator is first
        return None, []
    texts = bundle.texts_for(state.language)
    job = bundle.jobs[state.job]
    match event:
        case TargetLoaded(task=task, pushed=pushed, unqualified=unqualified, ended=ended):
            if pushed and state.task is not None:
                return state, []  # busy: they reach it after the target in front of them
            if state.paused and not pushed:  # a message while paused and idle: resumed
                state, unpaused = _unpaused(state)
                shown, effects = step(bundle, state, event, now)
                return shown, unpaused + effects
            if task is None:
                idle = replace(state, task=None, survey=None)
                if pushed:
                    return idle, []
                return idle, [fx.Send(_idle(texts, unqualified, ended, waiting=False)),
                              *recruitment.annotator_code(job, texts, ended)]  # fmt: skip
            intro = [texts.ann_new_work] if pushed else []
            return _present(bundle, job, texts, state, task, now, intro)
        case Reopened(task=task):
            if task is None:
                return state, [fx.Send(texts.ann_back_nothing)]
            left: list[AnnotatorEffect] = []
            if state.survey is not None and state.survey.message_id is not None:
                left.append(fx.RemoveButtons(state.survey.message_id))
            back = [texts.ann_back_done]
            shown, effects = _present(bundle, job, texts, state, task, now, back, again=True)
            return shown, left + effects
        case TargetGone(task=task):
            state, unpaused = _unpaused(state)  # they are back: whatever brought them resumes
            gone: list[AnnotatorEffect] = [*unpaused, fx.Send(texts.ann_target_moved)]
            if state.survey is not None and state.survey.message_id is not None:
                gone.insert(0, fx.RemoveButtons(state.survey.message_id))  # no longer theirs
            if task is None:
                idle = replace(state, task=None, survey=None)
                return idle, [*gone, fx.Send(texts.ann_all_done)]
            moved, effects = _present(bundle, job, texts, state, task, now, [])
            return moved, gone + effects
        case ev.ButtonTapped(tap=WithdrawTap()):
            return _withdrawal_answered(job, texts, state, event)
        case ev.ButtonTapped():
            return _tapped(bundle, job, texts, state, event, now)
        case ev.TextReceived(text=text):
            if state.paused:
                return _resume(bundle, job, texts, state, now)
            return _typed(bundle, job, texts, state, text, now)
        case ev.UnknownCommand(text=text):
            return _command(bundle, job, texts, state, text, now)
        case ev.StartCommand(code=code):
            if code is not None:  # a participant's code in an annotator's chat
                return state, [fx.Send(texts.ann_annotator_chat)]
            return _resume(bundle, job, texts, state, now)
        case ev.HelpCommand():
            return state, [fx.Send(view.where(job, texts, state.task, state.paused))]
        case ev.WithdrawCommand():
            return _withdraw(job, texts, state)
        case ev.DoneCommand():
            return state, [fx.Send(_commands(job, texts))]
        case ev.UnsupportedReceived() | ev.MediaReceived():
            return state, [fx.Send(texts.text_only)]
        case ev.MessageEdited():
            return state, [fx.Send(texts.edit_ignored)]
        case ev.MessageSent(message_id=message_id):
            if state.withdrawal == ASKING:  # the prompt just sent is the one that counts
                return replace(state, withdrawal=message_id), []
            if state.survey is None:
                return state, []
            return replace(state, survey=replace(state.survey, message_id=message_id)), []
    return state, []  # the participants' own events (a system's reply, a tick) never come


def _claimed(bundle: StudyBundle, state: Annotating | None, event: Claimed, now: float) -> Result:
    texts = bundle.texts_for(event.language or (state.language if state else None))
    refusals = {
        AnnotatorClaim.TAKEN: texts.ann_code_taken,
        AnnotatorClaim.UNKNOWN: texts.ann_code_unknown,
        AnnotatorClaim.DROPPED: texts.ann_code_dropped,
        AnnotatorClaim.OTHER_ID: texts.platform_id_other,
    }
    recruited = bundle.jobs[event.job].recruitment if event.job in bundle.jobs else None
    if recruited is not None:  # the job's link: said of the platform id, not of a code
        name = recruitment.platform_name(recruited)
        refusals[AnnotatorClaim.TAKEN] = texts.ann_platform_id_taken.format(platform=name)
        refusals[AnnotatorClaim.OTHER_ID] = texts.platform_id_other.format(platform=name)
    if event.claim in refusals or event.annotator is None or event.job is None:
        return state, [fx.Send(refusals.get(event.claim, texts.ann_code_unknown))]
    job = bundle.jobs[event.job]
    same = state is not None and state.annotator == event.annotator
    fresh = Annotating(event.annotator, event.job, event.language, shown=None)
    current = state if same and state is not None else fresh
    effects: list[AnnotatorEffect] = [SetCommands(view.menu(job, texts))]
    if current.paused or event.paused:
        effects.append(SetPaused(current.annotator, False))
        current = replace(current, paused=False)
    if event.claim is AnnotatorClaim.JOINED:
        welcome = texts.ann_welcome.format(annotator=event.annotator, title=job.title)
        welcome += _payment_note(job, texts)
        effects += [fx.Send(text) for text in [welcome, *view.brief(job, texts)]]
    elif event.claim is AnnotatorClaim.ALREADY:  # a second code of their job: theirs stays
        effects.append(fx.Send(texts.ann_code_already))
    else:
        effects.append(fx.Send(texts.ann_resumed))
    if event.task is None:
        idle = _idle(texts, event.unqualified, event.ended, waiting=True)
        code = recruitment.annotator_code(job, texts, event.ended)
        return replace(current, task=None, survey=None), [*effects, fx.Send(idle), *code]
    if current.survey is not None and current.survey.message_id is not None:
        effects.append(fx.RemoveButtons(current.survey.message_id))
    new, shown = _present(bundle, job, texts, current, event.task, now, [])
    return new, effects + shown


def _idle(texts: Texts, unqualified: bool, ended: PaymentStatus | None, *, waiting: bool) -> str:
    """Why nothing is in front of the annotator: below the onboarding threshold, their
    share rated, nothing yet (``waiting``: they just came), or everything rated."""
    if unqualified:
        return texts.ann_not_qualified
    if ended is PaymentStatus.COMPLETED:
        return texts.ann_share_done
    return texts.ann_nothing_yet if waiting else texts.ann_all_done


def _unpaused(state: Annotating) -> tuple[Annotating, list[AnnotatorEffect]]:
    if not state.paused:
        return state, []
    return replace(state, paused=False), [SetPaused(state.annotator, False)]


def _resume(
    bundle: StudyBundle, job: AnnotationJob, texts: Texts, state: Annotating, now: float
) -> Result:
    """Back after a pause, ``/start`` again, or a message after a restart: the target in
    front of them, from the item they were at."""
    state, effects = _unpaused(state)
    effects.append(fx.Send(texts.ann_resumed))
    if state.task is None:
        return state, [*effects, fx.Send(texts.ann_all_done)]
    if state.survey is not None and state.survey.message_id is not None:
        effects.append(fx.RemoveButtons(state.survey.message_id))
    new, shown = _present(bundle, job, texts, state, state.task, now, [])
    return new, effects + shown


def _commands(job: AnnotationJob, texts: Texts) -> str:
    return texts.ann_commands_seen_once if job.seen_once_in_order else texts.ann_commands_back


def _command(
    bundle: StudyBundle,
    job: AnnotationJob,
    texts: Texts,
    state: Annotating,
    text: str,
    now: float,
) -> Result:
    name = text.split(" ", 1)[0][1:].split("@", 1)[0].lower()
    if name == "pause":
        if state.paused:
            return state, [fx.Send(texts.ann_paused)]
        return replace(state, paused=True), [
            SetPaused(state.annotator, True),
            fx.Send(texts.ann_paused),
        ]
    if name == "back":
        if job.seen_once_in_order:
            return state, [fx.Send(texts.ann_back_refused)]
        return state, [ReopenLast(state.annotator)]
    if name == "brief":
        return state, [fx.Send(part) for part in view.brief(job, texts)]
    if state.paused:
        return _resume(bundle, job, texts, state, now)
    return state, [fx.Send(_commands(job, texts))]


# --- withdrawal -------------------------------------------------------------------------------


def _withdraw(job: AnnotationJob, texts: Texts, state: Annotating) -> Result:
    """``/withdraw``: asked first, with two buttons; a second one replaces the first."""
    earlier: list[AnnotatorEffect] = []
    if state.withdrawal:
        earlier.append(fx.RemoveButtons(state.withdrawal))
    question = texts.ann_withdraw_confirm_kept if _kept(job) else texts.ann_withdraw_confirm
    question += _payment_note(job, texts)
    buttons = (((texts.withdraw_yes, WITHDRAW_YES),), ((texts.withdraw_no, WITHDRAW_NO),))
    ask = fx.Send(question, buttons, remember=True)
    return replace(state, withdrawal=ASKING), [*earlier, ask]


def _payment_note(job: AnnotationJob, texts: Texts) -> str:
    """What a withdrawal keeps of an annotator recruited on a platform (their platform id
    and the time given, to be paid), told when they join and when they ask to withdraw."""
    if job.recruitment is None:
        return ""
    return " " + texts.payment_note.format(platform=recruitment.platform_name(job.recruitment))


def _kept(job: AnnotationJob) -> bool:
    """The job's consent keeps a withdrawn annotator's ratings, unlinked from them."""
    return job.on_withdrawal == "keep_unlinked"


def _withdrawal_answered(
    job: AnnotationJob, texts: Texts, state: Annotating, event: ev.ButtonTapped
) -> Result:
    """An answer to "withdraw?": it counts only on the prompt still waiting for it; Yes
    erases (``WithdrawAnnotator``, then the chat is nobody's), No carries on."""
    assert isinstance(event.tap, WithdrawTap)
    prompt = state.withdrawal
    if not prompt or event.message_id != prompt:
        return state, [fx.Toast(texts.already_recorded)]
    answered: list[AnnotatorEffect] = [fx.Toast(), fx.RemoveButtons(prompt)]
    if not event.tap.confirm:
        return replace(state, withdrawal=None), [*answered, fx.Send(texts.ann_withdraw_cancelled)]
    if state.survey is not None and state.survey.message_id is not None:
        answered.append(fx.RemoveButtons(state.survey.message_id))
    told = texts.ann_withdrawn_kept if _kept(job) else texts.ann_withdrawn
    return None, [*answered, WithdrawAnnotator(state.annotator, state.job), fx.Send(told)]


# --- one target -------------------------------------------------------------------------------


def _instruments(job: AnnotationJob, task: AnnotationTask) -> tuple[str, ...]:
    if task.target.level is AnnotationLevel.EXCHANGE:
        return job.rate.exchange
    if task.target.level is AnnotationLevel.PAIR:
        return job.rate.pair
    return job.rate.session


def numbered(survey: Survey, task: AnnotationTask) -> Survey:
    """The showing number of the survey's current item: the same for the same target and
    item whenever it is shown (after a restart too), different for every other."""
    asked = (
        task.target.position * _PER_TARGET
        + survey.questionnaire_index * _PER_QUESTIONNAIRE
        + survey.position
        + 1
    )
    return replace(survey, asked=asked)


def _stored_answer(item: Item, stored: str) -> dict[str, Any] | None:
    """How an answer the store holds is given again (None: it cannot be: ask again)."""
    if isinstance(item, TextItem):
        return {"text": stored}
    options = asking.choices(item)
    if isinstance(item, MultiChoiceItem):
        codes = stored.split(",") if stored else []
        labels = [label for value, label in options if str(value) in codes]
        return {"text": stored or None, "label": "; ".join(labels) or None}
    for value, label in options:
        if str(value) == stored:
            return {"value": value, "label": label}
    return None


def resume_survey(
    bundle: StudyBundle,
    job: AnnotationJob,
    task: AnnotationTask,
    now: float,
    language: str | None,
    *,
    again: bool = False,
) -> Survey | None:
    """The target's survey at its first item not answered yet (None: all are); ``again``:
    at its first item whatever is stored (a target reopened to be answered again)."""
    started = asking.start(
        bundle,
        moment=Moment.RATING,  # asked like a row of a rating task: text items included
        questionnaires=_instruments(job, task),
        session_id=task.target.session_id,
        seed=f"{job.id}:{task.target.target}",
        asked=0,
        now=now,
        turn=task.target.turn,
        language=language,
    )
    survey = started.survey
    while survey is not None and not again:
        item = asking.current_item(bundle, survey)
        stored = task.answers.get(item.id)
        given = None if stored is None else _stored_answer(item, stored)
        if given is None:
            break
        survey = asking.answer(bundle, survey, now, **given).survey
    return None if survey is None else numbered(survey, task)


def _extra(
    job: AnnotationJob, task: AnnotationTask, item_id: str, *, first_only: bool
) -> list[AnnotatorEffect]:
    """The extra information an item needs (XRec 11-13), before the first item needing it,
    or before any of them when the target is shown afresh (after a pause or restart)."""
    for extra in job.extra_information:
        if (information_for(job, item_id) is extra) or (not first_only and item_id in extra.items):
            return [fx.Send(information_text(extra, task))]
    return []


def _item(
    bundle: StudyBundle, texts: Texts, task: AnnotationTask, survey: Survey, *, in_place: bool
) -> fx.Send | fx.Edit:
    text, buttons = asking.render(bundle, survey, texts, Channel.ANNOTATION)
    text = f"{view.progress(task, texts)}\n\n{text}"
    if in_place and survey.message_id is not None:
        return fx.Edit(survey.message_id, text, buttons)
    return fx.Send(text, buttons, remember=True)


def _present(
    bundle: StudyBundle,
    job: AnnotationJob,
    texts: Texts,
    state: Annotating,
    task: AnnotationTask,
    now: float,
    intro: Sequence[str],
    *,
    again: bool = False,
) -> Result:
    """A target shown afresh: what of its conversation is new to the chat, then its item
    (``again``: its first item, for a target reopened by /back with every item answered)."""
    effects: list[AnnotatorEffect] = [fx.Send(text) for text in intro]
    if task.target.level is AnnotationLevel.PAIR:  # both conversations, once per pair
        unit = view.unit_of(task)
        if state.shown is None or state.shown[0] != unit:
            effects += [fx.Send(part) for part in view.pair(job, task, texts)]
        shown: tuple[str, int] | None = (unit, 0)
    else:
        said, shown = view.conversation(task, state.shown, texts, with_next=job.with_next_message)
        if said:
            effects.append(fx.Send(said))
    survey = resume_survey(bundle, job, task, now, state.language, again=again)
    state = replace(state, task=task, shown=shown, survey=survey, given=())
    if survey is None:  # every item answered before a restart: only the finish was missing
        return replace(state, task=None), [*effects, *_finished(bundle, job, state, task)]
    item = asking.current_item(bundle, survey)
    effects += _extra(job, task, item.id, first_only=False)
    effects.append(_item(bundle, texts, task, survey, in_place=False))
    return state, effects


def _finish(state: Annotating, task: AnnotationTask) -> FinishTarget:
    return FinishTarget(state.annotator, state.job, task.target.target, task.target.level)


def _finished(
    bundle: StudyBundle, job: AnnotationJob, state: Annotating, task: AnnotationTask
) -> list[AnnotatorEffect]:
    """A target done: a pair's votes (from every answer it got), then its finish."""
    if task.target.level is not AnnotationLevel.PAIR:
        return [_finish(state, task)]
    questions = pair_questions(bundle.questionnaires[q] for q in job.rate.pair)
    answers = {**task.answers, **dict(state.given)}
    votes = pair_votes(job, questions, task, state.annotator, answers)
    recorded = RecordVotes(state.annotator, state.job, task.target.target, votes)
    return [recorded, _finish(state, task)] if votes else [_finish(state, task)]


def _stored(rating: RecordRating) -> str:
    """An answer as the store gives it back (``AnnotationTask.answers``)."""
    return str(rating.value) if rating.value is not None else rating.text or ""


def _ratings(state: Annotating, task: AnnotationTask, asked: Asked) -> list[AnnotatorEffect]:
    """The answers among the rows asking produced (items skipped or not asked: none)."""
    return [
        RecordRating(
            state.annotator,
            state.job,
            task.target.target,
            task.target.level,
            row.questionnaire_id,
            row.item_id,
            row.value,
            row.label,
            row.text,
        )
        for row in asked.records
        if isinstance(row, fx.RecordResponse) and row.status is AnswerStatus.ANSWERED
    ]


def _advance(
    bundle: StudyBundle,
    job: AnnotationJob,
    texts: Texts,
    state: Annotating,
    asked: Asked,
    *,
    in_place: bool,
) -> Result:
    task, survey = state.task, state.survey
    assert task is not None and survey is not None
    effects = _ratings(state, task, asked)
    given = [(r.item_id, _stored(r)) for r in effects if isinstance(r, RecordRating)]
    state = replace(state, given=(*state.given, *given))
    done = f"{view.progress(task, texts)} ✓"
    if asked.survey is None:
        if survey.message_id is not None:  # the last item stays, with nothing to tap
            effects.append(fx.Edit(survey.message_id, done))
        finished = _finished(bundle, job, state, task)
        return replace(state, task=None, survey=None, given=()), [*effects, *finished]
    following = numbered(asked.survey, task)
    item = asking.current_item(bundle, following)
    extra = _extra(job, task, item.id, first_only=True)
    if extra or not in_place:
        if survey.message_id is not None:
            effects.append(fx.RemoveButtons(survey.message_id))
        following = replace(following, message_id=None)
        in_place = False
    state = replace(state, survey=following)
    return state, [*effects, *extra, _item(bundle, texts, task, following, in_place=in_place)]


def _tapped(
    bundle: StudyBundle,
    job: AnnotationJob,
    texts: Texts,
    state: Annotating,
    event: ev.ButtonTapped,
    now: float,
) -> Result:
    tap, survey = event.tap, state.survey
    if (
        survey is None
        or not isinstance(tap, SurveyTap)
        or tap.channel is not Channel.ANNOTATION
        or tap.asked != survey.asked
        or not _on_item(survey, event)
    ):
        return state, [fx.Toast(texts.ann_target_done)]
    if survey.message_id is None and event.message_id is not None:
        # After a restart: the item's message is the one its buttons were tapped on.
        survey = replace(survey, message_id=event.message_id)
        state = replace(state, survey=survey)
    unpause: list[AnnotatorEffect] = []
    if state.paused:  # a tap is a message too: it resumes
        unpause.append(SetPaused(state.annotator, False))
        state = replace(state, paused=False)
    outcome = tap_with(bundle, texts, survey, tap, now)
    said: list[AnnotatorEffect] = [
        e for e in outcome.effects if isinstance(e, fx.Toast | fx.Send | fx.Edit)
    ]
    state = replace(state, survey=outcome.survey)
    if outcome.asked is None:
        return state, unpause + said
    new, more = _advance(bundle, job, texts, state, outcome.asked, in_place=True)
    return new, unpause + said + more


def _on_item(survey: Survey, event: ev.ButtonTapped) -> bool:
    """Whether the tap is on the message showing the item. The store keeps no message ids:
    after a restart the item's buttons (numbered by target and item) say it alone, as does
    a tap kept in the inbox from before taps carried their message."""
    return (
        survey.message_id is None
        or event.message_id is None
        or event.message_id == survey.message_id
    )


def _typed(
    bundle: StudyBundle,
    job: AnnotationJob,
    texts: Texts,
    state: Annotating,
    text: str,
    now: float,
) -> Result:
    survey = state.survey
    if survey is None:
        return state, [fx.Send(texts.ann_all_done)]
    item = asking.current_item(bundle, survey)
    if isinstance(item, TextItem):
        if len(text) > item.max_length:
            return state, [fx.Send(texts.text_too_long.format(limit=item.max_length))]
        asked = asking.answer(bundle, survey, now, text=text)
        return _advance(bundle, job, texts, state, asked, in_place=False)
    if isinstance(item, MultiChoiceItem):
        return state, [fx.Send(texts.pick_options)]
    typed = asking.typed_answer(item, text)
    if typed is None:
        low, high = asking.typed_range(item)
        return state, [fx.Send(texts.tap_a_button.format(low=low, high=high))]
    value, label = typed
    asked = asking.answer(bundle, survey, now, value=value, label=label)
    return _advance(bundle, job, texts, state, asked, in_place=False)
