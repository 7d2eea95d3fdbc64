"""The studies one ``ozlab web`` serves: a SQLite file's one study, or every study of a
lab's PostgreSQL database (each a schema of its own, each with its own accounts), opened
beside the bots that run them, never created or upgraded here."""

from __future__ import annotations

import asyncio
import re
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

from bot.desk import Desk
from bot.desk.desk import ConsoleStore
from bot.store import (
    Access,
    ExperimenterAccounts,
    OperatorTasks,
    Recruitment,
    open_store,
)
from bot.store.claims import alone_on
from bot.store.interface import ModelJudges
from bot.store.opening import Database, locate, studies_at
from lab_web.live import Watcher


class WebStore(
    ConsoleStore, ExperimenterAccounts, Recruitment, OperatorTasks, ModelJudges, Protocol
):
    """The roles the web page uses: the console's, the accounts, payments, the erasure
    ledger and the model judges' runs."""


_SLUG = re.compile(r"[^A-Za-z0-9_.-]+")
RUNNING_FOR = 5.0
"""Seconds a look at the writer's lock is good for: the overview is not asked each time."""


@dataclass
class Study:
    """One study the page serves: its store, the desk that reads it for every viewer, and
    where a worker process finds it (``db``, ``study``)."""

    slug: str  # in the page's addresses
    db: str
    study: str | None
    store: WebStore
    desk: Desk
    watcher: Watcher
    _running: tuple[float, bool] | None = field(default=None, repr=False)

    def acting_as(self, name: str) -> Desk:
        """A desk whose commands carry ``name``: who did it, in the command rows."""
        return Desk(self.store, name)

    async def bot_running(self, *, fresh: bool = False) -> bool:
        """Whether a bot holds the study's writer's lock (looked at every few seconds, or
        now when ``fresh``)."""
        now = time.monotonic()
        if not fresh and self._running is not None and now - self._running[0] < RUNNING_FOR:
            return self._running[1]
        running = await asyncio.to_thread(self._held)
        self._running = (now, running)
        return running

    def _held(self) -> bool:
        with alone_on(self.db, self.study) as alone:
            return not alone


class Lab:
    """Every study served, by slug, in the order the database lists them."""

    def __init__(self, studies: list[Study], shown: str) -> None:
        self.studies = {s.slug: s for s in studies}
        self.shown = shown

    @classmethod
    async def open(
        cls, db: Database, study: str | None = None, clock: Callable[[], float] = time.time
    ) -> Lab:
        text = str(db)
        place = locate(text, study)
        opened: list[Study] = []
        try:
            for name in await studies_at(text, study):
                store: WebStore = await open_store(text, clock, access=Access.ATTACH, study=name)
                slug = _SLUG.sub("-", name or Path(place.path).stem) or "study"
                desk = Desk(store, "web", clock=clock)
                opened.append(Study(slug, text, name, store, desk, Watcher(desk)))
        except BaseException:
            for each in opened:
                await each.store.close()
            raise
        return cls(opened, place.shown)

    def __getitem__(self, slug: str) -> Study:
        return self.studies[slug]

    async def close(self) -> None:
        for study in self.studies.values():
            await study.watcher.close()
            await study.store.close()
