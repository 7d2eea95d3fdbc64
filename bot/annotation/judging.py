"""A model judge rates every target of an annotation job (``ozlab judge run``): each item
asked on its own, the answer parsed strictly and asked once more when it is not one of the
item's values, every call kept in the study's database by its exact request (a rerun, or a
run resumed after a kill, asks nothing twice), at most so many calls at once and per second.
A call and a judgement name the sessions they show: an erasure takes them along.

A pair is judged twice, in both orders: a verdict that flips with the order is inconsistent,
kept and reported as such, never counted as a win. Every vote of a judge is flagged (its
verdict, inconsistent, or the swapped repeat of its verdict), so that people's fit never
counts a model's votes; the judges' section of the report reads them."""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any, TextIO
from urllib.parse import urlsplit

from bot.annotation.jobs import job_record, prepare_job
from bot.core.annotation import AnnotationTask
from bot.core.progress import ProgressBar
from bot.core.storable_text import storable
from bot.core.vocabulary import AnnotationLevel, FlagReason, Origin, RaterKind
from bot.core.votes import Vote
from bot.engine.annotating.acute import pair_questions, pair_votes
from bot.engine.annotating.judging import (
    Choice,
    JudgedItem,
    answer_text,
    instructions,
    judged_items,
    parse,
    prompt_hash,
    question,
    request,
    request_key,
    shown,
)
from bot.engine.annotating.pairs import pair_sessions, pair_target
from bot.store.interface import StudyStore
from bot.store.model import ImportedRating, JudgeCall, JudgementRecord
from bot.systems.base import SystemFailure
from bot.systems.http_json import JsonClient, bearer_header, excerpt
from bot.systems.openai import completions_url, served_at
from scenarios.jobs import AnnotationJob, Judge
from scenarios.models import StudyBundle

_RETRY = "That is not one of the values. Answer with one of: {allowed}"


def judge_annotator(judge: Judge) -> str:
    """The judge's pseudonym among the job's raters: never mistaken for a person's code."""
    return f"model:{judge.id}"


@dataclass
class JudgeRun:
    """What a run did: targets judged (and skipped as judged before), answers rated,
    unparseable (after the retry), calls failed, calls made and found kept from before."""

    targets: int = 0
    skipped: int = 0
    rated: int = 0
    unparseable: int = 0
    retried: int = 0
    failed: int = 0
    calls: int = 0
    cached: int = 0
    inconsistent: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0


@dataclass(frozen=True)
class Limits:
    """At most ``concurrency`` calls at once and ``per_second`` calls started a second."""

    concurrency: int = 4
    per_second: float = 5.0


class _Pace:
    """Spaces the starts of calls ``1 / per_second`` apart (a real wait: the server's
    rate limit is real too)."""

    def __init__(self, per_second: float) -> None:
        self._gap = 1.0 / per_second
        self._next = 0.0
        self._lock = asyncio.Lock()

    async def wait(self) -> None:
        async with self._lock:
            loop = asyncio.get_running_loop()
            now = loop.time()
            start = max(now, self._next)
            self._next = start + self._gap
        if start > now:
            await asyncio.sleep(start - now)


class JudgeAsker:
    """One judge's calls: from the store when asked before, else from the server (the
    annotation jobs' judges and ``ozlab stress judge --model`` alike)."""

    def __init__(
        self,
        judge: Judge,
        store: StudyStore,
        client: JsonClient,
        env: Mapping[str, str],
        limits: Limits,
        run: JudgeRun,
    ) -> None:
        self.judge, self.store, self.client, self.run = judge, store, client, run
        self.endpoint = completions_url(
            served_at(judge.url, judge.url_env, env, f"judge {judge.id!r}")
        )
        self.host = urlsplit(self.endpoint).hostname or ""
        self._headers = bearer_header(judge.id, judge.api_key_env, env)
        self._slots = asyncio.Semaphore(limits.concurrency)
        self._pace = _Pace(limits.per_second)

    def kept(
        self,
        where: tuple[str, str, str, str],
        digest: str,
        answer: JudgeAnswer,
        at: float,
        sessions: _Shown,
    ) -> JudgementRecord:
        """The record of one answer to keep, ``where`` (job, target, level, item) it was
        asked; a failed call and an unparseable answer are counted in the run."""
        outcome = "failed" if answer.failed else "rated" if answer.choice else "unparseable"
        if answer.failed:
            self.run.failed += 1
        elif answer.choice is None:
            self.run.unparseable += 1
        judge = self.judge
        job, target, level, item = where
        return JudgementRecord(
            job,
            judge.id,
            target,
            level,
            item,
            judge.model,
            self.host,
            digest,
            judge.temperature,
            judge.seed,
            outcome,
            excerpt(answer.said),
            answer.retried,
            answer.key,
            at,
            *sessions,
        )

    async def ask(self, body: dict[str, Any], sessions: _Shown) -> tuple[str, str]:
        """(what the judge said, the call's key); SystemFailure when the call failed."""
        key = request_key(body)
        kept = await self.store.judge_call(key)
        if kept is not None:
            self.run.cached += 1
            return kept.answer, key
        # An answer is kept before its slot is let go: a run killed while the next call
        # waits has paid for no answer it did not keep.
        async with self._slots:
            await self._pace.wait()
            answer = await self.client.post(
                self.endpoint, body, timeout=self.judge.timeout, headers=self._headers
            )
            said = storable(answer_text(answer))  # a model's words, made storable at the door
            usage = answer.get("usage") if isinstance(answer, dict) else None
            usage = usage if isinstance(usage, dict) else {}
            prompt, completion = (
                _count(usage.get("prompt_tokens")),
                _count(usage.get("completion_tokens")),
            )
            await self.store.keep_judge_call(
                JudgeCall(
                    key,
                    self.judge.id,
                    json.dumps(body, sort_keys=True, ensure_ascii=False),
                    said,
                    prompt,
                    completion,
                    *sessions,
                )
            )
        self.run.calls += 1
        self.run.prompt_tokens += prompt or 0
        self.run.completion_tokens += completion or 0
        return said, key


def _count(value: object) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


@dataclass(frozen=True)
class JudgeAnswer:
    """What a judge answered one question: a choice, or none (unparseable after a retry,
    or ``failed``: the call failed)."""

    choice: Choice | None
    said: str
    retried: bool
    key: str | None
    failed: bool


_Shown = tuple[str | None, str | None]
"""The sessions a question shows: the conversation (the first, of a pair) and a pair's other."""


def _shown_sessions(task: AnnotationTask) -> _Shown:
    if task.target.level is AnnotationLevel.PAIR:
        sessions = pair_sessions(task.target.target)
        if sessions is not None:
            return sessions
    return (task.target.session_id, None)


async def ask_judge(
    asker: JudgeAsker,
    system: str,
    user: str,
    choices: Sequence[Choice],
    sessions: tuple[str | None, str | None],
) -> JudgeAnswer:
    """One question's answer, asked once more when the first is not one of ``choices``;
    ``sessions``: the conversations the question shows (an erasure takes the calls)."""
    body = request(asker.judge, system, user)
    try:
        said, key = await asker.ask(body, sessions)
        choice = parse(said, choices)
        if choice is not None:
            return JudgeAnswer(choice, said, False, key, False)
        asker.run.retried += 1
        allowed = ", ".join(c.answer for c in choices)
        asked = body["messages"]
        messages = [
            *(asked if isinstance(asked, list) else []),
            {"role": "assistant", "content": said},
            {"role": "user", "content": _RETRY.format(allowed=allowed)},
        ]
        said, key = await asker.ask({**body, "messages": messages}, sessions)
    except SystemFailure as failure:
        return JudgeAnswer(None, str(failure), False, None, True)
    return JudgeAnswer(parse(said, choices), said, True, key, False)


def _swapped(task: AnnotationTask) -> AnnotationTask:
    """The same pair with its conversations in the other order."""
    sessions = pair_sessions(task.target.target)
    if sessions is None:
        raise ValueError(f"{task.target.target!r} is not a pair of stored conversations")
    target = replace(
        task.target, target=pair_target(sessions[1], sessions[0]), system=task.second_system
    )
    return replace(
        task,
        target=target,
        conversation=task.second,
        second=task.conversation,
        second_system=task.target.system,
    )


async def run_judge(
    store: StudyStore,
    bundle: StudyBundle,
    job: AnnotationJob,
    judge: Judge,
    client: JsonClient,
    env: Mapping[str, str],
    *,
    limits: Limits = Limits(),
    limit: int | None = None,
    out: TextIO | None = None,
    clock: Callable[[], float] = time.time,
) -> JudgeRun:
    """Rate every target the judge has not rated yet (the first ``limit`` of them)."""
    run = JudgeRun()
    await prepare_job(store, bundle, job)
    record = job_record(bundle, job)
    items = {
        AnnotationLevel.EXCHANGE: judged_items(job.rate.exchange, bundle.questionnaires),
        AnnotationLevel.SESSION: judged_items(job.rate.session, bundle.questionnaires),
        AnnotationLevel.PAIR: judged_items(job.rate.pair, bundle.questionnaires),
    }
    system = instructions(job, judge)
    digest = prompt_hash(system)
    asker = JudgeAsker(judge, store, client, env, limits, run)
    who = judge_annotator(judge)
    questions = pair_questions(bundle.questionnaires[q] for q in job.rate.pair)

    def answered(judged: JudgedItem, done: frozenset[str]) -> bool:
        asked = questions.get(judged.item.id)
        return judged.item.id in done or (asked is not None and asked.question in done)

    tasks: list[tuple[AnnotationTask, list[JudgedItem]]] = []
    for task, done in await store.judge_tasks(job.id, who):
        if task.target.level is AnnotationLevel.PAIR and pair_sessions(task.target.target) is None:
            continue  # an onboarding pair: a check of people, not of the judge
        left = [j for j in items[task.target.level] if not answered(j, done)]
        if not left:
            run.skipped += 1
            continue
        tasks.append((task, left))
    if limit is not None:
        tasks = tasks[:limit]
    total = len(tasks)
    texts = bundle.study.texts

    def kept(task: AnnotationTask, judged: JudgedItem, answer: JudgeAnswer) -> JudgementRecord:
        target = task.target
        where = (job.id, target.target, target.level.value, judged.item.id)
        return asker.kept(where, digest, answer, clock(), _shown_sessions(task))

    async def rate(task: AnnotationTask, asked: list[JudgedItem]) -> None:
        sessions = _shown_sessions(task)
        answers = await asyncio.gather(
            *(
                ask_judge(asker, system, question(j, shown(job, task, texts)), j.choices, sessions)
                for j in asked
            )
        )
        await store.keep_judgements([kept(task, j, a) for j, a in zip(asked, answers, strict=True)])
        ratings = []
        for judged, answer in zip(asked, answers, strict=True):
            if answer.choice is not None:
                ratings.append(
                    ImportedRating(
                        line=0,
                        target=task.target,
                        annotator=who,
                        instrument_id=judged.instrument_id,
                        item_id=judged.item.id,
                        value=answer.choice.value,
                        label=answer.choice.label,
                        text=answer.choice.text,
                        recorded_at=clock(),
                    )
                )
        if ratings:
            outcome = await store.import_annotations(record, ratings, origin=Origin.MODEL)
            run.rated += outcome.ratings if outcome.written else 0

    async def compare(task: AnnotationTask, asked_items: list[JudgedItem]) -> None:
        other = _swapped(task)
        both = await asyncio.gather(
            *(
                ask_judge(
                    asker,
                    system,
                    question(j, shown(job, t, texts)),
                    j.choices,
                    _shown_sessions(t),
                )
                for t in (task, other)
                for j in asked_items
            )
        )
        first, second = both[: len(asked_items)], both[len(asked_items) :]
        await store.keep_judgements(
            [
                kept(t, j, a)
                for t, answers in ((task, first), (other, second))
                for j, a in zip(asked_items, answers, strict=True)
            ]
        )
        votes: list[Vote] = []
        for judged, ab, ba in zip(asked_items, first, second, strict=True):
            asked = questions.get(judged.item.id)
            if asked is None or ab.choice is None or ba.choice is None:
                continue
            # A picks the first conversation's speaker in the order shown; in the swapped
            # order the same system is picked when the second value is chosen.
            consistent = (ab.choice.answer == asked.first) == (ba.choice.answer == asked.second)
            run.inconsistent += 0 if consistent else 1
            for shown_task, answer, order in ((task, ab, "ab"), (other, ba, "ba")):
                given = "" if answer.choice is None else answer.choice.answer
                made = pair_votes(
                    job, {judged.item.id: asked}, shown_task, who, {judged.item.id: given}
                )
                if not made:
                    continue
                flag = FlagReason.MODEL_VERDICT
                if not consistent:
                    flag = FlagReason.INCONSISTENT
                elif order == "ba":
                    flag = FlagReason.SWAPPED_REPEAT
                votes.append(
                    replace(
                        made[0],
                        vote_id=f"{job.id}:{task.target.target}:{who}:{asked.question}:{order}",
                        rater_kind=RaterKind.MODEL,
                        session_id=task.target.target,
                        flag_reason=flag,
                    )
                )
        if votes:
            run.rated += await store.record_votes(bundle.study.id, votes, origin=Origin.MODEL)

    async def one(task: AnnotationTask, left: list[JudgedItem]) -> None:
        pair = task.target.level is AnnotationLevel.PAIR
        await (compare(task, left) if pair else rate(task, left))
        run.targets += 1
        if bar is not None:
            bar.advance()

    bar = ProgressBar(total, out, "targets") if out is not None and total else None
    await asyncio.gather(*(one(t, left) for t, left in tasks))
    if bar is not None:
        bar.close()
    return run


def summary(run: JudgeRun) -> Sequence[str]:
    """The run in a few lines, for the terminal."""
    return (
        f"{run.targets} targets judged ({run.skipped} judged before), {run.rated} ratings kept",
        f"{run.unparseable} answers unparseable after a retry ({run.retried} retried),"
        f" {run.failed} calls failed",
        f"{run.calls} calls made, {run.cached} found kept from before;"
        f" tokens: {run.prompt_tokens} in, {run.completion_tokens} out",
        *(
            [f"{run.inconsistent} pair verdicts flipped with the order (inconsistent)"]
            if run.inconsistent
            else []
        ),
    )
