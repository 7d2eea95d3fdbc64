"""A model judge decides whether a task succeeded (``ozlab judge run --success``): it reads
each ended conversation of a system that cannot report success itself against the
scenario's ``success_criterion`` and answers yes or no.

It goes through the annotation judges' code: the same strict parsing and one retry, an
unparseable answer counted and never taken as a verdict, every call kept by its exact
request (a rerun or a run resumed after a kill asks nothing twice), and each verdict's
provenance in the judgements ledger under the job ``task success``, a name no job file can
take. The report takes a verdict only where no earlier source of success decided."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Mapping, Sequence
from typing import TextIO

from bot.annotation.judging import JudgeAsker, JudgeRun, Limits, ask_judge, progress_bar
from bot.core.annotation import TranscriptExchange
from bot.core.vocabulary import AnnotationLevel, SessionState
from bot.engine.annotating.judging import Choice, parse, prompt_hash
from bot.store.interface import StudyStore
from bot.store.model import JudgementRecord, SessionRecord
from bot.systems.http_json import JsonClient, excerpt
from scenarios.jobs import Judge
from scenarios.models import Scenario, StudyBundle, Texts
from scenarios.systems import reports_success

SUCCESS_JOB = "task success"
"""The job a success verdict is kept under: a space, so no job file's id can be the same."""
SUCCESS_ITEM = "success"
"""The item a success verdict answers."""
DEFAULT_LIMITS = Limits()
VERDICTS = (Choice("yes", 1, "the task was done", None), Choice("no", 0, "it was not", None))

_ROLE = (
    "You read a conversation between a participant and an assistant, and decide whether the"
    " participant's task was done, judged by its success criterion alone: not by how"
    " pleasant, long or fluent the conversation was."
)
_OVER = (SessionState.QUESTIONNAIRE, SessionState.ENDED)
"""A task is over once its questionnaire or the end is reached (an abandoned one when it
ended)."""
_RULES = "Answer with exactly yes or no, and nothing else: no words, no punctuation."


def instructions(judge: Judge) -> str:
    """The system message: the judge's own prompt, its role, the answering rule. Its hash
    names the prompt in every verdict's provenance."""
    return "\n\n".join([*([judge.prompt] if judge.prompt else []), _ROLE, _RULES])


def question(scenario: Scenario, exchanges: Sequence[TranscriptExchange], texts: Texts) -> str:
    """The user message: the task as the participant read it, the criterion, the whole
    conversation."""
    lines = []
    for x in exchanges:
        reply = x.system_text if x.system_text is not None else texts.ann_no_reply
        lines += [f"{texts.ann_user}: {x.user_text}", f"{texts.ann_system}: {reply}"]
    said = "\n".join(lines) or "(the participant wrote nothing)"
    return (
        f"The participant's task:\n{scenario.brief}\n\n"
        f"Success criterion: {scenario.success_criterion}\n\n"
        f"The conversation:\n{said}\n\n"
        "Question: Was the task done, by the success criterion?\n"
        "Answer with one of: yes, no"
    )


def verdict(judgement: JudgementRecord) -> bool | None:
    """A kept verdict as a success (True) or a failure; None when the judge gave none
    (unparseable after the retry, or the call failed)."""
    if judgement.outcome != "rated":
        return None
    choice = parse(judgement.said, VERDICTS)
    return None if choice is None else choice.value == 1


def verdicts(bundle: StudyBundle, judgements: Sequence[JudgementRecord]) -> dict[str, bool | None]:
    """Session → the study's success judge's verdict (None: judged, no verdict)."""
    judge = bundle.study.success_judge
    if judge is None:
        return {}
    return {
        j.target: verdict(j)
        for j in judgements
        if j.job == SUCCESS_JOB and j.judge == judge.id and j.item_id == SUCCESS_ITEM
    }


def judged_sessions(bundle: StudyBundle, sessions: Sequence[SessionRecord]) -> list[SessionRecord]:
    """The sessions a success judge reads: the study's tasks that are over, of a system that
    cannot report success itself, in a scenario that states its success criterion."""
    silent = {s.id for s in bundle.study.systems if not reports_success(s)}
    return [
        s
        for s in sessions
        if s.study_id == bundle.study.id
        and s.system_id in silent
        and (s.ended_at is not None or s.state in _OVER)
        and s.scenario_id in bundle.scenarios
        and bundle.scenarios[s.scenario_id].success_criterion is not None
    ]


async def run_success_judge(
    store: StudyStore,
    bundle: StudyBundle,
    judge: Judge,
    client: JsonClient,
    env: Mapping[str, str],
    *,
    limits: Limits = DEFAULT_LIMITS,
    limit: int | None = None,
    out: TextIO | None = None,
    clock: Callable[[], float] = time.time,
) -> JudgeRun:
    """Judge every session not judged yet (the first ``limit`` of them); a session whose
    verdict was unparseable or whose call failed is asked again (from the kept calls)."""
    run = JudgeRun()
    done = {
        j.target
        for j in await store.judgements()
        if j.job == SUCCESS_JOB and j.judge == judge.id and j.outcome == "rated"
    }
    todo = []
    for session in judged_sessions(bundle, await store.sessions()):
        if session.session_id in done:
            run.skipped += 1
        else:
            todo.append(session)
    if limit is not None:
        todo = todo[:limit]
    system = instructions(judge)
    digest = prompt_hash(system)
    asker = JudgeAsker(judge, store, client, env, limits, run)
    texts = bundle.study.texts

    async def one(session: SessionRecord) -> None:
        transcript = await store.transcript(session.session_id)
        exchanges = () if transcript is None else transcript.exchanges
        scenario = bundle.scenarios[session.scenario_id]
        sessions = (session.session_id, None)
        answer = await ask_judge(
            asker, system, question(scenario, exchanges, texts), VERDICTS, sessions
        )
        outcome = "failed" if answer.failed else "rated" if answer.choice else "unparseable"
        if answer.failed:
            run.failed += 1
        elif answer.choice is None:
            run.unparseable += 1
        else:
            run.rated += 1
        await store.keep_judgements(
            [
                JudgementRecord(
                    SUCCESS_JOB,
                    judge.id,
                    session.session_id,
                    AnnotationLevel.SESSION.value,
                    SUCCESS_ITEM,
                    judge.model,
                    asker.host,
                    digest,
                    judge.temperature,
                    judge.seed,
                    outcome,
                    excerpt(answer.said),
                    answer.retried,
                    answer.key,
                    clock(),
                    session.session_id,
                )
            ]
        )
        run.targets += 1
        if out is not None:
            out.write(progress_bar(run.targets, len(todo)))
            out.flush()

    await asyncio.gather(*(one(s) for s in todo))
    if out is not None and todo:
        out.write("\n")
    return run


def success_summary(run: JudgeRun) -> Sequence[str]:
    """The run in a few lines, for the terminal."""
    return (
        f"{run.targets} conversations judged ({run.skipped} judged before),"
        f" {run.rated} verdicts kept",
        f"{run.unparseable} answers unparseable after a retry ({run.retried} retried),"
        f" {run.failed} calls failed",
        f"{run.calls} calls made, {run.cached} found kept from before;"
        f" tokens: {run.prompt_tokens} in, {run.completion_tokens} out",
    )
