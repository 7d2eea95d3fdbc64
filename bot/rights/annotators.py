"""An annotator's erasure from the command line (``ozlab erase A-7KQ2``): the same erasure
as their own ``/withdraw`` (``bot.store.annotator_erasure``), their pending updates too when
the secret can tell which are theirs.

Unlike a participant's, it is done on the file even while a bot runs: the bot keeps no
annotator's rows in memory that it could write back (what it holds of one is refused by the
store from then on, and they are told their code is no longer active).
"""

from __future__ import annotations

from typing import Protocol

from bot.core.errors import StoreError
from bot.core.privacy import Privacy
from bot.store.interface import AnnotatorWork, HotPath, OperatorTasks
from bot.store.model import AnnotatorErased
from bot.telegram.inbound import Inbound


class AnnotatorErasingStore(OperatorTasks, AnnotatorWork, HotPath, Protocol):
    """The roles an annotator's erasure uses: who they are, the erasure, the inbox."""


async def is_annotator(store: AnnotatorWork, pseudonym: str) -> bool:
    return any(a.annotator_id == pseudonym for a in await store.annotators())


async def erase_annotator(
    store: AnnotatorErasingStore, annotator: str, privacy: Privacy | None
) -> str:
    """Erase them; one line for the operator."""
    pending = await _pending(store, annotator, privacy)
    return told(annotator, await store.erase_annotator(annotator, pending))


async def _pending(
    store: AnnotatorErasingStore, annotator: str, privacy: Privacy | None
) -> list[int]:
    """Their updates still waiting in the inbox: readable with the secret only."""
    found = [a for a in await store.annotators() if a.annotator_id == annotator]
    if privacy is None or not found or found[0].chat_key is None:
        return []
    try:
        chat = privacy.unseal(found[0].chat_key)
    except StoreError:  # sealed with another secret: their updates cannot be told
        return []
    theirs: list[int] = []
    for update_id, payload in await store.pending_updates():
        try:
            if Inbound.from_json(privacy.unseal(payload)).chat_id == int(chat):
                theirs.append(update_id)
        except StoreError:
            continue  # sealed with another secret: not known to be theirs
    return theirs


def told(annotator: str, erased: AnnotatorErased | None) -> str:
    if erased is None:
        return f"nothing stored about {annotator}"
    ratings = (
        f"{erased.ratings} ratings and {erased.votes} votes kept under a new pseudonym nothing"
        " links to them (the job's consent)"
        if erased.kept_unlinked
        else f"{erased.ratings} ratings, {erased.votes} votes"
    )
    return (
        f"erased annotator {annotator} of job {erased.job}: {ratings}; their chat id and code;"
        f" {erased.targets} targets back to the pool, {erased.pending_updates} pending updates"
    )
