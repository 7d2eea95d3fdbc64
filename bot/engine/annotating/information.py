"""The extra information an annotation item needs (XRec questions 11-13: what was
recommended), said before the first item that needs it: pure. What the rated reply
recommended is looked up outside the engine (``bot.annotation.information``) and comes
with the target, as its ``recommended`` entries."""

from __future__ import annotations

from bot.core.annotation import AnnotationTask
from scenarios.jobs import AnnotationJob, ExtraInformation

NOTHING_FOUND = "The response names no item whose information is known."


def information_for(job: AnnotationJob, item_id: str) -> ExtraInformation | None:
    """The extra information shown before ``item_id``, when it is the first item to need it."""
    for extra in job.extra_information:
        if extra.items and extra.items[0] == item_id:
            return extra
    return None


def information_text(extra: ExtraInformation, task: AnnotationTask) -> str:
    """The information for the rated exchange, under the job's heading."""
    body = "\n\n".join(task.recommended) if task.recommended else NOTHING_FOUND
    return f"{extra.heading}\n\n{body}"
