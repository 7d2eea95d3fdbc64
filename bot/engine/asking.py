"""Asking a sequence of questionnaires, one item at a time: order, skip logic, answers.

Pure functions over ``Survey``; the session flow decides when a survey starts and what
follows it. The same mechanics serve every moment an instrument is asked: screening,
after a task, after the study, for each row of a rating task, and after a system reply.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, replace

from bot.core.vocabulary import AnswerStatus, EventKind, Moment
from bot.engine import effects as fx
from bot.engine.callbacks import Channel, SurveyTap, TapAction, encode
from questionnaires.models import (
    LABEL_ON_BUTTON,
    ChoiceItem,
    Item,
    MatrixItem,
    MultiChoiceItem,
    Questionnaire,
    RankingItem,
    ScaleItem,
    SliderItem,
    TextItem,
)
from scenarios.models import StudyBundle, Texts

Answer = int | str | None


@dataclass(frozen=True)
class Survey:
    """Where a participant is in the questionnaires of one moment of the study."""

    moment: Moment
    session_id: str | None
    questionnaires: tuple[str, ...]
    seed: str  # orders randomized items; stored with the order
    questionnaire_index: int = 0
    order: tuple[int, ...] = ()  # item indexes of the current questionnaire, as asked
    position: int = 0  # index into ``order``
    answers: tuple[tuple[str, Answer], ...] = ()  # this questionnaire's answers so far
    selected: tuple[int, ...] = ()  # options toggled (multiple choice), ranked in order, or a
    # matrix's points (indexes into its scale) for its statements answered so far, in order
    asked: int = 0  # the showing number the current item's buttons carry
    message_id: int | None = None  # the message edited in place, once known
    resent: bool = False  # that message went out again after a restart (see ``MessageSent``)
    shown_at: float = 0.0
    turn: int | None = None  # exchange-level: the system turn being rated
    stimulus_id: str | None = None  # rating tasks: the row being rated
    language: str | None = None  # the participant's Telegram language: the words shown

    @property
    def scope(self) -> str:
        """What one set of answers belongs to: a session, a turn of it, a row, the study."""
        base = self.session_id or "study"
        if self.turn is not None:
            return f"{base}#turn{self.turn}"
        if self.stimulus_id is not None:
            return f"{base}#{self.stimulus_id}"
        return base


@dataclass(frozen=True)
class Asked:
    """The outcome of starting or advancing: the survey (None when it is over) and rows."""

    survey: Survey | None
    records: tuple[fx.Record, ...] = ()
    ineligible: bool = False


def questionnaire(bundle: StudyBundle, survey: Survey) -> Questionnaire:
    """The current questionnaire, in the participant's language where translated."""
    questionnaire_id = survey.questionnaires[survey.questionnaire_index]
    return bundle.questionnaire_in(questionnaire_id, survey.language)


def current_item(bundle: StudyBundle, survey: Survey) -> Item:
    return questionnaire(bundle, survey).items[survey.order[survey.position]]


def start(
    bundle: StudyBundle,
    *,
    moment: Moment,
    questionnaires: tuple[str, ...],
    session_id: str | None,
    seed: str,
    asked: int,
    now: float,
    turn: int | None = None,
    stimulus_id: str | None = None,
    language: str | None = None,
) -> Asked:
    survey = Survey(
        moment,
        session_id,
        questionnaires,
        seed,
        asked=asked,
        shown_at=now,
        turn=turn,
        stimulus_id=stimulus_id,
        language=language,
    )
    return _enter_questionnaire(bundle, survey, 0, now, ())


def answer(
    bundle: StudyBundle,
    survey: Survey,
    now: float,
    *,
    value: Answer = None,
    text: str | None = None,
    label: str | None = None,
    status: AnswerStatus = AnswerStatus.ANSWERED,
) -> Asked:
    """Record the current item's answer and move to the next item that applies (a matrix
    skipped: each of its statements skipped)."""
    item = current_item(bundle, survey)
    if isinstance(item, MatrixItem):
        skipped = _unanswered(survey, questionnaire(bundle, survey), item, status)
        survey = replace(survey, answers=(*survey.answers, (item.id, None)), selected=())
        return _advance(bundle, survey, survey.position + 1, now, skipped)
    stored = value if value is not None else text
    attention = getattr(item, "attention", None)
    record = fx.RecordResponse(
        session_id=survey.session_id,
        questionnaire_id=questionnaire(bundle, survey).id,
        item_id=item.id,
        value=value if isinstance(value, int) else None,
        label=label,
        text=text if text is not None else (value if isinstance(value, str) else None),
        status=status,
        shown_at=survey.shown_at,
        moment=survey.moment,
        scope=survey.scope,
        turn=survey.turn,
        stimulus_id=survey.stimulus_id,
        attention_ok=None
        if attention is None or status is not AnswerStatus.ANSWERED
        else stored == attention,
    )
    survey = replace(survey, answers=(*survey.answers, (item.id, stored)), selected=())
    return _advance(bundle, survey, survey.position + 1, now, (record,))


def answer_statements(bundle: StudyBundle, survey: Survey, now: float) -> Asked:
    """Record a matrix's statements, each with its point from ``survey.selected``, as
    answers to items of their own, and move to the next item that applies."""
    item = current_item(bundle, survey)
    assert isinstance(item, MatrixItem)
    records = _statements_answered(survey, questionnaire(bundle, survey), item)
    survey = replace(survey, answers=(*survey.answers, (item.id, None)), selected=())
    return _advance(bundle, survey, survey.position + 1, now, records)


def _statements_answered(
    survey: Survey, instrument: Questionnaire, item: MatrixItem
) -> tuple[fx.Record, ...]:
    """The answers of a matrix's statements answered so far (``survey.selected``)."""
    points = item.choices()
    return tuple(
        fx.RecordResponse(
            session_id=survey.session_id,
            questionnaire_id=instrument.id,
            item_id=statement.id,
            value=points[index][0],
            label=points[index][1],
            text=None,
            status=AnswerStatus.ANSWERED,
            shown_at=survey.shown_at,
            moment=survey.moment,
            scope=survey.scope,
            turn=survey.turn,
            stimulus_id=survey.stimulus_id,
        )
        for statement, index in zip(item.statements, survey.selected, strict=False)
    )


def abandon(
    bundle: StudyBundle, survey: Survey, status: AnswerStatus = AnswerStatus.MISSING
) -> tuple[fx.Record, ...]:
    """Rows for every item still to come (an exchange rating nobody gave); the statements
    of a matrix answered so far keep their answers."""
    records: list[fx.Record] = []
    for q_index in range(survey.questionnaire_index, len(survey.questionnaires)):
        instrument = bundle.questionnaire(survey.questionnaires[q_index])
        indexes = (
            survey.order[survey.position :]
            if q_index == survey.questionnaire_index
            else range(len(instrument.items))
        )
        for i in indexes:
            item = instrument.items[i]
            rows = _unanswered(survey, instrument, item, status)
            now_asked = q_index == survey.questionnaire_index and i == survey.order[survey.position]
            if isinstance(item, MatrixItem) and now_asked:
                given = _statements_answered(survey, instrument, item)
                rows = (*given, *rows[len(given) :])
            records += rows
    return tuple(records)


def _unanswered(
    survey: Survey, instrument: Questionnaire, item: Item, status: AnswerStatus
) -> tuple[fx.Record, ...]:
    """An item's row without an answer; a matrix's, one for each of its statements."""
    ids = [s.id for s in item.statements] if isinstance(item, MatrixItem) else [item.id]
    return tuple(
        fx.RecordResponse(
            session_id=survey.session_id,
            questionnaire_id=instrument.id,
            item_id=item_id,
            value=None,
            label=None,
            text=None,
            status=status,
            shown_at=survey.shown_at,
            moment=survey.moment,
            scope=survey.scope,
            turn=survey.turn,
            stimulus_id=survey.stimulus_id,
        )
        for item_id in ids
    )


def _item_order(instrument: Questionnaire, seed: str) -> tuple[int, ...]:
    """The asking order: shuffled when the instrument says so, each conditional item kept
    right after the item it depends on (so skip logic still looks back)."""
    indexes = list(range(len(instrument.items)))
    if not instrument.randomize:
        return tuple(indexes)
    position = {item.id: i for i, item in enumerate(instrument.items)}

    def root(i: int) -> int:
        condition = instrument.items[i].when
        return i if condition is None else root(position[condition.item])

    blocks: dict[int, list[int]] = {}
    for i in indexes:
        blocks.setdefault(root(i), []).append(i)
    roots = list(blocks)
    random.Random(f"{seed}:{instrument.id}").shuffle(roots)
    return tuple(i for r in roots for i in blocks[r])


def _enter_questionnaire(
    bundle: StudyBundle, survey: Survey, q_index: int, now: float, records: tuple[fx.Record, ...]
) -> Asked:
    if q_index >= len(survey.questionnaires):
        return Asked(None, records)
    instrument = bundle.questionnaire(survey.questionnaires[q_index])
    order = _item_order(instrument, survey.seed)
    survey = replace(survey, questionnaire_index=q_index, order=order, position=0, answers=())
    if instrument.randomize:
        ordered = [instrument.items[i].id for i in order]
        data = {"questionnaire": instrument.id, "seed": survey.seed, "order": ordered}
        records = (*records, fx.RecordEvent(EventKind.QUESTIONNAIRE_ORDER, survey.session_id, data))
    return _advance(bundle, survey, 0, now, records)


def _advance(
    bundle: StudyBundle, survey: Survey, position: int, now: float, records: tuple[fx.Record, ...]
) -> Asked:
    """Move to ``position`` or the first item after it whose condition holds."""
    instrument = questionnaire(bundle, survey)
    answers = dict(survey.answers)
    while position < len(survey.order):
        item = instrument.items[survey.order[position]]
        if item.when is None or item.when.holds(answers.get(item.when.item)):
            if survey.moment is Moment.EXCHANGE and isinstance(item, TextItem):
                # Typed text goes to the system during a dialogue: never asked here.
                not_asked = _unanswered(survey, instrument, item, AnswerStatus.NOT_ASKED)
                records = (*records, *not_asked)
                position += 1
                continue
            return Asked(replace(survey, position=position, shown_at=now), records)
        records = (*records, *_unanswered(survey, instrument, item, AnswerStatus.NOT_ASKED))
        position += 1
    if survey.moment is Moment.SCREENING and not all(
        c.holds(answers.get(c.item)) for c in instrument.eligible_if
    ):
        return Asked(None, records, ineligible=True)
    return _enter_questionnaire(bundle, survey, survey.questionnaire_index + 1, now, records)


# --- how an item looks, and what a tap on it means -----------------------------------

_MAX_LABEL_ON_BUTTON = LABEL_ON_BUTTON
_SLIDER_ROW = 6  # Telegram shows at most 8 buttons in a row; 0–50 and 60–100 at step 10


def choices(item: Item) -> list[tuple[int | str, str]]:
    return list(item.choices()) if hasattr(item, "choices") else []


def progress(instrument: Questionnaire, survey: Survey) -> str:
    """ "2/4": this item among every item the participant sees of the questionnaire, free
    text included, so that "4/4" is the last. Items shown so far are those answered or
    skipped; of the ones to come, an item counts unless its skip logic has already ruled it
    out (so the total can shrink when an answer skips items, never grow)."""
    answers = dict(survey.answers)
    place = {index: position for position, index in enumerate(survey.order)}
    position_of = {item.id: place[i] for i, item in enumerate(instrument.items)}

    def may_show(index: int) -> bool:
        item = instrument.items[index]
        if survey.moment is Moment.EXCHANGE and isinstance(item, TextItem):
            return False  # typed text goes to the system: never asked beside the chat
        condition = item.when
        if condition is None or position_of[condition.item] >= survey.position:
            return True  # unconditional, or decided by an answer still to come
        return condition.holds(answers.get(condition.item))

    shown = len(survey.answers) + 1
    total = shown + sum(may_show(i) for i in survey.order[survey.position + 1 :])
    return f"{shown}/{total}" if total > 1 else ""


def render(
    bundle: StudyBundle, survey: Survey, texts: Texts, channel: Channel = Channel.FRONT
) -> tuple[str, fx.Buttons]:
    instrument = questionnaire(bundle, survey)
    item = current_item(bundle, survey)
    counter = progress(instrument, survey)
    heading = f"{instrument.title} · {counter}" if counter else instrument.title
    lines = [heading, "", item.text]
    rows: list[tuple[tuple[str, str], ...]] = []

    def data(action: TapAction, index: int | None = None) -> str:
        return encode(SurveyTap(channel, action, survey.asked, index))

    options = choices(item)
    if isinstance(item, SliderItem):
        lines.append("")
        lines.extend(f"{v} = {words}" for v, words in item.anchors())
        lines.append(texts.slider_hint)
        points = [(str(v), data(TapAction.ANSWER, i)) for i, (v, _) in enumerate(options)]
        rows.extend(
            tuple(points[start : start + _SLIDER_ROW])
            for start in range(0, len(points), _SLIDER_ROW)
        )
    elif isinstance(item, RankingItem):
        lines.append("")
        if survey.selected:
            lines.append(texts.ranking_order)
            lines.extend(f"{n}. {options[i][1]}" for n, i in enumerate(survey.selected, start=1))
            lines.append("")
        lines.append(texts.ranking_hint)
        rows.extend(
            ((label, data(TapAction.RANK, i)),)
            for i, (_, label) in enumerate(options)
            if i not in survey.selected
        )
        controls = [(texts.undo_button, data(TapAction.UNDO))] if survey.selected else []
        if len(survey.selected) == len(options):
            controls.append((texts.done_button, data(TapAction.DONE)))
        if controls:
            rows.append(tuple(controls))
    elif isinstance(item, MatrixItem):
        lines.append("")
        for n, statement in enumerate(item.statements):
            if n < len(survey.selected):
                lines.append(f"✓ {statement.text} — {options[survey.selected[n]][1]}")
            else:
                lines.append(f"{'▶' if n == len(survey.selected) else '·'} {statement.text}")
        short = all(len(label) <= _MAX_LABEL_ON_BUTTON for _, label in options)
        if short:
            rows.extend(
                ((f"{v} · {label}", data(TapAction.ANSWER, i)),)
                for i, (v, label) in enumerate(options)
            )
        else:
            lines.append("")
            lines.extend(f"{v} = {label}" for v, label in options)
            rows.append(
                tuple((str(v), data(TapAction.ANSWER, i)) for i, (v, _) in enumerate(options))
            )
        if survey.selected:
            rows.append(((texts.undo_button, data(TapAction.UNDO)),))
    elif isinstance(item, MultiChoiceItem):
        for index, (_, label) in enumerate(options):
            mark = "☑" if index in survey.selected else "☐"
            rows.append(((f"{mark} {label}", data(TapAction.TOGGLE, index)),))
        rows.append(((texts.done_button, data(TapAction.DONE)),))
    elif options:
        numbers = [v if isinstance(item, ScaleItem) else i + 1 for i, (v, _) in enumerate(options)]
        short = all(len(label) <= _MAX_LABEL_ON_BUTTON for _, label in options)
        answer = TapAction.ANSWER
        if short and isinstance(item, ScaleItem | ChoiceItem):
            rows.extend(
                ((f"{n} · {label}", data(answer, i)),)
                for i, (n, (_, label)) in enumerate(zip(numbers, options, strict=True))
            )
        elif short:
            rows.append(tuple((label, data(answer, i)) for i, (_, label) in enumerate(options)))
        else:
            lines.append("")
            lines.extend(f"{n} = {label}" for n, (_, label) in zip(numbers, options, strict=True))
            rows.append(tuple((str(n), data(answer, i)) for i, n in enumerate(numbers)))
    else:
        lines += ["", texts.type_your_answer.format(limit=getattr(item, "max_length", 0))]
    extra: list[tuple[str, str]] = []
    if item.help_text():
        extra.append((texts.examples_button, data(TapAction.HELP)))
    if not item.required and not isinstance(item, MultiChoiceItem):
        extra.append((texts.skip_button, data(TapAction.SKIP)))
    if extra:
        rows.append(tuple(extra))
    return "\n".join(lines), tuple(rows)


def typed_number(text: str) -> int | None:
    """A whole number as a participant types it: what ``int`` reads (also "４" or "٤"),
    nothing else ("²", "①" and "3.0" are not answers)."""
    try:
        return int(text.strip())
    except ValueError:
        return None


def offered(bundle: StudyBundle, survey: Survey, texts: Texts, channel: Channel) -> set[str]:
    """The data of every button the survey's current message shows."""
    _, buttons = render(bundle, survey, texts, channel)
    return {data for row in buttons for _, data in row}


def typed_answer(item: Item, text: str) -> tuple[int | str, str] | None:
    """What a number typed for an item with buttons answers, as (value, label): a
    slider's point from 0 to 100, a scale's point, or the option of that number."""
    if isinstance(item, SliderItem):
        number = typed_number(text)
        if number is None or not item.min <= number <= item.max:
            return None
        return number, str(number)
    index = typed_choice(item, text)
    return None if index is None else choices(item)[index]


def typed_range(item: Item) -> tuple[int | str, int | str]:
    """The lowest and highest number a participant may type for an item with buttons."""
    if isinstance(item, SliderItem):
        return item.min, item.max
    options = choices(item)
    on_scale = isinstance(item, ScaleItem | MatrixItem)
    return (options[0][0], options[-1][0]) if on_scale else (1, len(options))


def typed_choice(item: Item, text: str) -> int | None:
    """A typed number for an item with buttons: the scale point, or the option's number."""
    number = typed_number(text)
    if number is None:
        return None
    options = choices(item)
    if isinstance(item, ScaleItem | MatrixItem):
        return next((i for i, (v, _) in enumerate(options) if v == number), None)
    return number - 1 if 1 <= number <= len(options) else None
