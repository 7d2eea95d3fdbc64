"""``ozlab stress run``: every accepted test replayed against its system, once.

For each test, the logged prefix of its session goes to the system again in a fresh
conversation (a new conversation id, the replay's own replies as history), once with the
logged utterance unchanged and once with the one perturbation. Both conversations run at
the same time; the perturbed one counts only when the unchanged one reached the logged
behaviour (otherwise the test is not applicable, as IDIAL checks first). A replay is
stored whole when both conversations are done: the store is the record of what is done, so
a run killed at any moment resumes where it stood and never replays a finished test. Each
system gets at most ``concurrency`` replays at once, and at most ``rate`` calls a second
when one is given.
"""

from __future__ import annotations

import asyncio
import functools
import secrets
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Protocol, TextIO

from bot.core.conversation import Conversation, SystemReply, Turn
from bot.core.phenomena import StressType
from bot.core.progress import ProgressBar
from bot.core.storable_text import storable, storable_reply
from bot.engine.phases.dialogue import with_tool_success
from bot.store.interface import ConsoleReadModel, StressTests
from bot.store.model import SessionRecord
from bot.store.stress_records import (
    Judge,
    Judgement,
    Replay,
    ReplyTaken,
    Review,
    StressTest,
    Verdict,
)
from bot.stress.replay.dialogue import LoggedDialogue, logged_dialogue
from bot.stress.replay.judging import automatic_verdict, reaches_logged
from bot.stress.replay.pacing import Pace
from bot.systems.base import System, SystemFailure


class ReplayStore(StressTests, ConsoleReadModel, Protocol):
    """The roles a replay uses: the stress tests, and the logged sessions they came from."""


@dataclass(frozen=True)
class Limits:
    """How hard a run may press each system."""

    concurrency: int = 8  # replays at once (each holds its two conversations)
    rate: float | None = None  # calls a second; None: as fast as the system answers
    timeout: float = 60.0  # one call, retries included; a slower one is a failure


@dataclass
class RunSummary:
    """What a run did: replays by outcome, and what it left alone (and why)."""

    outcomes: dict[str, int] = field(default_factory=dict)
    already_done: int = 0
    skipped: dict[str, int] = field(default_factory=dict)

    @property
    def replayed(self) -> int:
        return sum(self.outcomes.values())


@dataclass(frozen=True)
class _Job:
    test: StressTest
    session: SessionRecord


async def run_stress_tests(
    store: ReplayStore,
    systems: Mapping[str, System],
    scenarios: Mapping[str, Mapping[str, object]],
    *,
    types: Sequence[StressType] = (),
    only_systems: Sequence[str] = (),
    limits: Mapping[str, Limits] | None = None,
    default: Limits = Limits(),
    progress: TextIO | None = None,
    clock: Callable[[], float] = time.time,
) -> RunSummary:
    """Replay what is not done yet; returns how it went."""
    summary = RunSummary()
    jobs = await _jobs(store, systems, types, only_systems, summary)
    bar = ProgressBar(sum(len(j) for j in jobs.values()), progress) if progress else None
    run = secrets.token_hex(4)  # a resumed run never continues a conversation of a killed one
    dialogues: dict[str, asyncio.Future[LoggedDialogue | None]] = {}
    writes: set[asyncio.Task[bool]] = set()

    async def dialogue_of(session: SessionRecord) -> LoggedDialogue | None:
        """The session as a replay sees it, read once however many tests it has (and
        while other replays run, rather than all before the first)."""
        found = dialogues.get(session.session_id)
        if found is None:
            found = dialogues[session.session_id] = asyncio.get_running_loop().create_future()
            try:
                transcript = await store.transcript(session.session_id)
            except BaseException as error:  # the others waiting on it hear of it too
                found.set_exception(error)
                raise
            scenario = scenarios.get(session.scenario_id, {})
            found.set_result(
                None if transcript is None else logged_dialogue(session, transcript, scenario)
            )
        return await found

    async def work(system_id: str, queue: asyncio.Queue[_Job], pace: Pace) -> None:
        system = systems[system_id]
        while not queue.empty():
            job = queue.get_nowait()
            dialogue = await dialogue_of(job.session)
            if dialogue is None:
                outcome = "skipped"
                summary.skipped["its session has no transcript"] = (
                    summary.skipped.get("its session has no transcript", 0) + 1
                )
                if bar is not None:
                    bar.advance(outcome)
                continue
            replay, verdict, outcome = await _replay(
                store, system, system_id, pace, job.test, dialogue, run, clock
            )
            # Stored while the next replay starts: a replay is done once it is durable, and
            # the progress bar and the summary count it only then.
            writing = asyncio.create_task(store.record_replay(replay, verdict))
            writes.add(writing)
            writing.add_done_callback(functools.partial(stored, outcome=outcome))

    def stored(done: asyncio.Task[bool], outcome: str) -> None:
        writes.discard(done)
        if done.cancelled() or done.exception() is not None:
            return
        summary.outcomes[outcome] = summary.outcomes.get(outcome, 0) + 1
        if bar is not None:
            bar.advance(outcome)

    workers: list[asyncio.Task[None]] = []
    for system_id, todo in jobs.items():
        limit = (limits or {}).get(system_id, default)
        queue: asyncio.Queue[_Job] = asyncio.Queue()
        for job in todo:
            queue.put_nowait(job)
        pace = Pace(limit.rate, limit.timeout)
        workers += [
            asyncio.create_task(work(system_id, queue, pace))
            for _ in range(min(limit.concurrency, len(todo)))
        ]
    try:
        await asyncio.gather(*workers)
        await asyncio.gather(*writes)  # a failed write (the disk) is told, not swallowed
    finally:
        for worker in workers:
            worker.cancel()
        if bar is not None:
            bar.close()
    return summary


async def _jobs(
    store: ReplayStore,
    systems: Mapping[str, System],
    types: Sequence[StressType],
    only_systems: Sequence[str],
    summary: RunSummary,
) -> dict[str, list[_Job]]:
    """The (test, session) pairs to replay, by system: what is not done yet."""

    def skip(reason: str) -> None:
        summary.skipped[reason] = summary.skipped.get(reason, 0) + 1

    done = await store.replayed_stress_tests()
    sessions = {s.session_id: s for s in await store.sessions()}
    jobs: dict[str, list[_Job]] = {}
    for test in await store.stress_tests(types, Review.ACCEPTED):
        session = sessions.get(test.perturbation.session_id)
        if session is None:
            skip("its session is not in the database")
            continue
        if only_systems and session.system_id not in only_systems:
            continue
        if (test.id, session.system_id) in done:
            summary.already_done += 1
            continue
        if session.system_id not in systems:
            skip(f"system {session.system_id} cannot be replayed")
            continue
        jobs.setdefault(session.system_id, []).append(_Job(test, session))
    return jobs


async def _replay(
    store: ReplayStore,
    system: System,
    system_id: str,
    pace: Pace,
    stress_test: StressTest,
    dialogue: LoggedDialogue,
    run: str,
    clock: Callable[[], float],
) -> tuple[Replay, Judgement | None, str]:
    """One test against one system: the replay, its automatic verdict, and the outcome's
    name for the progress bar."""
    test = stress_test.perturbation
    started = clock()
    prefix = [t.user for t in dialogue.prefix(test.turn)]
    conversation = f"stress-{stress_test.id}-{run}"
    # Two independent fresh conversations, at the same time: the perturbed one counts only
    # when the unchanged one reached the logged behaviour (IDIAL checks that first).
    (baseline, _), (perturbed, in_prefix) = await asyncio.gather(
        _converse(system, pace, dialogue, f"{conversation}-a", [*prefix, test.original]),
        _converse(system, pace, dialogue, f"{conversation}-b", [*prefix, test.perturbed]),
    )
    logged = dialogue.at(test.turn)
    applicable = reaches_logged(baseline, logged.events if logged is not None else {})
    verdict: tuple[Verdict, str] | None
    if not applicable:
        perturbed = ReplyTaken()  # says nothing about the perturbation: not kept
        verdict = (Verdict.NOT_APPLICABLE, _why_not(baseline))
    else:
        if in_prefix:
            verdict = (Verdict.UNSURE, "the system failed before the perturbed turn")
        else:
            verdict = automatic_verdict(baseline, perturbed)
    finished = clock()
    replay = Replay(stress_test.id, system_id, started, finished, baseline, perturbed, applicable)
    judgement = (
        None
        if verdict is None
        else Judgement(stress_test.id, system_id, Judge.AUTO, verdict[0], "", verdict[1], finished)
    )
    return replay, judgement, _OUTCOME[verdict[0]] if verdict is not None else "to judge"


_OUTCOME = {
    Verdict.PASS: "passed",
    Verdict.FAIL: "failed",
    Verdict.UNSURE: "unsure",
    Verdict.NOT_APPLICABLE: "not applicable",
}


def _why_not(baseline: ReplyTaken) -> str:
    if baseline.error is not None:
        return f"the unchanged replay failed: {baseline.error}"
    return "the unchanged replay did not reach the logged outcome"


async def _converse(
    system: System,
    pace: Pace,
    dialogue: LoggedDialogue,
    conversation_id: str,
    lines: Sequence[str],
) -> tuple[ReplyTaken, bool]:
    """``lines`` sent one by one in a fresh conversation; what the last one got, and
    whether the system failed before it."""
    history: list[Turn] = []
    reply = SystemReply(texts=())
    for n, line in enumerate(lines):
        conversation = Conversation(
            session_id=conversation_id,
            scenario_id=dialogue.scenario_id,
            brief=dialogue.brief,
            history=tuple(history),
            message=line,
            system_prompt=dialogue.system_prompt,
        )
        try:
            async with pace.call():
                answer = await asyncio.wait_for(system.respond(conversation), pace.limit)
            reply = storable_reply(answer)  # outside text, made storable at its door
        except SystemFailure as error:
            said = storable(str(error)) or type(error).__name__
            return ReplyTaken(error=said), n + 1 < len(lines)
        except TimeoutError:
            return ReplyTaken(error=f"no reply within {pace.limit:g} s"), n + 1 < len(lines)
        except Exception as error:  # garbage from a system under test is its failure, not ours
            said = storable(f"{type(error).__name__}: {error}")
            return ReplyTaken(error=said), n + 1 < len(lines)
        history.append(Turn(line, "\n\n".join(reply.texts)))
    reply = with_tool_success(reply)  # a tool call that ended the task, as the bot logs it
    names = set(reply.events) | set(reply.event_data)
    events = {name: dict(reply.event_data.get(name, {})) for name in sorted(names)}
    return ReplyTaken(tuple(reply.texts), events), False
