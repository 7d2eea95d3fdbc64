"""``ozlab export payments``: per recruitment platform id, status and minutes given. Two
words, so parsed on its own before the commands are (``bot.cli.main``)."""

from __future__ import annotations

import argparse
import asyncio
import os
from pathlib import Path

from bot.cli.flags import database
from bot.core.errors import StudyDataError
from bot.core.privacy import SECRET_ENV

WORDS = ["export", "payments"]


def parser(prog: str) -> argparse.ArgumentParser:
    payments = argparse.ArgumentParser(
        prog=f"{prog} export payments",
        description="Per recruitment platform id: status and minutes given, the platform's"
        " submission and its approval, and the bonuses paid (ozlab prolific). The ids are"
        f" opened with {SECRET_ENV} from the environment.",
    )
    database(payments)
    payments.add_argument("--out", type=Path, help="the CSV (default: standard output)")
    return payments


def run(args: argparse.Namespace) -> int:
    from bot.core.privacy import Privacy
    from bot.core.vocabulary import WrittenKind
    from bot.recruitment.payments import payment_rows, write_payments
    from bot.recruitment.prolific_commands import recruiting_jobs
    from bot.rights.register import register_written
    from bot.store import Access, open_store

    secret = os.environ.get(SECRET_ENV, "")
    if not secret:
        raise StudyDataError(f"set {SECRET_ENV} to the secret the study ran with")
    privacy = Privacy(secret)

    async def read() -> list[tuple[str, ...]]:
        store = await open_store(args.db, access=Access.READ)
        try:
            records = await store.payments()
            platforms = sorted({r.platform for r in records})
            steps = [s for p in platforms for s in await store.money_path(p)]
            jobs = {job: r.study_id for job, r in (await recruiting_jobs(store)).items()}
            return payment_rows(records, privacy, steps, jobs)
        finally:
            await store.close()

    write_payments(asyncio.run(read()), args.out)
    if args.out is not None:  # platform ids: an erasure names the file
        register_written(args.db, WrittenKind.PAYMENTS, [args.out])
    return 0
