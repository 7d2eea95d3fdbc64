"""The logging set-up of the test process, put back after something changed it: a command run
in this process sets up logging as ``ozlab`` does (its own handler on the root, ``telegram``
quieted), and later tests on the same worker must see the library's records as before."""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Iterator


@contextlib.contextmanager
def logging_kept() -> Iterator[None]:
    """The root's handlers and level and every logger's level as they were on entry; pytest's
    own capturing handlers come and go with each phase of a test and are left to pytest."""
    root = logging.getLogger()
    handlers, level = [h for h in root.handlers if not _pytests(h)], root.level
    levels = {
        name: logger.level
        for name, logger in logging.Logger.manager.loggerDict.items()
        if isinstance(logger, logging.Logger)
    }
    try:
        yield
    finally:
        root.handlers[:] = [h for h in root.handlers if _pytests(h)] + handlers
        root.setLevel(level)
        for name, logger in logging.Logger.manager.loggerDict.items():
            if isinstance(logger, logging.Logger):
                was = levels.get(name, logging.NOTSET)
                if logger.level != was:
                    logger.setLevel(was)


def _pytests(handler: logging.Handler) -> bool:
    return type(handler).__module__ == "_pytest.logging"
