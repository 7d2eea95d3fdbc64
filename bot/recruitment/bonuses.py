"""``ozlab prolific bonus``: the bonuses of a CSV as one bulk bonus payment, set up, shown
with its total, and paid only on confirmation, through the money path's ledger.

Paying a bulk bonus is not idempotent on the platform: a second request pays everyone again.
So every request that can move money is recorded (committed) as an intent before it is sent
and its outcome after. A run first settles every intent without an outcome (a crash, a kill,
a timeout between the two) by asking the platform what happened: a payment shows in the
submissions' ``bonus_payments``. Only then does it work out what is still owed: what the CSV
says each participant gets in all, less what the ledger shows paid. Running it again is
therefore safe: nobody is paid twice, and nobody is forgotten.
"""

from __future__ import annotations

import csv
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation
from pathlib import Path

from bot.core.errors import PlatformError, StudyDataError
from bot.core.privacy import Privacy
from bot.recruitment.prolific import Prolific, Refused
from bot.store import Access, open_store
from bot.store.interface import StudyStore
from bot.store.model import MoneyStep
from bot.store.opening import Database
from scenarios.jobs import RatedTargetBonus
from scenarios.models import BonusRule

PLATFORM = "prolific"
CREATE, PAY = "bonus_create", "bonus_pay"
APPLIED, NOT_APPLIED = "applied", "not_applied"


def read_bonuses(path: Path) -> dict[str, int]:
    """``platform_id,amount`` rows (a header line; the amount a decimal in the study's
    currency, 1.50): cents per platform id. A bad row is refused by its line, never its id."""
    try:
        with path.open(newline="", encoding="utf-8") as handle:
            rows = list(csv.DictReader(handle))
    except OSError as error:
        raise StudyDataError(f"{path}: {error.strerror}") from None
    wanted: dict[str, int] = {}
    for line, row in enumerate(rows, start=2):
        pid, amount = (row.get("platform_id") or "").strip(), (row.get("amount") or "").strip()
        try:
            cents = Decimal(amount) * 100
        except InvalidOperation:
            cents = Decimal(-1)
        if not pid or cents <= 0 or cents != cents.to_integral_value():
            raise StudyDataError(
                f"{path}:{line}: give platform_id and an amount like 1.50 (more than 0, whole"
                " cents)"
            )
        if pid in wanted:
            raise StudyDataError(f"{path}:{line}: that participant has a row already")
        wanted[pid] = int(cents)
    if not wanted:
        raise StudyDataError(f"{path}: no bonuses (a header platform_id,amount, then rows)")
    return wanted


def per_rated_target(rule: RatedTargetBonus, rated: Mapping[str, int]) -> dict[str, int]:
    """Cents per platform id by an annotation job's rule, from the targets each annotator
    rated; only those who earn something."""
    each = int(rule.per_rated_target * 100)
    return {pid: count * each for pid, count in rated.items() if count > 0}


def by_rule(rule: BonusRule, done: Mapping[str, tuple[int, int]]) -> dict[str, int]:
    """Cents per platform id by the study's rule, from (tasks ended, tasks succeeded); only
    those who earn something."""
    each, success = int(rule.per_completed_task * 100), int(rule.per_success * 100)
    earned = {pid: ended * each + succeeded * success for pid, (ended, succeeded) in done.items()}
    return {pid: cents for pid, cents in earned.items() if cents > 0}


@dataclass(frozen=True)
class _Request:
    """What one step asked, unsealed: cents per platform id."""

    cents: dict[str, int]

    @classmethod
    def of(cls, step: MoneyStep, privacy: Privacy) -> _Request:
        return cls(json.loads(privacy.unseal(step.request)))

    def sealed(self, privacy: Privacy) -> str:
        return privacy.seal(json.dumps(self.cents, sort_keys=True))


class MoneyPath:
    """The ledger of one platform study, and the platform, for one run."""

    def __init__(
        self,
        store: StudyStore,
        platform: Prolific,
        privacy: Privacy,
        *,
        study_id: str,
        platform_study: str,
        settled_after: float,
        now: float,
    ) -> None:
        self.store, self.platform, self.privacy = store, platform, privacy
        self.study_id, self.platform_study = study_id, platform_study
        self.settled_after, self.now = settled_after, now

    async def steps(self) -> list[MoneyStep]:
        return [
            s
            for s in await self.store.money_path(PLATFORM)
            if s.platform_study == self.platform_study
        ]

    def paid(self, steps: Sequence[MoneyStep], before: int | None = None) -> dict[str, int]:
        """Cents paid per platform id by the payments known applied (before step ``before``)."""
        earlier = [s for s in steps if before is None or s.id < before]
        return {
            pid: sum(p.cents for p in paid)
            for pid, paid in bonuses_paid(earlier, self.privacy).items()
        }

    async def settle(self, submissions: Mapping[str, str]) -> None:
        """Every intent without an outcome, settled by what the platform shows."""
        steps = await self.steps()
        for step in steps:
            if step.outcome is not None:
                continue
            if step.action == CREATE:  # setting up moves no money: a new one is set up
                await self.store.record_outcome(step.id, NOT_APPLIED, None, "{}")
                continue
            asked = _Request.of(step, self.privacy).cents
            before = self.paid(steps, before=step.id)
            shown = {
                pid: sum(await self.platform.bonus_payments(submissions[pid]))
                for pid in asked
                if pid in submissions
            }
            if any(shown.get(pid, 0) >= before.get(pid, 0) + cents for pid, cents in asked.items()):
                await self.store.record_outcome(
                    step.id, APPLIED, None, '{"seen": "bonus_payments"}'
                )
            elif self.now - step.intent_at >= self.settled_after:
                await self.store.record_outcome(step.id, NOT_APPLIED, None, '{"seen": "nothing"}')
            else:
                wait = (self.settled_after - (self.now - step.intent_at)) / 60
                raise PlatformError(
                    "a bonus payment was sent without an answer and Prolific does not show it"
                    f" paid yet (it pays within minutes): run again in {wait:.0f} minutes"
                )

    async def set_up(self, owed: dict[str, int]) -> tuple[str, str]:
        """A bulk bonus for ``owed``: one set up before and never paid, or a new one; its id
        and its totals as the platform gave them."""
        for step in reversed(await self.steps()):
            reusable = step.action == CREATE and step.outcome == APPLIED and step.bulk_id
            if reusable and _Request.of(step, self.privacy).cents == owed:
                assert step.bulk_id is not None
                if not await self._paying(step.bulk_id):
                    return step.bulk_id, step.answer or "{}"
        sealed = _Request(owed).sealed(self.privacy)
        intent = await self.store.record_intent(
            self.study_id, PLATFORM, self.platform_study, CREATE, sealed, None
        )
        try:
            bulk = await self.platform.set_up_bonuses(self.platform_study, owed)
        except Refused:
            await self.store.record_outcome(intent, NOT_APPLIED, None, "{}")
            raise
        totals = json.dumps(
            {"amount": bulk.amount, "fees": bulk.fees, "total_amount": bulk.total_amount}
        )
        await self.store.record_outcome(intent, APPLIED, bulk.id, totals)
        return bulk.id, totals

    async def _paying(self, bulk_id: str) -> bool:
        """Whether a payment of ``bulk_id`` was ever sent (whatever became of it)."""
        return any(
            s.action == PAY and s.bulk_id == bulk_id and s.outcome != NOT_APPLIED
            for s in await self.steps()
        )

    async def pay(self, bulk_id: str, owed: dict[str, int]) -> None:
        sealed = _Request(owed).sealed(self.privacy)
        intent = await self.store.record_intent(
            self.study_id, PLATFORM, self.platform_study, PAY, sealed, bulk_id
        )
        try:
            await self.platform.pay_bonuses(bulk_id)
        except Refused:
            await self.store.record_outcome(intent, NOT_APPLIED, None, "{}")
            raise
        await self.store.record_outcome(intent, APPLIED, None, "{}")


@dataclass(frozen=True)
class PaidBonus:
    cents: int
    at: float | None
    bulk_id: str | None


def bonuses_paid(steps: Sequence[MoneyStep], privacy: Privacy) -> dict[str, list[PaidBonus]]:
    """Per platform id, each bonus the ledger knows paid: amount, when, which bulk."""
    paid: dict[str, list[PaidBonus]] = {}
    for step in steps:
        if step.action == PAY and step.outcome == APPLIED:
            for pid, cents in _Request.of(step, privacy).cents.items():
                paid.setdefault(pid, []).append(PaidBonus(cents, step.outcome_at, step.bulk_id))
    return paid


def _money(cents: float) -> str:
    return f"{cents / 100:.2f}"


async def bonus(
    db: Database,
    platform_study: str,
    platform: Prolific,
    privacy: Privacy,
    wanted: dict[str, int] | BonusRule | RatedTargetBonus,
    *,
    apply: bool,
    settled_after: float,
    now: float,
    job: str | None = None,
) -> str:
    """Settle the ledger, then set up (and with ``apply``, pay) what ``wanted`` still owes
    the study's participants (or annotation job ``job``'s annotators)."""
    store = await open_store(db, access=Access.ATTACH)
    try:
        records = await store.payments()
        ours = {
            privacy.unseal(r.platform_key): r
            for r in records
            if r.platform == PLATFORM and r.job == job
        }
        if isinstance(wanted, BonusRule):
            done = await store.tasks_done()
            wanted = by_rule(wanted, {pid: done.get(r.row, (0, 0)) for pid, r in ours.items()})
        elif isinstance(wanted, RatedTargetBonus):
            rated = await store.targets_rated(job or "")
            wanted = per_rated_target(wanted, {pid: rated.get(r.row, 0) for pid, r in ours.items()})
        if not wanted:
            whose = "study's" if job is None else "job's"
            return f"nothing to pay: the {whose} bonus rule gives nobody a bonus yet"
        strangers = [pid for pid in wanted if pid not in ours]
        if strangers:
            raise StudyDataError(
                f"{len(strangers)} rows name a participant this study database does not hold"
                " (ozlab export payments lists those it does)"
            )
        listed = {s.participant_id: s.id for s in await platform.submissions(platform_study)}
        missing = [pid for pid in wanted if pid not in listed]
        if missing:
            raise StudyDataError(
                f"{len(missing)} rows name a participant without a submission in the Prolific"
                " study (a bonus goes to a submission)"
            )
        path = MoneyPath(
            store,
            platform,
            privacy,
            study_id=next(iter(ours.values())).study_id,
            platform_study=platform_study,
            settled_after=settled_after,
            now=now,
        )
        await path.settle(listed)
        paid = path.paid(await path.steps())
        owed = {pid: c - paid.get(pid, 0) for pid, c in wanted.items() if c > paid.get(pid, 0)}
        if not owed:
            total = _money(sum(wanted.values()))
            return f"nothing to pay: the {len(wanted)} bonuses are paid, {total} in all"
        bulk_id, totals = await path.set_up(owed)
        shown = json.loads(totals)
        said = (
            f"bulk bonus {bulk_id}: {len(owed)} participants, {_money(shown.get('amount', 0))}"
            f" + fees {_money(shown.get('fees', 0))} = {_money(shown.get('total_amount', 0))}"
            " in the study's currency"
        )
        if not apply:
            return f"set up, not paid: {said}\n(run again with --yes to pay it)"
        await path.pay(bulk_id, owed)
        return f"paid: {said}"
    finally:
        await store.close()
