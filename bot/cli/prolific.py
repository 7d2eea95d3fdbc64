"""``ozlab prolific status|approve|bonus``: the study's Prolific submissions matched with
ozlab's records, the approval of those ozlab saw finish, and bonuses paid exactly once,
through Prolific's API with a token from the environment (never logged, never stored)."""

from __future__ import annotations

import argparse
import os
from pathlib import Path
from typing import TYPE_CHECKING

from bot.cli.flags import database
from bot.core.errors import StudyDataError
from bot.core.privacy import SECRET_ENV

if TYPE_CHECKING:
    from bot.annotation.recruiting import PlatformStudy
    from bot.store.opening import Database
    from scenarios.jobs import RatedTargetBonus
    from scenarios.models import BonusRule

NAME = "prolific"
_TOKEN_ENV = "PROLIFIC_TOKEN"
_API_URL_ENV = "OZLAB_PROLIFIC_API_URL"


def add(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    prolific = commands.add_parser(
        NAME,
        help="the study's Prolific submissions matched with ozlab's records; approve the"
        f" finished ones; pay bonuses exactly once (token from {_TOKEN_ENV})",
    )
    actions = prolific.add_subparsers(dest="action", required=True)
    status = actions.add_parser("status", help="one table: each submission and ozlab's record")
    approve = actions.add_parser(
        "approve",
        help="approve the submissions of participants ozlab saw finish (a dry run unless --yes)",
    )
    bonus = actions.add_parser(
        "bonus",
        help="bonuses (a CSV, or the study file's rule) as one bulk bonus payment: set up and"
        " shown, paid only with --yes, never twice",
    )
    for action in (status, approve, bonus):
        database(action)
        action.add_argument(
            "--study-id",
            help="the study's id on Prolific (an annotation job's: its annotators are meant)",
        )
        action.add_argument(
            "--job",
            help="an annotation job recruiting on Prolific: its annotators, in the job's"
            " Prolific study",
        )
        action.add_argument(
            "--api-url",
            default=os.environ.get(_API_URL_ENV, "https://api.prolific.com"),
            help=f"Prolific's API (env {_API_URL_ENV}; default https://api.prolific.com)",
        )
        action.add_argument(
            "--timeout", type=float, default=30.0, help="seconds a request may take (30)"
        )
    approve.add_argument(
        "--yes", action="store_true", help="approve them (without it: only the count and total)"
    )
    approve.add_argument(
        "--reject",
        action="store_true",
        help="also reject the submissions of the study's code without an ozlab completion, and"
        " of two failed attention checks (with --yes)",
    )
    approve.add_argument(
        "--ask-returns",
        action="store_true",
        help="also ask participants ozlab screened out, who declined or timed out and"
        " submitted anyway to return their submission (with --yes)",
    )
    source = bonus.add_mutually_exclusive_group()
    source.add_argument(
        "--csv",
        type=Path,
        help="platform_id,amount rows: what each participant gets in all (1.50)",
    )
    source.add_argument(
        "--from-study",
        metavar="STUDY",
        help="the study file whose recruitment.bonus rule (per_completed_task, per_success)"
        " says what each participant gets",
    )
    source.add_argument(
        "--by-rule",
        action="store_true",
        help="an annotation job's recruitment.bonus rule (per_rated_target), as the job is"
        " stored in the database",
    )
    bonus.add_argument("--yes", action="store_true", help="pay it (without it: set up and shown)")
    bonus.add_argument(
        "--settled-after",
        type=float,
        default=10.0,
        metavar="MINUTES",
        help="a payment sent without an answer that Prolific still does not show after this"
        " long was not made (10; Prolific pays within minutes)",
    )


def run(args: argparse.Namespace) -> int:
    import asyncio
    import time

    from bot.core.privacy import Privacy
    from bot.recruitment.bonuses import bonus
    from bot.recruitment.prolific import Prolific
    from bot.recruitment.prolific_commands import approve, status

    token = os.environ.get(_TOKEN_ENV, "")
    if not token:
        raise StudyDataError(f"set {_TOKEN_ENV} to an API token of the study's Prolific workspace")
    secret = os.environ.get(SECRET_ENV, "")
    if not secret:
        raise StudyDataError(f"set {SECRET_ENV} to the secret the study ran with")
    privacy = Privacy(secret)

    asked = asyncio.run(_platform_study(args.db, args.job, args.study_id))
    wanted: dict[str, int] | BonusRule | RatedTargetBonus = {}
    if args.action == "bonus":
        wanted = _wanted(args, asked)

    async def act() -> str:
        study_id, job = asked.study_id, asked.job
        async with Prolific(token, args.api_url, timeout=args.timeout) as platform:
            if args.action == "status":
                return await status(args.db, study_id, platform, privacy, job)
            if args.action == "approve":
                return await approve(
                    args.db,
                    study_id,
                    platform,
                    privacy,
                    apply=args.yes,
                    reject=args.reject,
                    ask_returns=args.ask_returns,
                    job=job,
                )
            return await bonus(
                args.db,
                study_id,
                platform,
                privacy,
                wanted,
                apply=args.yes,
                settled_after=args.settled_after * 60,
                now=time.time(),
                job=job,
            )

    print(asyncio.run(act()))
    return 0


async def _platform_study(db: Database, job: str | None, study_id: str | None) -> PlatformStudy:
    """The platform study asked about, and the annotation job it recruits for, if any."""
    from bot.annotation.recruiting import platform_study
    from bot.store import Access, open_store

    store = await open_store(db, access=Access.ATTACH)
    try:
        return await platform_study(store, job, study_id)
    finally:
        await store.close()


def _wanted(
    args: argparse.Namespace, asked: PlatformStudy
) -> dict[str, int] | BonusRule | RatedTargetBonus:
    """What the bonuses are to be: a CSV, a study file's rule, or an annotation job's."""
    from bot.recruitment.bonuses import read_bonuses

    if args.csv:
        return read_bonuses(args.csv)
    if asked.job is None:
        if args.by_rule:
            raise StudyDataError("--by-rule pays an annotation job's annotators: give --job")
        if not args.from_study:
            raise StudyDataError("give --csv or --from-study STUDY")
        return _rule(args.from_study)
    if args.from_study:
        raise StudyDataError(
            f"annotation job {asked.job!r} pays by its own rule: give --by-rule or --csv"
        )
    if asked.recruitment is None or asked.recruitment.bonus is None:
        raise StudyDataError(
            f"annotation job {asked.job!r} has no recruitment.bonus rule (per_rated_target):"
            " add one or give --csv"
        )
    return asked.recruitment.bonus


def _rule(study: str) -> BonusRule:
    """The study file's bonus rule, or a one-line refusal."""
    from scenarios.loading import adapters_beside, load_study

    adapters_beside(study)
    recruitment = load_study(study).study.recruitment
    if recruitment is None or recruitment.bonus is None:
        raise StudyDataError(
            f"{study} has no recruitment.bonus rule (per_completed_task, per_success): add one"
            " or give --csv"
        )
    return recruitment.bonus
