"""Concurrent across participants, strictly ordered within one.

python-telegram-bot's ``concurrent_updates`` runs every update as its own task, and under
load a participant's messages overtake each other. This processor runs updates of
different chats concurrently and those of one chat one after another, in arrival order
(asyncio locks wake their waiters first in, first out).
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable
from typing import Any

from telegram.ext import BaseUpdateProcessor


class ChatOrderedProcessor(BaseUpdateProcessor):
    def __init__(self, max_concurrent_updates: int = 256) -> None:
        super().__init__(max_concurrent_updates)
        self._locks: dict[object, asyncio.Lock] = {}
        self._waiting: dict[object, int] = {}

    async def do_process_update(self, update: object, coroutine: Awaitable[Any]) -> None:
        # Updates reach this point in arrival order (tasks start in creation order and the
        # base class's semaphore is first in, first out); the chat's lock keeps that order.
        key = getattr(update, "chat_id", None)
        lock = self._locks.setdefault(key, asyncio.Lock())
        self._waiting[key] = self._waiting.get(key, 0) + 1
        try:
            async with lock:
                await coroutine
        finally:
            self._waiting[key] -= 1
            if not self._waiting[key]:
                del self._waiting[key]
                del self._locks[key]

    async def initialize(self) -> None:
        pass

    async def shutdown(self) -> None:
        pass
