"""The installed ozlab's version, for a paper's methods section, an export's header and bug
reports."""

from __future__ import annotations


def version() -> str:
    from importlib.metadata import PackageNotFoundError
    from importlib.metadata import version as installed

    try:
        return installed("ozlab")
    except PackageNotFoundError:  # run from a source tree that was never installed
        return "unknown (not installed)"
