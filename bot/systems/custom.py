"""The ``python`` adapter: a researcher's own class, named in the study file.

``entry: package.module:ClassName`` is imported with importlib and built with the study's
``options`` as keyword arguments. The class must have coroutine methods ``respond`` and
``close`` (see :mod:`bot.systems.examples.echo` for a documented example). Every problem is a
:class:`~bot.core.errors.SystemSetupError` that names the entry, raised at start-up rather than in
front of a participant.
"""

from __future__ import annotations

import importlib
import inspect

from bot.core.errors import SystemSetupError
from bot.systems.base import System
from scenarios.systems import PythonSystem


def load_custom(spec: PythonSystem) -> System:
    """Import, build and check the class ``spec.entry`` names."""
    entry = spec.entry
    module_name, _, class_name = entry.partition(":")
    try:
        module = importlib.import_module(module_name)
    except ModuleNotFoundError as error:
        if error.name is not None and (module_name + ".").startswith(error.name + "."):
            raise SystemSetupError(
                f"system {spec.id!r}: cannot import {entry!r}: there is no module "
                f"{error.name!r} (is it installed, or on PYTHONPATH?)",
                field="entry",
            ) from error
        raise SystemSetupError(
            f"system {spec.id!r}: importing {entry!r} failed: {error}", field="entry"
        ) from error
    except Exception as error:
        raise SystemSetupError(
            f"system {spec.id!r}: importing {entry!r} failed: {type(error).__name__}: {error}",
            field="entry",
        ) from error
    cls = getattr(module, class_name, None)
    if cls is None:
        raise SystemSetupError(
            f"system {spec.id!r}: the module {module_name!r} has no {class_name!r} ({entry!r})",
            field="entry",
        )
    if not callable(cls):
        raise SystemSetupError(f"system {spec.id!r}: {entry!r} is not a class", field="entry")
    try:
        system = cls(**spec.options)
    except Exception as error:
        raise SystemSetupError(
            f"system {spec.id!r}: building {entry!r} with options "
            f"{sorted(spec.options)} failed: {type(error).__name__}: {error}",
            field="options",
        ) from error
    missing = [
        name
        for name in ("respond", "close")
        if not inspect.iscoroutinefunction(getattr(system, name, None))
    ]
    if missing:
        raise SystemSetupError(
            f"system {spec.id!r}: {entry!r} is not a system: it needs coroutine methods "
            f"respond(conversation) and close(); missing or not async: {', '.join(missing)}",
            field="entry",
        )
    return system
