"""``ozlab judge run``: a job's model judges rate every target beside the annotators.

Resumable: a target the judge rated is not asked again, and every call is kept by its exact
request in the study's database, so that a rerun costs nothing. ``--limit N`` judges the
first N targets only (a trial). ``--success`` runs the study's ``success_judge`` instead:
a yes or no per conversation against its scenario's success criterion.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
from typing import TYPE_CHECKING

from bot.cli.arguments import count, positive
from bot.cli.flags import STUDY_FILE, database
from bot.core.errors import INTERRUPTED, StudyDataError, SystemSetupError

if TYPE_CHECKING:
    from bot.store.interface import StudyStore
    from scenarios.jobs import AnnotationJob, Judge
    from scenarios.models import StudyBundle

NAME = "judge"


def add(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    judge = commands.add_parser(NAME, help="language models rate a job's targets beside people")
    actions = judge.add_subparsers(dest="judge_command", required=True)
    run_parser = actions.add_parser("run", help="every judge of --job rates every target")
    database(run_parser)
    which = run_parser.add_mutually_exclusive_group(required=True)
    which.add_argument("--job", help="the annotation job")
    which.add_argument(
        "--success",
        action="store_true",
        help="the study's success_judge decides task success from each conversation",
    )
    run_parser.add_argument(
        "--study",
        help=f"the study of --job: its id in the database, or {STUDY_FILE}, when the database"
        " holds none or an older version of the job",
    )
    run_parser.add_argument("--judge", help="only this judge (its id in the job file)")
    run_parser.add_argument("--limit", type=count, help="only the first N targets (a trial)")
    run_parser.add_argument("--concurrency", type=count, default=4, help="calls at once")
    run_parser.add_argument("--rate", type=positive, default=5.0, help="calls a second at most")


def run(args: argparse.Namespace) -> int:
    try:
        return asyncio.run(_run(args))
    except KeyboardInterrupt:
        print("Stopped. Run the same command again to go on.", file=sys.stderr)
        return INTERRUPTED


async def _run(args: argparse.Namespace) -> int:
    from bot.annotation.invitations import study_bundle
    from bot.annotation.jobs import job_of
    from bot.annotation.judging import Limits, run_judge, summary
    from bot.store import Access, open_store
    from bot.store.claims import claim
    from bot.systems.http_json import JsonClient

    store = await open_store(args.db, access=Access.UPGRADE)  # a missing study: one line
    try:
        # One study, one writer: refused beside a running bot (judge once annotators are
        # done, the bot stopped), and no bot starts on the study while its judges rate.
        writer = await asyncio.to_thread(claim, args.db, "ozlab judge run")
    except BaseException:
        await store.close()
        raise
    try:
        bundle = await study_bundle(store, args.study)
        if args.success:
            return await _success(store, bundle, args)
        job = job_of(bundle, args.job)
        judges = [j for j in job.judges if args.judge in (None, j.id)]
        if not judges:
            raise StudyDataError(_no_judge(args, bundle, job))
        for judge in judges:
            _key_set(judge)
        client = JsonClient()
        try:
            for judge in judges:
                print(f"{judge.id} ({judge.model}) rates {job.id}:", file=sys.stderr)
                done = await run_judge(
                    store,
                    bundle,
                    job,
                    judge,
                    client,
                    os.environ,
                    limits=Limits(args.concurrency, args.rate),
                    limit=args.limit,
                    out=sys.stderr,
                )
                for line in summary(done):
                    print(f"  {line}")
        finally:
            await client.close()
    finally:
        await store.close()
        writer.release()
    return 0


async def _success(store: StudyStore, bundle: StudyBundle, args: argparse.Namespace) -> int:
    from bot.annotation.judging import Limits
    from bot.annotation.success_judging import run_success_judge, success_summary
    from bot.systems.http_json import JsonClient

    judge = bundle.study.success_judge
    if judge is None or args.judge not in (None, judge.id):
        raise StudyDataError(
            f"study {bundle.study.id!r} names no success_judge"
            + (f" {args.judge!r}" if args.judge else "")
            + ": add success_judge to the study file"
        )
    _key_set(judge)
    client = JsonClient()
    try:
        print(f"{judge.id} ({judge.model}) judges task success:", file=sys.stderr)
        done = await run_success_judge(
            store,
            bundle,
            judge,
            client,
            os.environ,
            limits=Limits(args.concurrency, args.rate),
            limit=args.limit,
            out=sys.stderr,
        )
    finally:
        await client.close()
    for line in success_summary(done):
        print(f"  {line}")
    return 0


def _no_judge(args: argparse.Namespace, bundle: StudyBundle, job: AnnotationJob) -> str:
    """Why the job has no judge to run; when the job was read from the database, that the
    job file may say otherwise, and the command that reads the file instead."""
    from pathlib import Path

    from bot.annotation.invitations import study_file_near
    from bot.core.errors import without_passwords

    wanted = f"judge {args.judge!r}" if args.judge else "judges"
    known = ", ".join(j.id for j in job.judges)
    if args.study is not None and args.study != bundle.study.id:  # read from the file given
        return (
            f"job {job.id!r} has no judge {args.judge!r} (its judges: {known or 'none'})"
            if args.judge
            else f"job {job.id!r} names no judges: add judges to the job file"
        )
    stored = f"job {job.id!r} as stored in the database names " + (
        f"no judge {args.judge!r} (its judges: {known})" if args.judge and known else "no judges"
    )
    again = (
        f"ozlab judge run --db {without_passwords(str(args.db))} --job {job.id}"
        + (f" --judge {args.judge}" if args.judge else "")
        + " --study "
    )
    found = study_file_near(bundle.study.id, Path())
    if found is not None:
        file, loaded = found
        named = loaded.jobs.get(job.id)
        in_file = [j.id for j in (named.judges if named else ()) if args.judge in (None, j.id)]
        if in_file:
            return (
                f"{stored}, {file} names {', '.join(in_file)}: the file and the stored job differ"
                " (the database keeps the study as the bot last started it); bring the change"
                f" in with: {again}{file}"
            )
    return (
        f"{stored} (the study as the bot last started it): if the job file names {wanted},"
        " the file and the stored job differ; bring the change in by reading the study file:"
        f" {again}STUDY_FILE"
    )


def _key_set(judge: Judge) -> None:
    name = judge.api_key_env
    if name is not None and not os.environ.get(name, "").strip():
        raise SystemSetupError(
            f"judge {judge.id!r}: the environment variable {name} (api_key_env) is"
            " not set or empty; set it to the judge's API key"
        )
