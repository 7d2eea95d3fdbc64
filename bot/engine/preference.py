"""Within subjects: a ``preference`` item answered after meeting two systems one after the
other becomes a vote between those two systems, in the order met ("the first assistant" is
``system_a``), kept with the answer in the same step.

The systems met are the distinct systems of the participant's tasks up to the current one,
in order; a preference compares the first two of them. With fewer than two (the design gave
one system twice), the answer is kept and no vote is made: there was nothing to compare.
"""

from __future__ import annotations

from collections.abc import Sequence

from bot.core.vocabulary import AnswerStatus, RaterKind, Strength, VoteSource, Winner
from bot.core.votes import Vote
from bot.engine import effects as fx
from bot.engine.asking import Survey
from bot.engine.journey import Journey
from questionnaires.models import PreferenceItem
from scenarios.models import StudyBundle

FORCED = {1: (Winner.A, None), 2: (Winner.B, None)}
"""A preference without strength: its stored value → the vote."""
GRADED = {
    1: (Winner.A, Strength.MUCH),
    2: (Winner.A, Strength.SLIGHTLY),
    3: (Winner.TIE, None),
    4: (Winner.B, Strength.SLIGHTLY),
    5: (Winner.B, Strength.MUCH),
}
"""A preference with strength: its stored value → the vote ("no preference" is a tie)."""


def met(journey: Journey) -> tuple[str, ...]:
    """The distinct systems of the tasks so far, in the order the participant met them."""
    systems = (task.system_id for task in journey.tasks[: journey.task_index + 1])
    return tuple(dict.fromkeys(systems))


def votes(
    bundle: StudyBundle, journey: Journey, survey: Survey, records: Sequence[fx.Record]
) -> list[fx.Record]:
    """A vote for each answered preference item among ``records``."""
    systems = met(journey)
    found: list[fx.Record] = []
    for record in records:
        if not isinstance(record, fx.RecordResponse) or record.status is not AnswerStatus.ANSWERED:
            continue
        item = next(
            (
                i
                for i in bundle.questionnaire(record.questionnaire_id).items
                if i.id == record.item_id
            ),
            None,
        )
        if not isinstance(item, PreferenceItem) or len(systems) < 2 or record.value is None:
            continue
        outcome = (GRADED if item.strength else FORCED).get(record.value)
        if outcome is None:
            continue
        winner, strength = outcome
        where = survey.session_id or f"{journey.participant}-study"
        scenario = journey.task.scenario_id if survey.session_id is not None else None
        found.append(
            fx.RecordVote(
                Vote(
                    vote_id=f"{where}:{item.id}",
                    source=VoteSource.PREFERENCE,
                    rater=journey.participant,
                    rater_kind=RaterKind.PARTICIPANT,
                    system_a=systems[0],
                    system_b=systems[1],
                    winner=winner,
                    question=item.id,
                    strength=strength,
                    scenario_id=scenario,
                    session_id=survey.session_id,
                )
            )
        )
    return found
