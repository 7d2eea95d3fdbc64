"""Durations as researchers write them: ``90``, ``"90s"``, ``"10m"``, ``"1.5h"``, ``"1d"``."""

from __future__ import annotations

import re
from typing import Annotated

from pydantic import BeforeValidator, Field

_DURATION = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*(s|m|h|d)?\s*$")
_UNIT_SECONDS = {"s": 1, "m": 60, "h": 3600, "d": 86400, None: 1}


def _parse_duration(value: object) -> object:
    """Accept ``90``, ``"90s"``, ``"10m"``, ``"1.5h"``; a bare number is seconds."""
    if isinstance(value, bool):  # YAML reads ``yes``/``on`` as True, which float() takes as 1 s
        raise ValueError(f"{value!r} is not a duration such as 90, '90s', '10m' or '1h'")
    if isinstance(value, str):
        match = _DURATION.match(value)
        if not match:
            raise ValueError(f"{value!r} is not a duration such as 90, '90s', '10m' or '1h'")
        return float(match.group(1)) * _UNIT_SECONDS[match.group(2)]
    return value


Seconds = Annotated[float, BeforeValidator(_parse_duration), Field(gt=0, allow_inf_nan=False)]
