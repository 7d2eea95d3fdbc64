"""The kinds of number a command line takes, checked by argparse itself: a count of 0 or -3
is refused with the command's usage line and status 2, before anything is opened.

Each function's name is what argparse says of a word that is not a number at all
("invalid count value: 'x'"). Standard library only: every command line imports it.
"""

from __future__ import annotations

import argparse


def count(text: str) -> int:
    """How many of something to make or play: 1 or more."""
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be 1 or more, not {text}")
    return value


def some(text: str) -> int:
    """How many of something to add, where none is a choice: 0 or more."""
    value = int(text)
    if value < 0:
        raise argparse.ArgumentTypeError(f"must be 0 or more, not {text}")
    return value


def port(text: str) -> int:
    """A TCP port to listen on (0: any free one)."""
    value = int(text)
    if not 0 <= value <= 65535:
        raise argparse.ArgumentTypeError(f"must be a port from 0 to 65535, not {text}")
    return value


def seconds(text: str) -> float:
    """A duration: 0 or more seconds."""
    value = float(text)
    if not value >= 0:  # also refuses nan
        raise argparse.ArgumentTypeError(f"must be 0 seconds or more, not {text}")
    return value


def rate(text: str) -> float:
    """How many a second: 0 (no limit) or more."""
    value = float(text)
    if not 0 <= value < float("inf"):
        raise argparse.ArgumentTypeError(f"must be 0 or more a second, not {text}")
    return value


def positive(text: str) -> float:
    """A quantity above 0 (an effect size, a rate, a time limit)."""
    value = float(text)
    if not 0 < value < float("inf"):
        raise argparse.ArgumentTypeError(f"must be above 0, not {text}")
    return value


def probability(text: str) -> float:
    """A probability strictly between 0 and 1 (alpha, power)."""
    value = float(text)
    if not 0 < value < 1:
        raise argparse.ArgumentTypeError(f"must be between 0 and 1, not {text}")
    return value
