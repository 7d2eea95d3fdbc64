"""The judges who are not the replay itself: a person at a terminal, and optionally a
language model behind an OpenAI-compatible endpoint (the study's ``stress_model``)."""

from __future__ import annotations

import re
import time
from collections.abc import Callable, Sequence
from typing import TextIO

from bot.core.conversation import Conversation
from bot.store.interface import StressTests
from bot.store.stress_records import Judge, Judgement, StressResult, Verdict
from bot.stress.replay.agreement import cohen_kappa
from bot.stress.replay.side_by_side import side_by_side
from bot.systems.base import System, SystemFailure

_KEYS = {"p": Verdict.PASS, "f": Verdict.FAIL, "u": Verdict.UNSURE}
_PROMPT = (
    "You judge linguistic stress tests of a task-oriented dialogue system. A participant's"
    " utterance was minimally changed (a typo, a synonym, another word order) and sent to"
    " the system again after the same dialogue. The test passes when the system's behaviour"
    " is not harmed: the reply to the changed utterance does what the reply to the original"
    " did (the same understanding, the same action, the same information), even if worded"
    " differently. Answer with one word: PASS, FAIL or UNSURE."
)


def awaiting(results: Sequence[StressResult], judge: Judge) -> list[StressResult]:
    """Applicable replays no automatic verdict settled that ``judge`` has not judged yet."""
    return [
        r
        for r in results
        if r.replay.applicable and r.by(Judge.AUTO) is None and r.by(judge) is None
    ]


async def judge_at_terminal(
    store: StressTests,
    person: str,
    read: Callable[[], str],
    out: TextIO,
    *,
    clock: Callable[[], float] = time.time,
) -> dict[Verdict, int]:
    """Each replay waiting for a person, shown side by side; p / f / u record a verdict,
    s skips it, q (or the end of input) stops. Every verdict is stored as it is given."""
    given: dict[Verdict, int] = {}
    todo = awaiting(await store.stress_results(), Judge.HUMAN)
    if not todo:
        out.write("Nothing to judge: every applicable replay has a verdict.\n")
        return given
    for n, result in enumerate(todo, 1):
        out.write(f"\n({n} of {len(todo)}) {side_by_side(result)}\n")
        while True:
            out.write("p)ass  f)ail  u)nsure  s)kip  q)uit > ")
            out.flush()
            answer = read().strip().lower()[:1]
            if answer in _KEYS or answer in ("s", "q", ""):
                break
            out.write("Please answer p, f, u, s or q.\n")
        if answer in ("q", ""):
            break
        if answer == "s":
            continue
        verdict = _KEYS[answer]
        await store.record_stress_verdict(
            Judgement(
                result.test.id, result.replay.system_id, Judge.HUMAN, verdict, person, "", clock()
            )
        )
        given[verdict] = given.get(verdict, 0) + 1
    out.write("\n")
    return given


def llm_verdict(text: str) -> Verdict:
    """The model's one word (anything else is unsure)."""
    found = re.search(r"\b(pass|fail|unsure)\b", text.lower())
    return {"pass": Verdict.PASS, "fail": Verdict.FAIL}.get(
        found.group(1) if found else "", Verdict.UNSURE
    )


def _question(result: StressResult) -> str:
    test, replay = result.test.perturbation, result.replay

    def said(texts: Sequence[str], error: str | None) -> str:
        return f"(failed: {error})" if error else "\n".join(texts) or "(no reply)"

    return (
        f"Original utterance: {test.original}\nChanged utterance: {test.perturbed}\n"
        f"Reply to the original:\n{said(replay.baseline.texts, replay.baseline.error)}\n"
        f"Reply to the changed utterance:\n{said(replay.perturbed.texts, replay.perturbed.error)}"
    )


async def judge_with_model(
    store: StressTests,
    model: System,
    model_name: str,
    *,
    clock: Callable[[], float] = time.time,
) -> tuple[dict[Verdict, int], int]:
    """The model's verdict on each replay waiting for one; (verdicts given, failed calls)."""
    given: dict[Verdict, int] = {}
    failed = 0
    for result in awaiting(await store.stress_results(), Judge.LLM):
        conversation = Conversation(
            session_id=f"stress-judge-{result.test.id}-{result.replay.system_id}",
            scenario_id="stress-judge",
            brief="",
            history=(),
            message=_question(result),
            system_prompt=_PROMPT,
        )
        try:
            reply = await model.respond(conversation)
        except SystemFailure:
            failed += 1
            continue
        said = " ".join(reply.texts)
        verdict = llm_verdict(said)
        await store.record_stress_verdict(
            Judgement(
                result.test.id,
                result.replay.system_id,
                Judge.LLM,
                verdict,
                model_name,
                said[:500],
                clock(),
            )
        )
        given[verdict] = given.get(verdict, 0) + 1
    return given, failed


def model_agreement(results: Sequence[StressResult]) -> tuple[float | None, int]:
    """Cohen's kappa of the model's verdicts with people's, on the replays both judged."""
    pairs = [
        (human.verdict.value, model.verdict.value)
        for r in results
        if (human := r.by(Judge.HUMAN)) is not None and (model := r.by(Judge.LLM)) is not None
    ]
    return cohen_kappa(pairs), len(pairs)
