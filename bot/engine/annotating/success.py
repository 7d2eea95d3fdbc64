"""What a model judge of task success is asked and how its answer is read: the task as the
participant read it, the scenario's success criterion and the whole conversation; the answer
is yes or no and nothing else (anything else is no verdict, never a success). Pure: the run
is ``bot.annotation.success_judging``, the reading of kept verdicts the report's."""

from __future__ import annotations

from collections.abc import Sequence

from bot.core.annotation import TranscriptExchange
from bot.engine.annotating.judging import DATA, Choice, delimited, parse
from scenarios.jobs import Judge
from scenarios.models import Scenario, Texts

SUCCESS_JOB = "task success"
"""The job a success verdict is kept under: a space, so no job file's id can be the same."""
SUCCESS_ITEM = "success"
"""The item a success verdict answers."""
VERDICTS = (Choice("yes", 1, "the task was done", None), Choice("no", 0, "it was not", None))

_ROLE = (
    "You read a conversation between a participant and an assistant, and decide whether the"
    " participant's task was done, judged by its success criterion alone: not by how"
    " pleasant, long or fluent the conversation was."
)
_RULES = "Answer with exactly yes or no, and nothing else: no words, no punctuation."


def instructions(judge: Judge) -> str:
    """The system message: the judge's own prompt, its role, the answering rule. Its hash
    names the prompt in every verdict's provenance."""
    return "\n\n".join([*([judge.prompt] if judge.prompt else []), _ROLE, DATA, _RULES])


def question(scenario: Scenario, exchanges: Sequence[TranscriptExchange], texts: Texts) -> str:
    """The user message: the task as the participant read it, the criterion, the whole
    conversation as the delimited block the instructions name."""
    lines = []
    for x in exchanges:
        reply = x.system_text if x.system_text is not None else texts.ann_no_reply
        lines += [f"{texts.ann_user}: {x.user_text}", f"{texts.ann_system}: {reply}"]
    said = "\n".join(lines) or "(the participant wrote nothing)"
    return (
        f"The participant's task:\n{scenario.brief}\n\n"
        f"Success criterion: {scenario.success_criterion}\n\n"
        f"The conversation:\n{delimited(said)}\n\n"
        "Question: Was the task done, by the success criterion?\n"
        "Answer with one of: yes, no"
    )


def verdict(outcome: str, said: str | None) -> bool | None:
    """A kept judgement as a success (True) or a failure; None when the judge gave none
    (unparseable after the retry, or the call failed)."""
    if outcome != "rated" or said is None:
        return None
    choice = parse(said, VERDICTS)
    return None if choice is None else choice.value == 1
