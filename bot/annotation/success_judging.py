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

from bot.annotation.judging import JudgeAsker, JudgeRun, Limits, ask_judge
from bot.core.progress import ProgressBar
from bot.core.vocabulary import AnnotationLevel, SessionState
from bot.engine.annotating.judging import prompt_hash
from bot.engine.annotating.success import (
    SUCCESS_ITEM,
    SUCCESS_JOB,
    VERDICTS,
    instructions,
    question,
)
from bot.store.interface import StudyStore
from bot.store.model import SessionRecord
from bot.systems.http_json import JsonClient
from scenarios.jobs import Judge
from scenarios.models import StudyBundle
from scenarios.systems import reports_success

DEFAULT_LIMITS = Limits()
_OVER = (SessionState.QUESTIONNAIRE, SessionState.ENDED)
"""A task is over once its questionnaire or the end is reached (an abandoned one when it
ended)."""


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
        if not answer.failed and answer.choice is not None:
            run.rated += 1
        where = (SUCCESS_JOB, session.session_id, AnnotationLevel.SESSION.value, SUCCESS_ITEM)
        await store.keep_judgements([asker.kept(where, digest, answer, clock(), sessions)])
        run.targets += 1
        if bar is not None:
            bar.advance()

    bar = ProgressBar(len(todo), out, "targets") if out is not None and todo else None
    await asyncio.gather(*(one(s) for s in todo))
    if bar is not None:
        bar.close()
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
