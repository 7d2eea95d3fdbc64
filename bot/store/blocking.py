"""The store from synchronous code (analytics, importers, the demo's summary, scripts).

The store is asynchronous; a synchronous caller runs it in an event loop of its own. When
the caller is itself inside a running loop (a notebook, an async test), that loop cannot
be re-entered, so the work runs in a loop on a helper thread instead.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Coroutine
from concurrent.futures import ThreadPoolExecutor
from typing import Any, TypeVar

T = TypeVar("T")


def run_blocking(work: Callable[[], Coroutine[Any, Any, T]]) -> T:
    """``work()`` run to completion from synchronous code, with or without a running loop."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(work())
    with ThreadPoolExecutor(1, thread_name_prefix="ozlab-store-blocking") as pool:
        return pool.submit(lambda: asyncio.run(work())).result()
