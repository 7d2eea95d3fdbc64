"""``/help``: where the participant stands (the phase, task n of m, what to do now) and the
commands they have. Read from the journey alone: asking for help changes nothing."""

from __future__ import annotations

from typing import assert_never

from bot.core.vocabulary import Moment
from bot.engine.common import texts_of
from bot.engine.journey import Journey, Stage
from scenarios.models import StudyBundle


def where_they_stand(bundle: StudyBundle, journey: Journey | None) -> str:
    texts = texts_of(bundle, journey)
    if journey is None:
        return f"{texts.help_not_started}\n\n{texts.help_commands}"
    n, m = journey.task_index + 1, len(journey.tasks)
    match journey.stage:
        case Stage.CONSENT:
            where = texts.help_consent
        case Stage.DECLINED:
            where = texts.help_declined
        case Stage.ASSIGNING | Stage.HELD:
            where = texts.help_waiting
        case Stage.DIALOGUE:
            where = texts.help_dialogue.format(n=n, m=m)
        case Stage.QUESTIONNAIRE:  # a rating task's rows are a questionnaire too
            rating = journey.survey is not None and journey.survey.moment is Moment.RATING
            where = texts.help_rating.format(n=n, m=m) if rating else texts.help_questionnaire
        case Stage.FINISHED | Stage.INELIGIBLE | Stage.CLOSED:
            where = texts.help_over
        case _:
            assert_never(journey.stage)
    return f"{where}\n\n{texts.help_commands}"
