"""A participant's erasure (GDPR art. 17): the one path every erasure takes, whoever asks
for it (the participant's /withdraw, an erase command the running bot carries out, ``ozlab
erase`` on a request by e-mail or after the retention), so that none counts or leaves out
anything the others do not. An annotator's pseudonym is erased as their own ``/withdraw``
does (``bot.rights.annotators``). The store erases in one transaction and writes the erasure
ledger; ``bot.rights.backups`` carries the ledger into backups, and the files ozlab wrote
before it are named (``bot.rights.register``).

``ozlab erase`` beside a running bot (which holds participants in memory): when no bot runs,
the erasure is done here, holding the file so that no bot starts meanwhile
(``bot.store.lock``); when one runs, the erasure is appended as an ``erase`` command and the
bot carries it out in turn with the participant's messages (then forgets them), and this
waits until it has. Dropping every chat id is refused while a bot runs: it would seal them
again.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from bot.core.errors import StoreError, StudyDataError
from bot.core.privacy import Privacy
from bot.core.vocabulary import CommandKind, CommandOutcome
from bot.rights.annotators import erase_annotator, is_annotator
from bot.rights.backups import erase_backups
from bot.rights.register import beyond_reach
from bot.store import Access, open_store
from bot.store.claims import alone_on
from bot.store.interface import ConsoleReadModel, HotPath, OperatorTasks, StudyDefinitions
from bot.store.model import Erased
from bot.store.opening import Database, locate
from bot.telegram.inbound import Inbound
from scenarios.stored import read_definitions

_WAIT_FOR_BOT = 120.0  # seconds: the bot polls commands every second or so


@dataclass(frozen=True)
class Request:
    db: Database
    participants: Sequence[str] = ()  # pseudonyms
    chat_keys: bool = False
    expired: bool = False
    backups: Path | None = None  # a folder of backups, erased of everyone in the ledger


class ErasingStore(OperatorTasks, HotPath, Protocol):
    """The roles an erasure uses: the erasure itself, and the inbox it clears."""


class ExpiryStore(OperatorTasks, StudyDefinitions, Protocol):
    """The roles finding expired participants uses: the retention each study set."""


async def erase_participant(
    store: ErasingStore, participant: str, privacy: Privacy | None, command_id: int | None = None
) -> Erased | None:
    """Everything of ``participant`` gone, their pending updates too when ``privacy`` can
    tell which are theirs, and the erasure in the ledger: what every caller does."""
    pending = await _pending(store, participant, privacy)
    return await store.erase_participant(participant, pending, command_id=command_id)


def owner(privacy: Privacy) -> Callable[[str], str | None]:
    """Whose a sealed inbox payload is; None for one sealed with another secret."""

    def of(payload: str) -> str | None:
        try:
            return privacy.pseudonym(Inbound.from_json(privacy.unseal(payload)).chat_id)
        except StoreError:
            return None

    return of


def pseudonym_of(telegram_id: int, secret: str) -> str:
    """The pseudonym the bot gave a Telegram user (needs the study's secret)."""
    if len(secret) < 16:
        raise StudyDataError("--telegram-id needs OZLAB_SECRET, the secret the study ran with")
    return Privacy(secret).pseudonym(telegram_id)


def erase(request: Request, secret: str = "", clock: Callable[[], float] = time.time) -> list[str]:
    """Carry the request out; one line per thing done, for the operator."""
    place = locate(request.db)
    if place.server is None and not Path(place.path).is_file():
        raise StoreError(f"no study database at {place.path}")
    if request.backups is not None and not request.backups.is_dir():
        raise StoreError(f"no folder {request.backups}: --backups names the folder of backups")
    with alone_on(request.db) as alone:
        if request.chat_keys and not alone:
            raise StoreError(
                "a bot runs on this database: stop it before dropping every chat id"
                " (a running bot would keep them)"
            )
        return asyncio.run(_erase(request, alone, secret, clock))


async def _erase(
    request: Request, alone: bool, secret: str, clock: Callable[[], float]
) -> list[str]:
    privacy = Privacy(secret) if len(secret) >= 16 else None
    store = await open_store(request.db, clock, access=Access.ATTACH)
    try:
        lines: list[str] = []
        started = clock()
        targets = list(request.participants)
        if request.expired:
            targets += await _expired(store, clock())
        for participant in targets:
            if await is_annotator(store, participant):
                lines.append(await erase_annotator(store, participant, privacy))
            elif alone:
                erased = await erase_participant(store, participant, privacy)
                lines.append(_told(participant, erased))
            else:
                lines.append(await _through_bot(store, participant, clock))
        if targets:
            lines += await beyond_reach(store, started)
        if request.chat_keys:
            dropped = await store.drop_chat_keys()
            lines.append(f"dropped {dropped} encrypted chat ids: nobody can be written to now")
        if request.backups is not None:
            ledger = await store.erasure_ledger()
            opener = owner(privacy) if privacy is not None else None
            lines += await asyncio.to_thread(
                erase_backups, request.backups, ledger, opener, _live_file(request.db)
            )
        return lines
    finally:
        await store.close()


def _live_file(db: Database) -> Path | None:
    """The study's own file, which a folder of backups may hold too; None on a server."""
    place = locate(db)
    return None if place.server is not None else Path(place.path)


async def _expired(store: ExpiryStore, now: float) -> list[str]:
    """Participants past their study's ``retention`` after their last activity."""
    found: list[str] = []
    for study_id, definition in read_definitions(await store.latest_definitions()).items():
        if definition.retention is not None:
            found += await store.inactive_since(study_id, now - definition.retention)
    return found


async def _pending(store: HotPath, participant: str, privacy: Privacy | None) -> list[int]:
    """Their updates still waiting in the inbox: readable with the secret only."""
    if privacy is None:
        return []
    of = owner(privacy)
    return [
        update_id
        for update_id, payload in await store.pending_updates()
        if of(payload) == participant
    ]


async def _through_bot(
    store: ConsoleReadModel, participant: str, clock: Callable[[], float]
) -> str:
    command = await store.append_command(
        "ozlab erase", CommandKind.ERASE, payload={"participant": participant}
    )
    deadline = clock() + _WAIT_FOR_BOT
    while clock() < deadline:
        outcome = (await store.command_outcomes([command])).get(command)
        if outcome is CommandOutcome.APPLIED:
            return f"erased {participant} (by the running bot)"
        if outcome is not None:
            return f"the bot could not erase {participant}: {outcome.value}"
        await asyncio.sleep(0.2)
    raise StoreError(
        f"the running bot has not applied the erasure of {participant} within"
        f" {_WAIT_FOR_BOT:g} s; it will when it comes to it (command {command})"
    )


def _told(participant: str, erased: Erased | None) -> str:
    if erased is None:
        return f"nothing stored about {participant}"
    return (
        f"erased {participant}: {erased.sessions} sessions, {erased.exchanges} exchanges,"
        f" {erased.responses} answers, {erased.events} events, {erased.commands} commands,"
        f" {erased.votes} votes, {erased.pending_updates} pending updates; one withdrawal"
        " counted"
    )
