"""An ACUTE pair's answers as votes: pure, no I/O.

Each forced choice of a finished pair becomes one vote (source ``acute``, rater kind
``annotator``): the system of the conversation the annotator was shown first (their side
of the pair: ``task.swapped``) is ``system_a`` and its conversation ``session_a``, the first
option picks it (winner ``a``), the second picks the other (``b``). The question is the
item's id without its questionnaire's prefix (``engagingness``). An onboarding pair's votes
are marked as such, with the known answer as ``expected`` (so the report counts whether it
was given, never fits them); their systems are the known better and worse conversations.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from bot.core.annotation import AnnotationTask
from bot.core.vocabulary import RaterKind, VoteSource, Winner
from bot.core.votes import Vote
from bot.engine.annotating.pairs import known_showing, pair_sessions, shown_name, shown_systems
from questionnaires.models import ChoiceItem, Questionnaire
from scenarios.jobs import AnnotationJob

KNOWN_BETTER = "onboarding:better"
KNOWN_WORSE = "onboarding:worse"


@dataclass(frozen=True)
class Question:
    """A forced choice of a pair: its question id, the value picking the first
    conversation's speaker and the value picking the second's."""

    question: str
    first: str
    second: str


def pair_questions(questionnaires: Iterable[Questionnaire]) -> dict[str, Question]:
    """Item id -> its question, for every forced choice of a pair's instruments."""
    found: dict[str, Question] = {}
    for questionnaire in questionnaires:
        for item in questionnaire.items:
            if isinstance(item, ChoiceItem) and len(item.options) == 2:
                first, second = (str(option.value) for option in item.options)
                question = item.id.removeprefix(f"{questionnaire.id}.")
                found[item.id] = Question(question, first, second)
    return found


def pair_votes(
    job: AnnotationJob,
    questions: Mapping[str, Question],
    task: AnnotationTask,
    annotator: str,
    answers: Mapping[str, str],
) -> tuple[Vote, ...]:
    """The votes of one annotator's answers (item id -> value as stored) to one pair."""
    target = task.target
    shown = shown_name(target.target, task.swapped)
    known = known_showing(job, shown)
    sessions = pair_sessions(shown)
    shown_first, shown_second = shown_systems(task)
    if known is not None:
        first, second = (KNOWN_BETTER, KNOWN_WORSE)
        if not known.better_first:
            first, second = second, first
        expected: Winner | None = Winner.A if known.better_first else Winner.B
    elif sessions is not None and shown_first is not None and shown_second is not None:
        first, second, expected = shown_first, shown_second, None
    else:
        return ()  # a pair whose conversations are gone: nothing to compare
    votes = []
    for item_id, question in questions.items():
        given = answers.get(item_id)
        if given not in (question.first, question.second):
            continue
        votes.append(
            Vote(
                vote_id=f"{job.id}:{target.target}:{annotator}:{question.question}",
                source=VoteSource.ACUTE,
                rater=annotator,
                rater_kind=RaterKind.ANNOTATOR,
                system_a=first,
                system_b=second,
                winner=Winner.A if given == question.first else Winner.B,
                question=question.question,
                scenario_id=target.scenario,
                session_id=target.target,
                session_a=None if sessions is None else sessions[0],
                session_b=None if sessions is None else sessions[1],
                onboarding=known is not None,
                expected=expected,
                job=job.id,
            )
        )
    return tuple(votes)
