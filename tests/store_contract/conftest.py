"""One suite for every store backend (as aiogram tests every FSM storage with one suite)."""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path

import pytest

from bot.store.interface import StudyStore
from tests.store_contract.backends import BACKENDS, open_backend, url_of


class Clock:
    """A clock the test moves by hand."""

    def __init__(self, now: float = 1000.0) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


@pytest.fixture(params=sorted(BACKENDS))
def backend(request: pytest.FixtureRequest) -> str:
    """Every contract test runs once per backend: the one fixture that says which."""
    return str(request.param)


@pytest.fixture
def location(backend: str, tmp_path: Path, request: pytest.FixtureRequest) -> str:
    """The URL of a study of the test's own on the backend (a server's is started on first
    use)."""
    return url_of(backend, tmp_path / "study.sqlite", request)


OpenStore = Callable[..., Awaitable[StudyStore]]


@pytest.fixture
async def open_store(location: str) -> AsyncIterator[OpenStore]:
    opened: list[StudyStore] = []

    async def opening(clock: Callable[[], float] | None = None) -> StudyStore:
        store = await open_backend(location, *(() if clock is None else (clock,)))
        opened.append(store)
        return store

    yield opening
    for store in opened:
        await store.close()


@pytest.fixture
async def store(open_store: OpenStore) -> StudyStore:
    return await open_store(Clock())
